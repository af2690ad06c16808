#!/usr/bin/env python
"""What the website is built from, and how much of it a build must redo.

    python scripts/book_inputs.py [--edition zh] decide    # prints: none | pages | full
    python scripts/book_inputs.py [--edition zh] snapshot  # before a build: the inputs it builds from
    python scripts/book_inputs.py [--edition zh] record [SITE PAGES]  # after a successful build

scripts/build_book.sh asks before building:

  - none:  nothing changed since the last successful build: nothing to do;
  - pages: only files under book/ changed: Sphinx re-reads (and re-executes) just those pages;
  - full:  anything else the pages are made from changed (minigrad/, whose code every page
           runs; the configuration; _toc.yml; _ext/; _theme/; the pinned packages; the
           vendored assets), or the last build failed, or there is no record: every page.

The record (_build/html/.build-inputs) holds one hash of the site-wide inputs and one of the
pages; a file's name and contents both count, its modification time does not.

The Chinese edition (``--edition zh``, built into _build/zh/ and copied to _build/html/zh/) has
its own record (_build/zh/.build-inputs): its pages are zh/book/ and their translations i18n/zh/;
site-wide are the English site's inputs (its outputs are copied from the English notebooks, its
extensions and theme are the English ones) plus zh/_config.yml, zh/_toc.yml and scripts/i18n.py.
The English pages do not depend on zh/: their link to the Chinese page is refreshed after both
builds (``scripts/i18n.py relink``).
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
EDITIONS = {  # edition -> (build folder, its site-wide inputs, its page inputs)
    "en": ("_build/html", SITE_INPUTS, PAGE_INPUTS),
    "zh": ("_build/zh", SITE_INPUTS + ["zh/_config.yml", "zh/_toc.yml", "scripts/i18n.py", "i18n/zh-search-words.txt"],
           ["zh/book", "i18n/zh"]),
}
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


def current(root: Path = ROOT, edition: str = "en") -> tuple[str, str]:
    _, site, pages = EDITIONS[edition]
    return fingerprint(root, site), fingerprint(root, pages)


def decide(root: Path = ROOT, edition: str = "en") -> str:
    html = root / EDITIONS[edition][0]
    stamp = html / ".build-inputs"
    if not (html / ".build-ok").is_file() or not stamp.is_file():
        return "full"
    recorded = stamp.read_text().split()
    site, pages = current(root, edition)
    if len(recorded) != 2 or recorded[0] != site:
        return "full"
    return "none" if recorded[1] == pages else "pages"


def snapshot(root: Path = ROOT, edition: str = "en") -> str:
    """The inputs as they are now: taken BEFORE a build, so that a file edited during the build
    makes the next build redo it (recording after the build would mark the edit as built)."""
    return " ".join(current(root, edition))


def record(root: Path = ROOT, inputs: str | None = None, edition: str = "en") -> None:
    (root / EDITIONS[edition][0] / ".build-inputs").write_text((inputs or snapshot(root, edition)) + "\n")


if __name__ == "__main__":
    argv, edition = sys.argv[1:], "en"
    if argv[:1] == ["--edition"] and len(argv) > 1 and argv[1] in EDITIONS:
        edition, argv = argv[1], argv[2:]
    if argv == ["decide"]:
        print(decide(edition=edition))
    elif argv == ["snapshot"]:
        print(snapshot(edition=edition))
    elif argv[:1] == ["record"] and len(argv) in (1, 3):
        record(inputs=" ".join(argv[1:]) or None, edition=edition)
    else:
        sys.exit(__doc__)
