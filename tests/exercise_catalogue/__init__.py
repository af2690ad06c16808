"""The catalogue of wrong solutions: for every exercise, the answers a learner is likely to write.

``tests/test_exercise_catalogue.py`` submits each of them as a student would and asserts that the
learner's self-check (``check(...)`` in the notebook) and the grader (``minigrad-course grade``)
give the same verdict: both reject a wrong answer (and the check names its bug), both accept a
correct alternative. One module per chapter, ``chNN.py``, holds a list ``WRONG`` of
:class:`Wrong` entries and, optionally, ``PRELUDE_CELLS``: the ids of the chapter's cells that
its exercises need (e.g. a helper defined in the chapter's body). The submitted notebook holds
each chapter's setup cells (the code before its first "## " section), those cells, and its
exercise section (from the "## Exercises" heading). The stub (the student edition, unchanged) and
the instructor's solution are tried for every exercise too.

To add an exercise's entries: append ``Wrong("chNN-exK", kind, code, says=...)`` to ``WRONG``,
where ``code`` is the whole solution cell as a learner might write it and ``says`` a phrase the
check's feedback must contain. Every exercise needs at least three wrong answers.

Kinds used (the vocabulary is open; ``REQUIRED_KINDS`` must each appear somewhere):

=====================  ==========================================================
``sign``               a minus sign missing or extra
``factor``             a constant factor off (a 2 from a square, the slope, ...)
``grad-output``        the local derivative, not multiplied by grad_output
``mask``               a mask on the wrong side of a kink
``kink``               the wrong convention at exactly the kink (>= for >)
``in-place``           forward modifies its input
``saved-intermediate`` forward saves an intermediate (wrong second derivative)
``count``              the wrong number of returned values (a missing None)
``swapped``            the gradients of two inputs exchanged
``saves``              the right gradients, but forward saves the wrong thing
``unstable``           overflow / loss of accuracy for extreme inputs
``value``              a wrong number (non-Function exercises)
``correct``            an alternative correct answer: both must accept it
=====================  ==========================================================
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

REQUIRED_KINDS = {"sign", "factor", "mask", "kink", "in-place", "saved-intermediate"}


@dataclass(frozen=True)
class Wrong:
    """One answer to exercise ``exercise``: ``code`` replaces the whole solution cell.

    ``says``: words the self-check's feedback must contain (it names the bug). ``kind``
    ``"correct"`` marks an answer that both the check and the grader must accept.
    """

    exercise: str
    kind: str
    code: str
    says: str = ""

    @property
    def passes(self) -> bool:
        return self.kind == "correct"


def function(name: str, forward: str, backward: str, args: str = "x") -> str:
    """The source of ``class name(Function)`` with these bodies (indented by 8 spaces)."""
    return (f"class {name}(Function):\n    @staticmethod\n    def forward(ctx, {args}):\n{forward}\n\n"
            f"    @staticmethod\n    def backward(ctx, grad_output):\n{backward}\n")


def load() -> dict[int, object]:
    """{chapter number: module} for every chNN.py in this folder."""
    out = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("ch") and info.name[2:].isdigit():
            out[int(info.name[2:])] = importlib.import_module(f"{__name__}.{info.name}")
    return dict(sorted(out.items()))
