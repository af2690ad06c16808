"""Hide nbgrader's solution markers on the website.

Solution cells keep ``### BEGIN SOLUTION`` / ``### END SOLUTION`` in the notebooks (the
student edition and nbgrader cut the code between them), but on a page they are noise: a
reader who opens a solution sees the code only. The lines are dropped from the code cells'
source as the book is built; the notebooks are not changed.
"""
from __future__ import annotations

import re

MARKER_LINE = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def strip_markers(source: str) -> str:
    return MARKER_LINE.sub("", source)


def _hide(app, doctree) -> None:
    from docutils import nodes

    for box in doctree.findall(nodes.container):
        if "cell_input" not in box.get("classes", ()):
            continue
        for block in box.findall(nodes.literal_block):
            text = block.astext()
            if not MARKER_LINE.search(text):
                continue
            new = strip_markers(text)
            block.children = []
            block += nodes.Text(new)
            block.rawsource = new


def setup(app):
    app.connect("doctree-read", _hide)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
