"""Dtype promotion and edge cases found by sweeping the functions of issue 12 (and the core ones next to them)
over int/bool/float inputs against PyTorch 2.13: integer inputs of floating functions give the default float
(not NumPy's float64 / float16), mixed dtypes promote as in PyTorch (float32 wins over int64), and bad input
gets PyTorch's first line instead of a NumPy message or a silently wrong result.

Each case is asserted without PyTorch (the expected value is written here) and, when torch is installed,
compared with it as an oracle.
"""
from __future__ import annotations

import numpy as np
import pytest
from optable import Row, check_error_matches_torch, check_gradcheck, check_gradgradcheck, check_oracle, params

import minigrad

FLOATING_OF_INTEGERS = ["exp", "log", "log1p", "sqrt", "sin", "cos", "tanh", "sinh", "cosh", "sigmoid"]


@pytest.mark.filterwarnings("ignore:divide by zero")  # log(0) = -inf
@pytest.mark.parametrize("name", FLOATING_OF_INTEGERS)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_floating_functions_of_integers_give_the_default_float(name, dtype):
    data = np.array([[1, 0], [3, 4]]).astype(dtype)  # (log(0) = -inf)
    x = minigrad.tensor(data)
    out = getattr(minigrad, name)(x)
    assert out.dtype == minigrad.float32 and getattr(x, name)().dtype == minigrad.float32
    ref = (lambda a: 1 / (1 + np.exp(-a))) if name == "sigmoid" else getattr(np, name)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(out.numpy(), ref(data.astype(np.float64)).astype(np.float32), rtol=1e-6)


def test_sigmoid_of_integers_is_not_truncated_to_zero():
    assert minigrad.tensor([1, -2]).sigmoid().tolist() == pytest.approx([0.7310586, 0.1192029], rel=1e-6)


def test_default_dtype_decides_the_float():
    try:
        minigrad.set_default_dtype(minigrad.float64)
        assert minigrad.tensor([1, 2]).exp().dtype == minigrad.float64
    finally:
        minigrad.set_default_dtype(minigrad.float32)


def test_cat_and_stack_promote_as_pytorch_and_give_each_input_its_own_gradient_dtype():
    i, f = minigrad.tensor([1, 2]), minigrad.tensor([3.0, 4.0])
    assert minigrad.cat([i, f]).dtype == minigrad.float32  # NumPy: float64
    assert minigrad.vstack([i, f]).dtype == minigrad.float32 and minigrad.stack([f, i]).dtype == minigrad.float32
    assert minigrad.cat([minigrad.ones(1, dtype=minigrad.float16), i]).dtype == minigrad.float16
    assert minigrad.cat([minigrad.tensor([True]), minigrad.tensor([2], dtype=minigrad.int32)]).dtype == minigrad.int32
    a = minigrad.ones(2, requires_grad=True)
    b = minigrad.ones(2, dtype=minigrad.float64, requires_grad=True)
    for join in (minigrad.cat, minigrad.stack):
        a.grad = b.grad = None
        out = join([a, b])
        assert out.dtype == minigrad.float64
        (out * 2).sum().backward()
        assert (a.grad.dtype, b.grad.dtype) == (minigrad.float32, minigrad.float64)
        assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [2.0, 2.0]


def test_cat_skips_legacy_empty_tensors():
    """``out = torch.tensor([])`` then ``out = torch.cat([out, row])`` in a loop: PyTorch skips the 1-d empty one."""
    out = minigrad.tensor([])
    for k in range(3):
        out = minigrad.cat([out, minigrad.full((1, 2), float(k))])
    assert out.tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    e = minigrad.zeros(0, requires_grad=True)
    w = minigrad.ones(2, 3, requires_grad=True)
    y = minigrad.cat([w, e], dim=1)
    assert y.shape == (2, 3)
    y.sum().backward()
    assert e.grad.shape == (0,) and w.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(ValueError, match=r"^torch.cat\(\): expected a non-empty list of Tensors"):
        minigrad.cat([])


def test_promotion_of_binary_functions():
    i, f = minigrad.tensor([3, -4]), minigrad.tensor([2.0, 1.5])
    assert minigrad.maximum(i, f).dtype == minigrad.float32 and minigrad.minimum(f, i).dtype == minigrad.float32
    assert minigrad.floor_divide(i, f).tolist() == [1.0, -3.0] and minigrad.floor_divide(i, f).dtype == minigrad.float32
    assert minigrad.floor_divide(i, 2.5).dtype == minigrad.float32 and minigrad.floor_divide(i, 2).dtype == minigrad.int64
    assert minigrad.xlogy(minigrad.tensor([0, 2]), minigrad.tensor([0, 3])).dtype == minigrad.float32
    assert minigrad.logaddexp(i, f).dtype == minigrad.float32
    assert minigrad.tensor([1, 2], dtype=minigrad.uint8).sum().dtype == minigrad.int64
    with pytest.raises(NotImplementedError, match="^\"hypot_cpu\" not implemented for 'Long'"):
        minigrad.hypot(i, i)


def test_random_fills_of_integer_tensors_are_refused():
    with pytest.raises(NotImplementedError, match="^\"check_uniform_bounds\" not implemented for 'Long'"):
        minigrad.zeros(2, dtype=minigrad.int64).uniform_()
    with pytest.raises(NotImplementedError, match="^\"normal_kernel_cpu\" not implemented for 'Bool'"):
        minigrad.zeros(2, dtype=minigrad.bool).normal_()


# --- the same on PyTorch ----------------------------------------------------------------------------------------
SAME_AS_TORCH = [
    "torch.exp(torch.tensor([1, 2]))", "torch.tensor([1, 2], dtype=torch.uint8).log()", "torch.sigmoid(torch.tensor([1, -2]))",
    "torch.tanh(torch.tensor([True, False]))", "torch.sqrt(torch.tensor([4], dtype=torch.int32))",
    "torch.log1p(torch.tensor([0, 1]))", "torch.sign(torch.tensor([True, False]))",
    "torch.maximum(torch.tensor([3, -4]), torch.tensor([2.0, 1.5]))",
    "torch.minimum(torch.tensor([3, -4], dtype=torch.int32), torch.tensor([2.0, 1.5]))",
    "torch.floor_divide(torch.tensor([3, -4]), torch.tensor([2.0, 1.5]))", "torch.floor_divide(torch.tensor([3, -4]), 2.5)",
    "torch.xlogy(torch.tensor([0, 2]), torch.tensor([0, 3]))", "torch.xlogy(torch.tensor([True, False]), torch.tensor([2, 1]))",
    "torch.logaddexp(torch.tensor([1, 2]), torch.tensor([0.5, 1.5]))", "torch.tensor([200, 100], dtype=torch.uint8).sum()",
    "torch.cat([torch.tensor([1, 2]), torch.tensor([3.0])])", "torch.vstack([torch.tensor([1, 2]), torch.tensor([3.0, 4.0])])",
    "torch.stack([torch.tensor([1.0], dtype=torch.float64), torch.tensor([2])])",
    "torch.cat([torch.tensor([]), torch.ones(2, 2)])", "torch.cat([torch.zeros(0, dtype=torch.int64), torch.ones(1, 2)], 1)",
    "torch.ones(3).index_fill_(0, torch.tensor([-1]), 2.0)",
]


@pytest.mark.parametrize("source", SAME_AS_TORCH)
def test_values_and_dtypes_match_torch(source):
    torch = pytest.importorskip("torch")
    mine, theirs = eval(source, {"torch": minigrad}), eval(source, {"torch": torch})
    assert str(mine.dtype) == str(theirs.dtype) and tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.numpy().astype(np.float64), theirs.numpy().astype(np.float64), rtol=1e-6)
    assert repr(mine) == repr(theirs)


ERRORS = [
    "torch.cat([])", "torch.iinfo(torch.bool)", "torch.ones(2, dtype=torch.int64).uniform_()",
    "torch.ones(2, dtype=torch.int32).normal_()", "torch.tensor([1, 2]).exp_()", "torch.tensor([1, 2]).log_()",
    "torch.hypot(torch.tensor([1]), torch.tensor([2], dtype=torch.int32))",
    "torch.logaddexp(torch.tensor([1]), torch.tensor([True]))",
    "torch.gather(torch.ones(2, 2), 1, torch.tensor([[0.0]]))", "torch.scatter(torch.ones(3), 0, torch.tensor([0.0]), 1.0)",
    "torch.ones(3).index_add_(0, torch.tensor([5]), torch.ones(1))", "torch.ones(3).index_add_(0, torch.tensor([-1]), torch.ones(1))",
    "torch.ones(3, 2).index_add_(0, torch.tensor([3]), torch.ones(1, 2))",
    "torch.index_select(torch.ones(3), 0, torch.tensor([5]))", "torch.index_select(torch.ones(3, 2), 0, torch.tensor([-1]))",
    "torch.index_select(torch.ones(2, 3), 1, torch.tensor([3]))", "torch.ones(3).index_fill_(0, torch.tensor([-4]), 2.0)",
]


@pytest.mark.parametrize("source", ERRORS)
def test_errors_match_torch(source):
    check_error_matches_torch(source)


# --- p-norms other than 2 (p = inf was silently wrong: (|x| ** inf).sum() ** 0 = 1), and more rows ----------------
def Fn(T):
    return T.nn.functional


ROWS = [
    Row("norm-inf", lambda T, x: x.norm(float("inf")), [("d", (3, 4))]),
    Row("norm-inf-dim", lambda T, x: T.norm(x, p=float("inf"), dim=1, keepdim=True), [("d", (3, 4))]),
    Row("norm-neg-inf-dim", lambda T, x: x.norm(float("-inf"), dim=0), [("d", (3, 4))]),
    Row("norm-1", lambda T, x: x.norm(1, dim=1), [("a", (3, 4))]),
    Row("norm-3", lambda T, x: x.norm(3), [("a", (3, 4))]),
    Row("norm-fro-dims", lambda T, x: x.norm("fro", dim=(0, 2)), [("n", (2, 3, 4))]),
    Row("normalize-inf", lambda T, x: Fn(T).normalize(x, p=float("inf"), dim=1), [("d", (3, 4))]),
    # names of issue 12 whose oracle comparison lived only in the random-graph test
    Row("log1p", lambda T, x: T.log1p(x), [("p", (3, 4))]),
    Row("in-place-log", lambda T, x: (x * 1).log_() * 2, [("p", (3, 4))]),
    Row("maximum-int-operand", lambda T, x: T.maximum(x, T.tensor([0, 1, -1, 2])), [("a", (3, 4))]),
    Row("cat-legacy-empty", lambda T, x, e: T.cat([e, x, e * 2]) * 2, [("n", (2, 3)), ("n", (0,))]),
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


def test_norm_values():
    x = minigrad.tensor([[3.0, -4.0, 0.0], [1.0, 1.0, -1.0]])
    assert x.norm(float("inf")).item() == 4.0 and x.norm(float("-inf"), dim=1).tolist() == [0.0, 1.0]
    assert x.norm(0, dim=1).tolist() == [2.0, 3.0] and x.norm(1).item() == 10.0
    assert minigrad.nn.functional.normalize(x, p=float("inf")).tolist()[0] == [0.75, -1.0, 0.0]
    with pytest.raises(RuntimeError, match="^linalg.vector_norm: Expected a floating point or complex tensor"):
        minigrad.tensor([1, 2]).norm()
    with pytest.raises(NotImplementedError, match="p='nuc'"):
        x.norm("nuc")


# --- // and % (Tensor had neither) -------------------------------------------------------------------------------
OPERATORS = ["torch.tensor([5, -3]) // 2", "7 // torch.tensor([2, 3])", "torch.tensor([5.0, -3.0]) // 2",
             "torch.tensor([5, -3]) % 2", "7 % torch.tensor([2, -3])", "torch.tensor([5.0, -3.0]) % 1.5",
             "torch.tensor([5.0, -3.0], requires_grad=True) % 2", "2.5 % torch.tensor([5.0, -3.0], requires_grad=True)",
             "torch.tensor([5, -3]) // torch.tensor([2.0, 2.0])"]


def test_floor_division_and_modulo_operators():
    x = minigrad.tensor([5.0, -3.0], requires_grad=True)
    assert (x // 2).tolist() == [2.0, -2.0] and (7 // minigrad.tensor([2, 3])).tolist() == [3, 2]
    y = x % 2
    assert y.tolist() == [1.0, 1.0] and y.grad_fn.name() == "RemainderBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    i = minigrad.tensor([5, 7])
    i //= 2
    assert i.tolist() == [2, 3] and i.dtype == minigrad.int64


@pytest.mark.parametrize("source", OPERATORS)
def test_operators_match_torch(source):
    torch = pytest.importorskip("torch")
    mine, theirs = eval(source, {"torch": minigrad}), eval(source, {"torch": torch})
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("source", ["torch.where(torch.tensor([True, False]), torch.tensor([1, 2]), torch.tensor([0.5, 1.5]))",
                                    "torch.where(torch.tensor([True, False]), torch.tensor([1, 2]), 2.5)",
                                    "torch.where(torch.tensor([True, False]), 1.0, 0.0)",
                                    "torch.where(torch.tensor([True, False]), 1, 0)",
                                    "torch.where(torch.tensor([True, False]), torch.tensor([0.5, 1.5]), 2)"])
def test_where_promotes_as_torch(source):
    torch = pytest.importorskip("torch")
    assert repr(eval(source, {"torch": minigrad})) == repr(eval(source, {"torch": torch}))


def test_where_of_int_and_float_is_float32_and_differentiable():
    f = minigrad.tensor([0.5, 1.5], requires_grad=True)
    y = minigrad.where(minigrad.tensor([True, False]), minigrad.tensor([1, 2]), f)
    assert y.dtype == minigrad.float32 and y.tolist() == [1.0, 1.5]
    y.sum().backward()
    assert f.grad.tolist() == [0.0, 1.0]
    assert minigrad.where(minigrad.tensor([True]), 1.0, 0.0).dtype == minigrad.float32
