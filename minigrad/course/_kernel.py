"""The grader's notebook kernel: ``python -m minigrad.course._kernel``, one per graded notebook.

It runs the notebook's cells, one request at a time, in an IPython shell (the same
``InteractiveShell`` a Jupyter kernel runs: magics, ``display``, the ``_`` variables, input
transformers), and answers each with the cell's output as text and its error, if any. Requests
and answers are frames (``_bridge_wire.FrameIO``) on the process's stdin and a private copy of its
stdout; fds 0, 1 and 2 then point at /dev/null, so nothing a cell prints is a frame. A cell can
still write to the answer's file descriptor: that can only garble its own notebook's run (the
runner reads a bad frame as a dead kernel), never a grade, which the judge computes outside.

Why not ipykernel: ZeroMQ, its threads, the message signing and the Jupyter client cost about
0.3 s of CPU per notebook, more than a fifth of grading one; the kernel needs no network either.

The runner sets its limits (memory, CPU time, file size, processes) before it starts. With
bubblewrap (the default) the kernel lives in a nested sandbox: the operating system is the
boundary. With ``--no-sandbox`` the policy in the ``MGC_KERNEL`` environment variable (JSON, key
``audit``) adds a Python audit hook that refuses, with PermissionError:

* writing, creating, renaming or deleting files outside the working directory (``write_roots``);
* reading or listing the instructor's sources, the submissions and the gradebook folder
  (``deny_read``), except the kernel's own folders (``allow_read``);
* starting processes (fork, exec, system, subprocess, posix_spawn), sending signals (os.kill),
  network sockets, ctypes symbol lookups and dynamic loading of new libraries, installing another
  audit hook, trace/profile hooks, and the gc introspection calls that list every object.

An audit hook is not a security boundary (frames, ``dir_fd`` arguments and native code get
around it): see book/instructor_guide.md, "What a student cannot do".
"""
from __future__ import annotations

import functools
import json
import os
import re
import sys


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def install(policy: dict) -> dict:
    """Add the (inactive) audit hook; ``state["active"] = True`` switches it on."""
    realpath, join, getcwd, fspath = os.path.realpath, os.path.join, os.getcwd, os.fspath
    write_roots = [realpath(p) for p in policy.get("write_roots", [])]
    deny_read = [realpath(p) for p in policy.get("deny_read", [])]
    allow_read = [realpath(p) for p in policy.get("allow_read", [])] + write_roots
    wflags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    blocked = {
        "os.fork": "starting processes", "os.forkpty": "starting processes", "os.system": "starting processes",
        "os.exec": "starting processes", "os.posix_spawn": "starting processes", "os.spawn": "starting processes",
        "subprocess.Popen": "starting processes", "pty.spawn": "starting processes",
        "os.kill": "sending signals", "os.killpg": "sending signals", "signal.pthread_kill": "sending signals",
        "socket.connect": "network access", "socket.bind": "network access", "socket.sendto": "network access",
        "socket.sendmsg": "network access", "sys.addaudithook": "installing audit hooks",
        "sys.settrace": "trace hooks", "sys.setprofile": "profile hooks", "gc.get_objects": "gc introspection",
        "gc.get_referrers": "gc introspection", "gc.get_referents": "gc introspection",
        "ctypes.dlsym": "ctypes", "ctypes.call_function": "ctypes",
    }
    path_write_events = {"os.remove", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.truncate",
                         "os.chmod", "os.chown", "os.utime", "shutil.rmtree", "os.chflags", "os.lchflags",
                         "os.setxattr", "os.removexattr"}
    state = {"active": False}

    def resolve(p) -> str:
        p = fspath(p)
        if isinstance(p, bytes):
            p = os.fsdecode(p)
        return realpath(join(getcwd(), p))

    def deny(what: str):
        raise PermissionError(f"grader sandbox: {what} is not allowed while grading")

    def check_write(p):
        if isinstance(p, int):
            return
        rp = resolve(p)
        if not _under(rp, write_roots):
            deny(f"writing outside the working directory ({rp})")

    def check_read(p):
        if isinstance(p, int):
            return
        rp = resolve(p)
        if _under(rp, deny_read) and not _under(rp, allow_read):
            deny(f"reading {rp}")

    def hook(event, args):
        if not state["active"]:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if path is None or isinstance(path, int):
                return
            writing = (isinstance(flags, int) and flags & wflags) or (
                isinstance(mode, str) and any(c in mode for c in "wax+"))
            if writing:
                check_write(path)
            check_read(path)
        elif event in path_write_events:
            if args:
                check_write(args[0])
        elif event in ("os.rename", "os.replace"):
            check_write(args[0])
            check_write(args[1])
        elif event in ("os.listdir", "os.scandir", "os.chdir"):
            if args and args[0] is not None:
                check_read(args[0])
                if event == "os.chdir":
                    check_write(args[0])
        elif event == "ctypes.dlopen":
            if args and args[0] is not None:
                deny("loading native libraries with ctypes")
        elif event in blocked:
            deny(blocked[event])

    sys.addaudithook(hook)
    return state


FONT_CACHE = re.compile(r"fontlist-v[0-9][0-9.]*\.json")  # matplotlib's font list file, in its MPLCONFIGDIR
FONT_CACHE_CAP = 4 << 20


@functools.lru_cache(maxsize=4)
def build_font_cache(python: str = sys.executable) -> dict | None:
    """The grader's, once per run: matplotlib's font list as this Python environment builds it
    ({"name", "data"}), or None (no matplotlib). Each notebook's kernel starts with a copy, so
    that it does not scan the system's fonts again (about 0.1 s of CPU per notebook). Kept for the
    process's life: a grader process that grades again reuses it."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mgc-mpl-") as d:
        env = dict(os.environ, MPLCONFIGDIR=d, MPLBACKEND="Agg")
        try:
            subprocess.run([python, "-c", "import matplotlib.font_manager"], env=env, timeout=120,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        except (OSError, subprocess.SubprocessError):
            return None
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if FONT_CACHE.fullmatch(name) and os.path.getsize(path) <= FONT_CACHE_CAP:
                with open(path, encoding="utf-8") as f:
                    return {"name": name, "data": f.read()}
    return None


def seed_font_cache(source: str, configdir: str) -> None:
    """The kernel's, before anything else: matplotlib's font list copied into its own config folder."""
    name = os.path.basename(source)
    if not (source and configdir and FONT_CACHE.fullmatch(name)):
        return
    try:
        os.makedirs(configdir, exist_ok=True)
        target = os.path.join(configdir, name)
        if not os.path.exists(target):
            with open(source, "rb") as f, open(target, "wb") as g:
                g.write(f.read(FONT_CACHE_CAP))
    except OSError:
        pass  # matplotlib builds its own, as it would have


OUTPUT_CAP = 200_000  # characters of one cell's output kept (the runner reads this one)


class _Output:
    """One cell's output, in order: what it printed and the text of what it displayed."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.truncated = False
        self.error: list[str] | None = None

    def add(self, text: str) -> None:
        if self.size >= OUTPUT_CAP:
            self.truncated = self.truncated or bool(text)
            return
        if self.size + len(text) > OUTPUT_CAP:
            self.truncated = True
            text = text[:OUTPUT_CAP - self.size]
        self.parts.append(text)
        self.size += len(text)

    def frame(self) -> dict:
        return {"text": "".join(self.parts), "truncated": self.truncated, "error": self.error}


def _make_shell(out: list):
    """An IPython shell whose output goes to ``out[0]`` (the current cell's ``_Output``)."""
    import io

    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Stream(io.TextIOBase):
        """sys.stdout and sys.stderr of the cells."""

        def __init__(self, name: str) -> None:
            self.name = name

        encoding = "utf-8"

        def writable(self) -> bool:
            return True

        def write(self, text) -> int:
            if not isinstance(text, str):
                raise TypeError(f"write() argument must be str, not {type(text).__name__}")
            out[0].add(text)
            return len(text)

    class Hook(DisplayHook):
        """A cell's value: its text, as a Jupyter kernel's ``execute_result`` carries it."""

        def write_output_prompt(self) -> None:
            pass

        def write_format_data(self, format_dict, md_dict=None) -> None:
            out[0].add(str(format_dict.get("text/plain", ""))[:OUTPUT_CAP] + "\n")

        def finish_displayhook(self) -> None:
            pass

    class Publisher(DisplayPublisher):
        """``display(...)``: its text, as a ``display_data`` message carries it."""

        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
            out[0].add(str((data or {}).get("text/plain", ""))[:OUTPUT_CAP] + "\n")

        def clear_output(self, wait=False) -> None:
            pass

    class Shell(InteractiveShell):
        """Errors are recorded (type name and message), as a kernel's ``error`` message has them."""

        def showtraceback(self, exc_tuple=None, filename=None, tb_offset=None, exception_only=False,
                          running_compiled_code=False) -> None:
            try:
                etype, value, _tb = self._get_exc_info(exc_tuple)
            except ValueError:
                return
            out[0].error = [etype.__name__, str(value)[:1000]]

        def showsyntaxerror(self, filename=None, running_compiled_code=False) -> None:
            self.showtraceback()

        def showindentationerror(self) -> None:
            self.showtraceback()

        def enable_gui(self, gui=None) -> None:
            """``%matplotlib inline`` (or any backend): no event loop to start, as in a Jupyter kernel."""

    config = Config()
    config.HistoryManager.enabled = False  # no SQLite file: the history lives as long as the kernel
    config.InteractiveShell.colors = "NoColor"
    shell = Shell.instance(config=config, displayhook_class=Hook, display_pub_class=Publisher)
    shell.display_formatter.active_types = ["text/plain"]  # only the text is read (no PNG of every figure)
    sys.stdout, sys.stderr = Stream("stdout"), Stream("stderr")
    return shell


def main() -> None:
    """Serve the runner's requests ``{"code", "store_history"}``; each answer is ``{"text",
    "truncated", "error"}`` (``error``: [type name, message] or None); ``{"ready": true}`` first."""
    from ._bridge_wire import FrameIO, ProtocolError

    policy = json.loads(os.environ.get("MGC_KERNEL", "{}") or "{}")
    seed_font_cache(os.environ.pop("MGC_FONT_CACHE", ""), os.environ.get("MPLCONFIGDIR", ""))
    frames = FrameIO(os.dup(0), os.dup(1), None)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    if not os.environ.get("MINIGRAD_COURSE_DEBUG"):
        os.dup2(devnull, 2)
    os.close(devnull)
    sys.stdin = open(os.devnull)  # input() finds nothing to read, as with a kernel that allows no stdin
    state = install(policy["audit"]) if policy.get("audit") else None
    out = [_Output()]
    shell = _make_shell(out)
    frames.write({"ready": True})
    if state is not None:
        state["active"] = True
    while True:
        try:
            msg = frames.read()
        except ProtocolError:
            break
        if type(msg) is not dict or type(msg.get("code")) is not str:
            break
        out[0] = _Output()
        try:
            shell.run_cell(msg["code"], store_history=bool(msg.get("store_history", True)))
        except BaseException as e:  # noqa: BLE001  (what IPython itself let through)
            out[0].error = [type(e).__name__, str(e)[:1000]]
        try:
            frames.write(out[0].frame())
        except (OSError, ValueError):
            break
    os._exit(0)


if __name__ == "__main__":
    main()
