#!/usr/bin/env python
"""Check that _toc.yml and book/ agree.

Fails (exit 1), naming each problem, when
  - a book/**/*.ipynb or book/**/*.md page is not listed in _toc.yml
    (it would silently be left out of the website: only_build_toc_files), or
  - a _toc.yml entry has no file (it would break the build), or
  - a notebook's stored outputs are not from one top-to-bottom run
    (see scripts/refresh_notebooks.py --check).

Usage: python scripts/check_toc.py [ROOT]
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

SUFFIXES = (".ipynb", ".md")


def toc_entries(toc: dict) -> list[str]:
    """Every `file:` (and the root) in a jb-book / jb-article _toc.yml."""
    out = [toc["root"]] if "root" in toc else []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                out.append(node["file"])
            for key in ("chapters", "sections", "parts"):
                for child in node.get(key) or []:
                    walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(toc)
    return out


def resolve(root: Path, entry: str) -> Path | None:
    p = root / entry
    if p.suffix in SUFFIXES and p.is_file():
        return p
    for suf in SUFFIXES:
        q = p.with_name(p.name + suf)
        if q.is_file():
            return q
    return None


def problems(root: Path) -> list[str]:
    toc_path = root / "_toc.yml"
    if not toc_path.is_file():
        return [f"{toc_path}: missing"]
    toc = yaml.safe_load(toc_path.read_text()) or {}
    errors: list[str] = []
    listed: set[Path] = set()
    for entry in toc_entries(toc):
        f = resolve(root, entry)
        if f is None:
            errors.append(f"_toc.yml: entry '{entry}' has no file ({entry}.ipynb or {entry}.md)")
        else:
            listed.add(f.resolve())
    book = root / "book"
    pages = sorted(
        p for suf in SUFFIXES for p in book.rglob(f"*{suf}")
        if not any(part.startswith(".") or part == "_build" for part in p.relative_to(root).parts)
    )
    for p in pages:
        if p.resolve() not in listed:
            errors.append(f"{p.relative_to(root)}: not listed in _toc.yml (add '- file: "
                          f"{p.relative_to(root).with_suffix('').as_posix()}')")
    stems = {}
    for p in pages:
        key = p.with_suffix("")
        if key in stems:
            errors.append(f"{p.relative_to(root)} and {stems[key].relative_to(root)}: two pages with one name")
        stems[key] = p

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from refresh_notebooks import check as check_outputs  # noqa: E402

    for p in pages:
        if p.suffix == ".ipynb":
            errors += check_outputs(p)
    return errors


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0]).resolve() if argv else Path(__file__).resolve().parent.parent
    errs = problems(root)
    for e in errs:
        print(e, file=sys.stderr)
    if errs:
        return 1
    print("_toc.yml and book/ agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
