"""minigrad-course release: the student edition has no solutions, runs, and the solutions fit its stubs."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

from minigrad.course.notebooks import (STUB_LINES, fill_solutions, make_student_notebook,  # noqa: E402
                                       parse_exercises, solution_lines, solution_tokens)
from minigrad.course.release import book_notebooks, find_source_root, release  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "course"
FIXTURE_NB = FIXTURE / "book" / "99_fixture.ipynb"


@pytest.fixture(autouse=True)
def _fixture_exercises(monkeypatch):
    # the fixture chapter's checks live in tests/fixtures/course/exercises/ch99.py
    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))


def _run(nb, cwd):
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return nb


def _errors(nb):
    return [(i, o["ename"]) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


def _text(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def _assert_no_secrets(text, instructor_nbs, where, tokens=False):
    for nb in instructor_nbs:
        secrets = solution_lines(nb)
        assert secrets, "the check would be vacuous"
        for line in secrets:
            assert line not in text, f"solution/hidden-test line {line!r} survives in {where}"
        if tokens:
            for word in solution_tokens(nb):
                assert word not in text, f"solution/hidden-test word {word!r} survives in {where}"


def test_stub_replaces_only_the_marked_part():
    nb = nbformat.read(FIXTURE_NB, as_version=4)
    student = make_student_notebook(nb)
    stubs = [c for c in student.cells if c.get("metadata", {}).get("minigrad_course", {}).get("role") == "stub"]
    assert len(stubs) == 3
    cube = stubs[0].source
    assert "class Cube(Function):" in cube and "def backward(ctx, grad_output):" in cube
    assert cube.count("        # YOUR CODE HERE\n        raise NotImplementedError()") == 2
    assert all("raises-exception" in c.metadata["tags"] and "solution" not in c.metadata["tags"] for c in stubs)
    assert stubs[2].source == "\n".join(STUB_LINES)
    text = json.dumps(student)
    assert "solution-start" not in text and "solution-end" not in text and "BEGIN HIDDEN" not in text
    assert not any(c.get("outputs") for c in student.cells if c.cell_type == "code")
    assert [e.id for e in parse_exercises(nb)] == ["ch99-ex1", "ch99-ex2", "ch99-ex3"]
    assert nb == nbformat.read(FIXTURE_NB, as_version=4)  # the instructor notebook is not modified


def test_release_fixture_notebooks_and_site(tmp_path):
    """Release with the website build: no solution or hidden-test text anywhere in the output."""
    out = tmp_path / "release"
    res = release(out, FIXTURE, site=True, log=lambda *a: None)
    assert res["notebooks"] == {"99_fixture.ipynb": ["ch99-ex1", "ch99-ex2", "ch99-ex3"]}
    instructor = [nbformat.read(FIXTURE_NB, as_version=4)]
    files = [p for p in out.rglob("*") if p.is_file()]
    html = [p for p in files if p.suffix == ".html"]
    assert (out / "site" / "book" / "99_fixture.html") in html
    assert not any("instructor_guide" in p.name for p in files)
    for p in files:
        if p.suffix in (".ipynb", ".html", ".md", ".txt", ".js", ".json", ".yml", ".py"):
            text = p.read_text(errors="replace")
            _assert_no_secrets(text, instructor, p, tokens=True)
            assert "INSTRUCTOR-ONLY-PAGE-MARKER" not in text
    page = (out / "site" / "book" / "99_fixture.html").read_text()
    assert {"x_saved_cube", "leaky_slope_secret", "HIDDEN-CUBE-GRAD"} <= solution_tokens(instructor[0])
    assert "Cube as a Function" in page            # the exercise box is there
    assert "Solution to" not in page                # ... and no solution, not even collapsed
    assert "NotImplementedError" in page            # the stub ran (raises-exception) in the build
    assert (out / "book" / ".gitignore").read_text().splitlines()[1:] == ["_build/", "_assets/"]


def test_release_says_what_the_site_needs_and_leaves_nothing_on_failure(tmp_path, monkeypatch):
    """Without jupyter-book (the `course` extra alone) the website cannot be built: said before anything
    is written, with the way out; a release that fails half-way removes the folder it created."""
    from minigrad.course import release as release_mod

    out = tmp_path / "release"
    monkeypatch.setattr(release_mod, "_jupyter_book", lambda: None)
    with pytest.raises(RuntimeError, match="needs jupyter-book.*--no-site"):
        release(out, FIXTURE, site=True, log=lambda *a: None)
    assert not out.exists()
    release(out, FIXTURE, site=False, log=lambda *a: None)  # the notebooks alone need nothing more
    assert (out / "notebooks" / "99_fixture.ipynb").exists()
    monkeypatch.undo()

    def broken(*a, **k):
        raise RuntimeError("the build broke")

    monkeypatch.setattr(release_mod, "build_site", broken)
    fresh = tmp_path / "fresh"
    with pytest.raises(RuntimeError, match="the build broke"):
        release(fresh, FIXTURE, site=True, log=lambda *a: None)
    assert not fresh.exists()


def test_student_notebook_runs_with_only_stub_errors_and_solutions_pass(tmp_path):
    instructor = nbformat.read(FIXTURE_NB, as_version=4)
    student = make_student_notebook(instructor)
    ran = _run(nbformat.from_dict(json.loads(json.dumps(student))), tmp_path)
    errs = _errors(ran)
    assert errs, "the stubs should raise"
    for i, ename in errs:
        cell = ran.cells[i]
        assert "raises-exception" in cell.metadata.get("tags", []), (i, ename, cell.source)
        role = cell.metadata.get("minigrad_course", {}).get("role")
        assert (role, ename) in (("stub", "NotImplementedError"), ("check", "NameError")), (i, ename)
    checks = [c for c in ran.cells if "check" in c.metadata.get("tags", [])]
    assert checks and all(_text(c).startswith("✗") for c in checks if _text(c))
    # filling the stubs with the instructor's solutions makes every check pass
    filled = _run(fill_solutions(student, instructor), tmp_path)
    assert _errors(filled) == []
    outs = [_text(c) for c in filled.cells if "check" in c.metadata.get("tags", [])]
    assert len(outs) == 3 and all(o.startswith("✓") for o in outs), outs


def test_cli_help_documents_both_commands():
    out = subprocess.run([sys.executable, "-m", "minigrad.course.cli", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "release --out DIR" in out and "grade SUBMISSIONS --out DIR" in out
    for cmd, words in (("release", ["--out", "--no-site"]), ("grade", ["--timeout", "--memory", "--jobs"])):
        h = subprocess.run([sys.executable, "-m", "minigrad.course.cli", cmd, "--help"], capture_output=True,
                           text=True, check=True).stdout
        assert all(w in h for w in words)


def _real_book_notebooks():
    try:
        root = find_source_root(ROOT)
    except FileNotFoundError:
        return []
    return [p for p in book_notebooks(root) if parse_exercises(nbformat.read(p, as_version=4))]


def test_release_real_book(tmp_path):
    """The real book's chapters: released without solutions; the student notebooks run with only stub errors."""
    os.environ.pop("MINIGRAD_COURSE_EXTRA_EXERCISES", None)
    chapters = _real_book_notebooks()
    if not chapters:
        pytest.skip("no chapter notebook with exercises in book/ yet")
    res = release(tmp_path / "rel", ROOT, site=False, log=lambda *a: None)
    for path in chapters:
        instructor = nbformat.read(path, as_version=4)
        student_path = tmp_path / "rel" / "notebooks" / path.name
        _assert_no_secrets(student_path.read_text(), [instructor], student_path)
        assert res["notebooks"][path.name] == [e.id for e in parse_exercises(instructor)]
        ran = _run(nbformat.read(student_path, as_version=4), path.parent)
        for i, ename in _errors(ran):
            assert "raises-exception" in ran.cells[i].metadata.get("tags", []), (path.name, i, ename)


def test_to_nbgrader_marks_answers_and_tests():
    from minigrad.course.notebooks import to_nbgrader

    nb = nbformat.read(FIXTURE_NB, as_version=4)
    src = to_nbgrader(nb, points={"ch99-ex1": 2, "ch99-ex2": 3, "ch99-ex3": 1})
    meta = [c.metadata.get("nbgrader") for c in src.cells]
    answers = [m for m in meta if m and m["solution"]]
    tests = [(c, c.metadata["nbgrader"]) for c in src.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(answers) == 3 and [m["points"] for _, m in tests] == [2.0, 3.0, 1.0]
    cube_test = tests[0][0].source
    assert cube_test.startswith('check("ch99-ex1", Cube)') and "last_result" in cube_test
    assert "### BEGIN HIDDEN TESTS" in cube_test and "HIDDEN-CUBE-GRAD" in cube_test
    assert not any("solution-start" in c.source or "hidden-tests" in c.metadata.get("tags", []) for c in src.cells)
    assert len({m["grade_id"] for m in meta if m}) == 6  # nbgrader needs unique ids


def test_stub_cell_that_calls_its_stubs_prints_a_hint_not_a_traceback(capsys):
    """ReLU6's cell (chapter 3) ends with a gradcheck of the Function the student has not written
    yet: in the student edition that call prints the check's one-line hint instead of raising
    NotImplementedError through the engine (a 40-line traceback)."""
    from minigrad.course.notebooks import STUB_HINT, guard_trailing_calls

    instructor = nbformat.read(ROOT / "book" / "03_relu.ipynb", as_version=4)
    student = make_student_notebook(instructor)
    cell = next(c for c in student.cells if c.cell_type == "code" and "class ReLU6Function" in c.source)
    assert "except NotImplementedError:" in cell.source and "gradcheck(ReLU6Function.apply" in cell.source
    import minigrad
    from minigrad.autograd import Function

    ns = {"torch": minigrad, "Function": Function}
    exec(compile(cell.source, "<stub cell>", "exec"), ns)        # does not raise
    assert capsys.readouterr().out.strip() == STUB_HINT
    # a cell whose stub raises at the top level, or that only defines, is left as it is
    top = "x = 1\n# YOUR CODE HERE\nraise NotImplementedError()"
    assert guard_trailing_calls(top) == top
    only_defs = "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    assert guard_trailing_calls(only_defs) == only_defs
    # once the stub is written, the guarded code runs as the student wrote it
    filled = guard_trailing_calls("def f(x):\n    raise NotImplementedError()\n\nprint(f(2))").replace(
        "raise NotImplementedError()\n", "return x + 1\n", 1)
    exec(compile(filled, "<filled>", "exec"), {})
    assert capsys.readouterr().out.strip() == "3"


def test_site_download_page_links_the_wheel_and_the_landing_page_links_it(tmp_path):
    """A learner who downloads a chapter from the website finds the engine's wheel there."""
    import re as _re

    from minigrad.course.release import SITE_DOWNLOAD, site_download

    wheel = site_download(ROOT, tmp_path, log=lambda *a: None)
    page = (tmp_path / SITE_DOWNLOAD / "index.html").read_text()
    assert wheel.parent == tmp_path / SITE_DOWNLOAD and wheel.name.endswith("-py3-none-any.whl")
    assert f'href="{wheel.name}"' in page and f'pip install "{wheel.name}[book]"' in page
    assert sorted(p.name for p in wheel.parent.iterdir()) == ["index.html", wheel.name]
    # the build puts it into the site; the landing page (book/intro.html) links there
    build = (ROOT / "scripts" / "build_book.sh").read_text()
    assert "site_download('.', '_build/html')" in build
    intro = (ROOT / "book" / "intro.md").read_text()
    assert _re.search(rf'href="\.\./{SITE_DOWNLOAD}/index\.html"', intro)
    # the install cell's message sends the learner to it
    sys.path.insert(0, str(ROOT / "scripts"))
    import install_cell

    src = install_cell.cell_source()
    assert "(the link on the " in src and "first page of the course website)" in src


def test_a_stub_in_a_class_body_raises_when_its_cell_runs():
    """A solution that is a whole class body (chapter 11's SquareV) stubs into a class whose body
    raises: the class is never defined, so its check cell's NameError is expected in the student
    edition; a stub inside a method waits for a call and leaves the class defined."""
    from minigrad.course.notebooks import stub_raises_when_run, stub_solution

    body = "class F(Function):\n    ### BEGIN SOLUTION\n    @staticmethod\n    def forward(x):\n" \
           "        return x\n    ### END SOLUTION\n"
    method = "class F(Function):\n    @staticmethod\n    def forward(x):\n        ### BEGIN SOLUTION\n" \
             "        return x\n        ### END SOLUTION\n"
    top = "### BEGIN SOLUTION\ny = 1\n### END SOLUTION\n"
    assert stub_raises_when_run(stub_solution(body)[0])
    assert stub_raises_when_run(stub_solution(top)[0])
    assert not stub_raises_when_run(stub_solution(method)[0])
    assert stub_raises_when_run(stub_solution("x = 1")[0])  # no markers: the whole cell is the stub
