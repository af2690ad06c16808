"""The book's promise: code that uses only the contract runs on PyTorch unchanged.

For every chapter notebook, the code cells not tagged ``minigrad-only`` are executed in a
fresh kernel with ``minigrad`` replaced by ``torch``; each cell must run (or raise the same
exception type where an error is expected) and print the same text that the committed
notebook shows for minigrad (nbval separately checks that the committed outputs are what
minigrad prints today). Skipped when PyTorch is not installed.
"""
from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p for p in (ROOT / "book").glob("[0-9][0-9]_*.ipynb") if not p.name.startswith("00_"))
SKIP_TAGS = {"minigrad-only"}
NO_COMPARE_TAGS = {"nbval-ignore-output", "nbval-skip"}


def _sanitizers():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "nbval_sanitize.cfg")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def _text(outputs, subs) -> str:
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream" and out.get("name") == "stdout":
            parts.append(out["text"] if isinstance(out["text"], str) else "".join(out["text"]))
        elif kind in ("execute_result", "display_data") and "text/plain" in out.get("data", {}):
            if any(k.startswith("image/") or k == "text/html" or "widget" in k for k in out["data"]):
                continue  # figures, HTML animations, widgets: pictures, not printed values
            text = out["data"]["text/plain"]
            parts.append(text if isinstance(text, str) else "".join(text))
        elif kind == "error":
            parts.append(f"<error {out['ename']}>")
    text = "".join(parts)
    for rx, rep in subs:
        text = rx.sub(rep, text)
    return text


def _to_torch(source: str) -> str:
    """The cell for PyTorch: ``minigrad`` becomes ``torch``; course tooling (``minigrad.course``) is not the engine."""
    return re.sub(r"\bminigrad\b(?!\.course\b)", "torch", source)


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_code_runs_on_pytorch(path: Path):
    pytest.importorskip("torch")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")

    original = nbformat.read(path, as_version=4)
    ported = nbformat.v4.new_notebook(metadata=original.metadata)
    # One thread, as minigrad's NumPy uses here: PyTorch's thread pool on a shared 2-core machine only waits.
    ported.cells.append(nbformat.v4.new_code_cell("import torch\ntorch.set_num_threads(1)"))
    kept = []  # (index in the original, compare outputs?, expects error?)
    for i, cell in enumerate(original.cells):
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell.cell_type != "code" or tags & SKIP_TAGS:
            continue
        new = nbformat.v4.new_code_cell(_to_torch(cell.source))
        new.metadata["tags"] = sorted(tags)
        ported.cells.append(new)
        kept.append((i, not (tags & NO_COMPARE_TAGS), "raises-exception" in tags))
    client = nbclient.NotebookClient(ported, timeout=300, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()

    subs = _sanitizers()
    problems = []
    for (i, compare, expects_error), cell in zip(kept, ported.cells[1:], strict=True):
        got_error = next((o for o in cell.outputs if o.output_type == "error"), None)
        if got_error is not None and not expects_error:
            problems.append(f"cell {i} raised {got_error.ename}: {got_error.evalue.splitlines()[0] if got_error.evalue else ''}"
                            f"\n  source: {cell.source[:200]!r}")
            continue
        if not compare:
            continue
        want = _text(original.cells[i].outputs, subs)
        got = _text(cell.outputs, subs)
        if want != got:
            problems.append(f"cell {i} prints differently on PyTorch\n  minigrad: {want[:400]!r}\n  torch:    {got[:400]!r}"
                            f"\n  source: {cell.source[:200]!r}\n  (tag the cell 'minigrad-only' if it uses minigrad-only features)")
    assert not problems, f"{path.name}: {len(problems)} cell(s) do not transfer to PyTorch:\n" + "\n".join(problems)
