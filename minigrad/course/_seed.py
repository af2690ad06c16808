"""The seed of a check's random inputs: public in a self-check, fresh in every grading run.

Why: the checks' source is public (it ships with the package), so inputs drawn from a fixed seed
can be computed ahead and answered from a table. The judge draws one seed per grading run
(``grade --seed`` repeats a run; ``grades.json`` records it) and every check derives its inputs
from it; a self-check in the notebook keeps the public seeds, so its output stays deterministic.
"""
from __future__ import annotations

_STATE: dict = {"seed": None}


def check_seed(default: int) -> int:
    """The seed to use where a check would use ``default``: ``default`` itself outside grading."""
    run = _STATE["seed"]
    if run is None:
        return int(default)
    return (int(run) * 1_000_003 + int(default) * 7_919 + 12_345) % 2**31


def set_run_seed(seed: int | None) -> None:
    """Set by the judge before it runs a check or hidden tests (None: back to the public seeds)."""
    _STATE["seed"] = None if seed is None else int(seed)


def run_seed() -> int | None:
    return _STATE["seed"]


def seed_globals(default: int = 0) -> None:
    """Seed NumPy's and minigrad's global generators (``torch.randn`` in a hidden test) from the run."""
    import numpy as np

    import minigrad

    s = check_seed(default)
    np.random.seed(s)
    minigrad.manual_seed(s)
