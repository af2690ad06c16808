#!/usr/bin/env python
"""Execute the book's notebooks in a fresh kernel and store their outputs in place.

This is THE way notebook outputs get into the repository (they are committed
with outputs and widget state, and `pytest` checks them with strict nbval):

    .venv/bin/python scripts/refresh_notebooks.py                 # every book/**/*.ipynb
    .venv/bin/python scripts/refresh_notebooks.py book/03_relu.ipynb
    .venv/bin/python scripts/refresh_notebooks.py --check         # exit 1 if any notebook
                                                                   # is not fully executed in order

Each notebook runs top to bottom in a new kernel of the Python that runs this
script (use the project's .venv), with the notebook's folder as working
directory. Widget state is stored (so sliders render on the website), per-cell
timing metadata is not recorded, and widget model ids are renumbered in order
of appearance, so that re-running unchanged code gives an unchanged file
(apart from plots whose pixels changed). Absolute paths of this machine in the
outputs (tracebacks, warnings) are rewritten by the "machine paths" rules of
nbval_sanitize.cfg (_ext/machine_paths.py), so no committed output shows them.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
sys.path.insert(0, str(ROOT / "_ext"))
from machine_paths import scrub_outputs  # noqa: E402  (the same rules as the book build and nbval)
from kernel_wakeup import patch as _no_missed_wakeups  # noqa: E402  (as the book build)

_no_missed_wakeups()
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def book_notebooks() -> list[Path]:
    return sorted(p for p in BOOK.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")


def _stable_widget_ids(nb) -> None:
    """Replace the random widget model ids by ids numbered in a deterministic order.

    Order: breadth-first from the views shown in the cells (in cell order),
    following the IPY_MODEL_<id> references inside each model's state.
    """
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    if not state:
        return
    order: list[str] = []
    queue = [k for k in ID.findall(json.dumps(nb.cells)) if k in state]
    while queue:
        k = queue.pop(0)
        if k in order:
            continue
        order.append(k)
        queue += [r for r in ID.findall(json.dumps(state[k], sort_keys=True)) if r in state]
    rest = [k for k in state if k not in order]
    rest.sort(key=lambda k: ID.sub("", json.dumps(state[k], sort_keys=True)))
    mapping = {old: f"{i + 1:032x}" for i, old in enumerate(order + rest)}
    text = ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), json.dumps(nb))
    new = nbformat.from_dict(json.loads(text))
    new.metadata["widgets"][WIDGET_STATE]["state"] = {
        k: new.metadata["widgets"][WIDGET_STATE]["state"][k]
        for k in sorted(new.metadata["widgets"][WIDGET_STATE]["state"])
    }
    nb.clear()
    nb.update(new)


def _merge_streams(nb) -> None:
    """Join consecutive stdout (or stderr) chunks: how the kernel splits printed text varies
    from run to run, and the committed files should not change when the text does not."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for out in cell.outputs:
            prev = merged[-1] if merged else None
            if (out.output_type == "stream" and prev is not None and prev.output_type == "stream"
                    and prev.name == out.name):
                prev.text = "".join(prev.text) + "".join(out.text)
            else:
                merged.append(out)
        cell.outputs = merged


def refresh(path: Path, timeout: int) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",  # ipykernel's native kernel = this interpreter
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
        record_timing=False,
        allow_errors=False,  # cells tagged raises-exception may still raise
    )
    client.execute()
    _stable_widget_ids(nb)
    _merge_streams(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            scrub_outputs(cell.outputs)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def _rel(path: Path) -> str:
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def check(path: Path) -> list[str]:
    """Problems that show the stored outputs were not made by one top-to-bottom run."""
    nb = nbformat.read(path, as_version=4)
    problems = []
    expected = 1
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        if cell.execution_count != expected:
            problems.append(
                f"{_rel(path)}: code cell {i} has execution_count "
                f"{cell.execution_count}, expected {expected}"
            )
            break
        expected += 1
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook under book/")
    ap.add_argument("--check", action="store_true", help="only check that outputs are stored, in order")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = ap.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or book_notebooks()
    if not paths:
        print("no notebooks found under book/", file=sys.stderr)
        return 1

    if args.check:
        problems = [msg for p in paths for msg in check(p)]
        for msg in problems:
            print(msg, file=sys.stderr)
        if problems:
            print("Run: .venv/bin/python scripts/refresh_notebooks.py", file=sys.stderr)
            return 1
        print(f"{len(paths)} notebook(s) have stored outputs from a top-to-bottom run")
        return 0

    os.environ.setdefault("PYTHONHASHSEED", "0")  # inherited by the kernels
    os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")  # the venv's kernel spec first
    failed = 0
    for p in paths:
        rel = _rel(p)
        print(f"refreshing {rel} ...", flush=True)
        try:
            refresh(p, args.timeout)
        except CellExecutionError as e:
            failed += 1
            print(f"FAILED {rel}: a cell raised an error; the file was left unchanged.\n{e}", file=sys.stderr)
    if failed:
        print(f"{failed} notebook(s) failed", file=sys.stderr)
        return 1
    print(f"refreshed {len(paths)} notebook(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
