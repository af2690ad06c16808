"""Products (prod / cumprod, exact at zeros to second order), sorting and selection (sort, topk,
kthvalue, median, cummax...), running reductions (logcumsumexp, nansum...): gradcheck, gradgradcheck and
PyTorch as an oracle (tests/optable.py), then zeros, ties, NaN, dtypes and errors against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from optable import Row, check_error_matches_torch, check_gradcheck, check_gradgradcheck, check_oracle, params

import minigrad


def t(T, arr, dtype=None):
    return T.tensor(np.asarray(arr), dtype=dtype)


ZEROS_1 = [[0.0, 2.0, 3.0], [1.5, -2.0, 0.5]]  # one zero in the first row
ZEROS_2 = [[0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 1.0], [2.0, -1.0, 0.5, 3.0]]  # two and three zeros per row


ROWS = [
    Row("prod-all", lambda T, x: x.prod(), [("n", (3, 4))]),
    Row("prod-dim", lambda T, x: T.prod(x, 1), [("n", (3, 4))]),
    Row("prod-dim-keepdim", lambda T, x: x.prod(0, keepdim=True), [("n", (3, 4))]),
    Row("prod-zeros", lambda T, x: x.prod(-1), [("z", (4, 5))]),
    Row("prod-all-zeros", lambda T, x: (x * t(T, ZEROS_1)).prod(), [("n", (2, 3))]),
    Row("prod-one-zero-each-row", lambda T, x: (x * t(T, ZEROS_1)).prod(1), [("n", (2, 3))]),
    Row("prod-two-zeros", lambda T, x: (x * t(T, ZEROS_2)).prod(1), [("n", (3, 4))]),
    Row("prod-0d", lambda T, x: x.prod(0), [("n", ())]),
    Row("cumprod", lambda T, x: x.cumprod(1), [("n", (3, 4))]),
    Row("cumprod-dim0", lambda T, x: T.cumprod(x, 0), [("n", (4, 3))]),
    Row("cumprod-zeros", lambda T, x: x.cumprod(-1), [("z", (4, 5))]),
    Row("cumprod-fixed-zeros", lambda T, x: (x * t(T, ZEROS_2)).cumprod(1), [("n", (3, 4))]),
    Row("cumprod-3d", lambda T, x: x.cumprod(1), [("z", (2, 4, 3))]),
    Row("sort", lambda T, x: x.sort(1).values, [("d", (3, 4))]),
    Row("sort-desc", lambda T, x: T.sort(x, 0, descending=True)[0], [("d", (3, 4))]),
    Row("sort-stable", lambda T, x: x.sort(stable=True).values, [("d", (5,))]),
    Row("msort", lambda T, x: T.msort(x), [("d", (4, 3))]),
    Row("topk", lambda T, x: x.topk(2).values, [("d", (3, 5))]),
    Row("topk-smallest-dim0", lambda T, x: T.topk(x, 2, dim=0, largest=False)[0], [("d", (4, 3))]),
    Row("kthvalue", lambda T, x: x.kthvalue(2, 1).values, [("d", (3, 5))]),
    Row("kthvalue-keepdim", lambda T, x: T.kthvalue(x, 3, 0, keepdim=True)[0], [("d", (4, 3))]),
    Row("median-all", lambda T, x: x.median(), [("d", (3, 5))]),
    Row("median-even", lambda T, x: T.median(x), [("d", (4,))]),
    Row("median-dim", lambda T, x: x.median(1).values, [("d", (3, 4))]),
    Row("median-dim-keepdim", lambda T, x: T.median(x, 0, keepdim=True)[0], [("d", (5, 2))]),
    Row("cummax", lambda T, x: x.cummax(1).values, [("d", (3, 5))]),
    Row("cummin", lambda T, x: T.cummin(x, 0)[0], [("d", (4, 3))]),
    Row("logcumsumexp", lambda T, x: x.logcumsumexp(1), [("n", (3, 4))]),
    Row("logcumsumexp-big", lambda T, x: T.logcumsumexp(x, 0), [("big", (6,))]),
    Row("nansum", lambda T, x: T.nansum(x + t(T, [0.0, np.nan, 1.0])), [("n", (2, 3))]),
    Row("nanmean-dim", lambda T, x: (x + t(T, [0.0, np.nan, 1.0])).nanmean(1), [("n", (2, 3))]),
    Row("aminmax", lambda T, x: T.aminmax(x, dim=1)[0] * T.aminmax(x, dim=1)[1], [("d", (3, 4))]),
    Row("diff", lambda T, x: T.diff(x, dim=1) * 2, [("n", (3, 4))]),
    Row("diff-n2-prepend", lambda T, x, p: x.diff(n=2, dim=0, prepend=p), [("n", (4, 3)), ("n", (1, 3))]),
    Row("count_nonzero-times", lambda T, x: x * T.count_nonzero(x > 0), [("n", (4,))], gradgrad=False),
]


@pytest.mark.parametrize("row", params(ROWS, "grad"))
def test_gradcheck(row):
    check_gradcheck(row)


@pytest.mark.parametrize("row", params(ROWS, "gradgrad"))
def test_gradgradcheck(row):
    check_gradgradcheck(row)


@pytest.mark.parametrize("row", params(ROWS, "oracle"))
def test_matches_torch(row):
    check_oracle(row)


# --- prod and cumprod at zeros: first and second derivatives against PyTorch ----------------------------------------
@pytest.mark.parametrize("data", [ZEROS_1, ZEROS_2, [[0.0, 0.0]], [[3.0, 0.0, -2.0, 0.0, 5.0]], [[0.0]]], ids=str)
@pytest.mark.parametrize("op", ["prod-all", "prod-dim", "cumprod"])
def test_second_derivatives_at_zeros_match_torch(op, data):
    torch = pytest.importorskip("torch")

    def hessian_rows(T):
        x = T.tensor(data, dtype=T.float64, requires_grad=True)
        y = x.prod() if op == "prod-all" else x.prod(1).sum() if op == "prod-dim" else (x.cumprod(1) * (x + 2)).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        rows = []
        for i in range(g.numel()):
            if not g.requires_grad:  # PyTorch's gradient of a one-element product is a constant
                rows.append(np.zeros(x.shape))
                continue
            (h,) = T.autograd.grad(g.reshape(-1)[i], x, retain_graph=True, allow_unused=True)
            rows.append(np.zeros(x.shape) if h is None else h.detach().numpy())
        return g.detach().numpy(), np.stack(rows)

    (mg, mh), (tg, th) = hessian_rows(minigrad), hessian_rows(torch)
    np.testing.assert_allclose(mg, tg, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mh, th, rtol=1e-12, atol=1e-12)


def test_prod_gradient_at_zeros_without_torch():
    x = minigrad.tensor([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]], dtype=minigrad.float64, requires_grad=True)
    x.prod(1).sum().backward()
    # one zero: its gradient is the product of the others; two zeros: all 0; none: prod / x
    np.testing.assert_array_equal(x.grad.numpy(), [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [6.0, 3.0, 2.0]])


def test_cumprod_gradient_at_zeros_without_torch():
    x = minigrad.tensor([2.0, 0.0, 3.0, 0.0], dtype=minigrad.float64, requires_grad=True)
    x.cumprod(0).sum().backward()
    # y = [2, 0, 0, 0]: dy0/dx0 = 1; dy1/dx1 = x0 = 2, dy2/dx1 = x0 x2 = 6; later factors multiply a zero
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 8.0, 0.0, 0.0])


SAME_AS_TORCH = [
    "torch.tensor([[1, 2], [3, 4]]).prod()", "torch.tensor([True, True]).prod()", "torch.tensor([1, 2, 3]).cumprod(0)",
    "torch.tensor([2.0, 3.0]).prod(dtype=torch.float64)", "torch.zeros(3, 0).prod(1)", "torch.tensor(3.).prod(0)",
    "torch.tensor(3.).cumprod(0)",
    "torch.tensor([3., 1., 2., 1.]).sort(descending=True)", "torch.tensor([1., float('nan'), 0.]).sort()",
    "torch.tensor([1., float('nan'), 0.]).sort(descending=True)", "torch.tensor([True, False, True]).sort()",
    "torch.tensor([3, 1, 2]).argsort()", "torch.tensor([3., 1., 2., 1.]).argsort(descending=True)",
    "torch.tensor([3., 1., 2.]).topk(2)", "torch.tensor([1., 2., 3., 4.]).median()",
    "torch.tensor([1., float('nan'), 0.]).median()", "torch.tensor([[1., 5., 3., 4.]]).median(1)",
    "torch.tensor(3.).sort(0)", "torch.tensor(3.).topk(1)", "torch.tensor(3.).median(0)", "torch.tensor(3.).argsort(0)",
    "torch.tensor([3, 1, 3, 2]).unique()", "torch.unique(torch.tensor([3, 1, 3]), sorted=False)",
    "torch.unique(torch.tensor([[1, 2], [1, 2], [3, 4]]), dim=0, return_inverse=True, return_counts=True)",
    "torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1]), return_counts=True)",
    "torch.nonzero(torch.tensor([[1, 0], [0, 1]]))", "torch.nonzero(torch.tensor([[1, 0], [0, 1]]), as_tuple=True)",
    "torch.tensor(3.).nonzero()", "torch.tensor(0.).nonzero(as_tuple=True)", "torch.argwhere(torch.tensor([0, 2, 3]))",
    "torch.tensor([[1., 3.], [2., 0.]]).cummax(1)", "torch.tensor([3., 1., 1., 2.]).cummin(0)",
    "torch.tensor([1., 2., 3.]).logcumsumexp(0)", "torch.tensor([1., float('nan')]).nansum()",
    "torch.tensor([[1, 0], [2, 0]]).count_nonzero()", "torch.tensor([1., 5., 2.]).kthvalue(2)",
]


@pytest.mark.parametrize("source", SAME_AS_TORCH)
def test_results_match_torch(source):
    torch = pytest.importorskip("torch")
    mine, theirs = eval(source, {"torch": minigrad}), eval(source, {"torch": torch})
    assert repr(mine) == repr(theirs)


ERRORS = [
    "torch.tensor([3., 1., 2.]).topk(5)", "torch.tensor([3., 1.]).kthvalue(3)", "torch.zeros(3, 0).median(1)",
    "torch.ones(2, 3).prod(2)", "torch.ones(2, 3).cumprod(-3)", "torch.ones(2, 3).sort(2)",
    "torch.tensor(3.).diff()",
]


@pytest.mark.parametrize("source", ERRORS)
def test_errors_match_torch(source):
    check_error_matches_torch(source)


def test_indices_are_not_differentiable():
    x = minigrad.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = x.sort()
    assert values.requires_grad and not indices.requires_grad and indices.dtype == minigrad.int64
