"""minigrad.nn.utils: clip_grad_norm_ and clip_grad_value_, as PyTorch's (chapter 8 uses them)."""
import math

import numpy as np
import pytest

import minigrad
from minigrad.nn.utils import clip_grad_norm_, clip_grad_value_


def _params(grads, dtype=minigrad.float32):
    ps = []
    for g in grads:
        p = minigrad.zeros(len(g), dtype=dtype, requires_grad=True)
        p.grad = minigrad.tensor(g, dtype=dtype)
        ps.append(p)
    return ps


def test_norm_clipping_scales_all_gradients_together():
    a, b = _params([[3.0, 0.0], [0.0, 4.0]])           # joint norm 5
    total = clip_grad_norm_([a, b], 1.0)
    assert total.item() == pytest.approx(5.0) and total.dtype == minigrad.float32
    assert np.allclose(a.grad.tolist(), [0.6, 0.0], atol=1e-6)
    assert np.allclose(b.grad.tolist(), [0.0, 0.8], atol=1e-6)


def test_small_gradients_are_left_alone_and_the_norm_returned():
    p, = _params([[0.3, 0.4]])
    total = clip_grad_norm_(p, 1.0)                      # a single tensor is accepted too
    assert total.item() == pytest.approx(0.5)
    assert np.allclose(p.grad.tolist(), [0.3, 0.4])


def test_other_norms_and_missing_grads():
    p, = _params([[3.0, -4.0]])
    q = minigrad.zeros(2, requires_grad=True)            # no .grad: skipped
    assert clip_grad_norm_([p, q], 1.0, norm_type=math.inf).item() == pytest.approx(4.0)
    assert np.allclose(p.grad.tolist(), [0.75, -1.0], atol=1e-6)
    p, = _params([[3.0, -4.0]])
    assert clip_grad_norm_(p, 1.0, norm_type=1).item() == pytest.approx(7.0)
    assert clip_grad_norm_([], 1.0).item() == 0.0
    assert q.grad is None


def test_nonfinite_norm_error_is_optional():
    p, = _params([[float("nan"), 1.0]])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert math.isnan(clip_grad_norm_(p, 1.0).item())


def test_value_clipping_clamps_each_entry_in_place():
    p, = _params([[3.0, -4.0, 0.5]], dtype=minigrad.float64)
    grad = p.grad
    before = grad._version
    assert clip_grad_value_(p, 1.0) is None
    assert p.grad is grad and grad._version > before    # in place, as the trailing _ says
    assert p.grad.tolist() == [1.0, -1.0, 0.5]


def test_same_results_as_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    grads = [rng.normal(size=s) * 3 for s in [(4, 3), (3,), (2, 2)]]
    for norm_type in (2.0, 1.0, math.inf, 3.0):
        for max_norm in (0.5, 100.0):
            ours = _params([g.reshape(-1).tolist() for g in grads], dtype=minigrad.float64)
            theirs = []
            for g in grads:
                t = torch.zeros(g.size, dtype=torch.float64, requires_grad=True)
                t.grad = torch.tensor(g.reshape(-1))
                theirs.append(t)
            n1 = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
            n2 = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
            assert n1.item() == pytest.approx(n2.item(), rel=1e-12)
            for o, t in zip(ours, theirs):
                assert np.allclose(o.grad.tolist(), t.grad.tolist(), rtol=1e-12, atol=1e-15)
    ours = _params([[3.0, -0.2]], dtype=minigrad.float64)
    t = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    t.grad = torch.tensor([3.0, -0.2], dtype=torch.float64)
    clip_grad_value_(ours, 0.5)
    torch.nn.utils.clip_grad_value_([t], 0.5)
    assert ours[0].grad.tolist() == t.grad.tolist()


def test_reachable_as_in_pytorch():
    assert minigrad.nn.utils.clip_grad_norm_ is clip_grad_norm_
