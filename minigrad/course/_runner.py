"""Grade ONE submitted notebook: ``python -m minigrad.course._runner``, started by the grader.

With bubblewrap (the default) this process is the first one in the notebook's own sandbox (see
``sandbox.py``); with ``--no-sandbox`` it is a plain subprocess. It reads one message on stdin
(the spec: the exercises, without their checks or hidden tests, which the judge keeps; then the
student's files) and writes JSON lines
(one ``{"event": "exercise", ...}`` per exercise, then ``{"event": "done"}``) to a private copy of
stdout.

1. The student's files go into the working folder, and the notebook's code cells run one by one
   in a fresh kernel (``_kernel.py``), itself in a nested sandbox: it cannot see this process.
   The kernel never receives anything secret.
2. After each exercise's check cell (or its stub, or the end), ``_extract.plan`` picks the
   definitions the check and the hidden tests reach; the values among them are read from the
   kernel as plain data (``_values.py``).
3. A fresh worker (``_worker.py``, nested sandbox, no network, no files) loads them and answers
   the judge's questions about them (the judge, outside, runs the check and the hidden tests).
   Workers are forks of the notebook's zygote (``_zygote.py``), which imported NumPy and minigrad
   once while the kernel started; an exercise that must be checked in the sandbox
   (``_judge.IN_SANDBOX``) gets a checker process (``_checker.py``) instead.
4. The feedback is written here, one line per problem, in words this process controls: what a
   submission printed during the hidden tests never reaches it. An exercise with parts (partial
   credit) keeps the points of the parts its check and its hidden tests (``# part: NAME``) pass.
"""
from __future__ import annotations

import ast
import builtins
import json
import os
import re
import resource
import secrets
import select
import subprocess
import sys
import time
import traceback

from . import _bridge_wire, _extract, _values, _wire, _zygote
from ._kernel import OUTPUT_CAP  # characters of output kept per cell (the kernel keeps as many)
from ._verdict import Judgement

REPLY_CAP = 8 * 2**20         # bytes of one checker reply
NOTEBOOK_CAP = 50 * 2**20
SANDBOX_NPROC = 300           # processes and threads in a whole sandbox (a fork bomb stops there)
DEBUG = bool(os.environ.get("MINIGRAD_COURSE_DEBUG"))  # keep the kernel's and checkers' error output
_T0 = time.monotonic()


def _trace(what: str) -> None:
    if DEBUG:
        print(f"[runner {time.monotonic() - _T0:6.2f} s] {what}", file=sys.stderr, flush=True)
_CHECK_CALL = re.compile(r"""check\(\s*['"]([^'"]+)['"]""")


# ------------------------------------------------------------------------------------- notebook
def _src(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else str(s)


def load_notebook(raw: bytes) -> list[dict]:
    """The cells of a notebook file, read as plain JSON (nbformat is slow to import and trusts too much)."""
    if len(raw) > NOTEBOOK_CAP:
        raise ValueError(f"larger than {NOTEBOOK_CAP >> 20} MB")
    nb = json.loads(raw.decode("utf-8"))
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or nb.get("nbformat") != 4:
        raise ValueError("not an nbformat-4 notebook (no 'cells' list)")
    cells = []
    for c in nb["cells"]:
        if not isinstance(c, dict) or c.get("cell_type") not in ("code", "markdown", "raw"):
            raise ValueError("malformed cell")
        meta = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
        cells.append({"cell_type": c["cell_type"], "source": _src(c), "metadata": meta})
    return cells


def anchor_positions(cells, exercises) -> dict[int, list]:
    """Cell index after which each exercise is graded (-1: at the end): its check cell, else its stub."""
    pos: dict[int, list] = {}
    for ex in exercises:
        found = None
        for role in ("check", "stub"):
            for i, cell in enumerate(cells):
                if cell["cell_type"] != "code":
                    continue
                meta = cell["metadata"].get("minigrad_course", {})
                meta = meta if isinstance(meta, dict) else {}
                m = _CHECK_CALL.search(cell["source"]) if role == "check" else None
                if (meta.get("exercise") == ex["id"] and meta.get("role") == role) or (m and m.group(1) == ex["id"]):
                    found = i
            if found is not None:
                break
        pos.setdefault(-1 if found is None else found, []).append(ex)
    return pos


# ------------------------------------------------------------------------------------ isolation
class Isolation:
    """How the kernel and the checkers are started: nested bubblewrap sandboxes, or plain processes."""

    def __init__(self, spec: dict):
        from . import sandbox

        self.spec, self.sandbox = spec, sandbox
        self.nested = spec["isolation"] == "bwrap"
        self.python = spec["python"]
        self.memory = int(spec.get("memory_mb") or 2048)
        self.workdir = sandbox.HOME if self.nested else spec["workdir"]
        self.rundir = sandbox.RUN if self.nested else spec["rundir"]
        self._font_cache: str | bool | None = None  # the font list's path once written; False: none

    def env(self, extra: dict) -> dict:
        env = self.sandbox.sandbox_env({"HOME": self.workdir, "TMPDIR": "/tmp" if self.nested else
                                        os.path.join(self.workdir, ".tmp"),
                                        # the feedback's language: the submission's (_i18n.py)
                                        "MINIGRAD_COURSE_LANG": self.spec.get("language") or "en", **extra})
        if not self.nested:
            env["PATH"] = os.environ.get("PATH", env["PATH"])
        return env

    def limits(self, cpu_s: float, nproc: int | None = None):
        mem, set_limits = self.memory, self.sandbox.set_limits

        def apply():  # between fork and exec: no imports here
            set_limits(cpu_s, mem, nproc)
        return apply

    def font_cache(self) -> str:
        """Where the kernel finds matplotlib's font list that the grader built ("" if there is none)."""
        cache = self.spec.get("font_cache")
        if not isinstance(cache, dict) or self._font_cache is False:
            return ""
        if self._font_cache is None:
            from ._kernel import FONT_CACHE

            name, data = str(cache.get("name", "")), cache.get("data")
            self._font_cache = False
            if FONT_CACHE.fullmatch(name) and isinstance(data, str):
                path = os.path.join(self.rundir, name)  # the kernel's sandbox sees the runner's folder, read-only
                try:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(data)
                    self._font_cache = path
                except OSError:
                    pass
        return self._font_cache or ""

    def kernel_command(self) -> list[str]:
        cmd = [self.python, "-m", "minigrad.course._kernel"]
        if not self.nested:
            return cmd
        return self.sandbox.nested_command(cmd, bwrap=self.spec["bwrap"], home=True, network=False, proc=True,
                                           rebind=self.spec.get("rebind", ()))

    def checker_command(self, module: str = "_checker") -> list[str]:
        cmd = [self.python, "-I", "-m", f"minigrad.course.{module}"]
        if not self.nested:
            return cmd
        return self.sandbox.nested_command(cmd, bwrap=self.spec["bwrap"], home=False, network=False, proc=False,
                                           rebind=self.spec.get("rebind", ()))

    def kernel_policy(self) -> dict:
        if self.nested:
            return {}
        return {"audit": {"write_roots": [self.workdir],
                          "allow_read": [self.workdir, self.rundir, *self.spec.get("allow_read", [])],
                          "deny_read": list(self.spec.get("deny_read", [])) +
                          [f"/proc/{os.getpid()}", f"/proc/{os.getppid()}"]}}

    def kill(self, proc: subprocess.Popen) -> None:
        """Stop a started process and everything in its sandbox.

        Nested: killing the nested bwrap ends its PID namespace. --no-sandbox: the kernel and the
        checkers stay in the runner's process group, which the grader kills at the end of the job.
        """
        try:
            proc.kill()
        except (OSError, ProcessLookupError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


# --------------------------------------------------------------------------------------- kernel
class Kernel:
    """The notebook's kernel (``_kernel.py``) in its own sandbox, and a blocking client: run code,
    collect output, survive its death."""

    def __init__(self, iso: Isolation):
        self.iso = iso
        self.proc = self.io = None
        self.starts = 0

    def start(self, timeout: float) -> None:
        self.starts += 1
        env = self.iso.env({"MPLCONFIGDIR": "/tmp/mpl" if self.iso.nested else os.path.join(self.iso.workdir, ".mpl"),
                            "MGC_FONT_CACHE": self.iso.font_cache(),
                            "IPYTHONDIR": "/tmp/ipython" if self.iso.nested else os.path.join(self.iso.workdir,
                                                                                              ".ipython"),
                            "MGC_KERNEL": json.dumps(self.iso.kernel_policy())})
        self.proc = subprocess.Popen(self.iso.kernel_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=None if DEBUG else subprocess.DEVNULL, cwd=self.iso.workdir,
                                     env=env, preexec_fn=self.iso.limits(timeout + 30), close_fds=True)
        self.io = _bridge_wire.FrameIO(self.proc.stdout.fileno(), self.proc.stdin.fileno(), max(5.0, timeout))
        try:
            msg = self.io.read()
        except _bridge_wire.ProtocolError as e:
            raise RuntimeError(f"the kernel did not start ({e})") from None
        if msg is None:
            raise RuntimeError("the kernel exited while starting")
        if msg != {"ready": True}:
            raise RuntimeError("the kernel did not start (an unexpected first message)")

    def stop(self) -> None:
        if self.proc is not None:
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            self.iso.kill(self.proc)
        self.proc = self.io = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def run(self, code: str, *, timeout: float, store_history: bool = True) -> dict:
        """{"status": ok|error|timeout|dead, "text": output, "error": (ename, evalue), "truncated": bool}

        "dead" also when the kernel's answer is not one (a cell wrote to its channel): the runner
        then treats the cell as one that killed the kernel."""
        res = {"status": "ok", "text": "", "error": None, "truncated": False}
        try:
            self.io.write({"code": code, "store_history": bool(store_history)})
        except (OSError, ValueError):
            res["status"] = "dead"
            self.iso.kill(self.proc)
            return res
        self.io.timeout = max(0.01, timeout)
        try:
            msg = self.io.read()
        except _bridge_wire.ProtocolError as e:
            if "did not answer" in str(e) and self.alive():
                res["status"] = "timeout"
                return res
            msg = None
        if msg is None or (type(msg) is not dict or set(msg) != {"text", "truncated", "error"} or type(msg["text"]) is not str
                or type(msg["truncated"]) is not bool or not (msg["error"] is None or (
                    type(msg["error"]) is list and len(msg["error"]) == 2 and all(type(x) is str for x in msg["error"])))):
            res["status"] = "dead"  # it ended, or its channel carries what is not an answer: it is done for
            self.iso.kill(self.proc)
            return res
        res["text"] = msg["text"][:OUTPUT_CAP]
        res["truncated"] = msg["truncated"] or len(msg["text"]) > OUTPUT_CAP
        if msg["error"] is not None:
            res["status"] = "error"
            res["error"] = (msg["error"][0][:200], msg["error"][1][:1000])
        return res


# -------------------------------------------------------------------------------------- checker
def _sandbox_tasks() -> int:
    """Processes and threads in this sandbox's pid namespace (its process limit counts both)."""
    n = 0
    try:
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    n += len(os.listdir(f"/proc/{p}/task"))
                except OSError:
                    pass
    except OSError:
        return 0
    return n


READY_TIMEOUT = 60.0  # seconds a worker may take to start (its imports) before it is asked anything


class Checker:
    """A process that runs the student's definitions, started ahead of time (it imports NumPy and
    minigrad while cells run): a bridge worker (``_worker``, the judge outside asks it about the
    student's objects) or, for the exercises that cannot cross the bridge, a checker (``_checker``).

    Workers come from the notebook's zygote when it has one (a fork, not a new interpreter)."""

    def __init__(self, iso: Isolation, cpu_s: float, module: str = "_worker", zygote: "_zygote.WorkerZygote | None" = None):
        self.iso, self.module, self.cpu_s = iso, module, cpu_s
        self.proc = None
        if zygote is not None and module == "_worker":
            try:
                self.proc = zygote.spawn(cpu_s)
            except OSError:
                self.proc = None  # a worker of its own, below
        if self.proc is None:
            self._start_own()
        self.buf = b""

    def _start_own(self) -> None:
        iso = self.iso
        self.proc = subprocess.Popen(iso.checker_command(self.module), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=None if DEBUG else subprocess.DEVNULL,
                                     cwd="/tmp" if iso.nested else iso.workdir,
                                     env=iso.env({"MPLCONFIGDIR": "/tmp/mpl"}),
                                     preexec_fn=iso.limits(self.cpu_s), close_fds=True)

    def wait_ready(self, timeout: float) -> str | None:
        """None once the worker has sent its ready frame (``_worker.READY``); "" if it is still
        starting after ``timeout``; else why it stopped before ("~why" when the notebook's own
        processes or memory explain it: then it is the student's, though no student code ran in it).

        The worker sends it after its imports, before it reads the student's definitions: if it
        stops before, no student code ran in it, so the row is "not graded", never a grade. (Too
        slow to start counts as the student's: their kernel's processes share the sandbox's CPU.)"""
        io = _bridge_wire.FrameIO(self.proc.stdout.fileno(), self.proc.stdin.fileno(), timeout)
        try:
            msg = io.read()
        except _bridge_wire.ProtocolError as e:
            if "did not answer" in str(e):
                return ""  # slow, not dead
            msg = e
        if msg == {"ready": True}:
            return None
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        how = f"exit status {code}" if code is not None and code >= 0 else \
            "not made" if code == -1 and isinstance(self.proc, _zygote.ForkedProc) else \
            f"signal {-code}" if code is not None else "no ready message"
        crowd = _sandbox_tasks() if self.iso.nested else 0
        if code == -9 or crowd >= SANDBOX_NPROC // 2:
            # killed (the memory limit the kernel shares with it), or the notebook's own processes
            # hold the sandbox's process limit: the student's doing, though no student code ran here
            return "~" + (f"the notebook's processes and threads ({crowd}) use the sandbox's limit" if crowd >=
                          SANDBOX_NPROC // 2 else "it was killed (the notebook's memory use counts for it too)")
        if isinstance(self.proc, _zygote.ForkedProc):  # a fork that failed: once more, as a process of its own
            _trace(f"a forked worker did not start ({how}): starting one of its own")
            self.iso.kill(self.proc)
            try:
                self._start_own()
            except OSError:
                return f"the grader's process that runs the student's code could not start ({how})"
            self.buf = b""
            return self.wait_ready(timeout)
        return f"the grader's process that runs the student's code stopped before it started ({how})"

    def send(self, obj) -> bool:
        try:
            _wire.write_message(self.proc.stdin, obj)
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def receive(self, timeout: float) -> dict | None:
        """The next reply line (None: it died, timed out, or sent something that is not a reply)."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or len(self.buf) > REPLY_CAP:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except ValueError:
            return None
        return reply if isinstance(reply, dict) else None

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.iso.kill(self.proc)


# ------------------------------------------------------------------------------------- feedback
def _cell_note(label: str, error) -> str:
    ename, evalue = error
    text = _one_line(evalue, 300)
    return f"{label} raised {ename}" + (f": {text}" if text else "")


_NO_MODULE = re.compile(r"No module named '([^']+)'|cannot import name '[^']+' from '([^']+)'")


def course_modules(instructor_imports) -> set:
    """Top-level modules the instructor's notebook imports: the grader's environment must have them."""
    out = set()
    for src in instructor_imports:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                out.add(node.module.split(".")[0])
    return out


def infrastructure_error(source: str, error, instructor_imports) -> str:
    """Why a cell's error is the grader's environment's fault, not the student's ("" if it is not).

    An import the course itself needs (one of the instructor notebook's modules) that fails, or the
    course's own import cell refused by the grader's guard: every student would fail the same way.
    """
    ename, evalue = error
    if ename in ("ModuleNotFoundError", "ImportError"):
        m = _NO_MODULE.search(evalue)
        mod = (m.group(1) or m.group(2)) if m else ""
        hidden = mod == "minigrad.course.exercises" or mod.startswith("minigrad.course.exercises.")  # on purpose
        if mod and not hidden and mod.split(".")[0] in course_modules(instructor_imports):
            return f"the grader's Python environment cannot import {mod} ({ename}: {_one_line(evalue, 200)})"
    if ename == "PermissionError" and "grader sandbox" in evalue:
        try:
            body = ast.parse(source).body
        except SyntaxError:
            return ""
        ours = set(instructor_imports)
        if body and all(isinstance(s, (ast.Import, ast.ImportFrom)) and ast.unparse(s) in ours for s in body):
            return f"the grader's guard refused the course's own imports ({_one_line(evalue, 200)})"
    return ""


def _one_line(text: str, cap: int) -> str:
    """``text`` on one line, cut at the end of a sentence (or a word) before ``cap`` characters, never mid-phrase."""
    flat = " ".join(str(text).split())
    if len(flat) <= cap:
        return flat.rstrip(",;:")
    head = flat[:cap]
    for mark in (". ", "; ", ": "):
        k = head.rfind(mark)
        if k >= cap // 3:
            return head[:k + 1].rstrip(";:") + " […]"
    k = head.rfind(" ")
    return (head[:k] if k > 0 else head).rstrip(",;:") + " […]"


def needed_for(ex: dict, instructor_imports) -> tuple[set, str]:
    """(the student's names an exercise's check and hidden tests use, the instructor's imports they use)."""
    test_free = _extract.free_names(ex.get("check_source", "")) | _extract.free_names(ex.get("hidden_source", ""))
    imports, inst_names = [], set()
    for src in instructor_imports:
        names = _extract.bound_names(src)
        if names & test_free:
            imports.append(src)
            inst_names |= names
    answers = set(ex.get("answers", []))
    needed = {n for n in test_free if n in answers or (n not in inst_names and n != "check"
                                                       and not hasattr(builtins, n))}
    return needed, "\n".join(imports)


# ---------------------------------------------------------------------------------------- runner
class Runner:
    def __init__(self, spec: dict, files: dict, emit):
        self.spec, self.files, self.emit = spec, files, emit
        self.iso = Isolation(spec)
        self.exercises = spec["exercises"]
        self.deadline = time.monotonic() + float(spec["timeout"])
        self.graded: set = set()
        self.notes: dict[int, str] = {}      # cell position -> what went wrong there
        self.executed: set = set()           # positions of the cells the kernel ran
        self.killers: set = set()
        self.spare: Checker | None = None
        self.zygote: _zygote.WorkerZygote | None = None
        self.infrastructure = ""             # why nothing can be graded here (the grader's fault), if so
        self.skip = set(spec.get("skip") or [])  # digests of the instructor's cells grading need not run
        self.t0 = _T0                        # when this process started its work (the module's import)
        self.phases = {"setup": 0.0, "kernel": 0.0, "cells": 0.0, "checks": 0.0}  # seconds, by phase

    def left(self) -> float:
        return self.deadline - time.monotonic()

    # ---- results
    def result(self, ex, feedback: str, *, outcome: str = "failed", flagged: str = "", check=None, **extra) -> None:
        if ex["id"] in self.graded:
            return
        self.graded.add(ex["id"])
        if self.infrastructure:  # not the student's fault: the grader says so instead of a grade
            feedback, extra = f"not graded: {self.infrastructure}", {**extra, "infrastructure": True}
        self.emit({"event": "exercise", "id": ex["id"], "outcome": outcome, "feedback": feedback[:4000],
                   "flagged": flagged[:500], "check": check or [], **extra})

    def fail_rest(self, reason: str) -> None:
        for ex in self.exercises:
            self.result(ex, reason)

    # ---- the working folder
    def write_files(self) -> None:
        root = os.path.realpath(self.iso.workdir)
        os.makedirs(root, exist_ok=True)
        for rel, data in self.files.items():
            path = os.path.realpath(os.path.join(root, rel))
            if not path.startswith(root + os.sep):
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        if not self.iso.nested:
            os.makedirs(os.path.join(root, ".tmp"), exist_ok=True)  # the kernel's TMPDIR

    # ---- main loop
    def run(self) -> None:
        try:
            cells = load_notebook(self.files.get(self.spec["notebook"], b""))
        except Exception as e:
            msg = str(e).splitlines()[0][:200] if str(e) else ""
            self.fail_rest(f"not a valid notebook ({type(e).__name__}: {msg})")
            return
        self.write_files()
        self.cells = cells
        self.code = _extract.code_cells(cells)
        self.by_pos = {c.pos: c for c in self.code}
        self.labels = {c.label for c in self.code}
        self.functions = {n.name for c in self.code if c.tree is not None for n in ast.walk(c.tree)
                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        positions = anchor_positions(cells, self.exercises)
        self.range_start = {}
        prev = -1
        for pos in sorted(p for p in positions if p >= 0):
            for ex in positions[pos]:
                self.range_start[ex["id"]] = prev
            prev = pos
        for ex in positions.get(-1, []):
            self.range_start[ex["id"]] = prev
        try:  # the workers' fork server imports NumPy and minigrad while the kernel starts
            self.zygote = _zygote.WorkerZygote(self.iso, self.left() + 5, READY_TIMEOUT)
        except OSError:
            self.zygote = None
        try:  # the first worker exists before the notebook runs (whatever the notebook does to the sandbox)
            self.spare = Checker(self.iso, self.left() + 5, zygote=self.zygote)
        except OSError:
            self.spare = None
        kernel = Kernel(self.iso)
        _trace("starting the kernel")
        self.phases["setup"] = time.monotonic() - self.t0
        t0 = time.monotonic()
        try:
            kernel.start(min(60.0, max(5.0, self.left())))
            self.phases["kernel"] += time.monotonic() - t0
            _trace("kernel ready")
        except Exception as e:
            kernel.stop()
            self.close_workers()
            self.infrastructure = f"the notebook's kernel did not start ({type(e).__name__}: {_one_line(e, 200)})"
            self.fail_rest("")
            return
        try:
            self.loop(kernel, cells, positions)
        finally:
            _trace("stopping")
            t0 = time.monotonic()
            kernel.stop()
            self.phases["kernel"] += time.monotonic() - t0
            self.close_workers()
            _trace("stopped")
        if self.left() <= 0:
            self.fail_rest(f"time limit exceeded ({self.spec['timeout']:g} s for the notebook) before this exercise "
                           "was graded: a cell ran too long (an infinite loop?)")
        self.fail_rest("not reached: " + ("; ".join(list(dict.fromkeys(self.notes.values()))[-2:])
                                         or "the notebook stopped early"))

    def close_workers(self) -> None:
        for p in (self.spare, self.zygote):
            if p is not None:
                p.close()
        self.spare = self.zygote = None

    def loop(self, kernel: Kernel, cells, positions) -> None:
        restarts = 0
        i = 0
        while i < len(cells):
            cell = self.by_pos.get(i)
            if cell is not None and i not in self.killers and not self.skipped(i):
                status = self.run_cell(kernel, cell)
                if status == "dead":
                    self.killers.add(i)
                    self.executed.discard(i)
                    self.notes[i] = (f"{cell.label} killed the kernel (os._exit, a crash, or the memory limit): "
                                     "it was skipped and the cells before it were run again")
                    restarts += 1
                    kernel.stop()
                    if restarts > 3 or self.left() <= 0:
                        return
                    try:
                        t0 = time.monotonic()
                        kernel.start(min(60.0, max(5.0, self.left())))
                        self.phases["kernel"] += time.monotonic() - t0
                    except Exception as e:
                        self.notes[i] += f"; the kernel did not start again ({type(e).__name__})"
                        return
                    if not self.replay(kernel, i):
                        return
                elif status == "timeout":
                    self.notes[i] = f"{cell.label} was still running when the time limit was reached"
                    return
            if self.infrastructure:
                return  # every exercise says "not graded" (run() ends with fail_rest)
            for ex in positions.get(i, []):
                self.timed_grade(kernel, ex, i)
            if not kernel.alive():
                return
            i += 1
        for ex in positions.get(-1, []):
            self.timed_grade(kernel, ex, len(cells))

    def replay(self, kernel: Kernel, upto: int) -> bool:
        """Run again, without grading, the cells before the one that killed the kernel."""
        for pos in sorted(p for p in self.executed if p < upto):
            r = kernel.run(self.by_pos[pos].source, timeout=max(0.5, self.left()))
            if r["status"] in ("dead", "timeout"):
                self.killers.add(pos)
                self.executed.discard(pos)
                return False
        return True

    def run_cell(self, kernel: Kernel, cell) -> str:
        t0 = time.monotonic()
        r = kernel.run(self.cells[cell.pos]["source"], timeout=max(0.5, self.left()))
        self.phases["cells"] += time.monotonic() - t0
        _trace(f"{cell.label}: {r['status']}")
        if r["status"] in ("ok", "error"):
            self.executed.add(cell.pos)
        if r["status"] == "error" and r["error"]:
            self.notes[cell.pos] = _cell_note(cell.label, r["error"])
            why = infrastructure_error(self.cells[cell.pos]["source"], r["error"], self.spec.get("instructor_imports", []))
            if why:
                self.infrastructure = f"{why}, in {cell.label}"
        elif r["truncated"]:
            self.notes[cell.pos] = f"{cell.label} printed more than {OUTPUT_CAP} characters: the rest was discarded"
        return r["status"]

    # ---- one exercise
    def needed_names(self, ex) -> tuple[set, str]:
        """(names the check and hidden tests take from the student, the instructor's imports they use).

        The grader computes them outside (``needed_for``), so that the check's and the hidden
        tests' sources need not come here; an exercise checked in the sandbox brings them.
        """
        if "needed" in ex:
            return set(ex["needed"]), ex.get("imports", "")
        return needed_for(ex, self.spec.get("instructor_imports", []))

    def skipped(self, pos: int) -> bool:
        """A cell grading does not run: the instructor's own text of a ``grading-skip`` cell (_skip.py)."""
        if not self.skip:
            return False
        from ._skip import digest

        if digest(_src(self.cells[pos])) in self.skip:
            self.phases["skipped"] = self.phases.get("skipped", 0) + 1
            return True
        return False

    def timed_grade(self, kernel: Kernel, ex, anchor: int) -> None:
        t0 = time.monotonic()
        try:
            self.grade(kernel, ex, anchor)
        finally:
            self.phases["checks"] += time.monotonic() - t0

    def grade(self, kernel: Kernel, ex, anchor: int) -> None:
        if self.left() <= 0:
            self.result(ex, f"time limit exceeded ({self.spec['timeout']:g} s for the notebook) before this "
                            "exercise was graded")
            return
        start = self.range_start.get(ex["id"], -1)
        # what went wrong in the exercise's cells (its check cell's own error repeats the check's finding)
        notes = [self.notes[p] for p in sorted(self.notes) if start < p < anchor or (p == anchor and not
                 _CHECK_CALL.search(self.cells[p]["source"]))]
        stub_cells = [self.by_pos[p].label for p in sorted(self.notes)
                      if start < p <= anchor and "raised NotImplementedError" in self.notes[p]]
        needed, imports = self.needed_names(ex)
        cells = [c for c in self.code if c.pos <= anchor and c.pos in self.executed]
        plan = _extract.plan(cells, needed)
        prefer_all, absent_all, asked = set(), set(), set()
        values, reasons = {}, {}
        for _ in range(3):  # the kernel corrects the reading of the source (see _extract.plan)
            if plan.flags:
                self.result(ex, "tampering detected: the code the check runs " + "; ".join(plan.flags[:4]) +
                            ". The grader does not run such code (it can reach outside the exercise).",
                            flagged="tampering: " + "; ".join(plan.flags[:3]))
                return
            query = sorted((set(plan.data) | plan.defined) - asked)
            asked |= set(query)
            got = self.export(kernel, query) if query else {}
            for name, (kind, val) in got.items():
                if kind == "value":
                    values[name] = val
                elif kind == "unsupported":
                    reasons[name] = (f"its value is a {val}: the grader passes only numbers, strings, lists, "
                                     "tuples, dicts, NumPy arrays and tensors from the notebook to the check")
                elif kind == "missing":
                    reasons[name] = ("it is not defined in the notebook's code cells before this exercise is graded"
                                     if name in plan.unbound else
                                     "it has no value when this exercise is graded (did the cell that sets it run?)")
                    if name in plan.defined:
                        absent_all.add(name)
                else:
                    prefer_all.add(name)  # a function, class or module: a conditional re-binding did not run
            if not ({n for n in plan.data if n in prefer_all} or plan.defined & absent_all):
                break
            plan = _extract.plan(cells, needed, prefer_definitions=prefer_all, absent=absent_all)
        notes = notes + plan.notes
        values = {n: v for n, v in values.items() if n in plan.data}
        unavailable = {**plan.unavailable, **{n: r for n, r in reasons.items() if n in plan.data}}
        load = []
        for cell, stmt in plan.load:
            if load and load[-1]["label"] == cell.label:
                load[-1]["stmts"].append(stmt)
            else:
                load.append({"label": cell.label, "filename": cell.filename, "source": cell.source, "stmts": [stmt]})
        module = "_checker" if ex.get("in_sandbox") else "_worker"
        checker, self.spare = self.spare, None
        try:
            if checker is not None and (checker.module != module or checker.proc.poll() is not None):
                checker.close()
                checker = None
            if checker is None:
                checker = Checker(self.iso, self.left() + 5, module, self.zygote)
        except OSError as e:  # e.g. the notebook's processes use up the sandbox's limit (a fork bomb)
            self.result(ex, f"✗ the checker could not start ({e.strerror or e}): the notebook used "
                            "every process the sandbox allows")
            return
        try:
            try:  # the next exercise's checker starts while this one runs
                later = [e for e in self.exercises if e["id"] not in self.graded and e["id"] != ex["id"]]
                nxt = "_checker" if later and later[0].get("in_sandbox") else "_worker"
                self.spare = Checker(self.iso, self.left() + 5, nxt, self.zygote) \
                    if later and self.left() > 1 else None
            except OSError:
                self.spare = None
            try:
                run = self.run_checker if module == "_checker" else self.run_bridge
                run(checker, ex, load, values, needed, imports, unavailable, notes, stub_cells)
            except (TypeError, ValueError, AttributeError, KeyError) as e:  # a reply that is not what we sent for
                self.result(ex, f"✗ the checker's reply could not be read ({type(e).__name__})")
        finally:
            checker.close()

    def export(self, kernel: Kernel, names: list) -> dict:
        """What the kernel holds for these names (values as data), read with one cell."""
        if not kernel.alive():
            return {n: ("missing", "") for n in names}
        nonce = secrets.token_hex(16)
        code = (f"from minigrad.course._values import export as _mgc_export\n"
                f"print(_mgc_export(globals(), {names!r}, {nonce!r}))\ndel _mgc_export")
        r = kernel.run(code, timeout=max(0.5, min(30.0, self.left())), store_history=False)
        return _values.parse_export(r["text"], nonce, names)

    def judgement(self, ex, unavailable, notes, stub_cells) -> Judgement:
        return Judgement(ex, labels=self.labels, functions=self.functions, unavailable=unavailable, notes=notes,
                         stub_cells=stub_cells)

    def run_checker(self, checker: Checker, ex, load, values, needed, imports, unavailable, notes, stub_cells):
        """In the sandbox: the check and the hidden tests next to the student's code (``_judge.IN_SANDBOX`` only)."""
        _trace(f"{ex['id']}: checker")

        def run_check():
            ok = checker.send({"id": ex["id"], "bundle": self.spec["bundle"], "course_dir": self.spec.get("course_dir", ""),
                               "instructor_imports": imports, "check_source": ex.get("check_source", ""),
                               "names": sorted(needed), "load": load, "values": values})
            return checker.receive(max(0.5, self.left())) if ok else None

        def run_hidden(src):
            return checker.receive(max(0.5, self.left())) if checker.send({"source": src}) else None

        res = self.judgement(ex, unavailable, notes, stub_cells).decide(run_check, run_hidden, lambda: self.left() <= 0)
        self.result(ex, res.pop("feedback"), **res)

    def run_bridge(self, worker: Checker, ex, load, values, needed, imports, unavailable, notes, stub_cells):
        """Outside judgement: the worker holds the student's objects; the grader's judge asks it about them.

        The judge's requests come on this process's stdin and the worker's replies go to its stdout,
        frame by frame and unread, until the judge's ``{"relay": "end"}``: nothing secret comes in.
        """
        _trace(f"{ex['id']}: worker")
        why = worker.wait_ready(max(1.0, min(READY_TIMEOUT, self.left())))
        if why == "":
            self.result(ex, f"✗ the process that runs your code did not start within {READY_TIMEOUT:g} s (the "
                            "notebook's own processes share its CPU and its process limit)")
            return
        if why is not None and why.startswith("~"):
            self.result(ex, f"✗ the process that runs your code could not start: {why[1:]}")
            return
        if why is not None:  # it died before it ran any of the student's code: the grader's failure
            self.result(ex, f"not graded: {why}", infrastructure=True)
            return
        if not worker.send({"load": load, "values": values}):
            self.result(ex, "✗ the process that runs your code stopped before it had loaded your definitions")
            return
        self.graded.add(ex["id"])  # the judge reports this exercise's result
        self.emit({"event": "bridge", "id": ex["id"], "needed": sorted(needed), "imports": imports,
                   "labels": sorted(self.labels), "functions": sorted(self.functions), "unavailable": unavailable,
                   "notes": notes, "stub_cells": stub_cells,
                   "load": [{"source": i["source"], "stmts": i["stmts"]} for i in load]})
        self.relay(worker)
        _trace(f"{ex['id']}: relay done")

    def relay(self, worker: Checker) -> None:
        judge_in = self.judge_io
        work_io = _bridge_wire.FrameIO(worker.proc.stdout.fileno(), worker.proc.stdin.fileno(), None)
        fds = [judge_in.read_fd, work_io.read_fd]
        while True:
            left = self.left() + 10  # the judge keeps the time; this is a last resort
            if left <= 0:
                self.emit({"relay": "timeout"})
                return self.drain()
            ready = select.select(fds, [], [], min(left, 5.0))[0]
            if judge_in.read_fd in ready or judge_in.buffered():
                msg = judge_in.read()
                if msg is None:
                    raise EOFError("the grader closed its end")
                if msg == {"relay": "end"}:
                    return
                try:
                    work_io.write(msg)
                except OSError:  # the worker died: the judge reads that as a closed channel
                    self.emit({"relay": "closed"})
                    return self.drain()
            if work_io.read_fd in ready or work_io.buffered():
                try:
                    msg = work_io.read()
                except _bridge_wire.ProtocolError as e:
                    self.emit({"relay": "broken", "why": str(e)[:200]})
                    return self.drain()
                if msg is None:
                    self.emit({"relay": "closed"})
                    return self.drain()
                self.emit(msg)

    def drain(self) -> None:
        """After a broken relay: skip the judge's frames until its end of this exercise."""
        while True:
            msg = self.judge_io.read()
            if msg is None:
                raise EOFError("the grader closed its end")
            if msg == {"relay": "end"}:
                return


def read_input(stream) -> tuple[dict, dict]:
    spec = _wire.read_message(stream)
    if spec is None:
        raise ValueError("no spec on stdin")
    files = {}
    for rel, size in spec.pop("files", []):
        data = stream.read(int(size))
        if len(data) != int(size):
            raise ValueError("truncated files")
        files[str(rel)] = data
    return spec, files


def _drop_limits(spec: dict) -> None:
    """The sandbox-wide limits, set by its first process (the runner) before anything else starts."""
    if spec.get("isolation") == "bwrap":
        resource.setrlimit(resource.RLIMIT_NPROC, (SANDBOX_NPROC, SANDBOX_NPROC))
        cap = max(4096, 2 * int(spec.get("memory_mb") or 2048)) << 20  # this process: a runaway stays bounded
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main() -> None:
    out = _wire.private_stdout()
    sys.stdout = open(os.devnull, "w")
    if not DEBUG:
        sys.stderr = sys.stdout
    # frames both ways: the runner's events and, during an exercise, the worker's replies relayed
    io = _bridge_wire.FrameIO(0, out, None)

    def emit(obj):
        try:
            io.write(obj)
        except ValueError as e:  # NaN or over the frame limit: say so rather than stop
            io.write({"event": "runner-error", "error": f"an event could not be sent ({str(e)[:200]})"})

    _trace("runner started")
    try:
        spec, files = read_input(sys.stdin.buffer)  # all of it arrives before anything else is sent
        os.environ["MINIGRAD_COURSE_LANG"] = spec.get("language") or "en"  # its own verdicts too (_i18n)
        _drop_limits(spec)
        runner = Runner(spec, files, emit)
        runner.judge_io = io
        try:
            runner.run()
        finally:  # where the notebook's time went (benchmarks/grading.py prints it)
            emit({"event": "phases", **{k: round(v, 3) for k, v in runner.phases.items()},
                  "total": round(time.monotonic() - runner.t0, 3)})
    except BaseException as e:  # report, never crash silently
        emit({"event": "runner-error", "error": f"{type(e).__name__}: {e}"[:500],
              "trace": traceback.format_exc()[-2000:]})
    emit({"event": "done"})
    _trace("done")
    os._exit(0)


if __name__ == "__main__":
    main()
