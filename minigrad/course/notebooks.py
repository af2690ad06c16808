"""Reading the exercise format of the chapter notebooks (see .dev/TEAM.md) and making the student edition.

An exercise is: an ``{exercise}`` markdown box (``:label: chNN-exK``), a ``{solution-start}``
markdown cell, solution code cell(s) tagged ``solution`` whose student part sits between
``### BEGIN SOLUTION`` / ``### END SOLUTION``, a ``{solution-end}`` markdown cell, a check cell
(tag ``check``) and optional hidden tests (tags ``hidden-tests`` + ``remove-cell``,
``### BEGIN HIDDEN TESTS`` / ``### END HIDDEN TESTS``).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import nbformat

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError()")
META_KEY = "minigrad_course"

_LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
_EXERCISE = re.compile(r"^(```+|:::+)\s*\{exercise\}", re.M)
_SOL_START = re.compile(r"^(```+|:::+)\s*\{solution-start\}\s*(\S+)", re.M)
_SOL_END = re.compile(r"^(```+|:::+)\s*\{solution-end\}", re.M)
_SOLUTION_DIRECTIVE = re.compile(r"^(```+|:::+)\s*\{solution\}", re.M)
_CHECK_CALL = re.compile(r"""check\(\s*['"]([^'"]+)['"]""")


def tags(cell) -> list:
    return list(cell.get("metadata", {}).get("tags", []))


def is_solution_start(cell) -> str | None:
    if cell.cell_type != "markdown":
        return None
    m = _SOL_START.search(cell.source)
    return m.group(2) if m else None


def is_solution_end(cell) -> bool:
    return cell.cell_type == "markdown" and bool(_SOL_END.search(cell.source))


def is_solution_code(cell) -> bool:
    return cell.cell_type == "code" and ("solution" in tags(cell) or BEGIN_SOLUTION in cell.source)


def is_hidden_tests(cell) -> bool:
    return cell.cell_type == "code" and ("hidden-tests" in tags(cell) or BEGIN_HIDDEN in cell.source)


def check_id(cell) -> str | None:
    if cell.cell_type != "code":
        return None
    m = _CHECK_CALL.search(cell.source)
    if m and ("check" in tags(cell) or cell.get("metadata", {}).get(META_KEY, {}).get("role") == "check"):
        return m.group(1)
    meta = cell.get("metadata", {}).get(META_KEY, {})
    return meta.get("exercise") if meta.get("role") == "check" else None


@dataclass
class ExerciseCells:
    id: str
    title: str = ""
    solution_cells: list = field(default_factory=list)   # indices
    check_cell: int | None = None
    hidden_cells: list = field(default_factory=list)

    def hidden_source(self, nb) -> str:
        return "\n".join(strip_hidden_markers(nb.cells[i].source) for i in self.hidden_cells)


def parse_exercises(nb) -> list[ExerciseCells]:
    """The exercises of an instructor notebook, in order, with the indices of their cells."""
    out: list[ExerciseCells] = []
    current: ExerciseCells | None = None
    by_id: dict[str, ExerciseCells] = {}
    gated = False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and _EXERCISE.search(cell.source):
            m = _LABEL.search(cell.source)
            title = cell.source.split("{exercise}", 1)[1].splitlines()[0].strip()
            if m:
                current = by_id.setdefault(m.group(1), ExerciseCells(m.group(1), title))
                if current not in out:
                    out.append(current)
            continue
        sid = is_solution_start(cell)
        if sid:
            current = by_id.setdefault(sid, ExerciseCells(sid))
            if current not in out:
                out.append(current)
            gated = True
            continue
        if is_solution_end(cell):
            gated = False
            continue
        if cell.cell_type == "code" and current is not None and not is_hidden_tests(cell) and (
                is_solution_code(cell) or gated):
            current.solution_cells.append(i)
            continue
        cid = check_id(cell)
        if cid:
            ex = by_id.setdefault(cid, ExerciseCells(cid))
            if ex not in out:
                out.append(ex)
            ex.check_cell = i
            current = ex
            continue
        if is_hidden_tests(cell) and current is not None:
            current.hidden_cells.append(i)
    # an {exercise} box with no solution, check or hidden tests is a reading exercise: nothing to grade
    return [ex for ex in out if ex.solution_cells or ex.check_cell is not None or ex.hidden_cells]


def strip_hidden_markers(src: str) -> str:
    return "\n".join(line for line in src.splitlines() if line.strip() not in (BEGIN_HIDDEN, END_HIDDEN))


def stub_solution(src: str) -> tuple[str, bool]:
    """Replace every BEGIN/END SOLUTION block by the stub, at the markers' indentation.

    Returns (new source, whether markers were found). A cell without markers becomes a stub.
    """
    lines = src.splitlines()
    out, inside, found = [], False, False
    for line in lines:
        stripped = line.strip()
        if stripped == BEGIN_SOLUTION:
            inside, found = True, True
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + s for s in STUB_LINES)
            continue
        if stripped == END_SOLUTION:
            inside = False
            continue
        if not inside:
            out.append(line)
    if not found:
        return "\n".join(STUB_LINES), False
    return "\n".join(out), True


def remove_hidden_blocks(src: str) -> str:
    out, inside = [], False
    for line in src.splitlines():
        s = line.strip()
        if s == BEGIN_HIDDEN:
            inside = True
            continue
        if s == END_HIDDEN:
            inside = False
            continue
        if not inside:
            out.append(line)
    return "\n".join(out)


def _split_secret(nb) -> tuple[list[str], str]:
    """(lines inside solution blocks / hidden tests, all the other text of the notebook)."""
    inside, outside = [], []
    for cell in nb.cells:
        if is_hidden_tests(cell):
            inside += strip_hidden_markers(cell.source).splitlines()
            continue
        if cell.cell_type == "markdown" and _SOLUTION_DIRECTIVE.search(cell.source):
            inside += cell.source.splitlines()[1:]
            continue
        whole = is_solution_code(cell) and BEGIN_SOLUTION not in cell.source
        flag = False
        for line in cell.source.splitlines():
            s = line.strip()
            if s in (BEGIN_SOLUTION, END_SOLUTION):
                flag = s == BEGIN_SOLUTION
                continue
            (inside if (flag or whole) else outside).append(line)
    return inside, "\n".join(outside)


def solution_lines(nb) -> set[str]:
    """Lines of solutions and hidden tests that appear nowhere else in the notebook: none of them
    may reach the student edition."""
    inside, outside = _split_secret(nb)
    return {s for s in (line.strip() for line in inside)
            if len(s) >= 8 and not s.startswith("#") and s not in outside}


def solution_tokens(nb) -> set[str]:
    """Compound identifiers (``x_saved``, ``HIDDEN-TEST``; >= 6 characters) used only in solutions and
    hidden tests: distinctive enough to search for in built HTML."""
    inside, outside = _split_secret(nb)
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_-]{5,}", "\n".join(inside)))
    return {w for w in words if w not in outside and ("_" in w.strip("_") or "-" in w) and not w.startswith("__")}


def hidden_lines(nb) -> set[str]:
    lines = set()
    for cell in nb.cells:
        if is_hidden_tests(cell):
            for line in strip_hidden_markers(cell.source).splitlines():
                if len(line.strip()) >= 8:
                    lines.add(line.strip())
    return lines


# ------------------------------------------------------------------ text of the student edition
_FENCE = re.compile(r"^\s*(```+|:::+|~~~+)")
_COLLAPSED_AND = re.compile(r"\b(an?|the) collapsed solutions? and ", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z*_`(\[$])")
_CLAUSE = re.compile(r"\s*(?:;|:(?=\s)|\s[—–]\s)\s*")
_MD_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+?\.(?:ipynb|md))(#[^)\s]*)?\)")


def _without_collapsed_solutions(paragraph: str) -> str:
    """A paragraph without what it says about collapsed solutions (the student edition has none)."""
    paragraph = _COLLAPSED_AND.sub("", paragraph)
    if not re.search(r"collaps", paragraph, re.I):
        return paragraph
    kept = []
    for sentence in _SENTENCE.split(paragraph):
        if not re.search(r"collaps", sentence, re.I):
            kept.append(sentence)
            continue
        clauses = _CLAUSE.split(sentence)
        first = next(i for i, c in enumerate(clauses) if re.search(r"collaps", c, re.I))
        if first > 0:  # keep what comes before: "Each chapter ends with exercises; the solutions are collapsed"
            head = sentence[: sentence.lower().find(clauses[first].lower())]
            kept.append(_CLAUSE.sub("", head[::-1], count=1)[::-1].rstrip(" ;:—–") + ".")
    return " ".join(kept)


def student_text(md: str, keep_link=None) -> str:
    """Markdown as the student edition shows it: no sentence about collapsed solutions (there are
    none), and links to pages the edition does not have (``keep_link(target) -> False``) made plain text.

    Code blocks and directive options are copied as they are; a paragraph or list item that says
    nothing about collapsed solutions is kept byte for byte."""
    out, para, code_fence = [], [], None

    def flush():
        if para:
            text = _without_collapsed_solutions("\n".join(para))
            out.extend(text.split("\n") if text.strip() else [])
            para.clear()

    for line in md.split("\n"):
        m = _FENCE.match(line)
        if code_fence is not None:
            out.append(line)
            if line.strip() == code_fence:
                code_fence = None
            continue
        if m:
            flush()
            out.append(line)
            info = line.strip()[len(m.group(1)):].strip()
            if info and not info.startswith("{"):  # a code block (```python): verbatim until it closes
                code_fence = m.group(1)
            continue
        if not line.strip() or re.match(r"\s*(:\w[\w-]*:|[-*+]\s|\d+[.)]\s|#)", line):
            flush()  # a blank line, a directive option, a list item or a heading starts a new paragraph
        if not line.strip() or re.match(r"\s*:\w[\w-]*:", line):
            out.append(line)
        else:
            para.append(line)
    flush()
    text = "\n".join(out)
    if keep_link is not None:
        text = _MD_LINK.sub(lambda m: m.group(0) if keep_link(m.group(2)) else m.group(1), text)
    return text


def make_student_notebook(nb, keep_link=None):
    """The student edition of one instructor notebook (a new notebook; ``nb`` is not modified)."""
    nb = copy.deepcopy(nb)
    exercises = {i: ex.id for ex in parse_exercises(nb) for i in ex.solution_cells}
    parsed = parse_exercises(nb)
    checks = {ex.check_cell: ex.id for ex in parsed if ex.check_cell is not None}
    # exercises whose stub raises when its cell runs (markers at the top level of the cell): their
    # check cell then raises NameError in the student edition, which is expected there
    top_level = {ex.id for ex in parsed for i in ex.solution_cells
                 if any(line.startswith(BEGIN_SOLUTION) for line in nb.cells[i].source.splitlines())
                 or BEGIN_SOLUTION not in nb.cells[i].source}
    cells = []
    gated = False  # inside a {solution-start} ... {solution-end} block: everything there is solution
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and is_solution_start(cell):
            gated = True
            continue
        if cell.cell_type == "markdown" and is_solution_end(cell):
            gated = False
            continue
        if cell.cell_type != "code" and (gated or "solution" in tags(cell)):
            continue
        if cell.cell_type == "code" and gated and not is_solution_code(cell) and not is_hidden_tests(cell):
            cell.metadata.setdefault("tags", []).append("solution")  # untagged code in a solution block
        if cell.cell_type == "markdown":
            if _SOLUTION_DIRECTIVE.search(cell.source):
                continue
            if BEGIN_SOLUTION in cell.source:
                cell.source, _ = stub_solution(cell.source)
                cell.source = cell.source.replace("\n".join(STUB_LINES), "YOUR ANSWER HERE")
            cell.source = student_text(cell.source, keep_link)
            cells.append(cell)
            continue
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        if is_hidden_tests(cell):
            rest = remove_hidden_blocks(cell.source).strip()
            if not rest or "hidden-tests" in tags(cell):
                continue
            cell.source = rest
        if is_solution_code(cell):
            cell.source, _ = stub_solution(cell.source)
            t = [x for x in tags(cell) if x not in ("solution", "remove-cell", "hide-input", "hide-cell")]
            if "raises-exception" not in t:
                t.append("raises-exception")
            cell.metadata["tags"] = t
            ex_id = exercises.get(i, "")
            cell.metadata[META_KEY] = {"exercise": ex_id, "role": "stub"}
            cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                         "grade_id": f"{ex_id or 'cell'}-{i}-solution", "schema_version": 3}
        elif i in checks:
            cell.metadata[META_KEY] = {"exercise": checks[i], "role": "check"}
            if checks[i] in top_level and "raises-exception" not in tags(cell):
                cell.metadata["tags"] = tags(cell) + ["raises-exception"]
        cell.outputs = []
        cell.execution_count = None
        cells.append(cell)
    nb.cells = cells
    nb.metadata[META_KEY] = {"edition": "student"}
    nbformat.validate(nb)
    return nb


def solution_source(src: str) -> str:
    """A solution cell's code as the student would write it: the markers dropped, the code kept."""
    return "\n".join(line for line in src.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))


def fill_solutions(student_nb, instructor_nb):
    """The student notebook with each stub replaced by the instructor's solution (a reference submission)."""
    nb = copy.deepcopy(student_nb)
    sols: dict[str, list] = {}
    for ex in parse_exercises(instructor_nb):
        sols[ex.id] = [solution_source(instructor_nb.cells[i].source) for i in ex.solution_cells]
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get(META_KEY, {})
        if cell.cell_type == "code" and meta.get("role") == "stub" and sols.get(meta.get("exercise")):
            cell.source = sols[meta["exercise"]].pop(0)
    return nb


def to_nbgrader(nb, points: dict | None = None):
    """The instructor notebook as an nbgrader *source* notebook (a new notebook).

    Solution cells become nbgrader "autograded answer" cells; each exercise's check cell becomes an
    "autograder tests" cell worth the registered points: it runs the check, asserts that it passed,
    and carries the exercise's hidden tests between nbgrader's HIDDEN TESTS markers (nbgrader
    removes them from the release and puts them back when autograding). The website-only
    ``{solution-start}`` / ``{solution-end}`` cells and the separate hidden-test cells are dropped.
    """
    if points is None:
        from . import _load_exercises, registry

        _load_exercises()
        points = {k: v.points for k, v in registry.items()}
    nb = copy.deepcopy(nb)
    parsed = parse_exercises(nb)
    sol = {i: ex.id for ex in parsed for i in ex.solution_cells}
    checks = {ex.check_cell: ex for ex in parsed if ex.check_cell is not None}
    hidden = {i for ex in parsed for i in ex.hidden_cells}
    cells = []
    for i, cell in enumerate(nb.cells):
        if i in hidden or (cell.cell_type == "markdown" and (is_solution_start(cell) or is_solution_end(cell))):
            continue
        if i in sol:
            cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                         "grade_id": f"{sol[i]}-answer-{i}", "schema_version": 3}
        elif i in checks:
            ex = checks[i]
            hid = ex.hidden_source(nb).strip()
            cell.source = (cell.source.rstrip() + "\nimport minigrad.course as _course\n"
                           "assert _course.last_result is not None and _course.last_result.passed, "
                           "'the check did not pass: see its feedback above'\n"
                           + (f"{BEGIN_HIDDEN}\n{hid}\n{END_HIDDEN}\n" if hid else ""))
            cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                         "points": float(points.get(ex.id, 1)), "grade_id": f"{ex.id}-tests",
                                         "schema_version": 3}
        cells.append(cell)
    nb.cells = cells
    return nb
