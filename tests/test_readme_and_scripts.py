"""The README tells a new user the truth: versions, durations, links, and how the scripts behave."""
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
sys.path.insert(0, str(ROOT / "scripts"))
import book_inputs  # noqa: E402


def test_one_python_version_everywhere():
    readme = re.search(r"Python ≥ (3\.\d+)", README).group(1)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    setup = re.search(r"sys\.version_info >= \((3), (\d+)\)", (ROOT / "scripts" / "setup.sh").read_text())
    assert pyproject == f">={readme}", (readme, pyproject)
    assert f"{setup.group(1)}.{setup.group(2)}" == readme


def test_the_two_commands_say_how_long_they_take():
    for command in ("bash scripts/build_book.sh", "bash scripts/test.sh"):
        line = next(l for l in README.splitlines() if l.startswith(command))
        assert re.search(r"~\s*\d+(-\d+)?\s*min", line), f"README: no duration on the line {line!r}"
    assert "DURATION" not in README


def test_readme_links_the_instructor_guide():
    link = re.search(r"\]\((book/instructor_guide\.md)\)", README)
    assert link and (ROOT / link.group(1)).is_file()


def test_skip_reasons_are_printed_by_default():
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-rs" in addopts.split() or re.search(r"-r\w*s", addopts)


def _site(tmp_path):
    for rel in ["_config.yml", "_toc.yml", "book/intro.md", "book/01_x.ipynb", "minigrad/__init__.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    (tmp_path / "_build" / "html").mkdir(parents=True)
    return tmp_path


def test_a_build_redoes_only_what_changed(tmp_path):
    root = _site(tmp_path)
    assert book_inputs.decide(root) == "full"          # never built
    (root / "_build/html/.build-ok").touch()
    book_inputs.record(root)
    assert book_inputs.decide(root) == "none"          # nothing changed: nothing to rebuild
    (root / "book/__pycache__").mkdir()
    (root / "book/__pycache__/x.pyc").write_text("noise")
    assert book_inputs.decide(root) == "none"          # caches do not count
    (root / "book/01_x.ipynb").write_text("edited")
    assert book_inputs.decide(root) == "pages"         # a page changed: rebuild pages only
    book_inputs.record(root)
    (root / "minigrad/__init__.py").write_text("engine changed")
    assert book_inputs.decide(root) == "full"          # the engine runs in every page
    book_inputs.record(root)
    (root / "book/02_new.ipynb").write_text("new")
    (root / "_toc.yml").write_text("new chapter")
    assert book_inputs.decide(root) == "full"          # the table of contents changed
    book_inputs.record(root)
    (root / "_build/html/.build-ok").unlink()           # the last build failed
    assert book_inputs.decide(root) == "full"


def test_build_script_uses_the_decision_and_stays_strict():
    script = (ROOT / "scripts" / "build_book.sh").read_text()
    assert "book_inputs.py decide" in script and "book_inputs.py record" in script
    assert "jupyter-book build . -W -n --keep-going" in script  # warnings are errors, always
