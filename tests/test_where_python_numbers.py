"""torch.where with two Python numbers gives PyTorch's dtypes (a float takes the default dtype)."""
import pytest

import minigrad


@pytest.mark.parametrize("a, b, want", [(1.0, -1.0, "float32"), (1, -1.5, "float32"), (1, -1, "int64"),
                                        (True, False, "bool")])
def test_two_numbers(a, b, want):
    cond = minigrad.tensor([True, False])
    out = minigrad.where(cond, a, b)
    assert str(out.dtype) == f"torch.{want}"
    assert out.tolist() == [a, b]


def test_default_dtype_is_followed():
    old = minigrad.get_default_dtype()
    minigrad.set_default_dtype(minigrad.float64)
    try:
        assert minigrad.where(minigrad.tensor([True]), 1.0, 0.0).dtype == minigrad.float64
    finally:
        minigrad.set_default_dtype(old)


def test_same_as_pytorch():
    torch = pytest.importorskip("torch")
    for a, b in [(1.0, -1.0), (2, 3), (1, 0.5), (True, False)]:
        ours = minigrad.where(minigrad.tensor([True, False]), a, b)
        theirs = torch.where(torch.tensor([True, False]), a, b)
        assert str(ours.dtype) == str(theirs.dtype) and ours.tolist() == theirs.tolist()
