"""vmap against a Python loop over the batch: per-sample gradients of a small MLP, and a Jacobian.

    python3 benchmarks/vmap_vs_loop.py            # prints one line per workload: loop time, vmap time, ratio

A script, not a test (nothing here asserts on time). Both sides compute the same numbers (checked once
before timing). The loop calls ``grad`` once per sample; vmap runs the same function once on the whole
batch, every op batched by the rules of minigrad/_functorch/batched.py (no op loops over the batch:
``batched.LOOPED`` is empty, printed below). One thread, CPU time, best of several repeats.
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minigrad  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from minigrad._functorch.batched import LOOPED  # noqa: E402
from minigrad.func import grad, vjp  # noqa: E402


def best(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def per_sample_grads(batch: int):
    rng = np.random.default_rng(0)
    params = (minigrad.tensor(rng.standard_normal((32, 16))), minigrad.tensor(rng.standard_normal(32)),
              minigrad.tensor(rng.standard_normal((10, 32))))
    x = minigrad.tensor(rng.standard_normal((batch, 16)))
    y = minigrad.tensor(rng.integers(0, 10, batch))

    def loss(p, a, t):
        w1, b1, w2 = p
        return F.cross_entropy((F.relu(a @ w1.T + b1) @ w2.T).unsqueeze(0), t.unsqueeze(0))

    g = grad(loss)
    loop = lambda: [g(params, x[i], y[i]) for i in range(batch)]  # noqa: E731
    vm = lambda: minigrad.vmap(g, in_dims=(None, 0, 0))(params, x, y)  # noqa: E731
    ref, got = loop(), vm()
    assert all(np.allclose(got[k][i].numpy(), ref[i][k].numpy()) for i in range(batch) for k in range(3))
    return loop, vm


def jacobian(n: int):
    x = minigrad.tensor(np.random.default_rng(1).standard_normal(n))
    _, vjp_fn = vjp(lambda t: (t.sin() * t.sum()).cumsum(0).tanh(), x)
    eye = minigrad.eye(n, dtype=x.dtype)
    loop = lambda: [vjp_fn(eye[i]) for i in range(n)]  # noqa: E731
    vm = lambda: minigrad.vmap(vjp_fn)(eye)  # noqa: E731
    assert np.allclose(vm()[0].numpy(), np.stack([r[0].numpy() for r in loop()]))
    return loop, vm


def main() -> None:
    print(f"ops computed by a loop over the batch under vmap: {sorted(LOOPED) or 'none'}")
    print(f"{'workload':48s} {'loop (ms)':>10s} {'vmap (ms)':>10s} {'loop / vmap':>12s}")
    for name, (loop, vm) in (("per-sample grads, MLP 16-32-10, batch 64", per_sample_grads(64)),
                             ("per-sample grads, MLP 16-32-10, batch 256", per_sample_grads(256)),
                             ("Jacobian 64 x 64 by vmap(vjp)", jacobian(64))):
        tl, tv = best(loop, 3), best(vm, 5)
        print(f"{name:48s} {tl * 1e3:10.1f} {tv * 1e3:10.1f} {tl / tv:11.1f}x")


if __name__ == "__main__":
    main()
