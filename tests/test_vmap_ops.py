"""vmap over the op tables (tests/optable.py rows of test_ops_*.py), with torch.vmap as the oracle.

Each row's ``fn`` runs under ``vmap`` on inputs with an extra leading batch dim (B=3) in two ways: every
input batched, and only the first one batched (the others shared). Values and dtypes must match
``torch.vmap``'s; then a random weighting of the output is backpropagated THROUGH vmap, so the batched
backward formulas of every op are checked against torch's gradients too. A row that torch.vmap itself
refuses (e.g. data-dependent shapes) is skipped, with torch's reason.
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
import test_ops_activations
import test_ops_elementwise
import test_ops_indexing_shapes
import test_ops_matrix
import test_ops_reduce_sort
from optable import _first, make_array, to_lib

torch = pytest.importorskip("torch")

B = 3
ROWS = [r for m in (test_ops_elementwise, test_ops_activations, test_ops_reduce_sort, test_ops_matrix,
                    test_ops_indexing_shapes) for r in m.ROWS if r.oracle]


def _batched_data(row, seed: int, which: str):
    rng = np.random.default_rng(seed)
    data, dims = [], []
    for k, (kind, shape) in enumerate(row.kinds):
        batched = which == "all" or k == 0
        a, g = make_array(kind, ((B,) + tuple(shape)) if batched else tuple(shape), rng)
        data.append((a, g))
        dims.append(0 if batched else None)
    return data, tuple(dims)


def _run(T, row, data, in_dims):
    ins = [to_lib(T, a, g) for a, g in data]
    out = T.vmap(lambda *xs: _first(row.fn(T, *xs)), in_dims=in_dims)(*ins)
    grads = [None] * len(ins)
    if out.requires_grad:
        w = np.random.default_rng(5).standard_normal(tuple(out.shape))
        (out * T.tensor(w, dtype=out.dtype)).sum().backward()
        grads = [t.grad.numpy().copy() if getattr(t, "requires_grad", False) and t.grad is not None else None
                 for t in ins]
    return out.detach().numpy().copy(), str(out.dtype), grads


# Rows whose op minigrad cannot batch (it must say so, with an error starting "vmap: "): none at present.
UNSUPPORTED: set = set()


@pytest.mark.parametrize("which", ["all", "first"])
@pytest.mark.parametrize("row", [pytest.param(r, id=r.id, marks=r.marks) for r in ROWS])
def test_vmap_matches_torch(row, which):
    data, in_dims = _batched_data(row, 7, which)
    try:
        tv, tdt, tg = _run(torch, row, data, in_dims)
    except Exception as e:  # noqa: BLE001 - torch.vmap has no rule either: nothing to compare
        pytest.skip(f"torch.vmap refuses it: {str(e).splitlines()[0][:120]}")
    if row.id in UNSUPPORTED:
        with pytest.raises(RuntimeError, match="^vmap: "):
            _run(minigrad, row, data, in_dims)
        return
    mv, mdt, mg = _run(minigrad, row, data, in_dims)
    assert mdt == tdt
    assert mv.shape == tv.shape
    np.testing.assert_allclose(mv, tv, rtol=max(row.rtol, 1e-9), atol=1e-11)
    for m, t in zip(mg, tg):
        assert (m is None) == (t is None)
        if m is not None:
            np.testing.assert_allclose(m, t, rtol=1e-8, atol=1e-10)
