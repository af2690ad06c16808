"""The appendix "From minigrad to PyTorch" (book/appendix_pytorch.ipynb) cannot drift.

- its list of names is computed from the package (minigrad.course.api_table) and the committed page
  shows the current list;
- every listed name exists in minigrad, and, with PyTorch installed, every counterpart in PyTorch;
- no public name hides in a module the list leaves out;
- every sentence "PyTorch 2.13 prints: ..." is what PyTorch prints: the page's cells run on PyTorch
  (minigrad replaced by torch, as in tests/test_chapter_transfer.py), and a cell tagged
  ``pytorch-output-below`` must print the text block of the Markdown cell after it.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import minigrad
from minigrad.course import api_table

ROOT = Path(__file__).resolve().parents[1]
APPENDIX = ROOT / "book" / "appendix_pytorch.ipynb"
TABLE_CELL = "apx-names"
TAG = "pytorch-output-below"
REFRESH = "run: .venv/bin/python scripts/refresh_notebooks.py book/appendix_pytorch.ipynb"


def test_every_listed_name_exists_in_minigrad():
    listed = api_table.listed_paths()
    assert len(listed) > 300, "the list should hold every public name of minigrad"
    missing = []
    for path, _ in listed:
        try:
            api_table.resolve(path)
        except (AttributeError, ImportError):
            missing.append(path)
    assert not missing, f"listed but not in minigrad: {missing}"


def test_every_counterpart_exists_in_pytorch():
    torch = pytest.importorskip("torch")
    missing = []
    for path, theirs in api_table.listed_paths():
        if theirs is None:
            continue
        try:
            api_table.resolve(theirs, torch)
        except (AttributeError, ImportError):
            missing.append(f"{path} -> {theirs}")
    assert not missing, ("these minigrad names have no PyTorch counterpart of the same name; give each one an "
                         "entry in COUNTERPARTS (minigrad/course/api_table.py) that says what PyTorch calls "
                         "it, or None with a note:\n  " + "\n  ".join(missing))


def test_exceptions_name_listed_things():
    listed = {p for p, _ in api_table.listed_paths()} | {ns.path for ns in api_table.namespaces()}
    stale = sorted(set(api_table.COUNTERPARTS) - listed)
    assert not stale, f"COUNTERPARTS names what minigrad no longer has: {stale}"
    assert ("minigrad.viz.draw_graph", None) in api_table.listed_paths()
    assert ("minigrad.exp", "torch.exp") in api_table.listed_paths()
    assert ("minigrad.Tensor.backward", "torch.Tensor.backward") in api_table.listed_paths()


def test_no_public_name_hides_in_an_unlisted_module():
    spaces = {ns.path: set(ns.names()) for ns in api_table.namespaces()}
    hidden = []
    for info in pkgutil.walk_packages(minigrad.__path__, "minigrad."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or parts[1] == "course" or info.name in spaces:
            continue
        mod = importlib.import_module(info.name)
        ancestors = [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1) if ".".join(parts[:i]) in spaces]
        for kind_names in api_table._module_names(mod, top=False).values():
            for name in kind_names:
                if not any(name in spaces[a] for a in ancestors):
                    hidden.append(f"{info.name}.{name}")
    assert not hidden, ("public names that the appendix does not list (add the module to SUBMODULES in "
                        f"minigrad/course/api_table.py, or re-export them from its parent): {hidden}")


def test_markdown_lists_every_name_under_its_namespace():
    text = api_table.markdown()
    sections = re.split(r"^### ", text, flags=re.M)[1:]
    by_title = {s.split("`")[1]: s for s in sections}
    for ns in api_table.namespaces():
        body = by_title[ns.path]
        for name in ns.names():
            assert f"`{name}`" in body, f"{ns.path}.{name} is not shown in its section"
        if ns.torch_path:
            assert f"`{ns.torch_path}`" in body.splitlines()[0]


def test_the_committed_page_shows_the_current_list():
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(APPENDIX, as_version=4)
    cell = next((c for c in nb.cells if c.get("id") == TABLE_CELL), None)
    assert cell is not None, f"the appendix has no cell with id {TABLE_CELL}"
    assert cell.metadata.get("mystnb", {}).get("markdown_format") == "myst", \
        "the table cell must render its Markdown output with MyST (tables, code spans)"
    shown = "".join(o["data"]["text/markdown"] for o in cell.outputs
                    if o.get("output_type") == "execute_result" and "text/markdown" in o.get("data", {}))
    assert shown == api_table.markdown(heading_level=3), f"the appendix shows an old list of names; {REFRESH}"


def _expected_pytorch_output(markdown_source: str) -> str:
    m = re.search(r"PyTorch 2\.13 prints:\s*```text\n(.*?)```", markdown_source, flags=re.S)
    assert m, "a cell tagged pytorch-output-below needs 'PyTorch 2.13 prints:' and a ```text block after it"
    return m.group(1)


def test_claims_about_pytorch_are_what_pytorch_prints():
    pytest.importorskip("torch")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    import test_chapter_transfer as transfer  # the same substitution and comparison as for the chapters

    original = nbformat.read(APPENDIX, as_version=4)
    ported = nbformat.v4.new_notebook(metadata=original.metadata)
    kept = []
    for i, cell in enumerate(original.cells):
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell.cell_type != "code" or "minigrad-only" in tags:
            continue
        if TAG in tags:
            nxt = original.cells[i + 1]
            assert nxt.cell_type == "markdown", f"cell {i} is tagged {TAG} but no Markdown cell follows it"
            want = _expected_pytorch_output(nxt.source)
        elif tags & transfer.NO_COMPARE_TAGS:
            want = None
        else:
            want = transfer._text(original.cells[i].outputs, transfer._sanitizers())
        ported.cells.append(nbformat.v4.new_code_cell(transfer._to_torch(cell.source)))
        kept.append((i, want))
    assert any(want is not None for _, want in kept)
    nbclient.NotebookClient(ported, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(APPENDIX.parent)}}).execute()
    problems = []
    subs = transfer._sanitizers()
    for (i, want), cell in zip(kept, ported.cells):
        err = next((o for o in cell.outputs if o.output_type == "error"), None)
        if err is not None:
            problems.append(f"cell {i} raised {err.ename} on PyTorch: {err.evalue}")
        elif want is not None and transfer._text(cell.outputs, subs) != want:
            problems.append(f"cell {i}: the page says PyTorch prints {want!r}, "
                            f"it prints {transfer._text(cell.outputs, subs)!r}")
    assert not problems, "\n".join(problems)
