"""Grading a large class on a cluster: ``grade --shard i/n`` and ``merge``.

``minigrad-course grade SUBMISSIONS --shard i/n --out PART`` grades the students whose shard is
``i`` (1 to n) and writes a partial gradebook into PART: ``grades.json`` gains a ``"shard"`` record
(i, n, the assignment, the grader's version, this shard's students and a fingerprint of the whole
class), and no LMS file is written. A student's shard depends only on the student's id (a SHA-256
of it), never on who else is in the class or in which order the folders come.

``--shard auto`` takes i and n from the scheduler: a Slurm job array (``SLURM_ARRAY_TASK_ID`` with
``SLURM_ARRAY_TASK_MIN``/``MAX``/``STEP`` or ``SLURM_ARRAY_TASK_COUNT``) or a Kubernetes Indexed
Job (``JOB_COMPLETION_INDEX``, counted from 0, with n given as ``--shard auto/N`` or in
``MINIGRAD_COURSE_SHARDS``). ``{i}`` and ``{n}`` in ``--out`` are replaced by the shard's numbers,
so that one command line serves every task.

``minigrad-course merge PART... --out DIR`` checks that the parts cover one class exactly once
(the same n, every i once, the same assignment, grader version and class; each student in one
part) and writes the gradebook, the LMS files, the log, the histogram and the report exactly as
one run over the whole class would (the ``seconds`` of each row aside).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import gradebook

FORMAT = "minigrad-course shard 1"
COUNT_ENV = "MINIGRAD_COURSE_SHARDS"   # n for a Kubernetes Indexed Job (its spec.completions)


@dataclass(frozen=True)
class Shard:
    i: int          # 1 .. n
    n: int
    how: str = ""   # where i and n came from, for the log

    def __str__(self) -> str:
        return f"{self.i}/{self.n}"


# --------------------------------------------------------------------------------- which shard
def shard_of(student: str, n: int) -> int:
    """The shard (1 .. n) of a student: a function of the id alone (SHA-256, first 8 bytes, mod n)."""
    digest = hashlib.sha256(str(student).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % int(n) + 1


def select(students: list[str], shard: Shard | None) -> list[str]:
    """The students of ``shard`` among ``students``, in their order (all of them without a shard)."""
    if shard is None:
        return list(students)
    return [s for s in students if shard_of(s, shard.n) == shard.i]


def fingerprint(students: list[str]) -> str:
    """A digest of the class's student list (in the gradebook's order)."""
    h = hashlib.sha256()
    for s in students:
        h.update(str(s).encode("utf-8") + b"\n")
    return "sha256:" + h.hexdigest()


def _int(env: dict, name: str) -> int | None:
    text = env.get(name)
    if text is None or str(text).strip() == "":
        return None
    try:
        return int(str(text).strip())
    except ValueError:
        raise ValueError(f"--shard auto: {name}={text!r} is not a whole number") from None


def _check(i: int, n: int, how: str) -> Shard:
    if n < 1:
        raise ValueError(f"--shard: {how}: the number of shards must be at least 1 (got {n})")
    if not 1 <= i <= n:
        raise ValueError(f"--shard: {how}: shard {i} is outside 1..{n}")
    return Shard(i, n, how)


def from_environment(env=None, count: int | None = None) -> Shard:
    """``--shard auto`` (``count``: the N of ``auto/N``): i and n from a Slurm job array or a
    Kubernetes Indexed Job."""
    env = os.environ if env is None else env
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    if task is not None:
        lo, hi = _int(env, "SLURM_ARRAY_TASK_MIN"), _int(env, "SLURM_ARRAY_TASK_MAX")
        step, tasks = _int(env, "SLURM_ARRAY_TASK_STEP") or 1, _int(env, "SLURM_ARRAY_TASK_COUNT")
        if lo is not None:
            if (task - lo) % step:
                raise ValueError(f"--shard auto: Slurm array task {task} is not on the array's step {step} from {lo}")
            i = (task - lo) // step + 1
            n = tasks if tasks is not None else ((hi if hi is not None else task) - lo) // step + 1
        elif tasks is not None:  # no bounds given: an array numbered 1..COUNT (sbatch --array=1-N)
            i, n = task, tasks
        else:
            raise ValueError("--shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor "
                             "SLURM_ARRAY_TASK_MIN/MAX: give --shard i/n")
        if count is not None and count != n:
            raise ValueError(f"--shard auto/{count}: the Slurm array has {n} tasks, not {count}")
        return _check(i, n, f"Slurm array task {task}")
    index = _int(env, "JOB_COMPLETION_INDEX")
    if index is not None:
        n = count if count is not None else _int(env, COUNT_ENV)
        if n is None:
            raise ValueError("--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but not the "
                             f"number of shards: give --shard auto/N or set {COUNT_ENV}=N (the Job's completions)")
        return _check(index + 1, n, f"Kubernetes completion index {index}")
    raise ValueError("--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX "
                     "(a Kubernetes Indexed Job) is set: give --shard i/n")


def parse(text: str | None, env=None) -> Shard | None:
    """``"2/4"`` -> shard 2 of 4; ``"auto"`` or ``"auto/4"``: from the scheduler's environment."""
    if text is None:
        return None
    t = str(text).strip()
    m = re.fullmatch(r"auto(?:/(\d+))?", t)
    if m:
        return from_environment(env, int(m.group(1)) if m.group(1) else None)
    m = re.fullmatch(r"(\d+)/(\d+)", t)
    if not m:
        raise ValueError(f"--shard {text!r}: expected i/n (e.g. 2/4: the second of four shards, counted from 1), "
                         "auto or auto/N")
    return _check(int(m.group(1)), int(m.group(2)), f"--shard {t}")


def out_for(out: str, shard: Shard | None) -> str:
    """``--out parts/{i}`` -> ``parts/2`` (``{n}`` too)."""
    if shard is None:
        return out
    return str(out).replace("{i}", str(shard.i)).replace("{n}", str(shard.n))


# ----------------------------------------------------------------------------- partial gradebook
def assignment_record(sources: list, chosen, title: str) -> dict:
    """What must be the same in every part: the exercises, their points and checks, the LMS column."""
    checks = hashlib.sha256()
    exercises = []
    for src in sources:
        for ex in src.exercises:
            exercises.append([src.name, ex["id"], float(ex["max_points"])])
            checks.update(json.dumps([ex["id"], ex.get("check_source", ""), ex.get("hidden_source", "")]).encode())
    return {"title": title, "release_id": chosen.release_id if chosen else "",
            "chapters": chosen.chapters if chosen else None,
            "points": chosen.points if chosen else None, "exercises": exercises,
            "checks": "sha256:" + checks.hexdigest()}


def grader_digest() -> str:
    """A digest of the checks the grader runs (minigrad.course and its exercise modules, as the checker
    receives them): two installs of one version with different checks do not merge."""
    from . import grade as grade_mod

    h = hashlib.sha256()
    for name, (text, is_package) in grade_mod.course_bundle(grade_mod._extra_dirs()):
        h.update(json.dumps([name, text, is_package]).encode())
    return "sha256:" + h.hexdigest()


def record(shard: Shard, class_students: list[str], *, assignment: dict, roster: dict, lms_ids: dict,
           scan_notes: list) -> dict:
    from .._version import __version__

    mine = [(k, s) for k, s in enumerate(class_students) if shard_of(s, shard.n) == shard.i]
    return {"format": FORMAT, "i": shard.i, "n": shard.n, "how": shard.how, "grader_version": __version__,
            "grader_checks": grader_digest(), "assignment": assignment,
            "class": {"size": len(class_students), "fingerprint": fingerprint(class_students)},
            "students": [s for _, s in mine], "positions": [k for k, _ in mine],
            "roster": roster or {}, "lms_ids": {s: lms_ids[s] for _, s in mine if s in lms_ids},
            "scan_notes": list(scan_notes)}


def write_partial(out: Path, rows: list[dict], *, record: dict, run: dict, notes: list, log=print) -> None:
    """A shard's gradebook: grades.json (with the shard record), grades.csv, totals.csv and the log;
    no LMS file (an import of one shard would look like the class's)."""
    out = Path(out)
    gradebook.write_gradebook(out, rows, title=record["assignment"]["title"], points=record["assignment"]["points"],
                              log_lines=[f"shard {record['i']}/{record['n']} ({record['how']}): "
                                         f"{len(record['students'])} of {record['class']['size']} students; "
                                         "merge every shard with `minigrad-course merge`", *notes],
                              run=run, log=log, lms=False)
    gradebook.atomic_write(out / "grades.json", json.dumps({"shard": record, "run": run, "rows": rows}, indent=1,
                                                           ensure_ascii=False) + "\n")


# ------------------------------------------------------------------------------------- merge
@dataclass
class _Part:
    path: Path
    shard: dict
    run: dict
    rows: list

    @property
    def name(self) -> str:
        return f"{self.path} (shard {self.shard.get('i')}/{self.shard.get('n')})"


def _load(path) -> _Part:
    p = Path(path)
    f = p / "grades.json" if p.is_dir() else p
    try:
        book = json.loads(f.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"merge: {p}: no grades.json there (give the --out folder of each shard)") from None
    except ValueError as e:
        raise ValueError(f"merge: {f}: not a readable grades.json ({e})") from None
    sh = book.get("shard") if isinstance(book, dict) else None
    if not isinstance(sh, dict) or sh.get("format") != FORMAT:
        raise ValueError(f"merge: {f}: not a shard's gradebook (no \"shard\" record): grade with --shard i/n")
    return _Part(f.parent, sh, book.get("run") or {}, list(book.get("rows") or []))


def _same(parts: list[_Part], key, what: str, advice: str) -> None:
    values = [(key(p), p) for p in parts]
    first = values[0][0]
    for v, p in values[1:]:
        if v != first:
            raise ValueError(f"merge: the parts have different {what}: {values[0][1].name} and {p.name}; {advice}")


def check(parts: list[_Part]) -> None:
    """Refuse (ValueError, one line) unless the parts cover one class exactly once."""
    if not parts:
        raise ValueError("merge: no parts given")
    _same(parts, lambda p: p.shard["n"], "numbers of shards (n)", "grade every shard with the same --shard */n")
    _same(parts, lambda p: p.shard["grader_version"], "grader versions "
          f"({', '.join(sorted({str(p.shard['grader_version']) for p in parts}))})",
          "grade every shard with the same version of minigrad-course")
    _same(parts, lambda p: p.shard.get("grader_checks"), "grader checks (the same version, installed with "
          "different exercise checks)", "grade every shard with the same installation of minigrad-course")
    _same(parts, lambda p: p.shard["assignment"], "assignments (exercises, points, checks or LMS column)",
          "grade every shard with the same --assignment/--chapters, book and --lms-column")
    _same(parts, lambda p: p.shard["class"], "classes (their student lists differ)",
          "grade every shard from the same copy of the submissions folder")
    _same(parts, lambda p: (p.shard["roster"], p.shard["scan_notes"]), "rosters or submission folders",
          "grade every shard with the same --roster and the same copy of the submissions folder")
    n = int(parts[0].shard["n"])
    seen: dict[int, _Part] = {}
    for p in parts:
        i = int(p.shard["i"])
        if i in seen:
            raise ValueError(f"merge: shard {i}/{n} is given twice: {seen[i].path} and {p.path}")
        seen[i] = p
    missing = [i for i in range(1, n + 1) if i not in seen]
    if missing:
        raise ValueError(f"merge: shard{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of {n} "
                         f"missing (given: {', '.join(str(i) for i in sorted(seen))}): grade "
                         f"{'them' if len(missing) > 1 else 'it'} and merge again")
    owner: dict[str, _Part] = {}
    positions: dict[int, str] = {}
    for p in parts:
        if len(p.shard["students"]) != len(p.shard["positions"]):
            raise ValueError(f"merge: {p.name}: its shard record is damaged (students and positions differ)")
        for s, k in zip(p.shard["students"], p.shard["positions"]):
            if s in owner:
                raise ValueError(f"merge: student {s} is in two parts: {owner[s].name} and {p.name}")
            owner[s] = p
            positions[int(k)] = s
    for p in parts:
        wrong = [s for s in p.shard["students"] if shard_of(s, n) != int(p.shard["i"])]
        if wrong:
            raise ValueError(f"merge: {p.name} holds student {wrong[0]}, whose shard is {shard_of(wrong[0], n)}/{n}: "
                             "graded by another grader version, or the file was edited")
        stray = sorted({r.get("student") for r in p.rows} - set(p.shard["students"]))
        if stray:
            raise ValueError(f"merge: {p.name} has rows of students outside its shard: "
                             f"{', '.join(map(str, stray[:5]))}")
    size = int(parts[0].shard["class"]["size"])
    order = [positions.get(k) for k in range(size)]
    if None in order or len(positions) != size or fingerprint(order) != parts[0].shard["class"]["fingerprint"]:
        raise ValueError(f"merge: the parts hold {len(owner)} students, the class has {size}: "
                         "a part is damaged or was graded from another submissions folder")


def _merge_run(parts: list[_Part], failed: int, early: str) -> dict:
    """The run record of one run over the whole class: values every part shares as they are; lists joined;
    differing texts joined with '; '; the not-graded count recomputed."""
    out: dict = {}
    keys = list(dict.fromkeys(k for p in parts for k in p.run))
    for k in keys:
        vals = [p.run[k] for p in parts if k in p.run]
        if k == "not_graded":
            out[k] = failed
        elif k == "stopped_early":
            if early:
                out[k] = early
        elif all(v == vals[0] for v in vals):
            out[k] = vals[0]
        elif all(isinstance(v, list) for v in vals):
            out[k] = list(dict.fromkeys(x for v in vals for x in v))
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            out[k] = sum(vals)
        else:
            out[k] = "; ".join(dict.fromkeys(str(v) for v in vals))
    if early and "stopped_early" not in out:
        out["stopped_early"] = early
    return out


def merge(part_paths: list, out, *, log=print) -> list[dict]:
    """Check the parts, then write the class's gradebook into ``out`` as one run would have.

    Raises ValueError when the parts do not cover one class exactly once, and GradingIncomplete
    (after writing) when rows say "not graded", as ``grade`` does."""
    from . import grade as grade_mod

    parts = [_load(p) for p in part_paths]
    check(parts)
    parts.sort(key=lambda p: int(p.shard["i"]))
    out = Path(out).resolve()
    for p in parts:
        if p.path.resolve() == out:
            raise ValueError(f"merge: --out {out} is one of the parts; choose another folder")
    by_student: dict[str, list] = {}
    position: dict[str, int] = {}
    for p in parts:
        for s, k in zip(p.shard["students"], p.shard["positions"]):
            position[s] = int(k)
            by_student[s] = []
        for r in p.rows:
            by_student[r["student"]].append(r)
    rows = [r for s in sorted(by_student, key=position.__getitem__) for r in by_student[s]]
    first = parts[0].shard
    early = next((str(p.run["stopped_early"]) for p in parts if p.run.get("stopped_early")), "")
    failed = [r for r in rows if r.get("not_graded")]
    notes = list(first["scan_notes"]) + grade_mod.not_graded_notes(failed, early)
    run = _merge_run(parts, len(failed), early)
    lms_ids = {s: i for p in parts for s, i in p.shard.get("lms_ids", {}).items()}
    a = first["assignment"]
    out.mkdir(parents=True, exist_ok=True)
    with grade_mod.RunLock(out):
        gradebook.write_gradebook(out, rows, title=a["title"], points=a["points"], roster=first["roster"],
                                  lms_ids=lms_ids, log_lines=notes, run=run, log=log, lms=not early)
    log(f"merged {len(parts)} shards: {len(by_student)} students, {len(rows)} rows")
    log(grade_mod.summary_table(rows))
    grade_mod.write_figures(out, rows, run, log=log)
    if failed:
        raise grade_mod.GradingIncomplete(early or grade_mod._first_reason(failed), rows, stopped_early=bool(early))
    return rows
