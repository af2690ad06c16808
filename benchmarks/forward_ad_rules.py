"""What the hand-written jvp rules buy: one op inside a dual level, its own rule against via_vjp.

    python3 benchmarks/forward_ad_rules.py

via_vjp (minigrad/autograd/_jvp_rules.py) gives every op with a differentiable backward a jvp,
at the cost of a backward and a double backward of the op; the hot ops have a rule of their own.
CPU time per (dual level + two make_dual + the op) on 16 x 16 float64 tensors, best of 3 rounds;
the level alone is printed last, to subtract. A script, not a test: nothing asserts on time.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import minigrad as T  # noqa: E402
from minigrad._ops import arithmetic as ar, linalg as la, nn_ops as nn, pointwise as pw  # noqa: E402
from minigrad.autograd import _jvp_rules as R, forward_ad as fwAD  # noqa: E402


def bench(fn, n: int = 300) -> float:
    best = 1e9
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - t0) / n)
    return best * 1e6


def main() -> None:
    R.install()
    rng = np.random.default_rng(0)
    x0 = T.tensor(rng.standard_normal((16, 16)))
    w0 = T.tensor(rng.standard_normal((16, 16)))
    cases = {
        "add": (ar.Add, lambda x, w: x + w),
        "mul": (ar.Mul, lambda x, w: x * w),
        "div": (ar.Div, lambda x, w: x / w),
        "matmul": (la.MatMul, lambda x, w: x @ w),
        "F.linear": (nn.Linear, lambda x, w: T.nn.functional.linear(x, w)),
        "exp (diagonal rule)": (pw.Exp, lambda x, w: x.exp()),
    }
    print("| op | own rule (us) | via_vjp (us) | ratio |\n|---|---|---|---|")
    for name, (cls, f) in cases.items():
        def run(f=f):
            with fwAD.dual_level():
                f(fwAD.make_dual(x0, w0), fwAD.make_dual(w0, x0))

        rule = cls._jvp
        own = bench(run)
        cls._jvp = staticmethod(R.via_vjp)
        try:
            generic = bench(run)
        finally:
            cls._jvp = staticmethod(rule)
        print(f"| {name} | {own:.0f} | {generic:.0f} | {generic / own:.1f}x |")

    def level_only():
        with fwAD.dual_level():
            fwAD.make_dual(x0, w0), fwAD.make_dual(w0, x0)

    print(f"\nthe level and two make_dual alone: {bench(level_only):.0f} us")


if __name__ == "__main__":
    main()
