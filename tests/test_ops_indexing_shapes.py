"""Index-based ops (gather, scatter, index_select, index_add, masked_fill, take...) and rearranging
(flip, roll, repeat, tile, repeat_interleave, chunk, split, unbind, stacks, movedim...): gradcheck,
gradgradcheck, PyTorch as an oracle (tests/optable.py), then views, in-place forms and errors."""
from __future__ import annotations

import numpy as np
import pytest
from optable import Row, check_error_matches_torch, check_gradcheck, check_gradgradcheck, check_oracle, params

import minigrad


def t(T, arr, dtype=None):
    return T.tensor(np.asarray(arr), dtype=dtype)


IDX_G = [[0, 2, 2], [1, 0, 3], [3, 3, 1]]  # gather/scatter index, repeats included
MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]

ROWS = [
    Row("gather", lambda T, x: x.gather(1, t(T, IDX_G)), [("n", (3, 4))]),
    Row("gather-dim0", lambda T, x: T.gather(x, 0, t(T, [[0, 1, 2, 0]])), [("n", (3, 4))]),
    Row("take_along_dim", lambda T, x: T.take_along_dim(x, t(T, [[0, 1]]), 1), [("n", (3, 4))]),
    Row("take_along_dim-flat", lambda T, x: T.take_along_dim(x, t(T, [0, 11, 5])), [("n", (3, 4))]),
    Row("take", lambda T, x: T.take(x, t(T, [[0, 11], [5, 5]])), [("n", (3, 4))]),
    Row("scatter-src", lambda T, x, s: x.scatter(1, t(T, [[0], [1], [3]]), s), [("n", (3, 4)), ("n", (3, 1))]),
    # src larger than the index: PyTorch 2.13's own backward fails here ("ScatterBackward0 returned an invalid
    # gradient at index 1 - got [1, 4] but expected shape compatible with [2, 5]"); minigrad pads it with zeros
    Row("scatter-bigger-src", lambda T, x, s: T.scatter(x, 0, t(T, [[1, 2, 0, 1]]), s), [("n", (3, 4)), ("n", (2, 5))],
        oracle=False),
    Row("scatter-value", lambda T, x: x.scatter(1, t(T, [[0], [1], [3]]), 0.5), [("n", (3, 4))]),
    Row("scatter_add", lambda T, x, s: x.scatter_add(1, t(T, IDX_G), s), [("n", (3, 4)), ("n", (3, 3))]),
    Row("index_select", lambda T, x: x.index_select(1, t(T, [0, 3, 3])), [("n", (3, 4))]),
    Row("index_select-dim0", lambda T, x: T.index_select(x, 0, t(T, [2, 0])), [("n", (3, 4))]),
    Row("index_add", lambda T, x, s: x.index_add(0, t(T, [0, 0, 2]), s), [("n", (3, 4)), ("n", (3, 4))]),
    Row("index_add-alpha", lambda T, x, s: T.index_add(x, 1, t(T, [3, 1]), s, alpha=2.5), [("n", (3, 4)), ("n", (3, 2))]),
    Row("index_fill", lambda T, x: x.index_fill(1, t(T, [0, 2]), -1.0), [("n", (3, 4))]),
    Row("masked_fill", lambda T, x: x.masked_fill(t(T, MASK), 0.25), [("n", (3, 4))]),
    Row("masked_fill-bcast", lambda T, x: x.masked_fill(t(T, [True, False, False, True]), -2.0), [("n", (3, 4))]),
    Row("masked_fill-tensor-value", lambda T, x, v: T.masked_fill(x, t(T, MASK), v), [("n", (3, 4)), ("n", ())]),
    Row("masked_select", lambda T, x: x.masked_select(t(T, MASK)), [("n", (3, 4))]),
    Row("masked_select-bcast", lambda T, x: T.masked_select(x, t(T, [True, False, True, True])), [("n", (3, 4))]),
    Row("scatter_-inplace", lambda T, x, s: (x * 1).scatter_(1, t(T, [[0], [1], [3]]), s), [("n", (3, 4)), ("n", (3, 1))]),
    Row("index_add_-inplace", lambda T, x, s: (x * 1).index_add_(0, t(T, [1, 1]), s), [("n", (3, 4)), ("n", (2, 4))]),
    Row("masked_fill_-inplace", lambda T, x: (x * 1).masked_fill_(t(T, MASK), 3.0), [("n", (3, 4))]),
    Row("scatter_add_-inplace", lambda T, x, s: (x * 1).scatter_add_(0, t(T, [[0, 0, 1, 2]]), s), [("n", (3, 4)), ("n", (1, 4))]),
    # rearranging
    Row("flip", lambda T, x: x.flip(0), [("n", (3, 4))]),
    Row("flip-dims", lambda T, x: T.flip(x, (0, 2)), [("n", (2, 3, 4))]),
    Row("fliplr-flipud", lambda T, x: T.fliplr(x) * T.flipud(x), [("n", (3, 4))]),
    Row("roll", lambda T, x: x.roll(1, 1), [("n", (3, 4))]),
    Row("roll-flat", lambda T, x: T.roll(x, 5), [("n", (3, 4))]),
    Row("roll-two-dims", lambda T, x: x.roll((1, -2), (0, 1)), [("n", (3, 4))]),
    Row("repeat", lambda T, x: x.repeat(2, 3), [("n", (2, 3))]),
    Row("repeat-new-dims", lambda T, x: x.repeat(2, 1, 2), [("n", (3,))]),
    Row("tile", lambda T, x: T.tile(x, (2,)), [("n", (2, 3))]),
    Row("repeat_interleave", lambda T, x: x.repeat_interleave(2, dim=0), [("n", (3, 2))]),
    Row("repeat_interleave-flat", lambda T, x: T.repeat_interleave(x, 3), [("n", (2, 2))]),
    Row("repeat_interleave-tensor", lambda T, x: x.repeat_interleave(t(T, [1, 0, 3]), dim=1), [("n", (2, 3))]),
    Row("chunk", lambda T, x: T.cat([c * (i + 1) for i, c in enumerate(x.chunk(3, 1))], 1), [("n", (2, 7))]),
    Row("split-size", lambda T, x: T.stack([c.sum(1) for c in x.split(2, 1)]), [("n", (2, 6))]),
    Row("split-sections", lambda T, x: T.split(x, [1, 3], 0)[1] * 2, [("n", (4, 2))]),
    Row("tensor_split", lambda T, x: T.tensor_split(x, 3, 1)[2], [("n", (2, 7))]),
    Row("unbind", lambda T, x: T.stack([r * (i + 1) for i, r in enumerate(x.unbind(1))]), [("n", (2, 3))]),
    Row("unbind-one-used", lambda T, x: x.unbind(0)[1], [("n", (3, 2))]),
    Row("vstack", lambda T, a, b: T.vstack([a, b]), [("n", (3,)), ("n", (2, 3))]),
    Row("hstack", lambda T, a, b: T.hstack([a, b]), [("n", (2, 3)), ("n", (2, 1))]),
    Row("hstack-1d", lambda T, a, b: T.hstack((a, b)), [("n", (2,)), ("n", (3,))]),
    Row("dstack", lambda T, a, b: T.dstack([a, b]), [("n", (2, 3)), ("n", (2, 3))]),
    Row("column_stack", lambda T, a, b: T.column_stack([a, b]), [("n", (3,)), ("n", (3, 2))]),
    Row("movedim", lambda T, x: x.movedim(0, -1), [("n", (2, 3, 4))]),
    Row("moveaxis-two", lambda T, x: T.moveaxis(x, (0, 1), (2, 0)), [("n", (2, 3, 4))]),
    Row("swapaxes", lambda T, x: x.swapaxes(0, 2), [("n", (2, 3, 4))]),
    Row("unflatten", lambda T, x: x.unflatten(1, (2, 3)), [("n", (4, 6))]),
    Row("atleast", lambda T, x: T.atleast_3d(x) * 2 + T.atleast_2d(x).sum(), [("n", (3,))]),
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


def _split_program(T):
    x = T.arange(6.0).reshape(2, 3).requires_grad_()
    y = x * 1
    a, b = y.split([1, 2], 1)
    rows = y.unbind(0)
    names = [p.grad_fn.name() for p in (a, rows[1])]
    with T.no_grad():
        b.mul_(10)  # the pieces are views: this writes into y
    (y * y).sum().backward()
    errors = []
    for piece in (rows[0], y.chunk(3, 1)[1]):
        try:
            piece.add_(1)  # while recording: PyTorch's error for outputs of functions returning several views
        except RuntimeError as e:
            errors.append(str(e).split("\n")[0])
    return y.detach().numpy().tolist(), x.grad.numpy().tolist(), names, errors


def test_split_pieces_are_views_as_in_pytorch():
    got = _split_program(minigrad)
    assert got[0] == [[0.0, 10.0, 20.0], [3.0, 40.0, 50.0]]
    assert got[3][0].startswith("Output 0 of Unbind is a view and is being modified inplace.")
    torch = pytest.importorskip("torch")
    assert got == _split_program(torch)


def test_chunk_counts_match_torch():
    torch = pytest.importorskip("torch")
    for n, k in [(7, 3), (6, 4), (5, 5), (3, 5), (0, 2)]:
        ms = [tuple(c.shape) for c in minigrad.zeros(2, n).chunk(k, 1)]
        ts = [tuple(c.shape) for c in torch.zeros(2, n).chunk(k, 1)]
        assert ms == ts, (n, k)


SAME_AS_TORCH = [
    "torch.repeat_interleave(torch.tensor([1, 2, 0, 3]))", "torch.tensor([1, 2]).repeat_interleave(2)",
    "torch.tensor([[1, 2], [3, 4]]).flip(1)", "torch.tensor([1, 2, 3]).roll(-1)", "torch.arange(6).tile((2, 1))",
    "torch.arange(12.).reshape(3, 4).index_fill(1, torch.tensor([0, 2]), -1.)",
    "torch.arange(12.).reshape(3, 4).masked_fill(torch.ones(2, 3, 4, dtype=torch.bool), 0.)",
    "torch.arange(12.).reshape(3, 4).scatter(1, torch.tensor([[0], [1], [2]]), torch.ones(3, 1) * 2, reduce='add')",
    "torch.tensor(3.).index_select(0, torch.tensor([0]))", "torch.tensor(3.).gather(0, torch.tensor(0))",
    "torch.arange(12.).reshape(3, 4).gather(1, torch.tensor([[0, 1, 2, 3, 0]]))",
]


@pytest.mark.parametrize("source", SAME_AS_TORCH)
def test_results_match_torch(source):
    torch = pytest.importorskip("torch")
    assert repr(eval(source, {"torch": minigrad})) == repr(eval(source, {"torch": torch}))


ERRORS = [
    "torch.arange(12.).reshape(3, 4).gather(1, torch.tensor([[0], [1], [5]]))",
    "torch.arange(12.).reshape(3, 4).gather(1, torch.tensor([0, 1, 2]))",
    "torch.arange(12.).reshape(3, 4).scatter(1, torch.tensor([[0], [1], [2]]), torch.ones(3, 1, dtype=torch.float64))",
    "torch.arange(12.).reshape(3, 4).index_select(1, torch.tensor([[0, 3]]))",
    "torch.arange(12.).reshape(3, 4).index_select(1, torch.tensor([0, 7]))",
    "torch.arange(12.).reshape(3, 4).index_select(1, torch.tensor([0., 1.]))",
    "torch.arange(12.).reshape(3, 4).masked_fill(torch.tensor([1, 0, 1, 0]), 0.)",
    "torch.arange(12.).reshape(3, 4).masked_fill(torch.arange(12.).reshape(3, 4) > 5, torch.tensor([1., 2.]))",
    "torch.arange(12.).reshape(3, 4).index_add(0, torch.tensor([0, 0]), torch.ones(2, 3))",
    "torch.ones(2, 3).repeat(2)", "torch.ones(2, 3).split([1, 1], 1)", "torch.tensor(3.).chunk(1, 0)",
    "torch.tensor(3.).split(1, 0)", "torch.tensor(3.).unbind(0)", "torch.ones(3).chunk(0)",
    "torch.ones(2, 3).flip(0, 0)", "torch.ones(2, 3).unflatten(1, (2, 2))", "torch.ones(3).roll((1, 2), (0,))",
    "torch.tensor(3.).roll(1, 0)", "torch.ones(3).fliplr()",
]


@pytest.mark.parametrize("source", ERRORS)
def test_errors_match_torch(source):
    check_error_matches_torch(source)
