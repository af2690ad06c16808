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


def stub_raises_when_run(stubbed: str) -> bool:
    """Whether running a stubbed cell raises at once: a ``raise`` at the top level of the cell or
    in a class body (executed when the class is defined), not one inside a function, which waits
    for a call. The names that cell defines are then missing in the student edition."""
    import ast

    try:
        tree = ast.parse(stubbed)
    except SyntaxError:
        return True

    def runs_now(body) -> bool:
        for node in body:
            if isinstance(node, ast.Raise):
                return True
            if isinstance(node, ast.ClassDef) and runs_now(node.body):
                return True
            if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)) and any(
                    runs_now(getattr(node, part, [])) for part in ("body", "orelse", "finalbody")):
                return True
        return False

    return runs_now(tree.body)


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


# ------------------------------------------------------- plain CommonMark for the student edition
# Jupyter (Lab, Notebook, VS Code, Colab) renders Markdown cells as CommonMark: a MyST directive
# (```{exercise} ...) shows there as a block of literal text and a role ({ref}`x`) as "{ref}" and
# code. The student edition is opened in those, so its Markdown cells say the same thing in
# plain Markdown (tests/test_student_markdown.py renders every released notebook to check it).
_DIRECTIVE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,}|~{3,})\s*\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")
_ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<body>[^`]*)`")
_TARGET = re.compile(r"^\s*\((?P<label>[^)\s]+)\)=\s*$")
_ADMONITIONS = {"note": "Note", "tip": "Tip", "hint": "Hint", "important": "Important", "warning": "Warning",
                "caution": "Caution", "attention": "Attention", "danger": "Danger", "error": "Error",
                "seealso": "See also", "margin": "Aside", "sidebar": "Aside", "topic": "Topic",
                "dropdown": "", "admonition": "", "card": ""}
_TITLED = {"exercise", "solution"}


def _role_text(name: str, body: str) -> str:
    name = name.split(":")[-1]
    explicit = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^>]+)>$", body, re.S)
    text = explicit.group("text") if explicit else body
    if name in ("math", "eq"):
        return f"${body}$" if name == "math" else f"({body})"
    if name in ("sub", "sup"):
        return f"<{name}>{body}</{name}>"
    if name in ("code", "literal", "samp", "file", "command", "program", "kbd", "envvar", "option"):
        return f"`{body}`"
    if name == "abbr":
        return re.sub(r"\s*\([^)]*\)\s*$", "", body)
    if name in ("numref", "ref", "doc", "term", "any", "download", "eq", "cite", "prf:ref", "py:func",
                "py:class", "py:meth", "func", "class", "meth", "attr", "mod", "obj"):
        text = text.lstrip("~!")
        if name.startswith("py:") or name in ("func", "class", "meth", "attr", "mod", "obj"):
            return f"`{text}`"
        if name == "numref" and explicit is None:
            from .numbering import display_name
            return display_name(body)
        return text
    return text


def _plain_inline(line: str) -> str:
    """Roles outside inline code made plain Markdown (``{ref}`label` `` -> ``label``)."""
    parts = re.split(r"(`+[^`]*`+)", line)
    out = []
    i = 0
    while i < len(parts):
        part = parts[i]
        # a role is "{name}" followed by a code span: join them before splitting on code spans
        if i + 1 < len(parts) and re.search(r"\{[\w:-]+\}$", part) and parts[i + 1].startswith("`") \
                and not parts[i + 1].startswith("``"):
            m = re.search(r"\{([\w:-]+)\}$", part)
            out.append(part[: m.start()] + _role_text(m.group(1), parts[i + 1][1:-1]))
            i += 2
            continue
        out.append(part)
        i += 1
    return "".join(out)


def _exercise_heading(arg: str, options: dict) -> str:
    from .numbering import display_name

    label = options.get("label", "")
    name = display_name(label) if label else "Exercise"
    title = arg.strip()
    return f"### {name} ({title})" if title else f"### {name}"


def plain_markdown(md: str) -> str:
    """A Markdown cell in plain CommonMark, which Jupyter renders without a MyST extension.

    - an ``{exercise}`` box: a heading "Exercise 3.1 (Leaky ReLU)" (the number computed from its
      ``:label:``, as on the website) followed by the statement;
    - an admonition (``{note}``, ``{warning}``, ``{admonition} Title``, ...): a block quote whose
      first line is the bold title;
    - ``{math}`` blocks: ``$$ ... $$``; ``{code-block}``/``{code-cell}``: a fenced code block;
      ``{figure}``/``{image}``: an image; any other directive: its content;
    - roles: their text (``{ref}`the kink <glossary-kink>` `` -> "the kink", ``{math}`x` `` -> ``$x$``);
    - targets ``(label)=``, MyST comments ``% ...`` and block breaks ``+++``: dropped.
    Plain code blocks (```python) are kept as they are; ``$...$`` math stays (Jupyter renders it).
    """
    lines = md.split("\n")
    out: list[str] = []
    i = 0
    code_fence = None
    while i < len(lines):
        line = lines[i]
        if code_fence is not None:
            out.append(line)
            if line.strip().startswith(code_fence) and line.strip().strip(code_fence[0]) == "":
                code_fence = None
            i += 1
            continue
        m = _DIRECTIVE_OPEN.match(line)
        if m is None:
            fm = _FENCE.match(line)
            if fm:
                code_fence = fm.group(1)
                out.append(line)
            elif _TARGET.match(line) or line.strip() == "+++" or re.match(r"^\s*%", line):
                pass
            else:
                out.append(_plain_inline(line))
            i += 1
            continue
        fence, name, arg = m.group("fence"), m.group("name"), m.group("arg").strip()
        # the directive's extent: up to a closing fence of the same character, at least as long
        j, body, options, in_options = i + 1, [], {}, True
        while j < len(lines):
            s = lines[j].strip()
            if s and s[0] == fence[0] and set(s) == {fence[0]} and len(s) >= len(fence):
                break
            om = _OPTION.match(lines[j]) if in_options else None
            if om:
                options[om.group("key")] = om.group("value").strip()
            else:
                if in_options and s == "---":  # YAML options block (--- key: value ---)
                    k = j + 1
                    while k < len(lines) and lines[k].strip() != "---":
                        km = re.match(r"\s*([\w-]+):\s*(.*)$", lines[k])
                        if km:
                            options[km.group(1)] = km.group(2).strip()
                        k += 1
                    j = k + 1
                    in_options = False
                    continue
                in_options = False
                body.append(lines[j])
            j += 1
        i = j + 1
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        inner = plain_markdown("\n".join(body)).split("\n") if body else []
        key = name.split(":")[-1]
        if key in ("solution-start", "solution-end", "solution"):
            continue  # solutions are not in the student edition
        if key in _TITLED or key.startswith("exercise"):
            out += [_exercise_heading(arg, options), ""] + inner
        elif key in ("math",):
            out += ["$$", *body, "$$"]
        elif key in ("code-block", "code", "code-cell", "sourcecode"):
            out += ["```" + (arg.split()[0] if arg else ""), *body, "```"]
        elif key in ("figure", "image"):
            alt = options.get("alt", "")
            out.append(f"![{alt}]({arg})")
            if key == "figure" and inner:
                out += [""] + inner
        elif key in _ADMONITIONS or key.startswith("prf:"):
            title = arg if key in ("admonition", "dropdown", "card") or (arg and key.startswith("prf:")) \
                else (_ADMONITIONS.get(key) or key.split(":")[-1].capitalize()) + (f": {arg}" if arg else "")
            quoted = ([f"> **{_plain_inline(title)}**", ">"] if title else []) + \
                [("> " + x) if x.strip() else ">" for x in inner]
            out += quoted
        else:
            out += inner
        if i < len(lines) and lines[i].strip():
            out.append("")  # a converted block ends with a blank line, as a directive did
    return "\n".join(out)


#: what a stub cell prints when the code after its definitions calls them before they are written
#: (the same hint as check()'s, in one line, instead of a traceback through the engine)
STUB_HINT = ("✗ not attempted yet: your code raised NotImplementedError: replace the "
             "`raise NotImplementedError()` stubs above with your solution, then run this cell again.")


def guard_trailing_calls(src: str) -> str:
    """A stub cell whose code, after the stubbed definitions, calls them (``print(gradcheck(F.apply,
    ...))``) would end in a long traceback through the engine, since the stub raises
    NotImplementedError. That code is wrapped in ``try``/``except NotImplementedError``, which
    prints :data:`STUB_HINT`. Cells whose stub raises at the top level, or that only define, are
    returned unchanged."""
    import ast

    try:
        tree = ast.parse(src)
    except SyntaxError:
        return src
    defs = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)
    if any(isinstance(n, ast.Raise) for n in tree.body):
        return src  # the stub raises right here: a short traceback, and nothing after it runs
    last_def = max((i for i, n in enumerate(tree.body) if isinstance(n, defs)), default=-1)
    trailing = tree.body[last_def + 1:]
    if last_def < 0 or not trailing or not any(isinstance(n, ast.Call) for t in trailing for n in ast.walk(t)):
        return src
    lines = src.split("\n")
    start = trailing[0].lineno - 1
    head, tail = lines[:start], lines[start:]
    while tail and not tail[-1].strip():
        tail.pop()
    body = ["    " + x if x.strip() else x for x in tail]
    return "\n".join(head + ["try:  # until the stubs above are written, they raise NotImplementedError"] + body
                     + ["except NotImplementedError:", f'    print("{STUB_HINT}")'])


def make_student_notebook(nb, keep_link=None):
    """The student edition of one instructor notebook (a new notebook; ``nb`` is not modified)."""
    nb = copy.deepcopy(nb)
    exercises = {i: ex.id for ex in parse_exercises(nb) for i in ex.solution_cells}
    parsed = parse_exercises(nb)
    checks = {ex.check_cell: ex.id for ex in parsed if ex.check_cell is not None}
    # exercises whose stub raises when its cell runs (markers at the top level of the cell, or in a
    # class body): their check cell then raises NameError in the student edition, expected there
    top_level = {ex.id for ex in parsed for i in ex.solution_cells
                 if stub_raises_when_run(stub_solution(nb.cells[i].source)[0])}
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
            cell.source = plain_markdown(student_text(cell.source, keep_link))
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
            cell.source = guard_trailing_calls(cell.source)
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
