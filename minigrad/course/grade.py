"""``minigrad-course grade``: autograde a folder of submissions into a gradebook.

SUBMISSIONS holds one folder per student with that student's notebooks under their released
names. For every (student, notebook) pair a subprocess (``minigrad.course._runner``) runs the
notebook in a fresh sandboxed kernel, in a temporary copy of the student's folder, with a time
limit and a memory limit; the instructor's hidden tests and checks are injected at run time (they
are never written into the working copy). The gradebook (``grades.csv``, ``grades.json``: one row
per student, notebook and exercise) and ``totals.csv`` are written atomically into OUT, with a
histogram of the scores of each exercise (``scores_by_exercise.png``).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import assignment as assignment_mod
from . import custom, gradebook
from . import submissions as submissions_mod
from .notebooks import parse_exercises
from .release import book_notebooks, find_source_root

FEEDBACK_CAP = 2000
EXTRA_ENV = "MINIGRAD_COURSE_EXTRA_EXERCISES"


@dataclass
class SourceNotebook:
    name: str
    exercises: list  # dicts: id, title, max_points, cell_spec


def _course_dir() -> Path:
    return Path(__file__).resolve().parent


def course_bundle(extra_dirs=()) -> list:
    """Source text of minigrad.course (and its exercise modules) for the grading cell's fresh import."""
    d = _course_dir()
    bundle = [("minigrad.course.numbering", ((d / "numbering.py").read_text(), False)),  # imported by __init__
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


def load_sources(root: Path) -> list[SourceNotebook]:
    import numpy

    import minigrad

    registry = load_registry()
    trusted = sorted({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
                      sysconfig.get_paths()["platlib"], str(Path(minigrad.__file__).resolve().parent),
                      str(Path(numpy.__file__).resolve().parent)})
    out = []
    for path in book_notebooks(root):
        nb = nbformat.read(path, as_version=4)
        exs = []
        for ex in parse_exercises(nb):
            if ex.check_cell is None and not ex.hidden_cells:
                continue  # nothing to grade it with (e.g. a worked example with a collapsed solution)
            reg = registry.get(ex.id)
            check_src = nb.cells[ex.check_cell].source if ex.check_cell is not None else ""
            exs.append({
                "id": ex.id, "title": reg.title if reg else ex.title,
                "max_points": float(reg.points) if reg else 1.0,
                "cell_spec": {"check_source": check_src, "hidden": ex.hidden_source(nb) or "",
                              "course_dir": str(_course_dir()), "trusted_roots": trusted},
            })
        if exs:
            out.append(SourceNotebook(path.name, exs))
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


def _run_one(job: dict, timeout: float) -> list[dict]:
    """Run the runner subprocess for one notebook; returns its exercise events."""
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=job["spec"]["runtime_dir"], PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen([sys.executable, "-m", "minigrad.course._runner"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=job["base"],
                            start_new_session=True, env=env)
    try:
        out, _ = proc.communicate(json.dumps(job["spec"]).encode(), timeout=timeout + 45)
        killed = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        out, _ = proc.communicate()
        killed = True
    finally:
        try:  # the kernel is in the runner's session: make sure nothing survives
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
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
    return events


def grade(submissions, out, *, source=None, timeout: float = 120, memory_mb: int = 2048, jobs: int = 2,
          chapters=None, assignment=None, roster=None, lms_column=None, log=print) -> list[dict]:
    subs = Path(submissions).resolve()
    out = Path(out).resolve()
    if not subs.is_dir():
        raise FileNotFoundError(f"no such folder: {subs}")
    if out == subs or subs in out.parents:
        raise ValueError("--out must not be inside the submissions folder (submissions are never modified)")
    root = find_source_root(source)
    roster_rows = gradebook.load_roster(roster)
    chosen = assignment_mod.for_grading(root, chapters=chapters, assignment=assignment, log=log)
    out.mkdir(parents=True, exist_ok=True)
    sources = assignment_mod.restrict(load_sources(root), chosen)
    if not sources:
        raise ValueError("nothing to grade: the assignment has no graded exercise")
    bundle = course_bundle(_extra_dirs()) + custom.bundle(root)
    before = _tree_hash(subs)
    found = submissions_mod.scan(subs, [src.name for src in sources], release=chosen.release_id if chosen else None)
    students = found.student_ids
    work_root = Path(tempfile.mkdtemp(prefix=".grading-", dir=out))
    deny = sorted({str(root / "book"), str(subs), str(out)})
    jobs_list, rows_by_key = [], {}
    for s in students:
        for src in sources:
            key = (s, src.name)
            sub = found.get(s, src.name)
            if sub.refused or sub.path is None:
                why = sub.refused or "notebook not submitted"
                rows_by_key[key] = [_row(s, src.name, ex, 0.0, why) for ex in src.exercises]
                continue
            base = work_root / f"{len(jobs_list):04d}"
            work, runtime = base / "work", base / "runtime"
            nb_work = submissions_mod.prepare(sub, src.name, work)
            runtime.mkdir(parents=True)
            spec = {
                "notebook": str(nb_work), "workdir": str(work), "runtime_dir": str(runtime),
                "timeout": timeout, "bundle": bundle,
                "exercises": [{"id": e["id"], "max_points": e["max_points"], "cell_spec": e["cell_spec"]}
                              for e in src.exercises],
                "sandbox": {"memory_mb": memory_mb, "max_file_mb": 64, "write_roots": [str(work)],
                            "allow_read": [str(base)], "deny_read": deny},
            }
            jobs_list.append({"key": key, "base": str(base), "spec": spec, "source": src})
    lock = threading.Lock()

    def work_on(job):
        events = _run_one(job, timeout)
        s, nbname = job["key"]
        got = {e["id"]: e for e in events if e.get("event") == "exercise"}
        problem = next((e for e in events if e.get("event") in ("runner-error", "killed")), None)
        rows = []
        for ex in job["source"].exercises:
            e = got.get(ex["id"])
            if e is None:
                why = ("time limit exceeded (the notebook was stopped)" if problem and problem["event"] == "killed"
                       else f"not graded ({problem.get('error', 'grader error')})" if problem else "not graded")
                rows.append(_row(s, nbname, ex, 0.0, why))
            else:
                pts = min(float(e.get("points", 0.0)), ex["max_points"])
                rows.append(_row(s, nbname, ex, pts, str(e.get("feedback", "")), e.get("parts")))
        with lock:
            rows_by_key[job["key"]] = rows
            total = sum(r["points"] for r in rows)
            log(f"graded {s}/{nbname}: {total:g}/{sum(r['max_points'] for r in rows):g}")

    try:
        with ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
            list(pool.map(work_on, jobs_list))
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    after = _tree_hash(subs)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    rows = []
    for s in students:
        for src in sources:
            rs = rows_by_key.get((s, src.name), [])
            if any(c == s or c.startswith(s + os.sep) for c in changed):
                for r in rs:
                    r["points"] = 0.0
                    r["feedback"] = (r["feedback"] + "\n" if r["feedback"] else "") + \
                        "the submission folder was modified during grading (writing outside the working directory)"
            rows.extend(rs)
    if changed:
        log(f"warning: files in the submissions folder changed during grading: {changed[:10]}")
    gradebook.write_gradebook(out, rows, title=lms_column or (chosen.title if chosen else "All chapters"),
                              points=chosen.points if chosen else None, roster=roster_rows,
                              lms_ids={st.id: st.lms_id for st in found.students if st.lms_id},
                              log_lines=found.log, log=log)
    log(summary_table(rows))
    try:
        histogram(out / "scores_by_exercise.png", rows)
    except Exception as e:  # matplotlib missing or broken: the gradebook is what matters
        log(f"warning: no histogram ({type(e).__name__}: {e})")
    return rows


def _row(student, notebook, ex, points, feedback, parts=None) -> dict:
    fb = feedback if len(feedback) <= FEEDBACK_CAP else feedback[:FEEDBACK_CAP] + " [...]"
    return {"student": student, "notebook": notebook, "exercise": ex["id"], "points": float(points),
            "max_points": float(ex["max_points"]), "parts": gradebook.scale_parts(parts, ex), "feedback": fb}


def summary_table(rows: list[dict]) -> str:
    if not rows:
        return "no submissions graded"
    exercises = list(dict.fromkeys(r["exercise"] for r in rows))
    students = list(dict.fromkeys(r["student"] for r in rows))
    pts = {(r["student"], r["exercise"]): r["points"] for r in rows}
    maxp = {r["exercise"]: r["max_points"] for r in rows}
    w = max(8, *(len(s) for s in students))
    cols = [max(len(e), 5) for e in exercises]
    lines = ["student".ljust(w) + " | " + " | ".join(e.rjust(c) for e, c in zip(exercises, cols)) + " | total"]
    lines.append("-" * len(lines[0]))
    for s in students:
        tot = sum(pts.get((s, e), 0.0) for e in exercises)
        lines.append(s.ljust(w) + " | " + " | ".join(f"{pts.get((s, e), 0.0):g}".rjust(c)
                                                      for e, c in zip(exercises, cols))
                     + f" | {tot:g}/{sum(maxp.values()):g}")
    lines.append("-" * len(lines[0]))
    mean = [sum(pts.get((s, e), 0.0) for s in students) / len(students) for e in exercises]
    full = [sum(pts.get((s, e), 0.0) >= maxp[e] for s in students) / len(students) * 100 for e in exercises]
    lines.append("mean".ljust(w) + " | " + " | ".join(f"{m:.2g}".rjust(c) for m, c in zip(mean, cols)))
    lines.append("% full".ljust(w) + " | " + " | ".join(f"{f:.0f}%".rjust(c) for f, c in zip(full, cols)))
    return "\n".join(lines)


def histogram(path: Path, rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

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
