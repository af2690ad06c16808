"""How fast does `minigrad-course grade` grade a class? Notebooks per minute, and seconds per notebook.

Builds a seeded class from the book's own chapters (the student edition of each chapter, filled
four ways: the reference solutions, the untouched stubs, half the exercises solved, and the
reference with one exercise broken), grades it with the real grader (bubblewrap sandbox, judge
outside, cgroups where available), and prints the rate, the wall time, the time per notebook
by chapter and by kind (the `seconds` each row records), and the time per phase: the sandbox,
the kernel's start, the cells, the checks, the gradebook.

    python3 benchmarks/grading.py                         # 8 students x chapters 1-5 = 40 notebooks
    python3 benchmarks/grading.py --students 200          # issue 27's class: 1,000 notebooks
    python3 benchmarks/grading.py --chapters 3 --students 4 --jobs 2 --no-sandbox
    python3 benchmarks/grading.py --no-skip               # every cell run, grading-skip ones too (before)

A script, not a test: nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = ("reference", "stubs", "half", "one-broken")


def build_class(subs: Path, chapters: list[int], students: int, seed: int) -> dict:
    """One folder per student; returns student -> kind."""
    import nbformat

    from minigrad.course.notebooks import fill_solutions, make_student_notebook, parse_exercises
    from minigrad.course.release import book_notebooks

    rng = random.Random(seed)
    books = [p for p in book_notebooks(ROOT) if p.name[:2].isdigit() and int(p.name[:2]) in chapters]
    editions = []
    for p in books:
        instructor = nbformat.read(p, as_version=4)
        student = make_student_notebook(instructor)
        editions.append((p.name, instructor, student, [e.id for e in parse_exercises(instructor)]))
    kinds = {}
    for k in range(students):
        who = f"s{k:04d}"
        kind = KINDS[k % len(KINDS)]
        kinds[who] = kind
        (subs / who).mkdir(parents=True)
        for name, instructor, student, ids in editions:
            if kind == "stubs":
                nb = student
            else:
                nb = fill_solutions(student, instructor)
                if kind == "half":
                    _restub(nb, student, set(ids[len(ids) // 2:]))
                elif kind == "one-broken":
                    _break_one(nb, rng)
            nbformat.write(nb, subs / who / name)
    return kinds


def _stub_cells(nb, ids=None) -> list[int]:
    out = []
    for i, c in enumerate(nb.cells):
        meta = c.get("metadata", {}).get("minigrad_course", {}) or {}
        if c.cell_type == "code" and meta.get("role") == "stub" and (ids is None or meta.get("exercise") in ids):
            out.append(i)
    return out


def _restub(nb, student, ids: set) -> None:
    """Put the student edition's stubs back for these exercises (fill_solutions keeps the cell order)."""
    for i in _stub_cells(nb, ids):
        nb.cells[i].source = student.cells[i].source


def _break_one(nb, rng) -> None:
    """One solution made wrong: the sign of its first `return` flipped."""
    cells = [i for i in _stub_cells(nb) if "return " in nb.cells[i].source]
    if cells:
        c = nb.cells[rng.choice(cells)]
        c.source = c.source.replace("return ", "return -", 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=8)
    ap.add_argument("--chapters", default="1,2,3,4,5")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-sandbox", action="store_true")
    ap.add_argument("--no-skip", action="store_true", help="run the grading-skip cells too (the baseline)")
    args = ap.parse_args()
    chapters = [int(c) for c in args.chapters.split(",")]

    from minigrad.course.grade import GradingIncomplete, grade

    if args.no_skip:
        from minigrad.course import _skip

        _skip.skippable = lambda cells: (set(), {})

    with tempfile.TemporaryDirectory(prefix="grading-bench-") as tmp:
        tmp = Path(tmp)
        t0 = time.monotonic()
        kinds = build_class(tmp / "subs", chapters, args.students, args.seed)
        built = time.monotonic() - t0
        t0 = time.monotonic()
        timings: list = []
        try:
            rows = grade(tmp / "subs", tmp / "out", source=ROOT, timeout=args.timeout, jobs=args.jobs,
                         chapters=chapters, sandbox=not args.no_sandbox, log=lambda *a: None, timings=timings)
        except GradingIncomplete as e:
            print(f"not graded: {e}")
            rows = e.rows
        wall = time.monotonic() - t0
        run = json.loads((tmp / "out" / "grades.json").read_text())["run"]
    per_nb = {}
    for r in rows:
        per_nb.setdefault((r["student"], r["notebook"]), r.get("seconds") or 0.0)
    n = len(per_nb)
    skipped = sum(t.get("skipped", 0) for t in timings)
    print(f"cells skipped (grading-skip): {skipped:.0f}" + (" (--no-skip)" if args.no_skip else ""))
    print(f"class: {args.students} students x chapters {args.chapters} = {n} notebooks "
          f"(built in {built:.0f} s); --jobs {args.jobs}; {run.get('sandbox')}; {run.get('resources')}")
    print(f"graded in {wall:.0f} s: {n / wall * 60:.1f} notebooks per minute "
          f"(1,000 notebooks would take {1000 / (n / wall) / 60:.0f} min)")
    by_ch: dict = {}
    by_kind: dict = {}
    for (who, nb), s in per_nb.items():
        by_ch.setdefault(nb, []).append(s)
        by_kind.setdefault(kinds.get(who, "?"), []).append(s)
    print("seconds per notebook (median, max), by chapter:")
    for nb, v in sorted(by_ch.items()):
        print(f"  {nb:34s} {statistics.median(v):6.1f} {max(v):6.1f}")
    print("by kind of submission (seconds: median, max; points: the class's share of the maximum):")
    share: dict = {}
    for r in rows:
        got = share.setdefault(kinds.get(r["student"], "?"), [0.0, 0.0, 0])
        got[0] += float(r.get("points") or 0)
        got[1] += float(r.get("max_points") or 0)
        got[2] += bool(r.get("flagged")) or str(r.get("feedback", "")).startswith("not graded")
    for kind, v in by_kind.items():
        p, m, odd = share.get(kind, (0.0, 0.0, 0))
        print(f"  {kind:34s} {statistics.median(v):6.1f} {max(v):6.1f}   points {p:g}/{m:g}"
              + (f", {odd} rows flagged or not graded" if odd else ""))
    print_phases(timings, wall, args.jobs)


PHASES = (("sandbox", "sandbox: bubblewrap, cgroup, the runner's and the judge's start (outside the runner)"),
          ("setup", "runner setup: spec, files, the first worker started"),
          ("kernel", "kernel start and stop"),
          ("cells", "cells executed"),
          ("checks", "checks: values read, worker, judge"))


def print_phases(timings: list, wall: float, jobs: int) -> None:
    """Where a notebook's time goes: each phase's mean per notebook, and its share of all of them."""
    nbs = [t for t in timings if "wall" in t]
    book = sum(t.get("gradebook", 0.0) for t in timings)
    if not nbs:
        return
    total = sum(t["wall"] for t in nbs)
    print(f"time per phase (mean s per notebook; share of the {total:.0f} s the {len(nbs)} notebooks took, "
          f"{jobs} at a time):")
    for key, what in PHASES:
        v = sum(t[key] for t in nbs)
        print(f"  {what:78s} {v / len(nbs):6.2f} {v / total * 100:5.1f} %")
    print(f"  {'gradebook: grades.*, LMS files, histogram, report.html (once, after the notebooks)':78s} "
          f"{book:6.2f} s in all ({book / wall * 100:.1f} % of the wall time)")


if __name__ == "__main__":
    main()
