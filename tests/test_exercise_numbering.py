"""One numbering everywhere: check id ``chNN-exK`` = Sphinx label = gradebook row = "Exercise N.K".

Fails when the number a learner sees, the label / check id, the registered checks and the text's
references ("see Exercise 3.1") drift apart. The convention is in minigrad/course/API.md; the
website's numbers come from _ext/exercise_numbers.py, tested here on a small Sphinx project.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest

from minigrad.course import registry, run_check
from minigrad.course.exercises import import_errors
from minigrad.course.notebooks import parse_exercises
from minigrad.course.numbering import TEXT_REFERENCE, chapter_of_file, display_name, exercise_number, parse_id

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
_BOX = re.compile(r"^(```+|:::+)\s*\{exercise\}\s*(.*)$", re.M)
_LABEL = re.compile(r"^:label:\s*(\S+)", re.M)
_BARE_REFERENCE = re.compile(r"\b[Ee]xercises?\s+\d+\b(?!\.\d)")


def _boxes(nb) -> list[tuple[str, str]]:
    """(label, title) of every {exercise} box, in the order of the page."""
    out = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in _BOX.finditer(cell.source):
            rest = cell.source[m.end():]
            label = _LABEL.search(rest.split("```")[0])
            out.append((label.group(1) if label else "(no label)", m.group(2).strip()))
    return out


def _markdown_pages():
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        yield path.name, "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for path in sorted((ROOT / "book").glob("*.md")):
        yield path.name, path.read_text()


def _book_ids() -> dict[str, tuple[str, str]]:
    ids = {}
    for path in CHAPTERS:
        for label, title in _boxes(nbformat.read(path, as_version=4)):
            ids[label] = (path.name, title)
    return ids


def test_the_number_is_computed_from_the_id():
    assert parse_id("ch03-ex1") == (3, 1) and parse_id("ch10-ex12") == (10, 12)
    assert exercise_number("ch00-ex1") == "0.1" and display_name("ch04-ex3") == "Exercise 4.3"
    assert parse_id("ch3-ex1") is None and parse_id("ch03-ex0") is None and display_name("demo") == "demo"
    assert chapter_of_file("03_relu.ipynb") == 3 and chapter_of_file("book/10_engine") == 10
    assert chapter_of_file("intro.md") is None


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_labels_follow_the_chapter_and_the_order_of_the_page(path):
    nb = nbformat.read(path, as_version=4)
    labels = [label for label, _ in _boxes(nb)]
    chapter = chapter_of_file(path.name)
    assert labels == [f"ch{chapter:02d}-ex{k}" for k in range(1, len(labels) + 1)], (
        f"{path.name}: the exercise boxes are labelled {labels}; exercise K of chapter {chapter} must be "
        f"labelled ch{chapter:02d}-exK, numbered in the order of the page (minigrad/course/API.md)")
    # the solution, the check cell and the hidden tests belong to the exercise of the same id
    graded = parse_exercises(nb)
    assert [e.id for e in graded] == labels, f"{path.name}: solutions/checks refer to {[e.id for e in graded]}"
    for ex in graded:
        assert ex.check_cell is not None, f"{path.name}: {ex.id} has no check cell (check({ex.id!r}, ...))"
        assert ex.solution_cells, f"{path.name}: {ex.id} has no solution cell"


def test_every_exercise_has_its_registered_check_with_the_same_title():
    assert not import_errors, import_errors
    book = _book_ids()
    for label, (name, title) in book.items():
        assert label in registry, f"{name}: {label} has no registered check in minigrad/course/exercises/"
        assert registry[label].title == title, (
            f"{label}: the box says {title!r}, the check (and the gradebook) {registry[label].title!r}")
    ours = {i for i in registry if parse_id(i) and (ROOT / "minigrad" / "course" / "exercises" /
                                                    f"ch{parse_id(i)[0]:02d}.py").exists()}
    assert ours <= set(book), f"registered checks with no exercise in the book: {sorted(ours - set(book))}"


def test_check_feedback_names_the_exercise_as_the_page_does():
    result = run_check("ch00-ex1", (0.25, 0.0))
    assert result.passed
    assert result.message.splitlines()[0] == "✓ Exercise 0.1 (The steepest point of the sigmoid): 1/1 points"


@pytest.mark.parametrize("name,text", list(_markdown_pages()), ids=lambda v: v if v.endswith(("ipynb", "md")) else "")
def test_references_in_the_text_name_existing_exercises(name, text):
    book = _book_ids()
    for m in TEXT_REFERENCE.finditer(text):
        target = f"ch{int(m.group(1)):02d}-ex{int(m.group(2))}"
        assert target in book, f"{name}: {m.group(0)!r} refers to {target}, which is not an exercise of the book"
    bare = [m.group(0) for m in _BARE_REFERENCE.finditer(text)]
    assert not bare, f"{name}: {bare}: refer to an exercise by its full number, e.g. 'Exercise 3.1'"


# ------------------------------------------------------------------ the Sphinx extension
_PAGE = """# {title}

```{{exercise}} First
:label: {first}

Do this.
```

```{{solution}} {first}
:class: dropdown

Done.
```

```{{exercise}} Second
:label: {second}

Then that; {{numref}}`{first}` helps.
```
"""


def _build(tmp_path, pages: dict[str, tuple[str, str]]):
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    (src / "book").mkdir(parents=True)
    toc = "\n".join(f"book/{name}" for name in pages)
    (src / "index.md").write_text(f"# Book\n\n```{{toctree}}\n{toc}\n```\n")
    for name, (first, second) in pages.items():
        (src / "book" / f"{name}.md").write_text(_PAGE.format(title=name, first=first, second=second))
    (src / "conf.py").write_text("extensions = ['myst_parser', 'exercise_numbers']\n"
                                 "exclude_patterns = ['_build']\n")
    sys.path.insert(0, str(ROOT / "_ext"))
    warnings = []
    try:
        import io

        stream = io.StringIO()
        app = Sphinx(str(src), str(src), str(tmp_path / "html"), str(tmp_path / "doctrees"), "html",
                     status=None, warning=stream, freshenv=True)
        app.build()
        warnings = re.sub(r"\x1b\[[0-9;]*m", "", stream.getvalue())
    finally:
        sys.path.remove(str(ROOT / "_ext"))
    return tmp_path / "html", warnings


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_sphinx_extension_numbers_boxes_solutions_and_references(tmp_path):
    pytest.importorskip("myst_parser")
    html_dir, warnings = _build(tmp_path, {"03_relu": ("ch03-ex1", "ch03-ex2"),
                                           "04_sigmoid": ("ch04-ex1", "ch04-ex2")})
    assert "exercise label" not in warnings, warnings
    page3 = _text((html_dir / "book" / "03_relu.html").read_text())
    page4 = _text((html_dir / "book" / "04_sigmoid.html").read_text())
    assert "Exercise 3.1 (First)" in page3 and "Exercise 3.2 (Second)" in page3
    assert "Solution to Exercise 3.1 (First)" in page3 and "Exercise 3.1 helps" in page3
    assert "Exercise 4.1 (First)" in page4 and "Exercise 4.2 (Second)" in page4
    assert "Exercise 1 " not in page3 + page4 and "Exercise 3 " not in page4  # not the book-wide counter


def test_sphinx_extension_warns_about_a_label_that_drifted(tmp_path):
    pytest.importorskip("myst_parser")
    _, warnings = _build(tmp_path, {"03_relu": ("ch03-ex1", "ch03-ex3"), "04_sigmoid": ("ch03-ex4", "ch04-ex2")})
    assert "exercise label 'ch03-ex3' should be 'ch03-ex2'" in warnings, warnings
    assert "exercise label 'ch03-ex4' should be 'ch04-ex1'" in warnings, warnings


def test_built_site_shows_the_same_numbers():
    """When the book has been built (scripts/test.sh builds it first), its boxes read 'Exercise N.K'."""
    html = ROOT / "_build" / "html"
    if not (html / ".build-ok").is_file():
        pytest.skip("the book is not built (_build/html/.build-ok); run: bash scripts/build_book.sh")
    for path in CHAPTERS:
        page = html / "book" / f"{path.stem}.html"
        assert page.is_file(), page
        source = page.read_text()
        for label, title in _boxes(nbformat.read(path, as_version=4)):
            box = re.search(rf'<div class="exercise[^"]*" id="{re.escape(label)}">(.*?)</p>', source, re.S)
            assert box, f"{page.name}: no exercise box with id {label}"
            assert _text(box.group(1)).strip().startswith(f"{display_name(label)} ("), (
                f"{page.name}: the box {label} reads {_text(box.group(1)).strip()!r}")
