"""A cell that demonstrates an error or a warning must show it, and must fail when none comes.

Issue 23: a chapter cell meant to show an exception caught it with ``try/except`` and printed
nothing when nothing was raised; its stored output was empty and no test noticed. Here:

* every code cell of every book notebook whose point is an exception or a warning is found:
  it uses ``expect_error`` / ``expect_warning`` (``minigrad.course.demos``), is tagged
  ``raises-exception``, or catches an exception (``except``) or records warnings
  (``warnings.catch_warnings(record=True)``) at the top level of the cell to show it;
* each one's stored output must show the error: a ``Type: message`` line per demonstration
  (or the error output of a ``raises-exception`` cell), never an empty output;
* no cell demonstrates an error with a bare ``try/except`` (it would pass silently if nothing
  were raised) or records warnings without asserting on the record;
* the helper itself raises when nothing is raised, and imports neither engine.

Failures name the notebook and the cell id, so that a chapter's owner can find the cell.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
HELPERS = {"expect_error", "expect_warning"}
# Cells that are not shown to a reader and whose try/except is grading logic, not a demonstration.
NOT_DEMOS = {"hidden-tests"}
# The first word of a printed demonstration: an exception or warning class name.
SHOWN = re.compile(r"^(\w+(?:Error|Exception|Warning|Interrupt|Exit)|StopIteration)\b(:|$)", re.M)


# ---------------------------------------------------------------- reading the cells

def _parse(source: str) -> ast.Module | None:
    # IPython syntax (%magic, !shell) is no Python: blank it, keep the line numbers
    lines = ["pass" if re.match(r"\s*[%!]", line) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _stdout(cell) -> str:
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return None


def _top_level(tree: ast.Module):
    """The nodes of a cell that are not inside a function, lambda or class body."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(node))


def _fails_when_nothing_comes(try_node: ast.Try) -> bool:
    """try/except that raises or asserts when the try body ran through (an `else:` that raises,
    or a body that ends with raise/assert): not silent."""
    def raises(stmts):
        return any(isinstance(s, (ast.Raise, ast.Assert)) for s in stmts)
    return raises(try_node.orelse) or (bool(try_node.body) and isinstance(try_node.body[-1], (ast.Raise, ast.Assert)))


@dataclass
class Demo:
    notebook: str
    cell_id: str
    index: int
    tags: set
    source: str
    outputs: list
    helper_calls: list = field(default_factory=list)   # ast.Call of expect_error / expect_warning
    bare_calls: list = field(default_factory=list)     # helper called outside a `with`
    silent_tries: list = field(default_factory=list)   # line numbers of try/except that pass silently
    caught_tries: list = field(default_factory=list)   # line numbers of every top-level try/except
    recorders: list = field(default_factory=list)      # line numbers of catch_warnings(record=True)
    unchecked_recorders: list = field(default_factory=list)
    pytorch_text: str | None = None                     # a pytorch-only cell: what the page says PyTorch prints

    @property
    def where(self) -> str:
        return f"{self.notebook} cell {self.cell_id} (index {self.index})"


def _recorded_names(tree) -> set[str]:
    names = set()
    for node in _top_level(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                if _is_recorder(item.context_expr) and isinstance(item.optional_vars, ast.Name):
                    names.add(item.optional_vars.id)
    return names


def _is_recorder(node) -> bool:
    return (_call_name(node) == "catch_warnings"
            and any(k.arg == "record" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords))


def _asserted_names(tree) -> set[str]:
    return {n.id for node in _top_level(tree) if isinstance(node, ast.Assert)
            for n in ast.walk(node) if isinstance(n, ast.Name)}


def _demo(path: Path, index: int, cell) -> Demo | None:
    tags = set(cell.get("metadata", {}).get("tags", []))
    source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    tree = _parse(source)
    d = Demo(path.name, cell.get("id", "?"), index, tags, source, cell.get("outputs", []))
    if tree is not None:
        in_with = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                in_with.update(id(item.context_expr) for item in node.items)
        for node in ast.walk(tree):
            if _call_name(node) in HELPERS:
                (d.helper_calls if id(node) in in_with else d.bare_calls).append(node)
        if not tags & NOT_DEMOS:
            for node in _top_level(tree):
                if isinstance(node, ast.Try) and node.handlers:
                    d.caught_tries.append(node.lineno)
                    if not _fails_when_nothing_comes(node):
                        d.silent_tries.append(node.lineno)
                if isinstance(node, ast.With) and any(_is_recorder(i.context_expr) for i in node.items):
                    d.recorders.append(node.lineno)
            checked = _asserted_names(tree)
            d.unchecked_recorders = [n for n in sorted(_recorded_names(tree)) if n not in checked]
    if d.helper_calls or d.bare_calls or d.caught_tries or d.recorders or "raises-exception" in tags:
        return d
    return None


PYTORCH_ONLY = "pytorch-only"
PRINTS = re.compile(r"PyTorch 2\.13 prints:\s*```text\n(.*?)```", re.S)


def _pytorch_text(cells, i) -> str | None:
    """The text block 'PyTorch 2.13 prints:' of the Markdown cell after cell i (None if there is none)."""
    nxt = cells[i + 1] if i + 1 < len(cells) else None
    if nxt is None or nxt["cell_type"] != "markdown":
        return None
    m = PRINTS.search("".join(nxt["source"]))
    return m.group(1) if m else None


def _demos(path: Path) -> list[Demo]:
    nb = json.loads(path.read_text())
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            d = _demo(path, i, cell)
            if d is not None:
                if PYTORCH_ONLY in d.tags:
                    d.pytorch_text = _pytorch_text(nb["cells"], i)
                found.append(d)
    return found


def _pytorch_only_cells():
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code" and PYTORCH_ONLY in cell.get("metadata", {}).get("tags", []):
                yield path, cell, _pytorch_text(nb["cells"], i)


def _shows_false(call: ast.Call) -> bool:
    return any(k.arg == "show" and isinstance(k.value, ast.Constant) and k.value.value in (False, None)
               for k in call.keywords)


def _problems_of_output(d: Demo) -> list[str]:
    """What is wrong with the stored output of a demonstration cell (empty: nothing)."""
    problems = []
    out = _stdout({"outputs": d.outputs})
    if PYTORCH_ONLY in d.tags:   # minigrad cannot run it: the page shows PyTorch's output instead
        if d.pytorch_text is None:
            return ["tagged pytorch-only, but no Markdown cell with 'PyTorch 2.13 prints:' and a text block follows it"]
        out = d.pytorch_text
    errors = [o for o in d.outputs if o.get("output_type") == "error"]
    if "raises-exception" in d.tags:
        if not errors:
            problems.append("tagged raises-exception, but its stored output has no error")
    elif errors:
        problems.append(f"its stored output is an uncaught {errors[0].get('ename')}")
    printing = [c for c in d.helper_calls if not _shows_false(c)]
    if printing:
        shown = SHOWN.findall(out)
        if len(shown) < len(printing):
            problems.append(f"{len(printing)} demonstration(s) with expect_error/expect_warning, but the stored "
                            f"output shows {len(shown)} 'Type: message' line(s)")
    if (d.helper_calls or d.caught_tries or d.recorders) and not out.strip() and not errors:
        problems.append("its stored output is empty: the error it demonstrates is not shown")
    return problems


ALL = {p.name: _demos(p) for p in NOTEBOOKS}


def _report(path: Path, problems: list[str]) -> str:
    return (f"{path.name}: {len(problems)} cell(s):\n  " + "\n  ".join(problems)
            + f"\n(refresh the stored outputs with: .venv/bin/python scripts/refresh_notebooks.py book/{path.name};"
              " see minigrad/course/demos.py for the helper)")


# ---------------------------------------------------------------- the book

def test_the_book_has_error_demonstrations():
    """The search finds them: a check over zero cells would pass for any book."""
    assert sum(len(v) for v in ALL.values()) >= 15, {k: len(v) for k, v in ALL.items()}
    assert any(d.helper_calls for v in ALL.values() for d in v), "no cell uses expect_error / expect_warning"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_demonstration_shows_its_error(path):
    problems = [f"{d.where}: {p}" for d in ALL[path.name] for p in _problems_of_output(d)]
    assert not problems, _report(path, problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_demonstration_passes_silently(path):
    problems = []
    for d in ALL[path.name]:
        for line in d.silent_tries:
            problems.append(f"{d.where}, line {line}: try/except shows an error but passes silently when none "
                            f"comes; use `with expect_error(...)` (from minigrad.course.demos import expect_error)")
        for name in d.unchecked_recorders:
            problems.append(f"{d.where}: warnings recorded into {name!r} with no assert on them; use "
                            f"`with expect_warning(...)`, or assert what the record holds")
        for call in d.bare_calls:
            problems.append(f"{d.where}, line {call.lineno}: {_call_name(call)}(...) outside a `with` checks nothing")
    assert not problems, _report(path, problems)


def test_pytorch_only_cells_print_what_the_page_says():
    """A cell tagged pytorch-only (a feature minigrad lacks) runs on PyTorch alone, on its own: its
    source with `torch` bound to PyTorch must print the page's 'PyTorch 2.13 prints:' block."""
    cells = list(_pytorch_only_cells())
    assert cells, "no pytorch-only cell: the book's mixed-precision section (chapter 8) has one"
    missing = [f"{p.name} cell {c.get('id')}" for p, c, text in cells if text is None]
    assert not missing, f"no 'PyTorch 2.13 prints:' text block after: {missing}"
    pytest.importorskip("torch")
    prelude = ("import torch\nfrom torch.autograd import Function\n"
               "from minigrad.course.demos import expect_error, expect_warning\ntorch.set_num_threads(1)\n")
    problems = []
    for path, cell, text in cells:
        source = "".join(cell["source"])
        source = re.sub(r"\bminigrad\b(?!\.course\b)", "torch", source)
        run = subprocess.run([sys.executable, "-c", prelude + source], capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            problems.append(f"{path.name} cell {cell.get('id')} fails on PyTorch:\n{run.stderr[-2000:]}")
        elif run.stdout != text:
            problems.append(f"{path.name} cell {cell.get('id')}: the page says PyTorch prints\n{text}\nit prints\n{run.stdout}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the detector, on made-up cells

def _fake(source, outputs=(), tags=()):
    cell = {"cell_type": "code", "id": "fake", "source": source, "outputs": list(outputs),
            "metadata": {"tags": list(tags)}}
    return _demo(Path("fake.ipynb"), 0, cell)


def _printed(text):
    return [{"output_type": "stream", "name": "stdout", "text": text}]


def test_the_detector_flags_what_it_should():
    # ch7's cell before issue 23: try/except, empty output
    d = _fake("try:\n    f()\nexcept RuntimeError as err:\n    print(err)\n")
    assert d.silent_tries == [1] and _problems_of_output(d) == [
        "its stored output is empty: the error it demonstrates is not shown"]
    # inside a for loop it is still a demonstration
    assert _fake("for g in fs:\n    try:\n        g()\n    except ValueError:\n        pass\n").silent_tries == [2]
    # with an else that raises, or a body that ends with raise/assert, it is not silent
    assert _fake("try:\n    f()\nexcept KeyError:\n    print(1)\nelse:\n    raise AssertionError\n").silent_tries == []
    # try/finally catches nothing; a try/except inside a function is logic, not a demonstration
    assert _fake("try:\n    f()\nfinally:\n    g()\n") is None
    assert _fake("def h():\n    try:\n        f()\n    except KeyError:\n        return 0\n") is None
    # the helper: output must show one "Type: ..." line per printing demonstration
    src = "with expect_error(RuntimeError):\n    f()\nwith expect_warning(UserWarning):\n    g()\n"
    assert _problems_of_output(_fake(src, _printed("RuntimeError: boom\nUserWarning: careful\n"))) == []
    assert _problems_of_output(_fake(src, _printed("RuntimeError: boom\n")))[0].startswith("2 demonstration(s)")
    assert "empty" in " ".join(_problems_of_output(_fake(src)))
    # show=False: the cell prints what it wants, but something
    quiet = "with expect_error(RuntimeError, show=False) as e:\n    f()\nprint(e.value)\n"
    assert _problems_of_output(_fake(quiet, _printed("boom\n"))) == []
    assert _problems_of_output(_fake(quiet)) == ["its stored output is empty: the error it demonstrates is not shown"]
    assert _fake("expect_error(RuntimeError)\nf()\n").bare_calls
    # raises-exception needs the error in the stored output
    assert _problems_of_output(_fake("f()", tags=["raises-exception"])) == [
        "tagged raises-exception, but its stored output has no error"]
    err = [{"output_type": "error", "ename": "RuntimeError", "evalue": "x", "traceback": []}]
    assert _problems_of_output(_fake("f()", err, tags=["raises-exception"])) == []
    assert _problems_of_output(_fake("with expect_error(KeyError):\n    f()\n", err)) == [
        "its stored output is an uncaught RuntimeError", "1 demonstration(s) with expect_error/expect_warning, "
        "but the stored output shows 0 'Type: message' line(s)"]
    # recorded warnings: fine with an assert on the record, flagged without
    rec = "with warnings.catch_warnings(record=True) as caught:\n    f()\n"
    assert _fake(rec).unchecked_recorders == ["caught"]
    assert _fake(rec + "assert len(caught) == 1\n").unchecked_recorders == []
    # IPython syntax does not hide a cell
    assert _fake("%time f()\ntry:\n    f()\nexcept KeyError:\n    pass\n").silent_tries == [2]


# ---------------------------------------------------------------- the helper

def test_expect_error_shows_the_error_and_fails_when_none_comes(capsys):
    from minigrad.course.demos import expect_error

    with expect_error(RuntimeError, "went wrong") as err:
        raise RuntimeError("it went wrong\nsecond line")
    assert capsys.readouterr().out == "RuntimeError: it went wrong\n"
    assert isinstance(err.value, RuntimeError) and err.type_name == "RuntimeError"
    with pytest.raises(AssertionError, match=r"^expected RuntimeError, but nothing was raised$"):
        with expect_error(RuntimeError):
            pass
    with pytest.raises(AssertionError, match=r"expected KeyError or ValueError matching 'zzz'"):
        with expect_error((KeyError, ValueError), "zzz"):
            raise ValueError("other text")
    with pytest.raises(TypeError, match="not the one"):  # another type is not swallowed
        with expect_error(RuntimeError):
            raise TypeError("not the one")
    with expect_error(ValueError, show="type"):
        raise ValueError("hidden")
    with expect_error(ValueError, show=lambda m: m.upper()):
        raise ValueError("loud")
    with expect_error(ValueError, show=False):
        raise ValueError("silent")
    with expect_error(ValueError, show="message"):
        raise ValueError("one\ntwo")
    with expect_error(ValueError, show=lambda m: m.split("\n\n")[0]):
        raise ValueError("matrix:\n  [[1.0,  0.0],\n   [0.0,  1.0]]\n\nmore")
    assert capsys.readouterr().out == ("ValueError\nValueError: LOUD\nValueError: one\ntwo\n"
                                       "ValueError: matrix:\n  [[1.0,  0.0],\n   [0.0,  1.0]]\n")
    with expect_error(ValueError):
        raise ValueError("word " * 30)
    assert [len(line) <= 76 for line in capsys.readouterr().out.splitlines()] == [True, True, True]
    with pytest.raises(ValueError, match="show must be"):
        expect_error(ValueError, show="everything")
    with expect_error(ValueError, show=lambda m: m.splitlines()[0]):   # not called before the error comes
        raise ValueError("first\nsecond")
    assert capsys.readouterr().out == "ValueError: first\n"
    with pytest.raises(TypeError, match="exception class"):
        expect_error("RuntimeError")


def test_expect_warning_shows_the_warning_and_fails_when_none_comes(capsys):
    from minigrad.course.demos import expect_warning

    with expect_warning(UserWarning, "careful") as w:
        warnings.warn("be careful\nmore", UserWarning)
        warnings.warn("be careful\nmore", UserWarning)   # shown once
    assert capsys.readouterr().out == "UserWarning: be careful\n"
    assert len(w.caught) == 2 and str(w.value).startswith("be careful")
    with pytest.raises(AssertionError, match=r"expected UserWarning, but no such warning was issued$"):
        with expect_warning(UserWarning):
            pass
    with pytest.raises(AssertionError, match=r"issued: DeprecationWarning: old"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the re-issued warning is not the point here
            with expect_warning(UserWarning):
                warnings.warn("old", DeprecationWarning)
    with warnings.catch_warnings(record=True) as outer:
        warnings.simplefilter("always")
        with expect_warning(UserWarning):
            warnings.warn("mine")
            warnings.warn("not mine", RuntimeWarning)
    assert [str(r.message) for r in outer] == ["not mine"]   # the other warning is issued again
    with pytest.raises(KeyError):
        with expect_warning(UserWarning):
            raise KeyError("an error is not a warning")


def test_the_helper_is_course_tooling_that_imports_no_engine():
    source = (ROOT / "minigrad" / "course" / "demos.py").read_text()
    imported = {a.name.split(".")[0] for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(ast.parse(source))
                 if isinstance(n, ast.ImportFrom) and n.module}
    assert not imported & {"minigrad", "torch", "numpy"}, imported
    # and the engine never imports course tooling
    code = "import sys, minigrad, minigrad.nn, minigrad.autograd; print(sorted(m for m in sys.modules if m.startswith('minigrad.course')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_the_transfer_test_keeps_the_helper_import():
    """Chapters import the helper in a cell that also runs on PyTorch: the transfer test must swap the
    engine, not the course's tooling."""
    import test_chapter_transfer as transfer

    line = "from minigrad.course.demos import expect_error, expect_warning"
    assert transfer._to_torch(line) == line
    assert transfer._to_torch("import minigrad as torch") == "import torch as torch"
    importers = [p.name for p in NOTEBOOKS if "from minigrad.course.demos import" in p.read_text()]
    assert "07_double_backward.ipynb" in importers, importers
