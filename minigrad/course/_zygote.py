"""Fork servers: ``python -I -m minigrad.course._zygote worker`` (in a notebook's sandbox) and
``python -m minigrad.course._zygote judge`` (the grader's, outside every sandbox).

Why: a notebook needs one fresh worker per exercise, and the grader one judge per notebook; most of
either's start is its imports (NumPy, minigrad, the bridge: about 0.2-0.3 s of CPU each time). A
zygote imports them once, then makes each one by ``fork``: a few milliseconds.

* ``worker``: one per notebook, in a nested sandbox (no network, no files, no /proc). It never runs
  a student's code itself; every child does, after the fork, with the limits the runner asks for.
  The children are as untrusted as any worker: the judge believes none of their replies
  (``_judge.py``), so a child that tampered with a later one would gain nothing.
* ``judge``: one per grading run. It runs no student code at all (nor does a judge); each child is
  a fresh judge, in a process group of its own, exactly as if started as ``python -m
  minigrad.course._judge``: the fork happens before any check, bundle or seed is loaded.

Protocol, on fd 0 (a Unix stream socket from the runner):
* the runner sends ``spawn ID CPU_SECONDS MEMORY_MB\\n`` with two file descriptors attached (the
  child's request pipe to read, its reply pipe to write); the zygote answers ``pid ID N\\n``
  (``N`` = 0: no child, the fork failed or the request came without its descriptors);
* when a child ends the zygote writes ``exit N STATUS\\n`` (STATUS as ``Popen.returncode``:
  the exit code, or minus the signal);
* ``kill N\\n`` kills child N; end of file kills every child and ends the zygote.

The judge zygote takes ``judge\\n`` with four descriptors (the runner's output and input, the
judge's stdin and stdout), answers ``pid N\\n`` (a host pid: the grader kills its process group) and
reports no exits.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

LINE_CAP = 200  # bytes of one request line
_DEBUG = bool(os.environ.get("MINIGRAD_COURSE_DEBUG"))


def _child(sock: socket.socket, read_fd: int, write_fd: int, cpu_s: int, memory_mb: int) -> None:
    """In the forked child: become a worker on the two pipes (never returns)."""
    try:
        sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        from . import sandbox

        sandbox.set_limits(cpu_s, memory_mb)
        os.dup2(read_fd, 0)
        os.close(read_fd)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # what the student prints is not a frame
        if not os.environ.get("MINIGRAD_COURSE_DEBUG"):
            os.dup2(devnull, 2)
        os.close(devnull)
        from . import _worker

        _worker.run(0, write_fd)
    finally:
        os._exit(0)


def _judge_child(sock: socket.socket, runner_out: int, runner_in: int, stdin: int, stdout: int) -> None:
    """In the forked child: become a judge (never returns)."""
    try:
        sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            os.setpgid(0, 0)  # the grader stops a judge by its process group (the zygote sets it too)
        except OSError:
            pass
        from . import sandbox

        sandbox.die_with_parent()
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.close(stdin)
        os.close(stdout)
        from . import _judge

        _judge.main([str(runner_out), str(runner_in)])
    finally:
        os._exit(0)


def _own_group(pid: int) -> None:
    """A child's own process group, set by the parent as well: no window where a kill of the group misses it."""
    if pid > 0:
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass


def _status(raw: int) -> int:
    return -os.WTERMSIG(raw) if os.WIFSIGNALED(raw) else os.WEXITSTATUS(raw) if os.WIFEXITED(raw) else -1


def serve(sock: socket.socket, mode: str = "worker") -> None:
    """Answer requests on ``sock`` until it closes."""
    children: set[int] = set()
    buf = b""

    def say(text: str) -> None:
        sock.sendall(text.encode() + b"\n")

    def reap() -> None:
        while children:
            try:
                pid, raw = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                children.clear()
                return
            if pid == 0:
                return
            if pid in children:
                children.discard(pid)
                if mode == "worker":
                    say(f"exit {pid} {_status(raw)}")

    try:
        while True:
            ready = select.select([sock], [], [], 0.05 if children else 1.0)[0]
            reap()
            if not ready:
                continue
            data, fds, _flags, _addr = socket.recv_fds(sock, 4096, 4)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                words = line[:LINE_CAP].decode("ascii", "replace").split()
                if mode == "judge" and words == ["judge"] and len(fds) == 4:
                    try:
                        pid = os.fork()
                    except OSError:
                        pid = -1
                    if pid == 0:
                        _judge_child(sock, *fds)
                    _own_group(pid)
                    for fd in fds:
                        os.close(fd)
                    fds = []
                    if pid > 0:
                        children.add(pid)
                    say(f"pid {max(pid, 0)}")
                elif mode == "worker" and words[:1] == ["spawn"] and len(words) == 4 and \
                        all(w.isdigit() for w in words[1:]):
                    pid = -1
                    if len(fds) >= 2:
                        r, w = fds[:2]
                        fds = fds[2:]
                        try:
                            pid = os.fork()
                        except OSError:  # e.g. the notebook's processes hold the sandbox's process limit
                            pid = -1
                        if pid == 0:
                            _child(sock, r, w, int(words[2]), int(words[3]))
                        _own_group(pid)
                        os.close(r)
                        os.close(w)
                    if pid > 0:
                        children.add(pid)
                    say(f"pid {words[1]} {max(pid, 0)}")
                elif words[:1] == ["kill"] and len(words) == 2 and words[1].isdigit():
                    pid = int(words[1])
                    if pid in children:
                        for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                            try:
                                target()
                            except OSError:
                                pass
                for fd in fds:  # descriptors that came with no request
                    os.close(fd)
                fds = []
            if len(buf) > LINE_CAP:
                return  # not the runner speaking
    finally:
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    mode = argv[0] if argv else "worker"
    if mode not in ("worker", "judge"):
        raise SystemExit(f"_zygote: unknown mode {mode!r} (worker or judge)")
    sock = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")
    # what every child needs, imported once (a failure here is the grader's: no student code ran)
    import numpy  # noqa: F401

    import minigrad  # noqa: F401

    from . import _bridge, _bridge_wire, _checker, _values, sandbox  # noqa: F401
    if mode == "worker":
        from . import _worker  # noqa: F401
    else:
        from . import _judge, _remote, _seed, _structure, _verdict  # noqa: F401
    serve(sock, mode)
    os._exit(0)


# ------------------------------------------------------------------------------------- clients
class ForkedProc:
    """A worker made by the zygote, with the part of ``Popen``'s interface a ``Checker`` uses.

    Made without waiting: its pid is known once the zygote has answered (``pid``); a fork that
    failed reads as a process that ended with status -1."""

    def __init__(self, zygote: "WorkerZygote", index: int, stdin, stdout):
        self.zygote, self.index, self.stdin, self.stdout = zygote, index, stdin, stdout
        self.returncode: int | None = None

    def _pid(self, timeout: float) -> int | None:
        """The child's pid (0: the fork failed), waiting up to ``timeout`` s; None if unknown."""
        deadline = time.monotonic() + timeout
        while self.index not in self.zygote.started:
            left = deadline - time.monotonic()
            if not self.zygote.collect(max(0.0, min(left, 1.0))) and (left <= 0 or not self.zygote.alive()):
                return None
        return self.zygote.started[self.index]

    @property
    def pid(self) -> int | None:
        return self._pid(5.0)

    def poll(self) -> int | None:
        if self.returncode is None:
            pid = self._pid(0.0)
            if pid == 0:
                self.returncode = -1  # never made (the runner then starts a worker of its own)
            elif pid is None and not self.zygote.alive():
                self.returncode = -9  # its zygote (and so the worker) is gone
            elif pid is not None:
                self.zygote.collect(0.0)
                self.returncode = self.zygote.ended.get(pid)
                if self.returncode is None and not self.zygote.alive():
                    self.returncode = -9
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(f"worker {self.index}", timeout)
            self.zygote.collect(min(left, 0.5))
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            pid = self.pid
            if pid:
                self.zygote.send(f"kill {pid}")
        for f in (self.stdin, self.stdout):
            try:
                f.close()
            except OSError:
                pass


class WorkerZygote:
    """The fork server of a notebook's workers (``worker`` above), in a nested sandbox of its own:
    NumPy, minigrad and the bridge are imported once, then each exercise's worker is a fork."""

    def __init__(self, iso, cpu_s: float, ready_timeout: float = 60.0):
        self.iso, self.ready_timeout = iso, ready_timeout
        ours, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(iso.checker_command("_zygote") + ["worker"], stdin=theirs.fileno(),
                                         stdout=subprocess.DEVNULL, stderr=None if _DEBUG else subprocess.DEVNULL,
                                         cwd="/tmp" if iso.nested else iso.workdir,
                                         env=iso.env({"MPLCONFIGDIR": "/tmp/mpl"}),
                                         preexec_fn=iso.limits(cpu_s), close_fds=True)
        finally:
            theirs.close()
        self.sock = ours
        self.buf = b""
        self.requested = 0
        self.started: dict[int, int] = {}  # request id -> pid (0: no child)
        self.ended: dict[int, int] = {}    # pid -> status

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, line: str, fds=()) -> bool:
        try:
            if fds:
                socket.send_fds(self.sock, [line.encode() + b"\n"], list(fds))
            else:
                self.sock.sendall(line.encode() + b"\n")
            return True
        except (OSError, ValueError):
            return False

    def collect(self, timeout: float) -> bool:
        """Read what the zygote said within ``timeout`` s (False: nothing, or it is gone)."""
        if self.sock.fileno() < 0:
            return False
        if not select.select([self.sock], [], [], max(0.0, timeout))[0]:
            return False
        try:
            data = self.sock.recv(1 << 16)
        except OSError:
            data = b""
        if not data:
            return False
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            words = line.decode("ascii", "replace").split()
            if len(words) == 3 and words[0] == "pid" and words[1].isdigit() and words[2].isdigit():
                self.started[int(words[1])] = int(words[2])
            elif len(words) == 3 and words[0] == "exit" and words[1].isdigit():
                try:
                    self.ended[int(words[1])] = int(words[2])
                except ValueError:
                    pass
        return True

    def spawn(self, cpu_s: float) -> ForkedProc:
        """A new worker, asked for without waiting; OSError if the zygote is known to be gone."""
        if not self.alive():
            raise OSError("the workers' zygote has stopped")
        child_in, our_in = os.pipe()    # requests: we write, the child reads
        our_out, child_out = os.pipe()  # replies: the child writes, we read
        try:
            sent = self.send(f"spawn {self.requested} {max(1, int(cpu_s))} {self.iso.memory}", fds=(child_in, child_out))
        finally:
            os.close(child_in)
            os.close(child_out)
        if not sent:
            os.close(our_in)
            os.close(our_out)
            raise OSError("the workers' zygote has stopped")
        self.requested += 1
        return ForkedProc(self, self.requested - 1, os.fdopen(our_in, "wb"), os.fdopen(our_out, "rb"))

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
        self.iso.kill(self.proc)


class ForkedJudge:
    """A judge made by the grader's zygote: ``pid`` (its process group) and ``communicate`` as ``Popen``'s."""

    def __init__(self, pid: int, stdin: int, stdout: int):
        self.pid, self._in, self._out = pid, stdin, stdout
        self._chunks: list[bytes] = []
        self._writer: threading.Thread | None = None

    def communicate(self, data: bytes = b"", timeout: float | None = None) -> tuple[bytes, None]:
        """Send ``data``, then read stdout to its end; ``subprocess.TimeoutExpired`` after ``timeout`` s
        (call again, once the judge is killed, for what it wrote)."""
        if self._writer is None:
            def write() -> None:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self._in, view[:1 << 16]):]
                except OSError:
                    pass
                finally:
                    os.close(self._in)
            self._writer = threading.Thread(target=write, daemon=True)
            self._writer.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._out is not None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"judge {self.pid}", timeout)
            if not select.select([self._out], [], [], left)[0]:
                continue
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                os.close(self._out)
                self._out = None
                break
            self._chunks.append(chunk)
        self._writer.join(timeout=5)
        return b"".join(self._chunks), None


class JudgeZygote:
    """The grader's fork server of judges (``judge`` above); ``spawn`` is safe from several threads."""

    def __init__(self, env: dict):
        from . import sandbox

        ours, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "minigrad.course._zygote", "judge"],
                                         stdin=theirs.fileno(), stdout=subprocess.DEVNULL,
                                         stderr=None if _DEBUG else subprocess.DEVNULL, env=env, cwd="/",
                                         start_new_session=True, preexec_fn=sandbox.die_with_parent)
        finally:
            theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.buf = b""

    def spawn(self, runner_out: int, runner_in: int, timeout: float = 60.0) -> ForkedJudge:
        """A fresh judge on the runner's two pipes; OSError if the zygote cannot make one."""
        with self.lock:
            if self.proc.poll() is not None:
                raise OSError("the judges' zygote has stopped")
            in_r, in_w = os.pipe()
            out_r, out_w = os.pipe()
            try:
                socket.send_fds(self.sock, [b"judge\n"], [runner_out, runner_in, in_r, out_w])
                deadline = time.monotonic() + timeout
                while b"\n" not in self.buf:
                    left = deadline - time.monotonic()
                    if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                        raise OSError("the judges' zygote did not answer")
                    chunk = self.sock.recv(4096)
                    if not chunk:
                        raise OSError("the judges' zygote has stopped")
                    self.buf += chunk
                line, self.buf = self.buf.split(b"\n", 1)
                words = line.decode("ascii", "replace").split()
                if len(words) != 2 or words[0] != "pid" or not words[1].isdigit() or int(words[1]) <= 0:
                    raise OSError("the judges' zygote could not fork")
            except OSError:
                os.close(in_w)
                os.close(out_r)
                raise
            finally:
                os.close(in_r)
                os.close(out_w)
            return ForkedJudge(int(words[1]), in_w, out_r)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


if __name__ == "__main__":
    main()
