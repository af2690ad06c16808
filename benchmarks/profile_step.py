"""Where does a minigrad training step spend its time? cProfile, grouped by part of the engine.

    OPENBLAS_NUM_THREADS=1 python3 benchmarks/profile_step.py c      # or any benchmark of run.py
    OPENBLAS_NUM_THREADS=1 python3 benchmarks/profile_step.py b --top 25

Prints the share of the profiled time (tottime: time spent in a function's own code,
including the NumPy calls it makes inline such as ``x @ w``) per group, then the top
functions. cProfile slows pure-Python code more than NumPy calls, so the Python-overhead
groups are over-represented by roughly 1.5-2x; read the shares as a ranking.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import run  # noqa: E402  (benchmarks/run.py: the same workloads)

GROUPS = [
    ("engine: Function.apply / ctx / saved tensors", ("autograd/function.py",)),
    ("engine: backward traversal", ("autograd/engine.py",)),
    ("Tensor (_wrap, properties, operators)", ("minigrad/_tensor.py",)),
    ("fused nn ops (Linear, losses, softmax; incl. their matmuls)", ("_ops/nn_ops.py", "_ops/linalg.py")),
    ("other ops (pointwise, arithmetic, reduction, shape)", ("minigrad/_ops/",)),
    ("nn modules", ("minigrad/nn/",)),
    ("optim", ("minigrad/optim/",)),
    ("NumPy's Python-level functions (e.g. ones_like)", ("numpy",)),
]


def group_of(filename: str, func: str) -> str:
    if filename == "~":  # C functions called by name: list.append, dict.get, ufunc.reduce, ndarray.copy...
        return "builtin C functions (list.append, dict.get, ufunc.reduce, ndarray.copy...)"
    for name, keys in GROUPS:
        if any(k in filename for k in keys):
            return name
    return "other"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", choices=list(run.BENCHES))
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    sys.path.insert(0, run.ROOT)
    fn, _ = run.build("minigrad", args.bench)
    default_steps = {"a": 5, "a32": 5, "e": 1, "b": 100, "c": 2000, "c32": 2000, "d": 5, "d32": 5}
    steps = args.steps or default_steps[args.bench]
    for _ in range(3):
        fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        fn()
    prof.disable()
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())
    shares: dict[str, float] = {}
    for (filename, _, func), v in stats.stats.items():
        g = group_of(filename, func)
        shares[g] = shares.get(g, 0.0) + v[2]
    print(f"benchmark ({args.bench}): {steps} steps, {total / steps * 1e3:.3f} ms per step under cProfile")
    for name, t in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"  {100 * t / total:5.1f}%  {name}")
    print()
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
