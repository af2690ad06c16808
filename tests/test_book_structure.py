"""The book's table of contents matches book/, and notebooks carry their outputs."""
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import check_toc  # noqa: E402


def test_toc_matches_book_folder():
    errors = check_toc.problems(ROOT)
    assert not errors, "\n".join(errors)


def test_check_toc_cli_passes():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_toc.py")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def _book(tmp_path, toc, files):
    (tmp_path / "_toc.yml").write_text(toc)
    (tmp_path / "book").mkdir()
    for name in files:
        p = tmp_path / "book" / name
        if name.endswith(".ipynb"):
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_code_cell("1 + 1", execution_count=1)]
            nbformat.write(nb, p)
        else:
            p.write_text("# Page\n")
    return tmp_path


def test_unlisted_page_is_named(tmp_path):
    root = _book(tmp_path, "format: jb-book\nroot: book/intro\n", ["intro.md", "extra.ipynb"])
    errors = check_toc.problems(root)
    assert len(errors) == 1 and "book/extra.ipynb: not listed in _toc.yml" in errors[0]


def test_missing_toc_entry_is_named(tmp_path):
    toc = "format: jb-book\nroot: book/intro\nchapters:\n  - file: book/01_gone\n"
    root = _book(tmp_path, toc, ["intro.md"])
    errors = check_toc.problems(root)
    assert len(errors) == 1 and "'book/01_gone' has no file" in errors[0]


def test_notebook_without_outputs_is_named(tmp_path):
    root = _book(tmp_path, "format: jb-book\nroot: book/intro\nchapters:\n  - file: book/a\n",
                 ["intro.md", "a.ipynb"])
    nb = nbformat.read(root / "book" / "a.ipynb", as_version=4)
    nb.cells[0].execution_count = None
    nbformat.write(nb, root / "book" / "a.ipynb")
    errors = check_toc.problems(root)
    assert len(errors) == 1 and "a.ipynb: code cell 0 has execution_count None" in errors[0]


# Every notebook starts with the generated install cell: tests/test_packaging.py.
