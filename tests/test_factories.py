"""Factories, dtypes, seeding, shapes and conversions behave as PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad


@pytest.fixture
def default_float64():
    minigrad.set_default_dtype(minigrad.float64)
    yield
    minigrad.set_default_dtype(minigrad.float32)


# --- dtypes -----------------------------------------------------------------------------------------
DTYPE_CASES = [
    ("minigrad.tensor([1.0, 2.0])", "float32"),
    ("minigrad.tensor(1.5)", "float32"),
    ("minigrad.tensor([1, 2])", "int64"),
    ("minigrad.tensor(3)", "int64"),
    ("minigrad.tensor([True, False])", "bool"),
    ("minigrad.tensor([1, 2.5])", "float32"),
    ("minigrad.tensor([[1, 2], [3, 4]], dtype=minigrad.float64)", "float64"),
    ("minigrad.tensor([1.7, -2.2], dtype=minigrad.long)", "int64"),
    ("minigrad.zeros(2, 3)", "float32"),
    ("minigrad.ones(2)", "float32"),
    ("minigrad.empty(2)", "float32"),
    ("minigrad.randn(2)", "float32"),
    ("minigrad.rand(2)", "float32"),
    ("minigrad.randint(0, 5, (3,))", "int64"),
    ("minigrad.arange(5)", "int64"),
    ("minigrad.arange(0, 1, 0.25)", "float32"),
    ("minigrad.arange(5.0)", "float32"),
    ("minigrad.linspace(0, 1, 5)", "float32"),
    ("minigrad.eye(3)", "float32"),
    ("minigrad.full((2,), 1.5)", "float32"),
    ("minigrad.full((2,), 3)", "int64"),
    ("minigrad.full((2,), True)", "bool"),
    ("minigrad.zeros(2, dtype=minigrad.int64)", "int64"),
    ("minigrad.ones(2, dtype=minigrad.double)", "float64"),
    ("minigrad.zeros_like(minigrad.arange(3))", "int64"),
    ("minigrad.ones_like(minigrad.zeros(2, dtype=minigrad.float64))", "float64"),
    ("minigrad.full_like(minigrad.zeros(2), 7)", "float32"),
    ("minigrad.randn_like(minigrad.zeros(2, dtype=minigrad.float64))", "float64"),
    ("minigrad.tensor([1.0]) + minigrad.tensor([1])", "float32"),
    ("minigrad.tensor([1]) * 2.5", "float32"),
    ("minigrad.tensor([1, 2]) + 1", "int64"),
    ("minigrad.tensor([1.0], dtype=minigrad.float64) * minigrad.tensor([2.0])", "float64"),
    ("minigrad.tensor([2.0]) / 3", "float32"),
    ("minigrad.tensor([1.0]).sum()", "float32"),
    ("minigrad.tensor([True, True]).sum()", "int64"),
    ("minigrad.tensor([1, 2]).sum()", "int64"),
    ("minigrad.tensor([1.0]) > 0", "bool"),
]


@pytest.mark.parametrize("expr, name", DTYPE_CASES, ids=[e.replace("minigrad.", "") for e, _ in DTYPE_CASES])
def test_dtypes(expr, name):
    t = eval(expr, {"minigrad": minigrad})
    assert t.dtype is getattr(minigrad, name)
    assert t.dtype.name == name


@pytest.mark.parametrize("expr, name", DTYPE_CASES, ids=[e.replace("minigrad.", "") for e, _ in DTYPE_CASES])
def test_dtypes_match_torch(expr, name):
    torch = pytest.importorskip("torch")
    t = eval(expr.replace("minigrad.", "torch."), {"torch": torch})
    assert str(t.dtype) == f"torch.{name}"


def test_dtype_objects():
    assert repr(minigrad.float32) == "torch.float32"
    assert minigrad.float is minigrad.float32
    assert minigrad.double is minigrad.float64
    assert minigrad.long is minigrad.int64
    assert minigrad.float32.is_floating_point and not minigrad.int64.is_floating_point
    assert minigrad.get_default_dtype() is minigrad.float32


def test_set_default_dtype(default_float64):
    assert minigrad.get_default_dtype() is minigrad.float64
    assert minigrad.tensor([1.5]).dtype is minigrad.float64
    assert minigrad.zeros(2).dtype is minigrad.float64
    assert minigrad.randn(2).dtype is minigrad.float64
    assert minigrad.arange(0, 1, 0.5).dtype is minigrad.float64
    assert minigrad.tensor([1]).dtype is minigrad.int64  # ints are unaffected


def test_set_default_dtype_rejects_non_floating():
    with pytest.raises(TypeError, match="floating"):
        minigrad.set_default_dtype(minigrad.int64)
    assert minigrad.get_default_dtype() is minigrad.float32


def test_python_floats_go_straight_to_the_requested_dtype():
    x = minigrad.tensor([0.2, 1 / 3], dtype=minigrad.float64)
    assert x.tolist() == [0.2, 1 / 3]  # not rounded through float32 on the way
    assert minigrad.tensor(0.1, dtype=minigrad.float64).item() == 0.1
    assert minigrad.tensor([[0.1]], dtype=minigrad.double, requires_grad=True).item() == 0.1
    assert minigrad.tensor(np.array([1.5]), dtype=minigrad.float32).dtype is minigrad.float32


def test_numpy_dtypes_are_kept():
    assert minigrad.tensor(np.array([1, 2], dtype=np.int32)).dtype is minigrad.int32
    assert minigrad.tensor(np.array([1.0], dtype=np.float64)).dtype is minigrad.float64
    assert minigrad.from_numpy(np.zeros(2, dtype=np.float32)).dtype is minigrad.float32


# --- values -------------------------------------------------------------------------------------------
def test_factory_values():
    assert minigrad.zeros(2, 2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert minigrad.ones(3).tolist() == [1.0, 1.0, 1.0]
    assert minigrad.full((2, 1), 4.0).tolist() == [[4.0], [4.0]]
    assert minigrad.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert minigrad.arange(3).tolist() == [0, 1, 2]
    assert minigrad.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert minigrad.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert minigrad.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert minigrad.full_like(minigrad.zeros(2), 7).tolist() == [7.0, 7.0]
    r = minigrad.rand(1000)
    assert 0 <= r.min().item() and r.max().item() < 1
    ri = minigrad.randint(3, 6, (500,))
    assert set(ri.tolist()) == {3, 4, 5}
    assert set(minigrad.randint(2, (100,)).tolist()) == {0, 1}
    assert sorted(minigrad.randperm(5).tolist()) == [0, 1, 2, 3, 4]


def test_tensor_copies_but_from_numpy_shares():
    a = np.array([1.0, 2.0], dtype=np.float32)
    t, f = minigrad.tensor(a), minigrad.from_numpy(a)
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]
    assert f.tolist() == [9.0, 2.0]
    f.add_(1)
    assert a.tolist() == [10.0, 3.0]


def test_tensor_from_tensors_and_nested_lists():
    assert minigrad.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    t = minigrad.tensor([1.0, 2.0], requires_grad=True)
    c = minigrad.tensor(t)
    assert not c.requires_grad and c.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="expected sequence"):  # PyTorch raises ValueError too
        minigrad.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match="too many dimensions 'str'"):  # PyTorch's error, word for word
        minigrad.tensor(["a", "b"])


def test_tensor_constructor_class():
    t = minigrad.Tensor([1, 2])
    assert t.dtype is minigrad.float32 and t.tolist() == [1.0, 2.0]
    assert minigrad.is_tensor(t) and not minigrad.is_tensor([1])


def test_factories_requires_grad():
    for t in (minigrad.zeros(2, requires_grad=True), minigrad.randn(2, 2, requires_grad=True),
              minigrad.tensor([1.0], requires_grad=True), minigrad.ones_like(minigrad.zeros(1), requires_grad=True),
              minigrad.linspace(0, 1, 3, requires_grad=True), minigrad.full((1,), 2.0, requires_grad=True)):
        assert t.requires_grad and t.is_leaf and t.grad is None


# --- seeding ----------------------------------------------------------------------------------------------
def test_manual_seed_reproducibility():
    minigrad.manual_seed(0)
    a, b, c = minigrad.randn(3), minigrad.rand(2, 2), minigrad.randint(0, 100, (4,))
    minigrad.manual_seed(0)
    assert minigrad.randn(3).equal(a)
    assert minigrad.rand(2, 2).equal(b)
    assert minigrad.randint(0, 100, (4,)).equal(c)
    minigrad.manual_seed(1)
    assert not minigrad.randn(3).equal(a)


def test_manual_seed_stream_continues():
    minigrad.manual_seed(42)
    first, second = minigrad.randn(4), minigrad.randn(4)
    assert not first.equal(second)
    minigrad.manual_seed(42)
    minigrad.randn(4)
    assert minigrad.randn(4).equal(second)


def test_randn_statistics():
    minigrad.manual_seed(3)
    x = minigrad.randn(20000).double()
    assert abs(x.mean().item()) < 0.05
    assert abs(x.std().item() - 1) < 0.05


# --- shapes -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "randn", "rand"])
def test_shape_arguments(factory):
    f = getattr(minigrad, factory)
    for args in [(2, 3), ((2, 3),), ([2, 3],), (minigrad.Size([2, 3]),)]:
        assert f(*args).shape == (2, 3)
    assert f().shape == ()
    assert f(0).shape == (0,)
    assert f(4).shape == (4,)


def test_bad_shapes():
    with pytest.raises(TypeError):
        minigrad.zeros(2.5)
    with pytest.raises(TypeError):
        minigrad.ones(-1)


def test_size():
    x = minigrad.zeros(2, 3)
    s = x.shape
    assert repr(s) == "torch.Size([2, 3])" and str(s) == "torch.Size([2, 3])"
    assert repr(minigrad.tensor(1.0).shape) == "torch.Size([])"
    assert isinstance(s, tuple) and s == (2, 3) and s[1] == 3
    assert x.size() == s and x.size(0) == 2 and x.size(-1) == 3
    assert s.numel() == 6 and x.numel() == 6 and x.dim() == 2 and x.ndim == 2
    assert len(x) == 2
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.size(2)


# --- conversions ----------------------------------------------------------------------------------------------
def test_numpy_conversion():
    x = minigrad.tensor([1.0, 2.0])
    arr = x.numpy()
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
    arr[0] = 5.0  # shares memory, as in PyTorch
    assert x[0].item() == 5.0
    y = minigrad.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        y.numpy()
    assert y.detach().numpy().tolist() == [1.0]
    assert np.asarray(x).tolist() == [5.0, 2.0]


def test_item_and_python_numbers():
    assert minigrad.tensor(2.5).item() == 2.5
    assert isinstance(minigrad.tensor([3]).item(), int)
    assert float(minigrad.tensor([1.5])) == 1.5 and int(minigrad.tensor(7)) == 7
    assert bool(minigrad.tensor([True]))
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        minigrad.tensor([1.0, 2.0]).item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(minigrad.tensor([1.0, 2.0]))
    assert minigrad.tensor(1.0, requires_grad=True).item() == 1.0


def test_tolist():
    assert minigrad.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert minigrad.tensor(2.0).tolist() == 2.0
    assert minigrad.tensor([1.0], requires_grad=True).tolist() == [1.0]


def test_to_and_dtype_methods():
    x = minigrad.tensor([1.7, -2.2])
    assert x.to(minigrad.float32) is x  # same dtype: no copy
    assert x.to(minigrad.float64).dtype is minigrad.float64
    assert x.to(dtype=minigrad.float64).dtype is minigrad.float64
    assert x.to(minigrad.tensor([1])).dtype is minigrad.int64
    assert x.double().dtype is minigrad.float64
    assert x.float().dtype is minigrad.float32
    assert x.long().tolist() == [1, -2]  # truncation toward zero, as in PyTorch
    assert x.bool().tolist() == [True, True]
    assert minigrad.tensor([0.0, 1.0]).bool().tolist() == [False, True]
    assert minigrad.tensor([1, 0]).float().tolist() == [1.0, 0.0]
    assert x.type() == "torch.FloatTensor" and x.double().type() == "torch.DoubleTensor"


def test_dtype_conversion_is_differentiable():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype is minigrad.float32
    assert x.grad.tolist() == [2.0, 4.0]


def test_like_factories_keep_shape_and_dtype():
    x = minigrad.zeros(2, 3, dtype=minigrad.float64)
    for f in (minigrad.zeros_like, minigrad.ones_like, minigrad.randn_like, minigrad.rand_like, minigrad.empty_like):
        y = f(x)
        assert y.shape == (2, 3) and y.dtype is minigrad.float64
    assert minigrad.zeros_like(x, dtype=minigrad.int64).dtype is minigrad.int64


def test_clone_and_contiguous():
    x = minigrad.tensor([1.0, 2.0])
    c = x.clone()
    c[0] = 3.0
    assert x.tolist() == [1.0, 2.0]
    assert x.contiguous() is x


def test_pickle_round_trip():
    import pickle

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == [1.0, 2.0] and y.requires_grad and y.is_leaf
    assert pickle.loads(pickle.dumps(minigrad.float64)) is minigrad.float64


def test_new_factories_keep_the_dtype():
    x = minigrad.ones(2, dtype=minigrad.float32)
    assert x.new_zeros(2, 3).dtype == minigrad.float32 and x.new_zeros((2, 3)).shape == (2, 3)
    assert x.new_ones(3).tolist() == [1.0, 1.0, 1.0]
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0] and x.new_full((2,), 7).dtype == minigrad.float32
    assert x.new_tensor([1, 2]).dtype == minigrad.float32
    assert x.new_empty(0).shape == (0,)
    assert x.new_zeros(2, dtype=minigrad.int64).dtype == minigrad.int64
    assert x.new_zeros(2, requires_grad=True).requires_grad
    i = minigrad.tensor([1, 2])
    assert i.new_ones(2).dtype == minigrad.int64
