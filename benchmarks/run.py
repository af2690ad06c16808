"""minigrad benchmarks: time (and memory) relative to hand-written NumPy, with PyTorch and a lean tape.

Run from the repository root:

    python3 benchmarks/run.py                  # everything (a few minutes)
    python3 benchmarks/run.py --only a,c       # some benchmarks
    python3 benchmarks/run.py --markdown       # also print the README table

Every (benchmark, engine) pair runs in a fresh subprocess with one BLAS thread
(OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = MKL_NUM_THREADS = 1) and, for PyTorch,
``torch.set_num_threads(1)`` and ``torch.set_num_interop_threads(1)``. Python's garbage
collector stays on, as it is for a user. Engines:

* ``numpy``    the same computation written by hand: forward, explicit backprop math, update.
* ``minigrad`` this repository (imported from the checkout, not from site-packages).
* ``torch``    PyTorch eager on the CPU, when it is installed.
* ``tape``     a lean tape-based autograd (``lean_tape.py``): what a reverse-mode engine in pure
               Python + NumPy must at least do per operation; a reference, not a library.

A run is ``--rounds`` rounds (default 3). In each round every engine runs the benchmark in a
fresh process, one after the other, and its **ratio** is its time divided by the NumPy time of
the *same round*, so a burst of load from elsewhere that lasts a round hits all engines alike.
The reported ratio is the median over rounds. Within a process: (a), (e) take the minimum over
repeats of one chain; the MLP steps take the median step time.

``--clock cpu`` times with the process's CPU time (``time.process_time``) instead of the wall
clock: on a machine shared by more processes than it has cores, wall-clock time also counts the
time a process waits for a core, which varies by several x from one process to the next, while
CPU time does not (it still includes the cost of cache misses and page faults).

As a second check that is robust to load, one more fresh process runs the NumPy and the
minigrad workload alternately, step by step, and reports the median of the per-pair ratios
("interleaved"; not for (e)).

Benchmarks (the ratio is engine time / NumPy time):

(a)   per-op overhead: a chain of 10,000 elementwise ops (mul, add, log, exp, relu, repeated)
      on 16-element float64 tensors, forward and backward; microseconds per op.
(a32) the same in float32.
(b)   one SGD step (zero_grad, forward, cross-entropy, backward, step) of an MLP 784-256-256-10,
      ReLU, float32, batch 128.
(c)   the same for an MLP 2-16-16-1, batch 64, MSE loss, float64 (the size of the book's demos).
(c32) (c) in float32.
(d)   (b) at batch 4096 in float64: time, and working memory of one step.
(d32) (b) at batch 4096 in float32: time, and working memory of one step.
(e)   a chain of 100,000 ops (as in (a)), forward and backward: time and working memory.

Working memory = the peak during one step (forward + backward + update) above the baseline
taken after the model, the data and one warm-up step exist (gradients set to None). It is
measured in its own fresh process, two ways:

* RSS (all engines): glibc's free memory is returned to the OS (``malloc_trim(0)``), the
  kernel's peak-RSS counter is reset (``echo 5 > /proc/self/clear_refs``), then
  peak RSS (VmHWM) - RSS before the step (VmRSS), from /proc/self/status. Linux only.
* tracemalloc (NumPy-based engines only; NumPy reports its buffers to tracemalloc):
  the traced peak during the step. PyTorch's allocations are invisible to tracemalloc.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}

# bench id -> (kind, parameters). Chains: (number of ops, dtype). MLPs: (layer sizes, batch,
# classification?, dtype).
CHAINS = {"a": (10_000, "float64"), "a32": (10_000, "float32"), "e": (100_000, "float64")}
MLP = {"b": ((784, 256, 256, 10), 128, True, "float32"), "c": ((2, 16, 16, 1), 64, False, "float64"),
       "c32": ((2, 16, 16, 1), 64, False, "float32"), "d": ((784, 256, 256, 10), 4096, True, "float64"),
       "d32": ((784, 256, 256, 10), 4096, True, "float32")}
BENCHES = ("a", "a32", "b", "c", "c32", "d", "d32", "e")
MEMORY = ("d", "d32", "e")  # benchmarks whose working memory is measured
LR = 0.01

# The goals of issue 15 for minigrad (time ratio to NumPy; for d32 the working memory ratio).
GOALS = {"a": 3.0, "a32": 3.0, "b": 1.05, "c": 1.8, "c32": 2.2, "d": 1.2, "e": 4.0}
MEMORY_GOALS = {"d32": 1.2}

TITLES = {
    "a": "(a) 10,000-op chain, 16 x float64, fwd+bwd",
    "a32": "(a32) 10,000-op chain, 16 x float32, fwd+bwd",
    "b": "(b) MLP 784-256-256-10, batch 128, float32, SGD step",
    "c": "(c) MLP 2-16-16-1, batch 64, MSE, float64, SGD step",
    "c32": "(c32) MLP 2-16-16-1, batch 64, MSE, float32, SGD step",
    "d": "(d) MLP 784-256-256-10, batch 4096, float64, SGD step",
    "d32": "(d32) MLP 784-256-256-10, batch 4096, float32, SGD step",
    "e": "(e) 100,000-op chain, 16 x float64, fwd+bwd",
}


# =====================================================================================
# Workloads. Each engine builds a `step` callable; timing and memory code is shared.
# =====================================================================================
def _rng():
    import numpy as np

    return np.random.default_rng(0)


def _chain_data(dtype):
    rng = _rng()
    x0 = rng.uniform(1.0, 2.0, 16).astype(dtype)
    w = rng.uniform(0.3, 0.7, 16).astype(dtype)   # x -> x * w + b keeps x near 1: log/exp stay finite
    b = rng.uniform(0.3, 0.7, 16).astype(dtype)
    return x0, w, b


def _mlp_data(bench):
    import numpy as np

    sizes, batch, classes, dtype = MLP[bench]
    rng = _rng()
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    if classes:
        y = rng.integers(0, sizes[-1], batch)
    else:
        y = rng.standard_normal((batch, sizes[-1])).astype(dtype)
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        weights.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(dtype))
        weights.append(rng.uniform(-bound, bound, fan_out).astype(dtype))
    return x, y, weights


# --- hand-written NumPy ----------------------------------------------------------------
def numpy_chain(bench):
    import numpy as np

    n_ops, dtype = CHAINS[bench]
    x0, w, b = _chain_data(dtype)
    cycles = n_ops // 5

    def run():
        saved = []
        x = x0
        for _ in range(cycles):
            u = x * w + b          # mul, add
            y = np.log(u)          # log: d/du = 1/u
            e = np.exp(y)          # exp: d/dy = e
            x = np.maximum(e, 0)   # relu: d/de = (e > 0)
            saved.append((u, e))
        g = np.ones_like(x)        # d(sum(x))/dx
        for u, e in reversed(saved):
            g = g * (e > 0)
            g = g * e
            g = g / u
            g = g * w
        return g

    return run


def numpy_mlp(bench):
    import numpy as np

    sizes, batch, classes, _ = MLP[bench]
    x, y, params = _mlp_data(bench)
    n_layers = len(params) // 2
    rows = np.arange(batch)

    def step():
        # forward: keep each layer's input and pre-activation
        acts, pre = [x], []
        h = x
        for i in range(n_layers):
            W, b = params[2 * i], params[2 * i + 1]
            z = h @ W.T + b
            pre.append(z)
            h = np.maximum(z, 0) if i < n_layers - 1 else z
            acts.append(h)
        out = acts[-1]
        if classes:  # softmax cross-entropy
            m = out.max(axis=1, keepdims=True)
            e = np.exp(out - m)
            s = e.sum(axis=1, keepdims=True)
            logp = out - m - np.log(s)
            loss = -logp[rows, y].mean()
            g = e / s
            g[rows, y] -= 1
            g /= batch
        else:        # mean squared error
            d = out - y
            loss = (d * d).mean()
            g = d * (2.0 / d.size)
        # backward + SGD update, last layer first
        grads = [None] * len(params)
        for i in reversed(range(n_layers)):
            if i < n_layers - 1:
                g = g * (pre[i] > 0)
            grads[2 * i] = g.T @ acts[i]
            grads[2 * i + 1] = g.sum(axis=0)
            if i > 0:
                g = g @ params[2 * i]
        for p, dp in zip(params, grads):
            p -= LR * dp
        return loss

    return step, None


# --- minigrad and PyTorch: the same code ----------------------------------------------
def _chain(lib, bench):
    """The elementwise chain, written once: minigrad and PyTorch take the same code."""
    n_ops, dtype = CHAINS[bench]
    x0, w, b = _chain_data(dtype)
    W, B = lib.tensor(w), lib.tensor(b)
    cycles = n_ops // 5

    def run():
        x = lib.tensor(x0, requires_grad=True)
        h = x
        for _ in range(cycles):
            h = (h * W + B).log().exp().relu()
        h.sum().backward()
        return x.grad

    return run


def mlp_parts(lib, bench):
    """The MLP of a benchmark, its data, its optimizer and its loss, as minigrad and PyTorch build them."""
    nn = lib.nn
    sizes, _, classes, dtype = MLP[bench]
    x, y, weights = _mlp_data(bench)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    if dtype == "float64":
        model = model.double()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.from_numpy(w))
    X, Y = lib.from_numpy(x), lib.from_numpy(y)
    opt = lib.optim.SGD(model.parameters(), lr=LR)
    loss_fn = nn.functional.cross_entropy if classes else nn.functional.mse_loss
    return model, X, Y, opt, loss_fn


def _mlp(lib, bench):
    """The MLP training step, written once: minigrad and PyTorch take the same code."""
    model, X, Y, opt, loss_fn = mlp_parts(lib, bench)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()
        return loss

    return step, opt.zero_grad


def minigrad_chain(bench):
    import minigrad

    return _chain(minigrad, bench)


def minigrad_mlp(bench):
    import minigrad

    return _mlp(minigrad, bench)


def _torch():
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    return torch


def torch_chain(bench):
    return _chain(_torch(), bench)


def torch_mlp(bench):
    return _mlp(_torch(), bench)


# --- the lean tape (lean_tape.py) -------------------------------------------------------------
def tape_chain(bench):
    import lean_tape as T

    n_ops, dtype = CHAINS[bench]
    x0, w, b = _chain_data(dtype)
    W, B = T.Var(w), T.Var(b)
    cycles = n_ops // 5
    mul, add, log, exp, relu = T.mul, T.add, T.log, T.exp, T.relu

    def run():
        x = T.Var(x0, rg=True)
        h = x
        for _ in range(cycles):
            h = relu(exp(log(add(mul(h, W), B))))
        T.backward(T.sum_all(h))
        return x.grad

    return run


def tape_mlp(bench):
    import lean_tape as T

    sizes, _, classes, _ = MLP[bench]
    x, y, weights = _mlp_data(bench)
    params = [T.Var(w, rg=True) for w in weights]
    n_layers = len(params) // 2
    X = T.Var(x)
    loss_fn = T.cross_entropy if classes else T.mse

    def zero_grad():
        for p in params:
            p.grad = None

    def step():
        zero_grad()
        h = X
        for i in range(n_layers):
            h = T.linear(h, params[2 * i], params[2 * i + 1])
            if i < n_layers - 1:
                h = T.relu(h)
        loss = loss_fn(h, y)
        T.backward(loss)
        for p in params:
            p.data -= LR * p.grad
        return loss

    return step, zero_grad


ENGINES = {"numpy": (numpy_chain, numpy_mlp), "minigrad": (minigrad_chain, minigrad_mlp),
           "torch": (torch_chain, torch_mlp), "tape": (tape_chain, tape_mlp)}


def build(engine: str, bench: str):
    """(step callable, reset callable or None) for one engine and benchmark."""
    chain, mlp = ENGINES[engine]
    if bench in CHAINS:
        return chain(bench), None
    return mlp(bench)


# =====================================================================================
# Measurement (inside the worker process)
# =====================================================================================
def _proc_status() -> dict:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) * 1024
    return out


def _trim() -> None:
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def measure_memory(fn, reset, use_tracemalloc: bool) -> dict:
    """Peak memory of one call of fn above the state before it (see the module docstring)."""
    result = {}
    if reset is not None:
        reset()
    _trim()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = _proc_status()["VmRSS"]
        out = fn()
        result["rss_peak"] = _proc_status()["VmHWM"] - before
        del out
    except OSError:
        result["rss_peak"] = None
    if use_tracemalloc:
        import tracemalloc

        if reset is not None:
            reset()
        _trim()
        tracemalloc.start()
        out = fn()
        result["traced_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del out
    return result


CLOCK = time.perf_counter  # --clock wall (default); --clock cpu: time.process_time


def paired(bench: str, repeats: int) -> dict:
    """NumPy and minigrad alternating step by step in one process: a load-robust ratio."""
    fns = [build("numpy", bench)[0], build("minigrad", bench)[0]]
    for _ in range(3):
        for f in fns:
            f()
    ratios = []
    for _ in range(repeats):
        t = []
        for f in fns:
            t0 = CLOCK()
            f()
            t.append(CLOCK() - t0)
        ratios.append(t[1] / t[0])
    return {"bench": bench, "ratios": ratios}


def worker(engine: str, bench: str, mode: str, repeats: int) -> dict:
    sys.path.insert(0, HERE)
    sys.path.insert(0, ROOT)  # minigrad from this checkout
    if mode == "pair":
        return paired(bench, repeats)
    run, reset = build(engine, bench)
    for _ in range(1 if bench in CHAINS else 3):
        run()  # warm-up (lazy imports, caches)
    res = {"engine": engine, "bench": bench}
    if mode == "mem":
        res.update(measure_memory(run, reset, engine != "torch"))
        return res
    times = []
    for _ in range(repeats):
        t0 = CLOCK()
        run()
        times.append(CLOCK() - t0)
    res["times"] = times
    return res


# =====================================================================================
# Driver (parent process)
# =====================================================================================
REPEATS = {"a": 15, "a32": 15, "b": 60, "c": 1000, "c32": 1000, "d": 8, "d32": 10, "e": 5}
PAIRED = {"a": 15, "a32": 15, "b": 100, "c": 2000, "c32": 2000, "d": 8, "d32": 10}


def spawn(engine: str, bench: str, mode: str, repeats: int) -> dict:
    env = dict(os.environ, **THREAD_ENV)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, bench, mode, str(repeats),
           "cpu" if CLOCK is time.process_time else "wall"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"worker {engine}/{bench}/{mode} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _fmt_bytes(n):
    if n is None:
        return "n/a"
    return f"{n / 2**20:.1f} MiB"


def _load() -> str:
    try:
        return "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "load average n/a"


def run_bench(bench: str, engines: list, rounds: int, scale: float) -> dict:
    """Time every engine on one benchmark (interleaved rounds), plus memory and the paired check."""
    reps = max(3, int(REPEATS[bench] * scale))
    per_round = {e: [] for e in engines}  # the engine's time in each round
    for _ in range(rounds):
        for e in engines:
            times = spawn(e, bench, "time", reps)["times"]
            per_round[e].append(min(times) if bench in CHAINS else _median(times))
    res = {"bench": bench, "times": per_round}
    if "numpy" in engines:
        base = per_round["numpy"]
        res["ratios"] = {e: [t / b for t, b in zip(per_round[e], base)] for e in engines}
    if bench in MEMORY:
        res["memory"] = {e: spawn(e, bench, "mem", 1) for e in engines}
    if "numpy" in engines and "minigrad" in engines and bench in PAIRED:
        res["pair"] = _median(spawn("both", bench, "pair", max(3, int(PAIRED[bench] * scale)))["ratios"])
    return res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset of " + ",".join(BENCHES))
    ap.add_argument("--engines", default="numpy,minigrad,torch,tape")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the number of repeats")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of fresh processes, engines alternating (default 3)")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    ap.add_argument("--json", help="also write the raw results to this file")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: time.perf_counter (default); cpu: time.process_time, robust to a loaded machine")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    benches = [b for b in args.only.split(",") if b]
    for b in benches:
        if b not in BENCHES:
            ap.error(f"unknown benchmark {b!r}; choose from {', '.join(BENCHES)}")
    engines = [e for e in args.engines.split(",") if e]
    if "torch" in engines:
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            engines.remove("torch")

    import numpy

    info = [f"python {platform.python_version()}", f"numpy {numpy.__version__}", f"{platform.machine()}",
            f"cpu: {_cpu_name()} x {os.cpu_count()}", "1 BLAS thread (OPENBLAS/OMP/MKL_NUM_THREADS=1)"]
    if "torch" in engines:
        ver = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True).stdout.strip()
        info.append(f"torch {ver} (torch.set_num_threads(1))")
    print("; ".join(info))
    print(f"at start: {_load()}")
    print(f"clock: {'CPU time of the process (time.process_time)' if args.clock == 'cpu' else 'wall clock'}")
    print(f"ratio = engine time / hand-written NumPy time of the same round; median over {args.rounds} rounds of "
          "fresh processes, engines alternating.\n(a), (e): min over repeats within a process; MLPs: median step "
          "time within a process\n")

    results = []
    for bench in benches:
        res = run_bench(bench, engines, args.rounds, args.scale)
        results.append(res)
        _print_bench(res, engines)
    print(f"at end: {_load()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "results": results}, f, indent=1)
    if args.markdown:
        print()
        print(_markdown(results, engines))


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _time_str(bench, t):
    if bench in CHAINS:
        n = CHAINS[bench][0]
        if n >= 100_000:
            return f"{t * 1e3:.1f} ms ({t / n * 1e6:.2f} us/op)"
        return f"{t / n * 1e6:.2f} us/op"
    return f"{t * 1e3:.3f} ms"


def _memory_ratio(res) -> float | None:
    mem = res.get("memory", {})
    a, b = mem.get("minigrad", {}).get("rss_peak"), mem.get("numpy", {}).get("rss_peak")
    return a / b if a is not None and b else None


def _verdict(res) -> str:
    bench = res["bench"]
    parts = []
    if bench in GOALS and "ratios" in res and "minigrad" in res["ratios"]:
        r = _median(res["ratios"]["minigrad"])
        parts.append(f"time <= {GOALS[bench]}x: {'met' if r <= GOALS[bench] else 'MISSED'}")
    if bench in MEMORY_GOALS:
        m = _memory_ratio(res)
        if m is not None:
            parts.append(f"memory <= {MEMORY_GOALS[bench]}x NumPy's: {'met' if m <= MEMORY_GOALS[bench] else 'MISSED'}"
                         f" ({m:.2f}x)")
    return "; ".join(parts)


def _print_bench(res, engines):
    bench = res["bench"]
    print(TITLES[bench])
    ratios = res.get("ratios", {})
    for e in engines:
        t = _median(res["times"][e])
        line = f"  {e:9s} {_time_str(bench, t):>26s}"
        if e in ratios:
            r = ratios[e]
            line += f"   ratio {_median(r):5.2f}x  (rounds: {', '.join(f'{x:.2f}' for x in r)})"
        m = res.get("memory", {}).get(e)
        if m:
            line += f"   working memory: RSS {_fmt_bytes(m.get('rss_peak'))}"
            if "traced_peak" in m:
                line += f", tracemalloc {_fmt_bytes(m['traced_peak'])}"
        print(line)
    if "pair" in res:
        print(f"  minigrad / numpy interleaved in one process (median of step-by-step ratios): {res['pair']:.2f}x")
    verdict = _verdict(res)
    if verdict:
        print(f"  goal for minigrad: {verdict}")
    print()


def _markdown(results, engines) -> str:
    others = [e for e in engines if e != "numpy"]
    head = ("| benchmark | numpy time | " + " | ".join(f"{e} / numpy" for e in others) +
            " | minigrad / numpy interleaved | goal (minigrad) |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for res in results:
        bench = res["bench"]
        ratios = res.get("ratios", {})
        cells = [TITLES[bench], _time_str(bench, _median(res["times"]["numpy"])) if "numpy" in engines else "n/a"]
        cells += [f"{_median(ratios[e]):.2f}x" if e in ratios else "n/a" for e in others]
        cells.append(f"{res['pair']:.2f}x" if "pair" in res else "-")
        cells.append(_verdict(res) or "-")
        out.append("| " + " | ".join(cells) + " |")
    mem_rows = [r for r in results if r.get("memory")]
    if mem_rows:
        traced = [e for e in engines if e != "torch"]
        out += ["", "| working memory of one step | " + " | ".join(f"{e} RSS" for e in engines) + " | " +
                " | ".join(f"{e} tracemalloc" for e in traced) + " |"]
        out.append("|" + "---|" * (1 + len(engines) + len(traced)))
        for r in mem_rows:
            m = r["memory"]
            cells = [TITLES[r["bench"]]] + [_fmt_bytes(m[e].get("rss_peak")) for e in engines]
            cells += [_fmt_bytes(m[e].get("traced_peak")) for e in traced]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        engine, bench, mode, repeats = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        if len(sys.argv) > 6 and sys.argv[6] == "cpu":
            CLOCK = time.process_time
        print(json.dumps(worker(engine, bench, mode, repeats)))
    else:
        main()
