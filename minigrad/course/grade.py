"""``minigrad-course grade``: autograde a folder of submissions into a gradebook.

SUBMISSIONS holds one folder per student (or Canvas's flat download); each student's notebooks are
found by the identity ``release`` wrote into them, else by their file name (``submissions.py``).
``--chapters``/``--assignment`` restrict the run to one assignment's exercises, out of its points
(``assignment.py``). Every (student, notebook) pair is graded by its own runner process
(``minigrad.course._runner``) inside its own bubblewrap sandbox (``sandbox.py``): the notebook
runs in a fresh kernel, and each exercise's verdict comes from a fresh checker process that loads
only the student's definitions. The student's files, the hidden tests and the check sources reach
the sandbox through a pipe, never as files (the book's own checks, ``course/checks/``, too). The
gradebook (``grades.csv``, ``grades.json``: one row per student, notebook and exercise, with
``parts`` and ``flagged`` columns), ``totals.csv`` and the LMS files (``gradebook.py``) are written
atomically into OUT, with a histogram of the scores of each exercise (``scores_by_exercise.png``)
and the instructor's report (``report.html``, ``report.py``). ``--shard i/n`` grades one shard of
the class into a partial gradebook, for ``merge`` (``shard.py``).

A run holds a lock on OUT (a second run into the same folder refuses), and SIGTERM or SIGINT stop
every sandbox at once, remove the scratch folder and leave the previous gradebook untouched.
"""
from __future__ import annotations

import ast
import fcntl
import hashlib
import io
import json
import os
import queue
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import _cgroup, _kernel, _zygote
from . import assignment as assignment_mod
from . import custom, gradebook
from . import shard as _shard
from . import sandbox as _sandbox
from . import submissions as submissions_mod
from ._extract import bound_names, python_source
from . import _i18n
from . import _skip
from ._judge import IN_SANDBOX
from ._runner import needed_for
from ._wire import write_message
from .notebooks import is_hidden_tests, is_solution_code, parse_exercises
from .release import book_notebooks, find_source_root

FIELDS = gradebook.FIELDS
FEEDBACK_CAP = 2000
EXTRA_ENV = "MINIGRAD_COURSE_EXTRA_EXERCISES"
FOLDER_CAP = 64 * 2**20      # bytes of a student's folder handed to one sandbox
JOB_MEMORY_EXTRA_MB = 1024   # a job's cgroup: the kernel's --memory, plus the runner, checkers and tmpfs
JOB_PIDS = 400               # a job's cgroup: processes and threads (the runner's rlimit is 300 per uid)
SCRATCH_PREFIX = ".grading-"
LOCK_NAME = ".grade.lock"
NO_SANDBOX_WARNING = ("graded WITHOUT the bubblewrap sandbox (--no-sandbox): the students' code ran with "
                      "your user's rights, guarded only by in-process checks that determined code can get "
                      "around. Use this only for submissions you trust.")


class GradingInterrupted(RuntimeError):
    """SIGTERM or SIGINT stopped the run: every sandbox was stopped and nothing was written."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"grading interrupted by {signal.Signals(signum).name}: every notebook was stopped, "
                         "the scratch folder removed, and the previous gradebook (if any) left unchanged")


@dataclass
class SourceNotebook:
    name: str
    exercises: list  # dicts: id, title, max_points, check_source, hidden_source, answers
    instructor_imports: list = field(default_factory=list)  # the instructor notebook's import statements
    skip: list = field(default_factory=list)  # digests of the cells grading need not run (_skip.py)


def _course_dir() -> Path:
    return Path(__file__).resolve().parent


def course_bundle(extra_dirs=()) -> list:
    """Source text of minigrad.course (and its exercise modules): the checker builds its own copy from it."""
    d = _course_dir()
    bundle = [("minigrad.course.numbering", ((d / "numbering.py").read_text(), False)),  # imported by __init__
              # the feedback's catalogues travel as data: the checker reads no file
              ("minigrad.course._i18n", (_i18n.bundled_source(), False)),
              ("minigrad.course", ((d / "__init__.py").read_text(), True)),
              ("minigrad.course.diagnose", ((d / "diagnose.py").read_text(), False)),
              ("minigrad.course.exercises", ("import_errors = {}\n", True))]
    seen = set()
    for folder in [d / "exercises", *map(Path, extra_dirs)]:
        for p in sorted(Path(folder).glob("ch[0-9][0-9]*.py")):
            if p.stem not in seen:
                seen.add(p.stem)
                bundle.append((f"minigrad.course.exercises.{p.stem}", (p.read_text(), False)))
    return bundle


def _extra_dirs() -> list[str]:
    return [p for p in os.environ.get(EXTRA_ENV, "").split(os.pathsep) if p]


def load_registry():
    from . import _load_exercises, registry

    _load_exercises()
    return registry


def _instructor_imports(nb) -> list[str]:
    """The top-level import statements of the instructor notebook's ordinary code cells."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code" or is_solution_code(cell) or is_hidden_tests(cell):
            continue
        src = python_source(cell.source) or ""
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for stmt in tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and not getattr(stmt, "level", 0):
                text = ast.unparse(stmt)
                if text not in out:
                    out.append(text)
    return out


def load_sources(root: Path) -> list[SourceNotebook]:
    registry = load_registry()
    custom.load_folder(custom.book_checks_dir(root))  # the book's own checks: their points, titles, parts
    out = []
    for path in book_notebooks(root):
        nb = nbformat.read(path, as_version=4)
        exs = []
        for ex in parse_exercises(nb):
            if ex.check_cell is None and not ex.hidden_cells:
                continue  # nothing to grade it with (e.g. a worked example with a collapsed solution)
            reg = registry.get(ex.id)
            if reg is not None and not reg.graded:
                continue  # a practice exercise (graded=False): self-check only, never in a gradebook
            answers = set()
            for i in ex.solution_cells:
                if nb.cells[i].cell_type == "code":
                    answers |= bound_names(nb.cells[i].source)
            exs.append({
                "id": ex.id, "title": reg.title if reg else ex.title,
                "max_points": float(reg.points) if reg else 1.0,
                "check_source": nb.cells[ex.check_cell].source if ex.check_cell is not None else "",
                "hidden_source": ex.hidden_source(nb) or "", "answers": sorted(answers),
            })
        if exs:
            skip, _ = _skip.skippable(nb.cells)
            out.append(SourceNotebook(path.name, exs, _instructor_imports(nb), sorted(skip)))
    return out


def _tree_hash(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                h = hashlib.sha256()
                with open(p, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                out[rel] = h.hexdigest()
            elif p.is_dir():
                out[rel] = "dir"
    return out


def student_files(folder: Path, notebook: str, cap: int = FOLDER_CAP, *, submitted: Path | None = None,
                  only: list | None = None) -> tuple[dict, list]:
    """The regular files of a student's folder (no symlinks, no special files), the notebook first.

    ``submitted``: the student's file for ``notebook`` when its name differs (a renamed copy found
    by its identity): it is handed over under the released name. ``only``: [(file, name)] instead of
    a folder (Canvas's flat download). Returns ({relative path: bytes}, [what was left out]).
    Nothing is ever written back.
    """
    files, skipped, total = {}, [], 0
    submitted = submitted or folder / notebook
    named: dict = {submitted: notebook}
    if only is not None:
        found = [f for f, name in only if "/" not in name and not name.startswith(".")]
        named.update({f: name for f, name in only if f != submitted})
    else:
        found = []
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in submissions_mod.JUNK_FOLDERS)
            found += [Path(dirpath) / f for f in sorted(filenames) if not f.startswith(".")]
    order = [submitted] + [p for p in found if p != submitted and p != folder / notebook]
    for p in order:
        rel = named.get(p) or str(p.relative_to(folder))
        try:
            st = p.lstat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            if p.is_symlink():
                skipped.append(f"{rel} (a symbolic link)")
            continue
        if total + st.st_size > cap:
            skipped.append(f"{rel} (over the {cap >> 20} MB limit of a student's folder)")
            continue
        try:
            with open(os.open(p, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f:
                data = f.read(st.st_size + 1)[: st.st_size]
        except OSError:
            continue
        files[rel] = data
        total += len(data)
    return files, skipped


# ---------------------------------------------------------------------------------------- runs
class RunLock:
    """OUT/.grade.lock, held (flock) for the whole run: a second run into the same OUT refuses."""

    def __init__(self, out: Path):
        self.path = out / LOCK_NAME
        self.fd = None

    def __enter__(self):
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    who = os.read(fd, 200).decode(errors="replace").strip()
                finally:
                    os.close(fd)
                raise RuntimeError(f"another `minigrad-course grade` is writing into {self.path.parent} "
                                   f"({who or 'pid unknown'}); wait for it to finish, or choose another --out")
            try:  # the file may have been removed by the run that just finished: lock the current one
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc):
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)
        return False


def clean_scratch(out: Path, log=print) -> None:
    """Remove the scratch folders that a killed run left in OUT (only ever called under the lock)."""
    for p in out.glob(SCRATCH_PREFIX + "*"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
            log(f"removed {p.name}, left by a grading run that was killed")


class _Signals:
    """SIGTERM and SIGINT raise GradingInterrupted in the main thread (when grade() runs there).

    While the gradebook is being written (``finishing``), a signal no longer interrupts: the run is done.
    """

    def __init__(self):
        self.old = {}
        self.finishing = False

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            def handler(signum, frame):
                if not self.finishing:
                    raise GradingInterrupted(signum)

            for sig in (signal.SIGTERM, signal.SIGINT):
                self.old[sig] = signal.signal(sig, handler)
        return self

    def __exit__(self, *exc):
        for sig, h in self.old.items():
            signal.signal(sig, h)
        return False


class Jobs:
    """The running sandboxes: each one's process group, so that all can be stopped at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.procs: set = set()
        self.stopping = threading.Event()

    def start(self, cmd, env, group: "_cgroup.JobGroup | None" = None, pass_fds=()) -> subprocess.Popen | None:
        with self.lock:
            if self.stopping.is_set():
                return None
            debug = bool(os.environ.get("MINIGRAD_COURSE_DEBUG"))  # the sandboxes' errors on this stderr

            def before_exec():  # in the child: no imports here
                _sandbox.die_with_parent()
                if group is not None:
                    group.enter()

            p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=None if debug else subprocess.DEVNULL, env=env, start_new_session=True, cwd="/",
                                 preexec_fn=before_exec, pass_fds=pass_fds)
            self.procs.add(p)
            return p

    def adopt(self, p):
        """Track a process started elsewhere (a forked judge: its own session); None when stopping."""
        with self.lock:
            if self.stopping.is_set():
                self.kill(p)
                return None
            self.procs.add(p)
            return p

    def kill(self, p: subprocess.Popen) -> None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass

    def done(self, p: subprocess.Popen) -> None:
        self.kill(p)  # nothing of the sandbox may survive (bwrap: its PID namespace dies with it)
        with self.lock:
            self.procs.discard(p)

    def stop_all(self) -> None:
        with self.lock:
            self.stopping.set()
            procs = list(self.procs)
        for p in procs:
            self.kill(p)


def run_job(jobs: Jobs, cmd, env, spec: dict, files: dict, hard_timeout: float,
            group: "_cgroup.JobGroup | None" = None, judge: dict | None = None,
            judges: "_zygote.JudgeZygote | None" = None) -> list[dict]:
    """Start one runner (in its cgroup, if any) and its judge, hand over the spec and the files, collect the events.

    The judge (``_judge.py``, outside the sandbox) holds the checks and the hidden tests and talks
    to the runner directly; the grader reads the judge's events. ``judges``: the run's judge zygote
    (a judge is then a fork of a process that has its imports done); without one, or if it fails,
    the judge is a new process.
    """
    p = jobs.start(cmd, env, group)
    if p is None:
        return [{"event": "runner-error", "error": "the run was stopped"}]
    buf = io.BytesIO()
    manifest = [[rel, len(data)] for rel, data in files.items()]
    write_message(buf, {**spec, "files": manifest}, b"".join(files.values()))
    runner_input = buf.getvalue()
    fds = (p.stdout.fileno(), p.stdin.fileno())
    q = None
    if judges is not None:
        try:
            q = jobs.adopt(judges.spawn(*fds))
        except OSError:
            q = None
    if q is None:
        q = jobs.start([sys.executable, "-m", "minigrad.course._judge", *map(str, fds)], judge_env(), pass_fds=fds)
    p.stdin.close()  # the judge holds the runner's pipes now
    p.stdout.close()
    if q is None:
        jobs.done(p)
        return [{"event": "runner-error", "error": "the run was stopped"}]
    buf = io.BytesIO()
    write_message(buf, {**(judge or {}), "payload": len(runner_input)}, runner_input)
    try:
        out, _ = q.communicate(buf.getvalue(), timeout=hard_timeout)
        killed = False
    except subprocess.TimeoutExpired:
        jobs.kill(p)
        jobs.kill(q)
        out, _ = q.communicate()
        killed = True
    finally:
        jobs.done(q)
        jobs.done(p)
    events = []
    for line in out.decode("utf-8", "replace").splitlines()[:10_000]:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict):
            events.append(ev)
    if killed:
        events.append({"event": "killed"})
    elif not any(e.get("event") == "done" for e in events):
        events.append({"event": "runner-error", "error": "the grading sandbox stopped unexpectedly"
                       + (" (stopped by the user)" if jobs.stopping.is_set() else "")})
    return events


def judge_env() -> dict:
    """A judge's environment: the grader's own (it runs no student code)."""
    return dict(os.environ, PYTHONDONTWRITEBYTECODE="1")


def _share(points, max_points) -> float | None:
    try:
        p, m = float(points), float(max_points)
    except (TypeError, ValueError):
        return None
    return max(0.0, min(1.0, p / m)) if m > 0 and p == p else None


def exercise_points(ex: dict, event: dict) -> float:
    """The points of one graded exercise, out of ``ex["max_points"]`` (the assignment's points):

    0 when flagged or failed; for an exercise with parts that is ``partial`` (some parts right),
    the share of the parts' points; else the check's share of its points (all of them when there
    is only a hidden test)."""
    outcome = event.get("outcome")
    if event.get("flagged") or outcome not in ("passed", "partial"):
        return 0.0
    parts = [p for p in event.get("parts") or [] if isinstance(p, dict)]
    if parts:
        share = _share(sum(float(p.get("points", 0) or 0) for p in parts),
                       sum(float(p.get("max_points", 0) or 0) for p in parts))
    elif outcome == "partial":
        return 0.0
    else:
        checks = [c for c in event.get("check") or [] if isinstance(c, dict)]
        share = _share(checks[-1].get("points"), checks[-1].get("max_points")) if checks else 1.0
    return float(ex["max_points"]) * (share if share is not None else 0.0)


class Launcher:
    """How the grader starts a runner: in a fresh bubblewrap sandbox, or (``--no-sandbox``) as a subprocess.

    Where the grader can use cgroups (``_cgroup``), each job also gets a control group of its own
    that bounds its memory, processes and CPU share as a whole; where it cannot, that is said in
    the log and in grades.json, and the per-process rlimits remain.
    """

    def __init__(self, use_sandbox: bool, hidden: list, scratch_parent: Path, log=print, *, memory_mb: int = 2048):
        self.use_sandbox = use_sandbox
        self.hidden = hidden
        self.scratch_parent = scratch_parent
        self.scratch: Path | None = None
        self.warnings: list[str] = []
        self.run_id = secrets.token_hex(8)
        self.memory_mb = int(memory_mb)
        self._judges = None
        self._judges_failed = False
        self._judges_lock = threading.Lock()
        if use_sandbox:
            self.bwrap = _sandbox.find_bwrap()
            if self.bwrap is None:
                raise _sandbox.SandboxUnavailable(_sandbox.INSTALL_HINT)
            self.paths = _sandbox.visible_paths(hidden)
            _sandbox.probe(self.paths, self.bwrap)
            who = (f"a host uid of its own per parallel job (from {_sandbox.SANDBOX_UID})" if os.geteuid() == 0
                   else f"uid {os.geteuid()}")
            self.description = f"bubblewrap ({self.bwrap}), one sandbox per notebook, as {who}"
        else:
            self.bwrap = None
            self.paths = _sandbox.visible_paths(hidden)
            self.scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=scratch_parent))
            self.description = "none (--no-sandbox)"
            self.warnings.append(NO_SANDBOX_WARNING)
            log("WARNING: " + NO_SANDBOX_WARNING)
        self.cgroups, why = _cgroup.Cgroups.detect(self.run_id)
        if self.cgroups is not None:
            self.resources = self.cgroups.description
        else:
            self.resources = (f"no cgroups ({why}): each process of a notebook is limited by rlimits (memory, "
                              "CPU time, processes), but not the notebook as a whole, nor its CPU share")
            log(f"note: {self.resources}")

    def info(self) -> dict:
        return {"sandbox": self.description, "resources": self.resources, "warnings": list(self.warnings)}

    def job_group(self, index: int) -> "_cgroup.JobGroup | None":
        """The job's cgroup: the notebook's memory limit plus room for the runner, checkers and tmpfs."""
        if self.cgroups is None:
            return None
        return self.cgroups.job(index, memory_mb=self.memory_mb + JOB_MEMORY_EXTRA_MB, pids=JOB_PIDS, cpus=1.0)

    def runner_command(self, slot: int = 0) -> list[str]:
        cmd = [sys.executable, "-I", "-m", "minigrad.course._runner"] if self.use_sandbox else \
              [sys.executable, "-m", "minigrad.course._runner"]
        if not self.use_sandbox:
            return cmd
        return _sandbox.outer_command(cmd, paths=self.paths, bwrap=self.bwrap, uid=_sandbox.SANDBOX_UID + slot)

    def env(self) -> dict:
        if self.use_sandbox:
            return _sandbox.sandbox_env({"MGC_RUN": self.run_id, **({"MINIGRAD_COURSE_DEBUG": "1"} if
                                    os.environ.get("MINIGRAD_COURSE_DEBUG") else {})})
        return dict(os.environ, PYTHONDONTWRITEBYTECODE="1", MGC_RUN=self.run_id)

    def job_spec(self, index: int) -> dict:
        """What the runner needs to know about its isolation."""
        if self.use_sandbox:
            return {"isolation": "bwrap", "bwrap": self.bwrap, "python": sys.executable,
                    "rebind": _sandbox._shadowed(self.paths)}
        base = self.scratch / f"{index:04d}"
        (base / "work").mkdir(parents=True)
        (base / "run").mkdir()
        # the Python environment may sit inside the book's folder (the README's .venv): reading it is allowed
        return {"isolation": "local", "python": sys.executable, "workdir": str(base / "work"),
                "rundir": str(base / "run"), "deny_read": [str(h) for h in self.hidden],
                "allow_read": list(self.paths)}

    def judges(self) -> "_zygote.JudgeZygote | None":
        """The run's judge zygote, started on first use (None if it cannot start: judges are then new processes)."""
        with self._judges_lock:
            if self._judges is None and not self._judges_failed:
                try:
                    self._judges = _zygote.JudgeZygote(judge_env())
                except OSError:
                    self._judges_failed = True
            return self._judges

    def cleanup(self) -> None:
        with self._judges_lock:
            if self._judges is not None:
                self._judges.close()
                self._judges = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
        if self.cgroups is not None:
            self.cgroups.remove()


def grade(submissions, out, *, source=None, timeout: float = 120, memory_mb: int = 2048, jobs: int = 2,
          chapters=None, assignment=None, roster=None, lms_column=None, log=print,
          sandbox: bool = True, shard=None, seed: int | None = None, timings: list | None = None) -> list[dict]:
    """Grade every student's notebooks; returns the gradebook rows (also written into ``out``).

    ``chapters`` (a list of chapter numbers) or ``assignment`` (an ``assignment.json``) restrict the
    run to one assignment, out of its points; ``roster`` (a CSV) maps folders to LMS identities and
    ``lms_column`` names the assignment's column in canvas.csv/moodle.csv.
    ``sandbox=False`` (``--no-sandbox``) runs without bubblewrap, with a warning recorded in grades.json.
    ``shard`` (a ``shard.Shard``): grade only that shard's students into a partial gradebook (shard.py).
    ``seed``: the seed of the checks' random inputs (default: one derived from the submissions' bytes,
    so that every shard of a class uses the same one; recorded in grades.json as ``run.seed``).
    ``timings``: a list that gets, per notebook, the seconds of each phase (``sandbox``: the job's
    wall time outside the runner; the runner's ``setup``, ``kernel`` start and stop, ``cells``,
    ``checks``), then ``{"gradebook": seconds}`` (benchmarks/grading.py prints them).
    Raises SandboxUnavailable when bubblewrap is missing, RuntimeError when another run holds ``out``,
    and GradingInterrupted on SIGTERM/SIGINT (nothing is written then).
    """
    subs = Path(submissions).resolve()
    out = Path(out).resolve()
    if not subs.is_dir():
        raise FileNotFoundError(f"no such folder: {subs}")
    if out == subs or subs in out.parents:
        raise ValueError("--out must not be inside the submissions folder (submissions are never modified)")
    root = find_source_root(source)
    roster_rows = gradebook.load_roster(roster)
    chosen = assignment_mod.for_grading(root, chapters=chapters, assignment=assignment, log=log)
    sources = assignment_mod.restrict(load_sources(root), chosen)
    if not sources:
        raise ValueError("nothing to grade: the assignment has no graded exercise")
    out.mkdir(parents=True, exist_ok=True)
    with RunLock(out), _Signals() as signals:
        clean_scratch(out, log)
        iso = Launcher(sandbox, [root, subs, out], out, log, memory_mb=memory_mb)
        try:
            rows, found, early, seed = _grade_locked(subs, root, sources, chosen, iso, timeout=timeout,
                                                     memory_mb=memory_mb, jobs=jobs, log=log, shard=shard,
                                                     seed=seed, timings=timings)
        finally:
            iso.cleanup()
        signals.finishing = True
        t_book = time.monotonic()
        failed = [r for r in rows if r.get("not_graded")]
        notes = list(found.log)
        notes += not_graded_notes(failed, early)
        run = {**iso.info(), "seed": seed, "not_graded": len(failed), **({"stopped_early": early} if early else {})}
        title = lms_column or (chosen.title if chosen else "All chapters")
        lms_ids = {st.id: st.lms_id for st in found.students if st.lms_id}
        if shard is not None:  # a partial gradebook, for `minigrad-course merge`
            _shard.write_partial(out, rows, run=run, notes=notes, log=log, record=_shard.record(
                shard, found.student_ids, assignment=_shard.assignment_record(sources, chosen, title),
                roster=roster_rows, lms_ids=lms_ids, scan_notes=found.log))
        else:
            gradebook.write_gradebook(out, rows, title=title, points=chosen.points if chosen else None,
                                      roster=roster_rows, lms_ids=lms_ids, log_lines=notes, run=run, log=log,
                                      lms=not early)
    log(summary_table(rows))
    write_figures(out, rows, run, log=log)
    if timings is not None:
        timings.append({"gradebook": time.monotonic() - t_book})
    if failed:
        raise GradingIncomplete(early or _first_reason(failed), rows, stopped_early=bool(early))
    return rows


def not_graded_notes(failed: list[dict], early: str) -> list[str]:
    """The log's lines about rows the grader could not grade (none when there are none)."""
    if not failed:
        return []
    who = sorted({r["student"] for r in failed})
    return [f"not graded (the grader's fault, not the students'): {len(failed)} rows of {len(who)} "
            f"students ({', '.join(who[:10])}{' ...' if len(who) > 10 else ''}): {_first_reason(failed)}",
            "no LMS file was written: most notebooks failed the same way; fix the cause and grade again" if early
            else "those students are left out of canvas.csv and moodle.csv until they are graded"]


def write_figures(out: Path, rows: list[dict], run: dict, log=print) -> None:
    """scores_by_exercise.png and report.html (report.py); a failure is a warning: the gradebook is what matters."""
    try:
        histogram(out / "scores_by_exercise.png", rows)
    except Exception as e:  # matplotlib missing or broken
        log(f"warning: no histogram ({type(e).__name__}: {e})")
    try:
        from . import report

        report.write(out / "report.html", rows, run)
    except Exception as e:
        log(f"warning: no report.html ({type(e).__name__}: {e})")


def _first_reason(rows: list[dict]) -> str:
    reasons = [r["not_graded"] for r in rows]
    return max(set(reasons), key=reasons.count)


class GradingIncomplete(RuntimeError):
    """Notebooks that could not be graded for a reason that is not the student's (their rows say
    "not graded: ..."). The gradebook is written; the LMS files leave those students out, or are
    not written at all when the run stopped early."""

    def __init__(self, cause: str, rows: list, stopped_early: bool = False):
        self.cause, self.rows, self.stopped_early = cause, rows, stopped_early
        n = sum(1 for r in rows if r.get("not_graded"))
        super().__init__(("grading stopped early, no LMS file written: " if stopped_early else
                          f"{n} exercise rows not graded: ") + cause)


def _grade_locked(subs: Path, root: Path, sources: list, chosen, iso: Launcher, *, timeout, memory_mb, jobs,
                  log, shard=None, seed=None, timings=None) -> tuple[list, "submissions_mod.Scan", str, int]:
    # the book's checks travel with the package's, as text, through the same pipe
    bundle = course_bundle(_extra_dirs()) + custom.bundle(root)
    before = _tree_hash(subs)
    if seed is None:  # fresh for every class, the same for every shard of one, unknown to any one student
        seed = run_seed(before)
    found = submissions_mod.scan(subs, [src.name for src in sources], release=chosen.release_id if chosen else None)
    students = _shard.select(found.student_ids, shard)  # the whole class, or one shard of it
    jobs_list, rows_by_key = [], {}
    for s in students:
        for src in sources:
            key = (s, src.name)
            sub = found.get(s, src.name)
            if sub.refused or sub.path is None:
                flag = "symbolic link" if "symbolic link" in sub.refused else ""
                rows_by_key[key] = [_row(s, src.name, ex, 0.0, sub.refused or "notebook not submitted", flagged=flag)
                                    for ex in src.exercises]
                continue
            jobs_list.append({"key": key, "source": src, "index": len(jobs_list), "sub": sub})
    running = Jobs()
    lock = threading.Lock()
    slots: queue.SimpleQueue = queue.SimpleQueue()
    for k in range(max(1, int(jobs))):
        slots.put(k)
    hard = float(timeout) + 90  # kernel start-up and the checkers' own start: the runner stops at `timeout`

    def work_on(job):
        s, nbname = job["key"]
        src, sub = job["source"], job["sub"]
        if running.stopping.is_set():
            return
        link = next((p for p in (sub.path, sub.workdir) if p is not None and p.is_symlink()), None)
        if link is not None:  # never follow a link out of the submissions (e.g. to the instructor's book)
            with lock:
                rows_by_key[job["key"]] = [_row(s, nbname, ex, 0.0, f"refused: {link.relative_to(subs)} is a "
                                                "symbolic link, not a submitted file", flagged="symbolic link")
                                           for ex in src.exercises]
            return
        if sub.files:  # Canvas's flat download: the student's files, named as they submitted them
            files, skipped = student_files(subs, nbname, submitted=sub.path, only=sub.files)
        else:
            files, skipped = student_files(sub.workdir or sub.path.parent, nbname, submitted=sub.path)
        if skipped:
            log(f"warning: {s}: left out of the grading sandbox: {', '.join(skipped[:5])}")
        # the runner gets no check and no hidden test (the judge outside keeps them), except for the
        # few exercises whose check cannot work on proxies (_judge.IN_SANDBOX)
        language = _i18n.submission_language(files.get(nbname))  # the feedback follows the submission
        spec = {**iso.job_spec(job["index"]), "notebook": nbname, "language": language,
                "timeout": float(timeout), "memory_mb": int(memory_mb),
                "course_dir": str(_course_dir()), "instructor_imports": src.instructor_imports,
                "skip": src.skip, "font_cache": font_cache,
                "exercises": [runner_exercise(ex, src.instructor_imports) for ex in src.exercises]}
        if any(ex["id"] in IN_SANDBOX for ex in src.exercises):
            spec["bundle"] = bundle
        judge = {"exercises": src.exercises, "bundle": bundle, "course_dir": str(_course_dir()), "seed": seed,
                 "language": language}
        slot = slots.get()  # a uid and a cgroup of its own for each job running at the same time
        group = None
        t0 = time.monotonic()
        try:
            group = iso.job_group(job["index"])
            events = run_job(running, iso.runner_command(slot), iso.env(), spec, files, hard, group, judge,
                             iso.judges())
        except OSError as e:  # the cgroup could not be made: the grader's problem, not the student's
            events = [{"event": "runner-error", "infrastructure": True,
                       "error": f"the job's cgroup could not be created ({e.strerror or e})"}]
        finally:
            if group is not None:
                group.kill_and_remove()
            slots.put(slot)
        rows = _rows_from_events(s, nbname, src, events)
        wall = time.monotonic() - t0
        for r in rows:
            r["seconds"] = round(wall, 2)
        if timings is not None:
            ph = next((e for e in events if e.get("event") == "phases"), {})
            with lock:
                timings.append({"student": s, "notebook": nbname, "wall": wall,
                                "sandbox": max(0.0, wall - float(ph.get("total", 0.0))),
                                **{k: float(ph.get(k, 0.0)) for k in ("setup", "kernel", "cells", "checks", "skipped")}})
        if running.stopping.is_set() and any(r.get("not_graded") for r in rows):
            return  # stopped by the run (early stop or a signal): said once, below
        with lock:
            rows_by_key[job["key"]] = rows
            outcomes.append(next((r["not_graded"] for r in rows if r.get("not_graded")), ""))
            total = sum(r["points"] for r in rows)
            log(f"graded {s}/{nbname}: {total:g}/{sum(r['max_points'] for r in rows):g}")

    outcomes: list[str] = []  # per finished job: why it could not be graded ("" when it was graded)
    early = ""
    font_cache = _kernel.build_font_cache() if jobs_list else None  # matplotlib's, built once for every kernel
    if jobs_list:
        iso.judges()  # started by this thread, which lives as long as the run (its death signal follows the thread)
    pool = ThreadPoolExecutor(max_workers=max(1, int(jobs)))
    try:
        pending = {pool.submit(work_on, j) for j in jobs_list}
        while pending:  # short waits: a signal handler runs between them
            done, pending = wait(pending, timeout=0.5)
            for f in done:
                f.result()
            with lock:
                early = early or _same_failure(outcomes, len(jobs_list))
            if early and not running.stopping.is_set():
                log(f"error: grading stopped early: most notebooks could not be graded: {early}")
                running.stop_all()
    except BaseException:
        running.stop_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for job in jobs_list:  # the notebooks an early stop left
        if job["key"] not in rows_by_key:
            s, nbname = job["key"]
            rows_by_key[job["key"]] = [_not_graded(s, nbname, ex, f"grading stopped early ({early})")
                                       for ex in job["source"].exercises]
    after = _tree_hash(subs)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    rows = []
    for s in students:
        st = found.student(s)
        mine = {st.folder, *(sub.path for sub in st.notebooks.values()),
                *(f for sub in st.notebooks.values() for f, _ in sub.files)}
        mine = {str(m.relative_to(subs)) for m in mine if m is not None}
        for src in sources:
            rs = rows_by_key.get((s, src.name), [])
            if any(m and (c == m or c.startswith(m + os.sep)) for c in changed for m in mine):
                for r in rs:
                    r["points"] = 0.0
                    r["flagged"] = "submission changed during grading"
                    r["feedback"] = (r["feedback"] + "\n" if r["feedback"] else "") + \
                        "the submission folder was modified during grading"
            rows.extend(rs)
    if changed:
        log(f"warning: files in the submissions folder changed during grading: {changed[:10]}")
    return rows, found, early, seed


def run_seed(tree: dict) -> int:
    """The run's seed from the submissions' file hashes (every student's bytes count)."""
    digest = hashlib.sha256(json.dumps(sorted(tree.items())).encode()).hexdigest()
    return int(digest[:8], 16) % 2**31


EARLY_STOP_AFTER = 4  # notebooks that must have failed the same way before a run stops


def _same_failure(outcomes: list[str], total: int) -> str:
    """The reason, when most notebooks so far (at least EARLY_STOP_AFTER) failed the same way for the grader's."""
    if len(outcomes) < min(EARLY_STOP_AFTER, total):
        return ""
    reasons = [o for o in outcomes if o]
    if not reasons:
        return ""
    top = max(set(reasons), key=reasons.count)
    return top if reasons.count(top) * 2 > len(outcomes) else ""


def runner_exercise(ex: dict, instructor_imports) -> dict:
    """What the runner in the sandbox learns of an exercise: its id, the names it takes from the
    student and the imports they need; the sources too only for an exercise checked in the sandbox."""
    if ex["id"] in IN_SANDBOX:
        return {**ex, "in_sandbox": True}
    needed, imports = needed_for(ex, instructor_imports)
    return {"id": ex["id"], "answers": ex.get("answers", []), "needed": sorted(needed), "imports": imports}


def _rows_from_events(student: str, notebook: str, src: SourceNotebook, events: list) -> list[dict]:
    got = {e.get("id"): e for e in events if e.get("event") == "exercise"}
    problem = next((e for e in events if e.get("event") in ("runner-error", "killed")), None)
    rows = []
    for ex in src.exercises:
        e = got.get(ex["id"])
        if e is None:
            if problem and problem["event"] == "killed":
                rows.append(_row(student, notebook, ex, 0.0, "time limit exceeded (the notebook was stopped)"))
            else:  # the runner itself failed: nothing the student's code can do (it runs in a nested sandbox)
                why = str((problem or {}).get("error") or "the grading sandbox gave no result")[:300]
                rows.append(_not_graded(student, notebook, ex, why))
        elif e.get("infrastructure"):
            rows.append(_not_graded(student, notebook, ex, str(e.get("feedback", ""))[len("not graded: "):][:500]))
        else:
            flagged = str(e.get("flagged") or "")
            rows.append(_row(student, notebook, ex, exercise_points(ex, e), str(e.get("feedback", "")),
                             flagged=flagged, parts=[] if flagged else e.get("parts")))
    return rows


def _not_graded(student, notebook, ex, why: str) -> dict:
    """A row the grader could not grade for a reason of its own: no points, and never in an LMS file."""
    row = _row(student, notebook, ex, 0.0, f"not graded: {why}")
    row["not_graded"] = why
    return row


def _row(student, notebook, ex, points, feedback, flagged: str = "", parts=None) -> dict:
    fb = feedback if len(feedback) <= FEEDBACK_CAP else feedback[:FEEDBACK_CAP] + " [...]"
    return {"student": student, "notebook": notebook, "exercise": ex["id"], "points": float(points),
            "max_points": float(ex["max_points"]), "parts": gradebook.scale_parts(parts, ex), "flagged": flagged,
            "feedback": fb}


def summary_table(rows: list[dict]) -> str:
    if not rows:
        return "no submissions graded"
    exercises = list(dict.fromkeys(r["exercise"] for r in rows))
    students = list(dict.fromkeys(r["student"] for r in rows))
    pts = {(r["student"], r["exercise"]): r["points"] for r in rows}
    failed = {(r["student"], r["exercise"]) for r in rows if r.get("not_graded")}  # shown "n/g", not 0
    maxp = {r["exercise"]: r["max_points"] for r in rows}
    w = max(8, *(len(s) for s in students))
    cols = [max(len(e), 5) for e in exercises]
    lines = ["student".ljust(w) + " | " + " | ".join(e.rjust(c) for e, c in zip(exercises, cols)) + " | total"]
    lines.append("-" * len(lines[0]))
    for s in students:
        tot = sum(pts.get((s, e), 0.0) for e in exercises)
        lines.append(s.ljust(w) + " | " + " | ".join(("n/g" if (s, e) in failed else f"{pts.get((s, e), 0.0):g}").rjust(c)
                                                      for e, c in zip(exercises, cols))
                     + (" | not graded" if any((s, e) in failed for e in exercises)
                        else f" | {tot:g}/{sum(maxp.values()):g}"))
    lines.append("-" * len(lines[0]))
    graded = {e: [s for s in students if (s, e) not in failed] for e in exercises}  # means of the graded rows
    mean = [f"{sum(pts.get((s, e), 0.0) for s in g) / len(g):.2g}" if g else "n/g" for e, g in graded.items()]
    full = [f"{sum(pts.get((s, e), 0.0) >= maxp[e] for s in g) / len(g) * 100:.0f}%" if g else "n/g"
            for e, g in graded.items()]
    lines.append("mean".ljust(w) + " | " + " | ".join(m.rjust(c) for m, c in zip(mean, cols)))
    lines.append("% full".ljust(w) + " | " + " | ".join(f.rjust(c) for f, c in zip(full, cols)))
    return "\n".join(lines)


def histogram(path: Path, rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    exercises = list(dict.fromkeys(r["exercise"] for r in rows))
    if not exercises:
        return
    n = len(exercises)
    ncol = min(4, n)
    nrow = (n + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.6 * nrow), squeeze=False)
    for ax, e in zip(axes.flat, exercises):
        vals = [r["points"] for r in rows if r["exercise"] == e]
        m = max(r["max_points"] for r in rows if r["exercise"] == e)
        bins = [b - 0.25 for b in range(int(m) + 2)] if float(m).is_integer() else 10
        ax.hist(vals, bins=bins, color="#4c72b0", edgecolor="white")
        ax.set_title(f"{e} (max {m:g})", fontsize=9)
        ax.set_xlabel("points")
        ax.set_ylabel("students")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # students are counted in whole numbers
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle("Scores per exercise")
    fig.tight_layout()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
