"""Sphinx extension: exercise ``chNN-exK`` is numbered "Exercise N.K" on the website.

sphinx-exercise numbers exercise boxes like figures, with one counter for the whole book
("Exercise 10" for the first exercise of chapter 3). The course names an exercise by its check
id instead (see minigrad/course/numbering.py): this extension replaces each exercise's number
with the one computed from its label, everywhere Sphinx uses it (the box title, the solution's
title, {numref} references). It warns (an error under ``-W``) when a chapter's labels do not read
``chNN-ex1``, ``chNN-ex2``, ... in order, NN being the chapter of the file.
"""
from __future__ import annotations

from sphinx.util import logging

from minigrad.course.numbering import chapter_of_file, parse_id

logger = logging.getLogger(__name__)


def _renumber(app, env):
    changed = []
    for docname, numbers in env.toc_fignumbers.items():
        exercises = numbers.get("exercise")
        if not exercises:
            continue
        chapter = chapter_of_file(docname)
        # sphinx-exercise's sequential numbers give the order of the boxes on the page
        in_order = sorted(exercises, key=lambda label: exercises[label])
        for position, label in enumerate(in_order, start=1):
            parsed = parse_id(label)
            expected = f"ch{chapter:02d}-ex{position}" if chapter is not None else "chNN-exK"
            if parsed is None or parsed != (chapter, position):
                logger.warning(f"exercise label {label!r} should be {expected!r}: exercise K of chapter NN "
                               f"is labelled chNN-exK, in the order of the page (see minigrad/course/API.md)",
                               location=docname, type="exercise-numbers")
            if parsed is not None and exercises[label] != parsed:
                exercises[label] = parsed
                changed.append(docname)
    return sorted(set(changed))


def setup(app):
    app.setup_extension("sphinx_exercise")
    # after Sphinx's own figure numbering (the toctree collector, priority 500)
    app.connect("env-get-updated", _renumber, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
