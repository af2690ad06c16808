"""repr/str of tensors read exactly like PyTorch's (the book prints tensors everywhere).

EXPECTED holds PyTorch 2.13's output for each expression (recorded once from torch); the
optional oracle test recomputes it with torch when torch is installed."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad

EXPECTED = [
    ('max-dim', 'minigrad.tensor([[1., 3.], [4., 2.]], requires_grad=True).max(1)',
     'torch.return_types.max(\nvalues=tensor([3., 4.], grad_fn=<MaxBackward0>),\nindices=tensor([1, 0]))'),
    ('min-dim', 'minigrad.tensor([[1, 3], [4, 2]]).min(dim=0, keepdim=True)',
     'torch.return_types.min(\nvalues=tensor([[1, 2]]),\nindices=tensor([[0, 1]]))'),
    ('ints', 'minigrad.tensor([1, 2, 3])',
     'tensor([1, 2, 3])'),
    ('int-neg', 'minigrad.tensor([[-10, 2], [3, 400]])',
     'tensor([[-10,   2],\n        [  3, 400]])'),
    ('float-intmode', 'minigrad.tensor([2., 2., 2.])',
     'tensor([2., 2., 2.])'),
    ('float-4dec', 'minigrad.tensor([0.1, 2.5, -3.25])',
     'tensor([ 0.1000,  2.5000, -3.2500])'),
    ('float-4dec-round', 'minigrad.tensor([1/3, 2/3])',
     'tensor([0.3333, 0.6667])'),
    ('sci-small', 'minigrad.tensor([1e-5, 1.0])',
     'tensor([1.0000e-05, 1.0000e+00])'),
    ('sci-large', 'minigrad.tensor([1e9, 1.0])',
     'tensor([1.0000e+09, 1.0000e+00])'),
    ('sci-ratio', 'minigrad.tensor([0.001, 10.5])',
     'tensor([1.0000e-03, 1.0500e+01])'),
    ('int-sci', 'minigrad.tensor([1., 1e9])',
     'tensor([1.0000e+00, 1.0000e+09])'),
    ('float64', 'minigrad.tensor([1.5, 2.0], dtype=minigrad.float64)',
     'tensor([1.5000, 2.0000], dtype=torch.float64)'),
    ('float64-int', 'minigrad.tensor([1., 2.], dtype=minigrad.float64)',
     'tensor([1., 2.], dtype=torch.float64)'),
    ('scalar', 'minigrad.tensor(3.5)',
     'tensor(3.5000)'),
    ('scalar-int', 'minigrad.tensor(7)',
     'tensor(7)'),
    ('scalar-f64', 'minigrad.tensor(2., dtype=minigrad.float64)',
     'tensor(2., dtype=torch.float64)'),
    ('req-grad', 'minigrad.tensor([1., 2.], requires_grad=True)',
     'tensor([1., 2.], requires_grad=True)'),
    ('grad-fn', 'minigrad.tensor([1., 2.], requires_grad=True) * 2',
     'tensor([2., 4.], grad_fn=<MulBackward0>)'),
    ('f64-grad-fn', 'minigrad.tensor([1., 2.], dtype=minigrad.float64, requires_grad=True).exp()',
     'tensor([2.7183, 7.3891], dtype=torch.float64, grad_fn=<ExpBackward0>)'),
    ('2d', 'minigrad.tensor([[1.5, 2.25], [3., 4.]])',
     'tensor([[1.5000, 2.2500],\n        [3.0000, 4.0000]])'),
    ('3d', 'minigrad.arange(24).reshape(2, 3, 4)',
     'tensor([[[ 0,  1,  2,  3],\n         [ 4,  5,  6,  7],\n         [ 8,  9, 10, 11]],\n\n        [[12, 13, 14, 15],\n         [16, 17, 18, 19],\n         [20, 21, 22, 23]]])'),
    ('3d-float', 'minigrad.arange(24).reshape(2, 3, 4).float() / 7',
     'tensor([[[0.0000, 0.1429, 0.2857, 0.4286],\n         [0.5714, 0.7143, 0.8571, 1.0000],\n         [1.1429, 1.2857, 1.4286, 1.5714]],\n\n        [[1.7143, 1.8571, 2.0000, 2.1429],\n         [2.2857, 2.4286, 2.5714, 2.7143],\n         [2.8571, 3.0000, 3.1429, 3.2857]]])'),
    ('empty', 'minigrad.tensor([])',
     'tensor([])'),
    ('empty-2d', 'minigrad.zeros(0, 3)',
     'tensor([], size=(0, 3))'),
    ('empty-int', 'minigrad.zeros(0, dtype=minigrad.int64)',
     'tensor([], dtype=torch.int64)'),
    ('big-1d', 'minigrad.arange(2000)',
     'tensor([   0,    1,    2,  ..., 1997, 1998, 1999])'),
    ('big-2d', 'minigrad.arange(4000).reshape(40, 100)',
     'tensor([[   0,    1,    2,  ...,   97,   98,   99],\n        [ 100,  101,  102,  ...,  197,  198,  199],\n        [ 200,  201,  202,  ...,  297,  298,  299],\n        ...,\n        [3700, 3701, 3702,  ..., 3797, 3798, 3799],\n        [3800, 3801, 3802,  ..., 3897, 3898, 3899],\n        [3900, 3901, 3902,  ..., 3997, 3998, 3999]])'),
    ('big-2d-float', 'minigrad.arange(1200.).reshape(30, 40) * 0.5',
     'tensor([[0.0000e+00, 5.0000e-01, 1.0000e+00,  ..., 1.8500e+01, 1.9000e+01,\n         1.9500e+01],\n        [2.0000e+01, 2.0500e+01, 2.1000e+01,  ..., 3.8500e+01, 3.9000e+01,\n         3.9500e+01],\n        [4.0000e+01, 4.0500e+01, 4.1000e+01,  ..., 5.8500e+01, 5.9000e+01,\n         5.9500e+01],\n        ...,\n        [5.4000e+02, 5.4050e+02, 5.4100e+02,  ..., 5.5850e+02, 5.5900e+02,\n         5.5950e+02],\n        [5.6000e+02, 5.6050e+02, 5.6100e+02,  ..., 5.7850e+02, 5.7900e+02,\n         5.7950e+02],\n        [5.8000e+02, 5.8050e+02, 5.8100e+02,  ..., 5.9850e+02, 5.9900e+02,\n         5.9950e+02]])'),
    ('bool', 'minigrad.tensor([True, False, True])',
     'tensor([ True, False,  True])'),
    ('bool-2d', 'minigrad.tensor([[True], [False]])',
     'tensor([[ True],\n        [False]])'),
    ('nan-inf', "minigrad.tensor([float('nan'), float('inf'), -float('inf'), 1.5])",
     'tensor([   nan,    inf,   -inf, 1.5000])'),
    ('nan-int', "minigrad.tensor([float('nan'), 2.0])",
     'tensor([nan, 2.])'),
    ('zeros', 'minigrad.zeros(3)',
     'tensor([0., 0., 0.])'),
    ('neg-zero', 'minigrad.tensor([-0.0, 1.0])',
     'tensor([-0., 1.])'),
    ('long-row', 'minigrad.arange(30.) * 1.5',
     'tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])'),
    ('grad-suffix-wrap', '(minigrad.arange(20., requires_grad=True) * 1.123456)',
     'tensor([ 0.0000,  1.1235,  2.2469,  3.3704,  4.4938,  5.6173,  6.7407,  7.8642,\n         8.9876, 10.1111, 11.2346, 12.3580, 13.4815, 14.6049, 15.7284, 16.8518,\n        17.9753, 19.0988, 20.2222, 21.3457], grad_fn=<MulBackward0>)'),
    ('f64-wrap', 'minigrad.arange(18., dtype=minigrad.float64) / 7',
     'tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286],\n       dtype=torch.float64)'),
    ('mixed-sign', 'minigrad.tensor([-1.25, 0.0, 3.5])',
     'tensor([-1.2500,  0.0000,  3.5000])'),
    ('0d-req', 'minigrad.tensor(1.5, requires_grad=True)',
     'tensor(1.5000, requires_grad=True)'),
    ('sum-grad', '(minigrad.tensor([1., 2.], requires_grad=True) * 3).sum()',
     'tensor(9., grad_fn=<SumBackward0>)'),
    ('size', 'minigrad.zeros(2, 3).shape',
     'torch.Size([2, 3])'),
    ('size-0d', 'minigrad.tensor(1.).shape',
     'torch.Size([])'),
    ('dtype', 'minigrad.float32',
     'torch.float32'),
    ('empty-bool', 'minigrad.zeros(0, dtype=minigrad.bool)',
     'tensor([], dtype=torch.bool)'),
    ('all-zero-nan', "minigrad.tensor([0., float('nan')])",
     'tensor([0., nan])'),
    ('eye', 'minigrad.eye(3)',
     'tensor([[1., 0., 0.],\n        [0., 1., 0.],\n        [0., 0., 1.]])'),
]


@pytest.mark.parametrize("expr, expected", [(e, x) for _, e, x in EXPECTED], ids=[k for k, _, _ in EXPECTED])
def test_repr_matches_pytorch(expr, expected):
    value = eval(expr, {"minigrad": minigrad})
    assert repr(value) == expected
    if isinstance(value, minigrad.Tensor):
        assert str(value) == expected


def test_print_uses_the_same_text(capsys):
    print(minigrad.tensor([0.0, 2.0, 0.0]))
    assert capsys.readouterr().out == "tensor([0., 2., 0.])\n"


def test_summarised_tensor_shows_edges_only():
    text = repr(minigrad.arange(5000))
    assert text.startswith("tensor([   0,    1,    2,  ..., 4997, 4998, 4999])")
    assert text.count("...") == 1
    assert "2500" not in text
    assert "..." not in repr(minigrad.arange(1000))  # the threshold is 1000 elements


def test_default_dtype_change_changes_the_suffix():
    minigrad.set_default_dtype(minigrad.float64)
    try:
        assert repr(minigrad.tensor([1.5])) == "tensor([1.5000])"
        assert repr(minigrad.tensor([1.5], dtype=minigrad.float32)) == "tensor([1.5000], dtype=torch.float32)"
    finally:
        minigrad.set_default_dtype(minigrad.float32)
    assert repr(minigrad.tensor([1.5])) == "tensor([1.5000])"


def test_format_of_0d_tensor():
    assert f"{minigrad.tensor(3.14159):.2f}" == "3.14"
    assert f"{minigrad.tensor([1.0, 2.0])}" == "tensor([1., 2.])"


def test_grad_and_leaf_reprs_after_backward():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert repr(x.grad) == "tensor([2., 4.])"
    assert repr(x.detach()) == "tensor([1., 2.])"
    with minigrad.no_grad():
        assert repr(x * 2) == "tensor([2., 4.])"


def test_repr_does_not_depend_on_memory_layout():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert repr(minigrad.from_numpy(a.T.copy())) == repr(minigrad.from_numpy(a).T)


# --- oracle: the same expressions printed by PyTorch itself --------------------------------------------
ALL_CASES = [
    ('max-dim', 'torch.tensor([[1., 3.], [4., 2.]], requires_grad=True).max(1)'),
    ('min-dim', 'torch.tensor([[1, 3], [4, 2]]).min(dim=0, keepdim=True)'),
    ('ints', 'torch.tensor([1, 2, 3])'),
    ('int-neg', 'torch.tensor([[-10, 2], [3, 400]])'),
    ('float-intmode', 'torch.tensor([2., 2., 2.])'),
    ('float-4dec', 'torch.tensor([0.1, 2.5, -3.25])'),
    ('float-4dec-round', 'torch.tensor([1/3, 2/3])'),
    ('sci-small', 'torch.tensor([1e-5, 1.0])'),
    ('sci-large', 'torch.tensor([1e9, 1.0])'),
    ('sci-ratio', 'torch.tensor([0.001, 10.5])'),
    ('int-sci', 'torch.tensor([1., 1e9])'),
    ('float64', 'torch.tensor([1.5, 2.0], dtype=torch.float64)'),
    ('float64-int', 'torch.tensor([1., 2.], dtype=torch.float64)'),
    ('scalar', 'torch.tensor(3.5)'),
    ('scalar-int', 'torch.tensor(7)'),
    ('scalar-f64', 'torch.tensor(2., dtype=torch.float64)'),
    ('req-grad', 'torch.tensor([1., 2.], requires_grad=True)'),
    ('grad-fn', 'torch.tensor([1., 2.], requires_grad=True) * 2'),
    ('f64-grad-fn', 'torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True).exp()'),
    ('2d', 'torch.tensor([[1.5, 2.25], [3., 4.]])'),
    ('3d', 'torch.arange(24).reshape(2, 3, 4)'),
    ('3d-float', 'torch.arange(24).reshape(2, 3, 4).float() / 7'),
    ('empty', 'torch.tensor([])'),
    ('empty-2d', 'torch.zeros(0, 3)'),
    ('empty-int', 'torch.zeros(0, dtype=torch.int64)'),
    ('big-1d', 'torch.arange(2000)'),
    ('big-float', 'torch.arange(1500).float() / 3'),
    ('big-2d', 'torch.arange(4000).reshape(40, 100)'),
    ('big-2d-float', 'torch.arange(1200.).reshape(30, 40) * 0.5'),
    ('bool', 'torch.tensor([True, False, True])'),
    ('bool-2d', 'torch.tensor([[True], [False]])'),
    ('nan-inf', "torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5])"),
    ('nan-int', "torch.tensor([float('nan'), 2.0])"),
    ('zeros', 'torch.zeros(3)'),
    ('neg-zero', 'torch.tensor([-0.0, 1.0])'),
    ('long-row', 'torch.arange(30.) * 1.5'),
    ('long-row-int', 'torch.arange(40)'),
    ('wide-2d', 'torch.arange(60.).reshape(3, 20) / 3'),
    ('grad-suffix-wrap', '(torch.arange(20., requires_grad=True) * 1.123456)'),
    ('f64-wrap', 'torch.arange(18., dtype=torch.float64) / 7'),
    ('int32', 'torch.tensor([1, 2], dtype=torch.int32)'),
    ('neg-sci', 'torch.tensor([-1e-8, 3.0])'),
    ('mixed-sign', 'torch.tensor([-1.25, 0.0, 3.5])'),
    ('large-int-float', 'torch.tensor([123456., 1.])'),
    ('1e8', 'torch.tensor([1e8, 1.])'),
    ('0d-req', 'torch.tensor(1.5, requires_grad=True)'),
    ('sum-grad', '(torch.tensor([1., 2.], requires_grad=True) * 3).sum()'),
    ('size', 'torch.zeros(2, 3).shape'),
    ('size-0d', 'torch.tensor(1.).shape'),
    ('dtype', 'torch.float32'),
    ('dtype64', 'torch.tensor([1.]).double().dtype'),
    ('float16', 'torch.tensor([1.5, 2.], dtype=torch.float16)'),
    ('linspace', 'torch.linspace(0, 1, 7)'),
    ('eye', 'torch.eye(3)'),
    ('4d', 'torch.ones(2, 1, 2, 2)'),
    ('all-zero-nan', "torch.tensor([0., float('nan')])"),
    ('all-nan', "torch.tensor([float('nan'), float('nan')])"),
    ('zero-big', 'torch.tensor([0., 100.])'),
    ('inf-int', "torch.tensor([float('inf'), 1., 20.])"),
    ('inf-sci', "torch.tensor([float('inf'), 1e-6, 20.])"),
    ('empty-bool', 'torch.zeros(0, dtype=torch.bool)'),
    ('empty-f64', 'torch.zeros(0, 2, dtype=torch.float64)'),
    ('empty-req', 'torch.zeros(0, requires_grad=True)'),
    ('zero-neg-4dec', 'torch.tensor([0., -0.5])'),
]


@pytest.mark.parametrize("expr", [e for _, e in ALL_CASES], ids=[k for k, _ in ALL_CASES])
def test_str_matches_torch_oracle(expr):
    torch = pytest.importorskip("torch")
    expected = str(eval(expr, {"torch": torch}))
    assert str(eval(expr, {"torch": minigrad})) == expected


@pytest.mark.parametrize("seed", range(10))
def test_random_tensors_print_like_torch(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, size=rng.integers(1, 4)))
    scale = 10.0 ** rng.integers(-6, 9)
    data = (rng.standard_normal(shape) * scale).astype(np.float32)
    if seed % 3 == 0:
        data = np.round(data)
    assert str(minigrad.from_numpy(data)) == str(torch.from_numpy(data))
    d64 = data.astype(np.float64)
    assert str(minigrad.from_numpy(d64)) == str(torch.from_numpy(d64))
