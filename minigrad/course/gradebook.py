"""Writing the gradebook: the course's own files and the files an LMS imports as they are.

Into OUT:
- ``grades.csv`` / ``grades.json``: one row per student, notebook and exercise (with the parts of
  an exercise scored with partial credit, and ``flagged``: why a row was zeroed for tampering);
  ``grades.json`` is ``{"run": {sandbox, warnings}, "rows": [...]}``;
- ``totals.csv``: one row per student, out of the assignment's points;
- ``canvas.csv``: Canvas's gradebook-import format (Student, ID, SIS User ID, SIS Login ID,
  Section, then one column for the assignment, and the "Points Possible" row);
- ``moodle.csv``: Moodle's grade-import CSV (the user identifier columns, then one column for
  the assignment);
- ``grading_log.txt``: what the grader found and did not grade (unmatched files, hidden folders,
  symbolic links, several files for one notebook, roster problems).

Students are the submission folders' names (or Canvas names); ``--roster`` maps them to LMS
identities. Every text cell is escaped against spreadsheet formula injection.
"""
from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

FIELDS = ["student", "notebook", "exercise", "points", "max_points", "parts", "flagged", "feedback"]
CANVAS_ID_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_ID_COLUMNS = ["ID number", "Username", "Email address"]
ROSTER_KEY = "folder"
LOG_NAME = "grading_log.txt"
NOT_GRADED = "not graded"  # totals.csv's percent for a student the grader could not grade
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_BLANKS = " \u00a0\u2007\u202f\u3000"  # spaces a spreadsheet skips before reading a formula


def escape_cell(value) -> str:
    """A cell a spreadsheet shows as text: a leading ``=``, ``+``, ``-``, ``@``, tab or line break
    (which Excel, LibreOffice and Google Sheets would run as a formula), also after spaces or
    non-breaking spaces, gets a ``'`` before it."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = "" if value is None else str(value)
    return "'" + text if text.lstrip(_BLANKS).startswith(_FORMULA_START) else text


def _csv_text(header: list, rows: list) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([escape_cell(h) for h in header])
    for r in rows:
        w.writerow([escape_cell(v) for v in r])
    return buf.getvalue()


def atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def parts_text(parts: list) -> str:
    """``forward 1/1; backward 0/2`` (empty for an all-or-nothing exercise)."""
    return "; ".join(f"{p['name']} {float(p['points']):g}/{float(p['max_points']):g}" for p in parts or [])


def scale_parts(parts, ex: dict) -> list:
    """An exercise's parts, in the points the gradebook counts (an assignment may have been released
    with other points than the registry's: the parts scale with the exercise)."""
    reg = float(ex.get("registry_points", ex["max_points"])) or 1.0
    k = float(ex["max_points"]) / reg
    return [{"name": str(p.get("name", "")), "passed": bool(p.get("passed")), "points": float(p.get("points", 0)) * k,
             "max_points": float(p.get("max_points", 0)) * k, "message": str(p.get("message", ""))[:500]}
            for p in (parts or []) if isinstance(p, dict)]


# ------------------------------------------------------------------------------------ roster
def load_roster(path: str | os.PathLike | None) -> dict[str, dict]:
    """``folder`` -> the roster row (its LMS columns). The roster is a CSV with a ``folder`` column
    (the submission folder's name) and any of Canvas's or Moodle's identity columns; a Canvas
    gradebook export with a ``folder`` column added is a roster."""
    if path is None:
        return {}
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            header = [h.strip() for h in (reader.fieldnames or [])]
            if ROSTER_KEY not in header:
                raise ValueError(f"--roster {path}: no '{ROSTER_KEY}' column (its columns: {', '.join(header) or 'none'}). "
                                 f"Add a column '{ROSTER_KEY}' with each student's submission folder name.")
            known = set(CANVAS_ID_COLUMNS) | set(MOODLE_ID_COLUMNS)
            if not known & set(header):
                raise ValueError(f"--roster {path}: no LMS identity column: give at least one of "
                                 f"{', '.join(CANVAS_ID_COLUMNS + MOODLE_ID_COLUMNS)}")
            out: dict[str, dict] = {}
            for line, row in enumerate(reader, start=2):
                row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
                key = row.get(ROSTER_KEY, "")
                if not key:
                    continue  # e.g. Canvas's "Points Possible" row
                if key in out:
                    raise ValueError(f"--roster {path}, line {line}: folder {key!r} appears twice")
                out[key] = row
            return out
    except FileNotFoundError:
        raise FileNotFoundError(f"--roster: no such file: {path}") from None


# -------------------------------------------------------------------------------------- write
def totals(rows: list[dict]) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in rows:
        t = out.setdefault(r["student"], [0.0, 0.0])
        t[0] += r["points"]
        t[1] += r["max_points"]
    return out


def write_gradebook(out: Path, rows: list[dict], *, title: str = "minigrad-course", points: float | None = None,
                    lms_ids: dict | None = None, roster: dict | None = None, log_lines=(), run: dict | None = None,
                    log=print, lms: bool = True) -> None:
    """Write every gradebook file into ``out`` (each atomically). ``points``: the assignment's total
    (default: the sum of each student's max points); ``lms_ids``: student -> an LMS user id known
    from the submission itself (Canvas's flat file names); ``run``: how the run was isolated
    (``sandbox``, ``warnings``), recorded in grades.json. A student with a row the grader could not
    grade (``not_graded``) is left out of the LMS files; ``lms=False`` writes none (and removes old ones)."""
    out = Path(out)
    roster = roster or {}
    lms_ids = lms_ids or {}
    # a row the grader could not grade has no points: an empty cell, never a 0 that reads as a grade
    csv_rows = [[r["student"], r["notebook"], r["exercise"], "" if r.get("not_graded") else r["points"], r["max_points"],
                 parts_text(r.get("parts", [])), r.get("flagged", ""), r["feedback"]] for r in rows]
    atomic_write(out / "grades.csv", _csv_text(FIELDS, csv_rows))
    atomic_write(out / "grades.json", json.dumps({"run": run or {}, "rows": rows}, indent=1, ensure_ascii=False)
                 + "\n")
    tot = totals(rows)
    incomplete = {r["student"] for r in rows if r.get("not_graded")}
    atomic_write(out / "totals.csv", _csv_text(["student", "points", "max_points", "percent"],
                                               [[s, "", m, NOT_GRADED] if s in incomplete else
                                                [s, p, m, f"{100 * p / m:.1f}" if m else "0.0"]
                                                for s, (p, m) in tot.items()]))
    notes = list(log_lines)
    possible = points if points is not None else max((m for _, m in tot.values()), default=0.0)
    missing_roster = [s for s in tot if roster and s not in roster]
    for s in missing_roster:
        notes.append(f"{s}: not in the roster: the Canvas and Moodle files identify this student by the folder "
                     "name only (add a row to the roster)")
    for s in sorted(set(roster) - set(tot)):
        notes.append(f"{s}: in the roster, but no submission folder: left out of every gradebook file")
    # Canvas: https://community.canvaslms.com "How do I import grades in the Gradebook?": the five
    # identity columns, one column per assignment, and the optional "Points Possible" row.
    if not lms:
        for name in ("canvas.csv", "moodle.csv"):
            try:
                os.unlink(out / name)  # an earlier run's files would look like this run's
            except FileNotFoundError:
                pass
        atomic_write(out / LOG_NAME, "".join(line.rstrip() + "\n" for line in notes) or "nothing to report\n")
        for line in notes:
            log(f"note: {line}")
        return
    tot = {s: t for s, t in tot.items() if s not in incomplete}
    canvas = [["Points Possible", "", "", "", "", possible]]
    unidentified = []
    for s, (p, _) in tot.items():
        r = roster.get(s, {})
        ident = [r.get("Student") or s, r.get("ID") or lms_ids.get(s, ""), r.get("SIS User ID", ""),
                 r.get("SIS Login ID", ""), r.get("Section", "")]
        if not any(ident[1:4]):
            unidentified.append(s)
        canvas.append(ident + [p])
    atomic_write(out / "canvas.csv", _csv_text(CANVAS_ID_COLUMNS + [title], canvas))
    if unidentified:
        notes.append(f"canvas.csv: no Canvas ID, SIS User ID or SIS Login ID for {', '.join(unidentified)}: Canvas "
                     "matches those rows by the Student name alone; pass --roster (your Canvas gradebook export "
                     "with a 'folder' column) to identify them")
    # Moodle: Grades > Import > CSV file; map an identity column to the user, the assignment column to
    # the grade item.
    id_cols = [c for c in MOODLE_ID_COLUMNS if any(c in r for r in roster.values())] or ["Username"]
    moodle = [[roster.get(s, {}).get(c) or (s if c == "Username" and s not in roster else "") for c in id_cols] + [p]
              for s, (p, _) in tot.items()]
    atomic_write(out / "moodle.csv", _csv_text(id_cols + [title], moodle))
    if not roster:
        notes.append("moodle.csv: no roster: its Username column holds the submission folder names; map it to "
                     "Moodle's username only if the folders are named by username, else pass --roster")
    atomic_write(out / LOG_NAME, "".join(line.rstrip() + "\n" for line in notes) or "nothing to report\n")
    for line in notes:
        log(f"note: {line}")
