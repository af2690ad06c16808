"""Operating-system sandboxes for grading, made with bubblewrap (``bwrap``).

Each submitted notebook is graded inside its own sandbox: new user, PID, mount, IPC, UTS and
network namespaces, so it sees only

* read-only: the system folders (``/usr``, ``/lib`` ...), a few files of ``/etc``, and this
  Python environment (the interpreter, the virtual environment, the ``minigrad`` package
  *without* its exercise checks, which reach the sandbox only through a pipe);
* writable: a private ``/tmp`` and ``/home/student`` (size-limited tmpfs, gone with the sandbox);
* its own processes (``/proc`` of its PID namespace) and no network but its own loopback.

The instructor's book, the other submissions, the gradebook folder and the grader's processes
do not exist in there. It runs as an unprivileged uid (when the grader runs as root it drops to a
uid of the job's own first, one per parallel job: a root-owned bubblewrap prepares the folders,
then an unprivileged one builds the sandbox), with ``no_new_privs``. The sandbox's own folders
(``/tmp``, ``/home``, ``/run``, ``/dev/shm``) are size-limited tmpfs mounted *before* the Python
environment is bound, so a venv or a clone under ``/tmp`` or a home folder stays visible. The runner inside starts the kernel and each checker in a
nested sandbox (``nested_command``) with its own PID namespace, so that the student's code cannot
see, signal or trace the runner. When the sandbox's first process dies, the kernel kills every
process in it: nothing outlives a grading job.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

SANDBOX_UID = 1_800_000_000  # grader as root: job k runs as host uid SANDBOX_UID + k (no /etc/passwd entry,
                             # no file of the host, no per-user quota shared with another job)
HOME = "/home/student"       # the student's working copy (the kernel's cwd)
RUN = "/run/grader"          # the runner's folder: the kernel's connection file
ETC = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
       "/etc/fonts", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/mime.types"]
SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
PRIVATE = ["/tmp", "/home", "/run"]   # each sandbox's own (tmpfs): host paths there must be bound again
SHM_MB = 64                  # /dev/shm of every sandbox (bwrap's own /dev tmpfs would have no size)
RUN_MB = 16                  # /run: the kernel's connection file

INSTALL_HINT = (
    "the grader runs every submission in an operating-system sandbox made with bubblewrap, and `bwrap` "
    "was not found. Install the package `bubblewrap` (Debian/Ubuntu: sudo apt-get install bubblewrap; "
    "Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap). It needs Linux with user "
    "namespaces: on macOS or Windows, grade inside a Linux virtual machine or container. "
    "`--no-sandbox` grades without it, with weaker in-process protections: only for submissions you trust.")

# Stage 1 (grader is root): drop to the sandbox uid, keep no privileges, then start the real sandbox.
_DROP = (
    "import ctypes,os,sys\n"
    "u=int(sys.argv[1]);os.setgroups([]);os.setresgid(u,u,u);os.setresuid(u,u,u)\n"
    "ctypes.CDLL(None,use_errno=True).prctl(38,1,0,0,0)\n"
    "os.execv(sys.argv[2],sys.argv[2:])\n")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox here."""


def find_bwrap() -> str | None:
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap", "/bin/bwrap") if os.access(p, os.X_OK)), None)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def visible_paths(hidden=()) -> list[str]:
    """Host paths a sandbox sees (read-only, at the same place): the system and this Python environment.

    A path that contains one of ``hidden`` (the book, the submissions, the gradebook) is left out.
    """
    import minigrad

    paths = sysconfig.get_paths()
    cands = [*SYSTEM, *ETC, sys.base_prefix, sys.prefix, sys.exec_prefix, paths["stdlib"], paths["platstdlib"],
             paths["purelib"], paths["platlib"], str(Path(minigrad.__file__).resolve().parent),
             *[p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p]]
    hidden = [os.path.realpath(h) for h in hidden]
    out: list[str] = []
    for p in cands:
        if not p or not os.path.lexists(p):
            continue
        p = os.path.abspath(p) if os.path.islink(p) and p in SYSTEM else os.path.realpath(p)
        if any(_under(h, p) for h in hidden):
            continue  # it would show the instructor's files
        if p not in out:
            out.append(p)
    # keep only the outermost of nested paths (a venv inside the base prefix, site-packages inside a venv)
    return [p for p in out if not any(q != p and _under(p, q) for q in out if not os.path.islink(q))]


def _binds(paths: list[str]) -> list[str]:
    args = []
    for p in paths:
        if os.path.islink(p) and p in SYSTEM:
            args += ["--symlink", os.readlink(p), p]
        else:
            args += ["--ro-bind", p, p]
    return args


def exercises_dir() -> str:
    return str(Path(__file__).resolve().parent / "exercises")


def _ancestors(paths: list[str]) -> list[str]:
    out = set()
    for p in paths:
        parent = os.path.dirname(p)
        while parent not in ("/", ""):
            out.add(parent)
            parent = os.path.dirname(parent)
    return sorted(out, key=lambda s: s.count("/"))


def _shadowed(paths: list[str]) -> list[str]:
    """The visible paths that a sandbox's own writable folders (/tmp, /home, /run) would hide.

    A virtual environment or a clone under /tmp or a home folder is bound again on top of the
    private tmpfs, so that the interpreter is found wherever Python lives.
    """
    return [p for p in paths if any(_under(p, d) for d in PRIVATE)]


def _dev(shm_mb: int) -> list[str]:
    """A minimal /dev whose only writable part is a size-limited /dev/shm (bwrap's /dev tmpfs has no size)."""
    return ["--dev", "/dev", "--size", str(shm_mb << 20), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]


def outer_command(cmd: list[str], *, paths: list[str], bwrap: str, tmp_mb: int = 256, home_mb: int = 256,
                  as_root: bool | None = None, uid: int = SANDBOX_UID) -> list[str]:
    """The command line that runs ``cmd`` in a new grading sandbox (started by the grader).

    The private folders are mounted first and the system and Python environment bound after
    them: a venv under /tmp or /home stays visible. ``uid`` (grader running as root): the host
    uid the sandbox runs as, one per parallel job, so that no per-user quota of the kernel
    (processes, namespaces) is shared between two students' sandboxes.
    """
    ex = exercises_dir()
    inner = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "grader",
             "--proc", "/proc", *_dev(SHM_MB),
             "--size", str(tmp_mb << 20), "--tmpfs", "/tmp",
             "--size", str(home_mb << 20), "--tmpfs", "/home",
             "--size", str(RUN_MB << 20), "--tmpfs", "/run", "--dir", RUN,
             *_binds(paths),
             # the exercise checks are not files in the sandbox: only their package marker
             "--size", str(1 << 20), "--tmpfs", ex,
             "--ro-bind", os.path.join(ex, "__init__.py"), os.path.join(ex, "__init__.py"),
             "--chdir", "/tmp", "--", *cmd]
    if as_root is None:
        as_root = os.geteuid() == 0
    if not as_root:
        return inner
    # root: bubblewrap as root prepares the folders (some may be under /root), then drops to the job's uid
    chmods = [a for d in _ancestors(paths) for a in ("--chmod", "0755", d)]
    return [bwrap, "--die-with-parent", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
            "--bind", "/proc", "/proc", "--dev", "/dev", "--dir", "/tmp", *_binds(paths), *chmods,
            "--", sys.executable, "-I", "-S", "-c", _DROP, str(uid), *inner]


def nested_command(cmd: list[str], *, bwrap: str, home: bool, network: bool, proc: bool, tmp_mb: int = 128,
                   chdir: str | None = None, rebind=()) -> list[str]:
    """Inside a sandbox: a sandbox for the kernel (``home``, shared loopback) or a checker (nothing).

    ``rebind``: the Python environment's paths under /tmp or /home (``_shadowed``), bound again
    over this sandbox's own tmpfs. ``--disable-userns``: the student's code cannot create user
    namespaces, so no host-wide namespace quota is within its reach.
    """
    args = [bwrap, "--ro-bind", "/", "/", "--unshare-user", "--disable-userns", "--unshare-pid",
            "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            *_dev(SHM_MB)]
    if not network:
        args.append("--unshare-net")
    args += ["--proc", "/proc"] if proc else ["--size", str(1 << 20), "--tmpfs", "/proc"]
    args += ["--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    if home:
        args += ["--bind", HOME, HOME]
    else:
        args += ["--size", str(1 << 20), "--tmpfs", "/home", "--size", str(1 << 20), "--tmpfs", RUN]
    for p in rebind:
        if not (home and _under(p, HOME)):
            args += ["--ro-bind", p, p]
    args += ["--chdir", chdir or (HOME if home else "/tmp"), "--", *cmd]
    return args


def probe(paths: list[str], bwrap: str) -> None:
    """Start a sandbox with a nested one inside; raise SandboxUnavailable with the reason if it fails."""
    code = ("import subprocess,sys;"
            f"r=subprocess.run({nested_command(['true'], bwrap=bwrap, home=False, network=False, proc=False, rebind=_shadowed(paths))!r},"
            "capture_output=True,text=True);print('ok' if r.returncode==0 else 'nested: '+r.stderr)")
    cmd = outer_command([sys.executable, "-I", "-S", "-c", code], paths=paths, bwrap=bwrap)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=sandbox_env({}))
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SandboxUnavailable(f"bubblewrap could not start a sandbox: {e}") from None
    if r.stdout.strip() != "ok":
        why = (r.stderr.strip() or r.stdout.strip())[-500:]
        raise SandboxUnavailable(
            f"bubblewrap ({bwrap}) could not create a grading sandbox: {why}. It needs unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0; in a "
            "container, allow them, e.g. docker run --security-opt seccomp=unconfined). "
            "`--no-sandbox` grades without it, with weaker in-process protections.")


try:  # resolved now: a child between fork and exec must not import anything
    import ctypes as _ctypes

    _prctl = _ctypes.CDLL(None, use_errno=True).prctl
except (ImportError, OSError, AttributeError):
    _prctl = None


def die_with_parent() -> None:
    """In a child, before exec: be killed when the parent dies (what bwrap's --die-with-parent does)."""
    if _prctl is not None:
        _prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL


def set_limits(cpu_s: float, memory_mb: int, nproc: int | None = None) -> None:
    """This process's limits, as a grading process gets them (between fork and exec, or in a
    zygote's child): death with its parent, memory, CPU time, file size, no core, open files."""
    die_with_parent()
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_s) + 1, int(cpu_s) + 2))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    if nproc:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def sandbox_env(extra: dict) -> dict:
    """The whole environment of a sandbox: nothing of the grader's own variables."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": HOME,
           "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
           "USER": "student", "LOGNAME": "student", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2",
           "MPLBACKEND": "Agg"}
    if os.environ.get("VIRTUAL_ENV"):
        env["VIRTUAL_ENV"] = os.environ["VIRTUAL_ENV"]
    env.update(extra)
    return env
