"""Instructions per step of a benchmark workload, counted by valgrind (repeatable on a loaded machine).

Wall-clock times on a shared machine vary by 10-50 % from minute to minute; instruction counts
do not (they vary by well under 0.1 % between runs), so they decide between two variants of
the engine. They are not times: a cache miss or a slow NumPy call costs more than its count.

    python3 benchmarks/instructions.py a c                  # minigrad, per step (a: per op)
    python3 benchmarks/instructions.py c --engines numpy,minigrad,tape
    python3 benchmarks/instructions.py a --root /path/to/other/checkout   # minigrad from elsewhere
    python3 benchmarks/instructions.py a --no-gc        # without the cyclic garbage collector

When is the garbage collector triggered depends on how many objects have been allocated, so a
small change can move a collection into or out of the measured steps and change the count by
~1 %; ``--no-gc`` (gc.disable() after warm-up) removes that effect when comparing variants.

Each count runs the workload (after one warm-up step) for N1 and for N2 steps under
``valgrind --tool=callgrind`` and reports (count(N2) - count(N1)) / (N2 - N1): start-up,
imports and warm-up cancel out.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = {"a": (1, 3), "a32": (1, 3), "e": (1, 2), "b": (2, 12), "c": (20, 220), "c32": (20, 220),
         "d": (1, 2), "d32": (1, 2)}


def count(engine: str, bench: str, steps: int, root: str, gc_on: bool = True) -> int:
    """Instructions of a whole process that builds the workload, warms up and runs ``steps`` steps."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   PYTHONHASHSEED="0")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
               os.path.abspath(__file__), "--worker", engine, bench, str(steps), root, "gc" if gc_on else "nogc"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-3000:])
        m = re.search(r"Collected : (\d+)", proc.stderr)
        return int(m.group(1))


def worker(engine: str, bench: str, steps: int, root: str, gc_mode: str) -> None:
    sys.path.insert(0, HERE)
    sys.path.insert(0, root)
    import gc

    import run

    fn, _ = run.build(engine, bench)
    fn()
    if gc_mode == "nogc":
        gc.collect()
        gc.disable()
    for _ in range(steps):
        fn()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("benches", nargs="+")
    ap.add_argument("--engines", default="minigrad")
    ap.add_argument("--root", default=os.path.dirname(HERE), help="checkout to import minigrad from")
    ap.add_argument("--no-gc", action="store_true", help="disable the cyclic garbage collector after warm-up")
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    import run

    for bench in args.benches:
        n1, n2 = STEPS[bench]
        per = {}
        for engine in args.engines.split(","):
            c1 = count(engine, bench, n1, args.root, not args.no_gc)
            c2 = count(engine, bench, n2, args.root, not args.no_gc)
            per[engine] = (c2 - c1) / (n2 - n1)
        line = [run.TITLES[bench]]
        for engine, v in per.items():
            if bench in run.CHAINS:
                s = f"{engine} {v / run.CHAINS[bench][0]:,.0f} instr/op"
            else:
                s = f"{engine} {v:,.0f} instr/step"
            if "numpy" in per and engine != "numpy":
                s += f" ({v / per['numpy']:.2f}x numpy)"
            line.append(s)
        print(" | ".join(line), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
    else:
        main()
