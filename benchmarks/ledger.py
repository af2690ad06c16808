"""Where the time of a step goes, part by part, against hand-written NumPy's whole step.

    OPENBLAS_NUM_THREADS=1 python3 benchmarks/ledger.py             # (a), (c) and (e)
    OPENBLAS_NUM_THREADS=1 python3 benchmarks/ledger.py --only c

``run.py`` says how far minigrad is from a goal; this says which part of the engine the
distance is in, so that a claim such as "the backward formulas alone cost more than the goal
allows" is a measurement. Everything runs in this one process, NumPy's step and minigrad's
parts alternating, each part timed on its own:

* **forward, not recorded**: the same forward under ``no_grad``: NumPy's arithmetic plus the
  Tensor layer (operator dispatch, PyTorch's dtype rules, a Tensor around every result);
* **recording**: forward with the graph minus forward under ``no_grad`` (the node, its edges
  with each input's shape and dtype, the sequence number, saved tensors and their versions);
* **backward formulas**: time spent inside each node's ``backward`` and each ``AccumulateGrad``
  (every node of the graph is wrapped in a timer for this);
* **traversal**: ``loss.backward()`` minus the formulas (the queue, the gradient buffers, the
  check of each gradient's shape and dtype against its input's, freeing saved tensors);
* for the MLP also ``optimizer.zero_grad()`` and ``optimizer.step()``.

The cyclic garbage collector is off while the parts are timed; its share is measured apart
(the whole step with it on and off). For (e), where the collector is most of the gap, the
chain is also run with 1 and 2 extra tracked objects (an empty list) attached to every node:
the growth of the collector's time per extra object gives what one tracked object per op
costs, and so the floor for an engine that keeps only its nodes (one object per op).

Chains: minimum over repeats; MLP: the median step of the quietest block of 25. Times vary from minute to minute on a
shared machine, the ratios within one run much less.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # minigrad from this checkout

import numpy as np  # noqa: E402

import minigrad  # noqa: E402
import run  # noqa: E402  (benchmarks/run.py: the same workloads and data)
from minigrad.autograd import function  # noqa: E402
from minigrad.autograd.function import AccumulateGrad  # noqa: E402

clock = time.perf_counter


def _nodes(root) -> list:
    """Every node of the graph below ``root`` (a grad_fn), each once."""
    seen, stack, out = set(), [root], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(n for n in node._edges[::4] if n)
    return out


def _time_formulas(loss) -> float:
    """``loss.backward()`` with every node's backward timed; returns the seconds spent inside them."""
    spent = [0.0]
    wrapped = []
    for node in _nodes(loss.grad_fn):
        if node.__class__ is AccumulateGrad:
            def acc(g, create_graph, _inner=node._accumulate):
                t0 = clock()
                _inner(g, create_graph)
                spent[0] += clock() - t0
            node._accumulate = acc  # the engine calls node._accumulate(grad, create_graph)
            wrapped.append(node)
        else:
            inner = node._fast_backward
            if inner is None:
                raise RuntimeError(f"{node.name()} has no fast backward: the ledger covers built-in ops only")

            def fast(n, g, _inner=inner):
                t0 = clock()
                r = _inner(n, g)
                spent[0] += clock() - t0
                return r
            node._fast_backward = fast
    # The wrapper's argument is one more reference to each gradient: allow for it, or AccumulateGrad,
    # which takes a gradient without copying only when nothing else holds it, would copy here.
    function._HELD_BY_CALLER += 1
    try:
        loss.backward()
    finally:
        function._HELD_BY_CALLER -= 1
    for node in wrapped:  # AccumulateGrad nodes belong to the leaves and outlive this graph
        del node._accumulate
    return spent[0]


# ---------------------------------------------------------------------------------------
# The chains (a) and (e)
# ---------------------------------------------------------------------------------------
def _chain_forward(bench: str, pad: int = 0):
    n_ops, dtype = run.CHAINS[bench]
    x0, w, b = run._chain_data(dtype)
    W, B = minigrad.tensor(w), minigrad.tensor(b)

    def forward():
        x = minigrad.tensor(x0, requires_grad=True)
        h = x
        for _ in range(n_ops // 5):
            h = (h * W + B).log().exp().relu()
            if pad:  # extra tracked objects on every node of this cycle (the (e) experiment)
                node = h.grad_fn
                for _ in range(5):
                    for k in range(pad):
                        setattr(node, f"_pad{k}", [])
                    node = node._edges[0]
        return h.sum()

    return forward, n_ops


def chain_ledger(bench: str, repeats: int) -> dict:
    forward, n_ops = _chain_forward(bench)
    numpy_step = run.numpy_chain(bench)
    parts = {k: [] for k in ("numpy", "forward, not recorded", "forward, recorded", "backward formulas",
                             "backward", "step, collector on", "step, collector off")}
    forward().backward()
    numpy_step()
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            t0 = clock()
            numpy_step()
            parts["numpy"].append(clock() - t0)
            with minigrad.no_grad():
                t0 = clock()
                forward()
                parts["forward, not recorded"].append(clock() - t0)
            parts["backward formulas"].append(_time_formulas(forward()))
            t0 = clock()
            loss = forward()
            t1 = clock()
            loss.backward()
            t2 = clock()
            parts["forward, recorded"].append(t1 - t0)
            parts["backward"].append(t2 - t1)
            del loss
            gc.collect()
            t0 = clock()
            forward().backward()
            parts["step, collector off"].append(clock() - t0)
        finally:
            gc.enable()
        gc.collect()
        t0 = clock()
        forward().backward()
        parts["step, collector on"].append(clock() - t0)
    best = {k: min(v) for k, v in parts.items()}
    return _ledger(best, n_ops, per="op")


# ---------------------------------------------------------------------------------------
# The MLP (c)
# ---------------------------------------------------------------------------------------
def mlp_ledger(bench: str, repeats: int) -> dict:
    model, X, Y, opt, loss_fn = run.mlp_parts(minigrad, bench)
    numpy_step = run.numpy_mlp(bench)[0]

    def step():
        opt.zero_grad()
        loss_fn(model(X), Y).backward()
        opt.step()

    parts = {k: [] for k in ("numpy", "zero_grad", "forward, not recorded", "forward, recorded", "backward formulas",
                             "backward", "optimizer step", "step, collector on", "step, collector off")}
    for _ in range(20):
        step()
        numpy_step()
    gc.collect()
    block = 25  # each part runs this many times in a row: alternating single steps slows NumPy's (caches)
    for _ in range(max(1, repeats // block)):
        gc.disable()
        for _ in range(block):
            t0 = clock()
            numpy_step()
            parts["numpy"].append(clock() - t0)
        with minigrad.no_grad():
            for _ in range(block):
                t0 = clock()
                loss_fn(model(X), Y)
                parts["forward, not recorded"].append(clock() - t0)
        for _ in range(block):
            t0 = clock()
            loss_fn(model(X), Y)  # the graph is built, then dropped
            parts["forward, recorded"].append(clock() - t0)
        for _ in range(block):
            opt.zero_grad()
            parts["backward formulas"].append(_time_formulas(loss_fn(model(X), Y)))
        for _ in range(block):
            t0 = clock()
            opt.zero_grad()
            t1 = clock()
            loss = loss_fn(model(X), Y)
            t2 = clock()
            loss.backward()
            t3 = clock()
            opt.step()
            t4 = clock()
            for k, t in zip(("zero_grad", "backward", "optimizer step"), (t1 - t0, t3 - t2, t4 - t3)):
                parts[k].append(t)
            del loss
        for _ in range(block):
            t0 = clock()
            step()
            parts["step, collector off"].append(clock() - t0)
        gc.enable()
        for _ in range(block):
            t0 = clock()
            step()
            parts["step, collector on"].append(clock() - t0)
    # The median within each block of steps, then the quietest block: the machine's speed drifts
    # from minute to minute, and a part's blocks are spread over the whole run.
    quiet = {k: min(statistics.median(v[i:i + block]) for i in range(0, len(v), block)) for k, v in parts.items()}
    return _ledger(quiet, 1, per="step")


def _ledger(t: dict, n: int, per: str) -> dict:
    """The parts as microseconds per op (or per step) and as multiples of NumPy's whole step."""
    rows = []
    order = [("zero_grad", t.get("zero_grad")),
             ("forward, not recorded", t["forward, not recorded"]),
             ("recording", t["forward, recorded"] - t["forward, not recorded"]),
             ("backward formulas", t["backward formulas"]),
             ("traversal", t["backward"] - t["backward formulas"]),
             ("optimizer step", t.get("optimizer step"))]
    for name, v in order:
        if v is not None:
            rows.append((name, v))
    total = sum(v for _, v in rows)
    return {"numpy": t["numpy"], "rows": rows, "sum": total, "n": n, "per": per,
            "off": t["step, collector off"], "on": t["step, collector on"]}


def _print(title: str, led: dict) -> None:
    us = 1e6 / led["n"]
    ref = led["numpy"]
    print(f"\n{title}: NumPy's whole step {ref * us:.2f} us per {led['per']}")
    print(f"  {'part':<34}{'us/' + led['per']:>10}{'x NumPy':>10}")
    for name, v in led["rows"]:
        print(f"  {name:<34}{v * us:>10.2f}{v / ref:>9.2f}x")
    print(f"  {'sum of the parts':<34}{led['sum'] * us:>10.2f}{led['sum'] / ref:>9.2f}x")
    print(f"  {'whole step, collector off':<34}{led['off'] * us:>10.2f}{led['off'] / ref:>9.2f}x")
    print(f"  {'whole step, collector on':<34}{led['on'] * us:>10.2f}{led['on'] / ref:>9.2f}x")


# ---------------------------------------------------------------------------------------
# (e): what the collector costs per tracked object per op
# ---------------------------------------------------------------------------------------
def _tracked_per_op(forward, n_ops: int) -> float:
    """Objects a full collection walks per op while the graph is alive (tuples of untracked
    items, such as a saved output's (array, version, index), are untracked by the first collection)."""
    gc.collect()
    before = len(gc.get_objects())
    loss = forward()
    gc.collect()
    alive = len(gc.get_objects()) - before
    del loss
    return alive / n_ops


def collector_experiment(repeats: int) -> None:
    numpy_step = run.numpy_chain("e")
    numpy_step()
    t_np = []
    rows = []
    for pad in (0, 1, 2):
        forward, n_ops = _chain_forward("e", pad)
        forward().backward()
        tracked = _tracked_per_op(forward, n_ops)
        on, off, in_gc = [], [], []
        for _ in range(repeats):
            gc.collect()
            t0 = clock()
            numpy_step()
            t_np.append(clock() - t0)
            gc.collect()
            gc.disable()
            t0 = clock()
            forward().backward()
            off.append(clock() - t0)
            gc.enable()
            gc.collect()
            spent = [0.0, 0.0]

            def cb(phase, info):
                if phase == "start":
                    spent[1] = clock()
                else:
                    spent[0] += clock() - spent[1]
            gc.callbacks.append(cb)
            try:
                t0 = clock()
                forward().backward()
                on.append(clock() - t0)
            finally:
                gc.callbacks.remove(cb)
            in_gc.append(spent[0])
        rows.append((pad, tracked, min(on), min(off), min(in_gc)))
    ref = min(t_np)
    print(f"\n(e) 100,000-op chain: NumPy {ref * 1e3:.1f} ms; the collector's cost against tracked objects per op")
    print(f"  {'extra per node':<16}{'tracked/op':>11}{'on':>9}{'off':>9}{'in gc':>10}")
    for pad, tracked, on, off, g in rows:
        print(f"  {pad:<16}{tracked:>11.2f}{on / ref:>8.2f}x{off / ref:>8.2f}x{g / ref:>9.2f}x")
    # If the collector's time is proportional to what it walks, each row gives the same cost per object.
    per_object = [r[4] / ref / r[1] for r in rows]
    print("  time in the collector per tracked object per op: "
          + ", ".join(f"{p:.2f}x" for p in per_object) + " of NumPy's time")
    pad0 = rows[0]
    floor = pad0[3] / ref + statistics.median(per_object) * 1.0
    print(f"  minigrad now: {pad0[3] / ref:.2f}x without the collector + {pad0[4] / ref:.2f}x in it "
          f"({pad0[1]:.2f} objects per op); keeping only the node (1 per op) would give about {floor:.2f}x")

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="a,c,e", help="comma-separated: a, a32, c, c32, e")
    ap.add_argument("--repeats", type=int, default=None)
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}; load at start: {os.getloadavg()[0]:.2f}")
    for bench in args.only.split(","):
        if bench in ("a", "a32"):
            _print(run.TITLES[bench], chain_ledger(bench, args.repeats or 7))
        elif bench in ("c", "c32"):
            _print(run.TITLES[bench], mlp_ledger(bench, args.repeats or 2000))
        elif bench == "e":
            collector_experiment(args.repeats or 5)
        else:
            ap.error(f"no ledger for {bench!r}")
    print(f"\nload at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
