"""Sphinx extension: the website's downloadable notebooks carry no hidden tests.

Jupyter Book copies every source notebook into ``_build/html/_sources/`` for the download
button. The hidden-test cells (tag ``hidden-tests``, ``### BEGIN HIDDEN TESTS``) are removed from
the pages (tag ``remove-cell``), but they would still be in those copies, where any reader can
download them. After the build, this removes them from every ``.ipynb`` under ``_sources``.
"""
from pathlib import Path


def strip_notebook(path: Path) -> int:
    """Remove the hidden-test cells of one notebook file in place; returns how many were removed."""
    import nbformat

    from minigrad.course.notebooks import is_hidden_tests, remove_hidden_blocks

    nb = nbformat.read(path, as_version=4)
    kept, removed = [], 0
    for cell in nb.cells:
        if is_hidden_tests(cell):
            rest = remove_hidden_blocks(cell.source).strip()
            removed += 1
            if not rest or "hidden-tests" in cell.metadata.get("tags", []):
                continue
            cell.source = rest
        kept.append(cell)
    if removed:
        nb.cells = kept
        nbformat.write(nb, path)
    return removed


def strip_folder(folder: Path) -> int:
    return sum(strip_notebook(p) for p in sorted(Path(folder).rglob("*.ipynb")))


def _build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    n = strip_folder(Path(app.outdir) / "_sources")
    if n:
        from sphinx.util import logging

        logging.getLogger(__name__).info(f"strip_hidden_tests: removed {n} hidden-test cell(s) from _sources")


def setup(app):
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
