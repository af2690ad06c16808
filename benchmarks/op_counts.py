"""Deterministic per-op counts of workload (a): calls and surviving objects, for a machine too loaded to time.

    python3 benchmarks/op_counts.py                      # minigrad from this checkout, and the lean tape
    python3 benchmarks/op_counts.py --root /other/checkout

For a chain of 2,000 ops (as in run.py's (a)): the calls per recorded op in the forward and in the
backward (Python functions and C functions called from Python, counted with ``sys.setprofile``), and
the objects tracked by the cyclic garbage collector that are alive after the forward (what each
recorded op keeps for backward, and what a collection has to walk). These do not vary between runs:
a change to the engine that removes a call or an allocation shows here exactly, however loaded the
machine. They are not times (a NumPy call counts as one call).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
N_OPS = 2_000


def _count(forward, backward) -> tuple[float, float, float]:
    calls = [0]

    def prof(frame, event, arg):
        if event in ("call", "c_call"):
            calls[0] += 1

    backward(forward())  # warm-up: lazy imports, caches
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        sys.setprofile(prof)
        root = forward()
        sys.setprofile(None)
        fwd_calls, alive = calls[0], len(gc.get_objects()) - before
        calls[0] = 0
        sys.setprofile(prof)
        backward(root)
        sys.setprofile(None)
    finally:
        gc.enable()
    return fwd_calls / N_OPS, calls[0] / N_OPS, alive / N_OPS


def minigrad_counts(root: str):
    sys.path.insert(0, root)
    import minigrad
    import run

    x0, w, b = run._chain_data("float64")
    W, B = minigrad.tensor(w), minigrad.tensor(b)

    def forward():
        h = minigrad.tensor(x0, requires_grad=True)
        for _ in range(N_OPS // 5):
            h = (h * W + B).log().exp().relu()
        return h.sum()

    return _count(forward, lambda loss: loss.backward())


def tape_counts():
    import lean_tape as T
    import run

    x0, w, b = run._chain_data("float64")
    W, B = T.Var(w), T.Var(b)

    def forward():
        h = T.Var(x0, rg=True)
        for _ in range(N_OPS // 5):
            h = T.relu(T.exp(T.log(T.add(T.mul(h, W), B))))
        return T.sum_all(h)

    return _count(forward, T.backward)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(HERE), help="checkout to import minigrad from")
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    for name, counts in (("minigrad", lambda: minigrad_counts(os.path.abspath(args.root))), ("tape", tape_counts)):
        f, b, alive = counts()
        print(f"{name:9s} per op of (a): forward {f:.2f} calls, backward {b:.2f} calls, "
              f"{alive:.2f} GC-tracked objects alive after the forward")


if __name__ == "__main__":
    main()
