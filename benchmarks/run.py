"""minigrad benchmarks: time (and memory) relative to hand-written NumPy, with PyTorch for comparison.

Run from the repository root:

    python3 benchmarks/run.py                  # everything (about a minute)
    python3 benchmarks/run.py --only a,c       # some benchmarks
    python3 benchmarks/run.py --markdown       # also print the README table

Every (benchmark, engine) pair runs in a fresh subprocess with one BLAS thread
(OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = MKL_NUM_THREADS = 1) and, for PyTorch,
``torch.set_num_threads(1)`` and ``torch.set_num_interop_threads(1)``. Python's garbage
collector stays on, as it is for a user. Engines:

* ``numpy``    the same computation written by hand: forward, explicit backprop math, update.
* ``minigrad`` this repository (imported from the checkout, not from site-packages).
* ``torch``    PyTorch eager on the CPU, when it is installed.

Each (benchmark, engine) runs ``--rounds`` times (default 3), engines alternating, so a burst of
load from elsewhere hits all engines alike. Reported time: (a), (e) the minimum over all
repeats; (b)-(d) the minimum over rounds of the median step time of a round.

On a shared machine, load changes between processes. As a cross-check that is robust to it,
one more fresh process runs the NumPy and the minigrad workload alternately, step by step,
and reports the median of the per-pair ratios ("interleaved"; (a)-(d)).

Benchmarks (the ratio is engine time / NumPy time):

(a) per-op overhead: a chain of 10,000 elementwise ops (mul, add, log, exp, relu, repeated) on
    16-element float64 tensors, forward and backward; microseconds per op.
(b) one SGD step (zero_grad, forward, cross-entropy, backward, step) of an MLP 784-256-256-10,
    ReLU, float32, batch 128.
(c) the same for an MLP 2-16-16-1, batch 64, MSE loss (the size of the book's demos).
(d) (b) at batch 4096: time, and working memory of one step.
(e) a chain of 100,000 ops (as in (a)), forward and backward: time and working memory.

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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHES = ("a", "b", "c", "d", "e")
TARGETS = {"a": 5.0, "b": 1.15, "c": 3.0}  # minigrad / NumPy time ratios from issue 2
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}


# =====================================================================================
# Workloads. Each engine builds a `step` callable; timing and memory code is shared.
# =====================================================================================
def _rng():
    import numpy as np

    return np.random.default_rng(0)


def _chain_data(np):
    rng = _rng()
    x0 = rng.uniform(1.0, 2.0, 16)
    w = rng.uniform(0.3, 0.7, 16)   # x -> x * w + b keeps x near 1: log/exp stay finite
    b = rng.uniform(0.3, 0.7, 16)
    return x0, w, b


def _mlp_data(np, sizes, batch, classes):
    rng = _rng()
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    if classes:
        y = rng.integers(0, sizes[-1], batch)
    else:
        y = rng.standard_normal((batch, sizes[-1])).astype(np.float32)
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        weights.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return x, y, weights


MLP = {"b": ((784, 256, 256, 10), 128, True), "c": ((2, 16, 16, 1), 64, False),
       "d": ((784, 256, 256, 10), 4096, True)}
LR = 0.01


# --- hand-written NumPy ----------------------------------------------------------------
def numpy_chain(n_ops):
    import numpy as np

    x0, w, b = _chain_data(np)
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

    sizes, batch, classes = MLP[bench]
    x, y, params = _mlp_data(np, sizes, batch, classes)
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


# --- minigrad ---------------------------------------------------------------------------
def _chain(lib, n_ops):
    """The elementwise chain, written once: minigrad and PyTorch take the same code."""
    import numpy as np

    x0, w, b = _chain_data(np)
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


def minigrad_chain(n_ops):
    import minigrad

    return _chain(minigrad, n_ops)


def _mlp(lib, bench):
    """The MLP training step, written once: minigrad and PyTorch take the same code."""
    import numpy as np

    nn = lib.nn
    sizes, batch, classes = MLP[bench]
    x, y, weights = _mlp_data(np, sizes, batch, classes)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.from_numpy(w))
    X, Y = lib.from_numpy(x), lib.from_numpy(y)
    opt = lib.optim.SGD(model.parameters(), lr=LR)
    loss_fn = nn.functional.cross_entropy if classes else nn.functional.mse_loss

    def step():
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()
        return loss

    return step, opt.zero_grad


def minigrad_mlp(bench):
    import minigrad

    return _mlp(minigrad, bench)


# --- PyTorch -----------------------------------------------------------------------------
def _torch():
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    return torch


def torch_chain(n_ops):
    return _chain(_torch(), n_ops)


def torch_mlp(bench):
    return _mlp(_torch(), bench)


ENGINES = {"numpy": (numpy_chain, numpy_mlp), "minigrad": (minigrad_chain, minigrad_mlp),
           "torch": (torch_chain, torch_mlp)}


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


def paired(bench: str, repeats: int) -> dict:
    """NumPy and minigrad alternating step by step in one process: a load-robust ratio."""
    sys.path.insert(0, ROOT)
    if bench in ("a", "e"):
        fns = [numpy_chain(10_000 if bench == "a" else 100_000), minigrad_chain(10_000 if bench == "a" else 100_000)]
    else:
        fns = [numpy_mlp(bench)[0], minigrad_mlp(bench)[0]]
    for _ in range(3):
        for f in fns:
            f()
    ratios = []
    for _ in range(repeats):
        t = []
        for f in fns:
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
        ratios.append(t[1] / t[0])
    return {"bench": bench, "ratios": ratios}


def worker(engine: str, bench: str, mode: str, repeats: int) -> dict:
    if mode == "pair":
        return paired(bench, repeats)
    if engine == "minigrad":
        sys.path.insert(0, ROOT)
    chain, mlp = ENGINES[engine]
    res = {"engine": engine, "bench": bench}
    if bench in ("a", "e"):
        n_ops = 10_000 if bench == "a" else 100_000
        run = chain(n_ops)
        run()  # warm-up (lazy imports, caches)
        res["n_ops"] = n_ops
        reset = None
    else:
        run, reset = mlp(bench)
        for _ in range(3):
            run()  # warm-up
    if mode == "mem":
        res.update(measure_memory(run, reset, engine != "torch"))
        return res
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    res["times"] = times
    return res


# =====================================================================================
# Driver (parent process)
# =====================================================================================
REPEATS = {"a": 15, "b": 60, "c": 1000, "d": 10, "e": 5}
PAIRED = {"a": 15, "b": 100, "c": 2000, "d": 10}  # repeats of the interleaved minigrad-vs-NumPy check


def spawn(engine: str, bench: str, mode: str, repeats: int) -> dict:
    env = dict(os.environ, **THREAD_ENV)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, bench, mode, str(repeats)]
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


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset of a,b,c,d,e")
    ap.add_argument("--engines", default="numpy,minigrad,torch")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the number of repeats")
    ap.add_argument("--rounds", type=int, default=3,
                    help="fresh processes per engine and benchmark, alternating between engines (default 3)")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    args = ap.parse_args(argv)
    benches = [b for b in args.only.split(",") if b]
    engines = [e for e in args.engines.split(",") if e]
    if "torch" in engines:
        try:
            import importlib.util

            if importlib.util.find_spec("torch") is None:
                engines.remove("torch")
        except ImportError:
            engines.remove("torch")

    import numpy

    info = [f"python {platform.python_version()}", f"numpy {numpy.__version__}", f"{platform.machine()}",
            f"cpu: {_cpu_name()}", "1 BLAS thread (OPENBLAS/OMP/MKL_NUM_THREADS=1)"]
    if "torch" in engines:
        ver = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True).stdout.strip()
        info.append(f"torch {ver} (torch.set_num_threads(1))")
    print("; ".join(info))
    print(f"ratio = engine time / hand-written NumPy time. {args.rounds} rounds of fresh processes, engines "
          "alternating;\n(a), (e): min over all repeats; (b)-(d): min over rounds of the median step time\n")

    rows = []
    for bench in benches:
        reps = max(3, int(REPEATS[bench] * args.scale))
        runs = {e: [] for e in engines}
        for _ in range(args.rounds):  # engines alternate, so a burst of load hits all of them
            for e in engines:
                runs[e].append(spawn(e, bench, "time", reps)["times"])
        summary = {}
        for e, rounds in runs.items():
            if bench in ("a", "e"):
                summary[e] = min(min(times) for times in rounds)
            else:
                summary[e] = min(_median(times) for times in rounds)
        if bench in ("d", "e"):
            mem = {e: spawn(e, bench, "mem", 1) for e in engines}
        else:
            mem = {}
        pair = None
        if "numpy" in engines and "minigrad" in engines and bench in PAIRED:
            pair = _median(spawn("both", bench, "pair", max(3, int(PAIRED[bench] * args.scale)))["ratios"])
        rows.append((bench, summary, mem, pair))
        _print_bench(bench, summary, mem, engines, pair)
    if args.markdown:
        print()
        print(_markdown(rows, engines))


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


TITLES = {"a": "(a) 10,000-op chain, 16 x float64, fwd+bwd", "b": "(b) MLP 784-256-256-10, batch 128, SGD step",
          "c": "(c) MLP 2-16-16-1, batch 64, MSE, SGD step", "d": "(d) MLP 784-256-256-10, batch 4096, SGD step",
          "e": "(e) 100,000-op chain, fwd+bwd"}


def _time_str(bench, t):
    if bench == "a":
        return f"{t / 10_000 * 1e6:8.2f} us/op"
    if bench == "e":
        return f"{t * 1e3:8.1f} ms ({t / 100_000 * 1e6:.2f} us/op)"
    return f"{t * 1e3:8.3f} ms"


def _print_bench(bench, summary, mem, engines, pair=None):
    print(TITLES[bench])
    base = summary.get("numpy")
    for e in engines:
        t = summary[e]
        ratio = f"{t / base:6.2f}x" if base else "   n/a"
        line = f"  {e:9s} {_time_str(bench, t)}   ratio {ratio}"
        if e == "minigrad" and bench in TARGETS and base:
            line += f"   (target <= {TARGETS[bench]}x: {'met' if t / base <= TARGETS[bench] else 'MISSED'})"
        if mem:
            m = mem[e]
            line += f"   working memory: RSS {_fmt_bytes(m.get('rss_peak'))}"
            if "traced_peak" in m:
                line += f", tracemalloc {_fmt_bytes(m['traced_peak'])}"
        print(line)
    if pair is not None:
        print(f"  minigrad / numpy interleaved in one process (median of step-by-step ratios): {pair:.2f}x")
    if mem and "torch" in mem and "minigrad" in mem and bench == "d":
        a, b = mem["minigrad"].get("rss_peak"), mem["torch"].get("rss_peak")
        if a is not None and b:
            print(f"  working memory minigrad / torch (RSS): {a / b:.2f} (target <= 1: {'met' if a <= b else 'MISSED'})")
    print()


def _markdown(rows, engines) -> str:
    head = "| benchmark | " + " | ".join(f"{e} time" for e in engines) + " | " + \
        " | ".join(f"{e} / numpy" for e in engines if e != "numpy") + \
        " | minigrad / numpy interleaved | target (minigrad) |"
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for bench, summary, mem, pair in rows:
        base = summary.get("numpy")
        cells = [TITLES[bench]] + [_time_str(bench, summary[e]).strip() for e in engines]
        cells += [f"{summary[e] / base:.2f}x" if base else "n/a" for e in engines if e != "numpy"]
        cells.append(f"{pair:.2f}x" if pair is not None else "-")
        target = {"a": "<= 5x", "b": "<= 1.15x", "c": "<= 3x", "d": "memory <= torch", "e": "-"}[bench]
        out.append("| " + " | ".join(cells) + f" | {target} |")
    mem_rows = [(b, m) for b, _, m, _ in rows if m]
    if mem_rows:
        out += ["", "| working memory of one step | " + " | ".join(f"{e} RSS" for e in engines) + " | " +
                " | ".join(f"{e} tracemalloc" for e in engines if e != "torch") + " |"]
        out.append("|" + "---|" * (1 + len(engines) + len([e for e in engines if e != "torch"])))
        for b, m in mem_rows:
            cells = [TITLES[b]] + [_fmt_bytes(m[e].get("rss_peak")) for e in engines]
            cells += [_fmt_bytes(m[e].get("traced_peak")) for e in engines if e != "torch"]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        engine, bench, mode, repeats = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        print(json.dumps(worker(engine, bench, mode, repeats)))
    else:
        main()
