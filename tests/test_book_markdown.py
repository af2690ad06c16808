"""The notebooks' Markdown renders as written: patterns that MathJax shows literally.

Inside ``\\text{...}`` MathJax is in text mode, where ``\\_`` is not an escape: ``\\text{grad\\_output}``
renders with a visible backslash. Write ``grad_output`` in backticks outside the formula, or give
the quantity a symbol (``\\frac{\\partial L}{\\partial y}``).
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "book").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.md"))
_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
_TEXT_ESCAPE = re.compile(r"\\(?:text|textrm|textit|textbf|texttt|textsf|mbox)\{[^{}]*\\[_&%#$]")


def _markdown(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text()
    nb = nbformat.read(path, as_version=4)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _without_code(text: str) -> str:
    text = re.sub(r"```.*?```", "", text, flags=re.S)   # fenced blocks (directives keep their math)
    return re.sub(r"`[^`\n]*`", "", text)


def problems(text: str) -> list[str]:
    found = []
    for m in _MATH.finditer(_without_code(text)):
        formula = m.group(1) or m.group(2)
        for bad in _TEXT_ESCAPE.finditer(formula):
            found.append(f"{bad.group(0)!r} in ${formula.strip()[:80]}$")
    return found


def test_the_pattern_is_found():
    assert problems(r"so $a = \text{grad\_output}\cdot 2$ here")
    assert problems("$$\n\\texttt{x\\_1}\n$$")
    assert not problems(r"$\frac{\partial L}{\partial y}$ is `grad_output`, and $x\_1$ is fine in math mode")
    assert not problems(r"`$\text{a\_b}$` in code is not rendered")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_no_backslash_escapes_inside_text_in_math(path):
    found = problems(_markdown(path))
    assert not found, f"{path.name}: MathJax shows these backslashes literally: {found}"
