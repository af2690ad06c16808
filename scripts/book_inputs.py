#!/usr/bin/env python
"""What the website is built from, and how much of it a build must redo.

    python scripts/book_inputs.py decide    # prints: none | pages | full
    python scripts/book_inputs.py record    # after a successful build: remember its inputs

scripts/build_book.sh asks before building:

  - none:  nothing changed since the last successful build: nothing to do;
  - pages: only files under book/ changed: Sphinx re-reads (and re-executes) just those pages;
  - full:  anything else the pages are made from changed (minigrad/, whose code every page
           runs; the configuration; _toc.yml; _ext/; _theme/; the pinned packages; the
           vendored assets), or the last build failed, or there is no record: every page.

The record (_build/html/.build-inputs) holds one hash of the site-wide inputs and one of the
pages; a file's name and contents both count, its modification time does not.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE_INPUTS = ["_config.yml", "_toc.yml", "_ext", "_theme", "minigrad", "pyproject.toml",
               "requirements.txt", "package-lock.json", "scripts/build_book.sh",
               "scripts/book_inputs.py", "scripts/vendor_assets.sh", "_assets/widgets-config.js"]
PAGE_INPUTS = ["book"]
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints"}


def fingerprint(root: Path, paths: list[str]) -> str:
    digest = hashlib.sha256()
    for rel in paths:
        path = root / rel
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
        for f in files:
            if SKIP_PARTS & set(f.relative_to(root).parts) or f.suffix == ".pyc":
                continue
            digest.update(str(f.relative_to(root)).encode() + b"\0")
            digest.update(hashlib.sha256(f.read_bytes()).digest())
    return digest.hexdigest()[:16]


def current(root: Path = ROOT) -> tuple[str, str]:
    return fingerprint(root, SITE_INPUTS), fingerprint(root, PAGE_INPUTS)


def decide(root: Path = ROOT) -> str:
    html = root / "_build" / "html"
    stamp = html / ".build-inputs"
    if not (html / ".build-ok").is_file() or not stamp.is_file():
        return "full"
    recorded = stamp.read_text().split()
    site, pages = current(root)
    if len(recorded) != 2 or recorded[0] != site:
        return "full"
    return "none" if recorded[1] == pages else "pages"


def record(root: Path = ROOT) -> None:
    (root / "_build" / "html" / ".build-inputs").write_text(" ".join(current(root)) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["decide"]:
        print(decide())
    elif sys.argv[1:] == ["record"]:
        record()
    else:
        sys.exit(__doc__)
