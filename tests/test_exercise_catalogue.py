"""The learner's self-check and the grader give the same verdict, on a catalogue of wrong answers.

For every exercise of the book, each answer in ``tests/exercise_catalogue/chNN.py`` (plus the
stub and the instructor's solution) is
  1. run as a learner runs it: the student edition's cells in order, the answer in place of the
     solution cell, then ``check(...)`` (in this process, no kernel: fast);
  2. submitted to the grader through its public API (``minigrad.course.grade.grade``), which runs
     the notebook in its sandboxed kernel with the hidden tests;
and the two verdicts must agree (and be "wrong" for a wrong answer, "right" for the solution and
for alternative correct answers). To keep CI fast, one submitted notebook carries the answers to
every exercise of the book at once: notebook k holds the k-th catalogue entry of each exercise
(the notebook is the chapters' exercise sections, with their imports, one after the other).

It runs in both languages: ``zh`` builds the notebook from the Chinese edition (zh/book/, the
English code with Chinese text; its metadata says ``i18n.language: zh``), the learner's checks run
in Chinese, and the grader's feedback must be Chinese too (it follows the submission's language).
"""
from __future__ import annotations

import contextlib
import io
import json
import linecache
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

import exercise_catalogue  # noqa: E402  (tests/exercise_catalogue/)
from exercise_catalogue import REQUIRED_KINDS, Wrong  # noqa: E402

import minigrad.course as course  # noqa: E402
from minigrad.course import _i18n  # noqa: E402
from minigrad.course.grade import grade  # noqa: E402
from minigrad.course.notebooks import META_KEY, fill_solutions, make_student_notebook, parse_exercises  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CARRIER = "exercises.ipynb"
_EXERCISES_HEADING = re.compile(r"^#{2}\s+Exercises\b", re.M)
_SETUP_END = re.compile(r"^#{2}\s+\S", re.M)


# --------------------------------------------------------------------------------- the notebook
def _chapter_paths(language: str = "en") -> dict[int, Path]:
    """The chapter notebooks (for zh: the Chinese edition's, the English one where it has none)."""
    out = {}
    for p in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
        zh = ROOT / "zh" / "book" / p.name
        out[int(p.name[:2])] = zh if language == "zh" and zh.is_file() else p
    return out


def _exercise_part(nb, prelude_cells) -> list:
    """The chapter's setup cells (code before its first '## ' section), the cells named in the
    catalogue's PRELUDE_CELLS (by cell id, in the chapter's order), and its exercise section."""
    cells = nb.cells
    first_section = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and _SETUP_END.search(c.source))
    starts = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and _EXERCISES_HEADING.search(c.source)]
    box = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and "{exercise}" in c.source)
    start = starts[-1] if starts and starts[-1] <= box else box
    ids = [c.get("id") for c in cells]
    missing = set(prelude_cells) - set(ids)
    assert not missing, f"PRELUDE_CELLS names cells that the chapter does not have: {sorted(missing)}"
    keep = [i for i, c in enumerate(cells)
            if (i < first_section and c.cell_type == "code") or c.get("id") in prelude_cells or i >= start]
    return [json.loads(json.dumps(cells[i])) for i in keep]


@pytest.fixture(scope="module", params=["en", "zh"])
def catalogue(request):
    language = request.param
    modules = exercise_catalogue.load()
    chapters = _chapter_paths(language)
    cells, ids = [], []
    for n, path in chapters.items():
        nb = nbformat.read(path, as_version=4)
        exs = [e.id for e in parse_exercises(nb)]
        if not exs:
            continue
        ids += exs
        cells += _exercise_part(nb, getattr(modules.get(n), "PRELUDE_CELLS", ()))
    instructor = nbformat.v4.new_notebook(metadata=nbformat.read(chapters[1], as_version=4).metadata)
    if language != "en":  # the grader reads the submission's language there (minigrad/course/_i18n.py)
        instructor.metadata["i18n"] = {"language": language}
    instructor.cells = [nbformat.from_dict(c) for c in cells]
    for c in instructor.cells:
        c.pop("outputs", None) if c.cell_type != "code" else c.update(outputs=[], execution_count=None)
    entries = {i: [] for i in ids}
    for mod in modules.values():
        for w in mod.WRONG:
            assert w.exercise in entries, f"catalogue entry for {w.exercise}, which is not an exercise of the book"
            entries[w.exercise].append(w)
    return {"instructor": instructor, "ids": ids, "entries": entries, "language": language}


def _stub_cell(nb, ex_id):
    return next(c for c in nb.cells if c.cell_type == "code"
                and c.get("metadata", {}).get(META_KEY, {}).get("exercise") == ex_id
                and c.metadata[META_KEY].get("role") == "stub")


def _submissions(cat) -> dict[str, dict[str, Wrong | str]]:
    """{student: {exercise: entry}}: 'reference' (solutions), 'stub', then one notebook per slot k."""
    slots = max((len(v) for v in cat["entries"].values()), default=0)
    out = {"reference": {i: "solution" for i in cat["ids"]}, "stub": {i: "stub" for i in cat["ids"]}}
    for k in range(slots):
        out[f"wrong{k + 1:02d}"] = {i: es[k] for i, es in cat["entries"].items() if k < len(es)}
    return out


def _student_notebook(cat, answers: dict) -> object:
    student = make_student_notebook(cat["instructor"])
    filled = fill_solutions(student, cat["instructor"])
    nb = nbformat.from_dict(json.loads(json.dumps(student)))
    for ex_id in cat["ids"]:
        answer = answers.get(ex_id, "solution")
        if answer == "stub":
            continue
        cell = _stub_cell(nb, ex_id)
        cell.source = _stub_cell(filled, ex_id).source if answer == "solution" else answer.code
    return nb


# ------------------------------------------------------------------------------- the learner
def _learner_verdicts(nb) -> dict[str, course.CheckResult]:
    """Run the notebook's cells in order in a fresh namespace, as a learner would; the check results.

    NumPy's error handling and the warning filters are restored afterwards, as a fresh kernel would
    have them: a chapter's setup (e.g. chapter 5's ``np.seterr(all="ignore")``) must not change what
    the next student's checks see (the stability checks of chapter 4 look for NumPy's warnings).
    """
    import warnings

    import numpy as np

    saved = np.geterr()
    try:
        with warnings.catch_warnings():
            return _run_as_learner(nb)
    finally:
        np.seterr(**saved)


def _run_as_learner(nb) -> dict[str, course.CheckResult]:
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    ns: dict = {"__name__": "__main__"}
    results = {}
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.get("metadata", {}).get(META_KEY, {})
        course.last_result = None
        # each cell's source in linecache under a name of its own, as IPython keeps it: a check that
        # reads a function's source (exercise 11.3) finds it, as it does in Jupyter
        source, filename = transform(cell.source), f"<learner cell {k}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                exec(compile(source, filename, "exec"), ns)
            except Exception as e:  # the learner's cell raised: the notebook goes on, as in Jupyter
                error = e
            else:
                error = None
        m = re.search(r"""check\(\s*['"]([^'"]+)['"]""", cell.source)
        if m and (meta.get("role") == "check" or "check" in cell.get("metadata", {}).get("tags", [])):
            res = course.last_result
            if res is None:  # the check cell itself raised (e.g. NameError: the answer is not defined)
                res = course.CheckResult(False, f"✗ the check cell raised {type(error).__name__}: {error}")
            results[m.group(1)] = res
    return results


# ---------------------------------------------------------------------------------- the test
def test_catalogue_covers_every_exercise(catalogue):
    entries = catalogue["entries"]
    thin = [i for i, es in entries.items() if len([e for e in es if not e.passes]) < 3]
    assert not thin, f"exercises with fewer than 3 wrong answers in tests/exercise_catalogue/: {thin}"
    kinds = {e.kind for es in entries.values() for e in es}
    assert REQUIRED_KINDS <= kinds, f"kinds of wrong answer nowhere in the catalogue: {REQUIRED_KINDS - kinds}"


def test_self_check_and_grader_agree(catalogue, tmp_path, monkeypatch):
    monkeypatch.delenv("MINIGRAD_COURSE_EXTRA_EXERCISES", raising=False)
    root, subs = tmp_path / "source", tmp_path / "subs"
    (root / "book").mkdir(parents=True)
    (root / "_toc.yml").write_text(f"format: jb-book\nroot: book/{Path(CARRIER).stem}\n")
    nbformat.write(catalogue["instructor"], root / "book" / CARRIER)
    plan = _submissions(catalogue)
    learner = {}
    for student, answers in plan.items():
        nb = _student_notebook(catalogue, answers)
        (subs / student).mkdir(parents=True)
        nbformat.write(nb, subs / student / CARRIER)
        with _i18n.using(catalogue["language"]):  # as the learner's kernel would (the notebook's language)
            learner[student] = _learner_verdicts(nb)

    rows = grade(subs, tmp_path / "out", source=root, timeout=600, jobs=2, log=lambda *a: None)
    graded = {(r["student"], r["exercise"]): r for r in rows}
    assert {e for _, e in graded} == set(catalogue["ids"]), "the gradebook's rows are not the book's exercises"

    problems = []
    for student, answers in plan.items():
        for ex_id in catalogue["ids"]:
            answer = answers.get(ex_id, "solution")
            row, mine = graded[(student, ex_id)], learner[student].get(ex_id)
            what = f"{ex_id} [{answer if isinstance(answer, str) else answer.kind}] ({student})"
            if mine is None:
                problems.append(f"{what}: the learner's check cell did not run")
                continue
            should_pass = answer == "solution" or (isinstance(answer, Wrong) and answer.passes)
            grader_pass = row["points"] == row["max_points"]
            if mine.passed != grader_pass:
                problems.append(f"{what}: check() says {'right' if mine.passed else 'wrong'}, the grader "
                                f"{'right' if grader_pass else 'wrong'}\n    check: {mine.message[:300]}"
                                f"\n    grader: ...{row['feedback'][-300:]}")
            elif mine.passed != should_pass:
                problems.append(f"{what}: both say {'right' if mine.passed else 'wrong'}, expected "
                                f"{'right' if should_pass else 'wrong'}\n    check: {mine.message[:300]}")
            elif catalogue["language"] != "en" and answer == "solution" and not (
                    mine.message.startswith("✓ 练习") and "练习" in row["feedback"]):
                problems.append(f"{what}: the feedback is not in Chinese:\n    check: {mine.message[:200]}"
                                f"\n    grader: {row['feedback'][:200]}")
            elif catalogue["language"] == "en" and isinstance(answer, Wrong) and answer.says \
                    and answer.says not in " ".join(mine.message.split()):
                problems.append(f"{what}: the check's feedback does not say {answer.says!r}:\n    {mine.message[:400]}")
    assert not problems, f"{len(problems)} disagreement(s):\n" + "\n".join(problems)
