"""``minigrad.linalg``: the linear algebra of ``torch.linalg`` that minigrad implements (differentiable):
inv, det, solve, norms, cross, matrix_power, multi_dot."""
from __future__ import annotations

from ._ops import matmul as _matmul
from ._ops.matrix import _LinAlgError as LinAlgError  # noqa: F401
from ._ops.matrix import cross as _cross
from ._ops.matrix import det, matrix_power, solve  # noqa: F401
from ._ops.matrix import inverse as inv
from ._tensor import Tensor


def vector_norm(x: Tensor, ord: float = 2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """(sum |x|^ord)^(1/ord) over ``dim`` (all elements by default); ord inf / -inf: max / min of |x|."""
    if dtype is not None:
        x = x.to(dtype)
    if ord == float("inf"):
        return x.abs().amax(dim, keepdim)
    if ord == float("-inf"):
        return x.abs().amin(dim, keepdim)
    if ord == 0:
        return (x != 0).to(x.dtype).sum(dim, keepdim)
    return x.norm(ord, dim, keepdim)


def matrix_norm(a: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False) -> Tensor:  # noqa: A002
    if ord != "fro":
        raise NotImplementedError(f"minigrad.linalg.matrix_norm implements ord='fro' only (got {ord!r}).\nFor "
                                  "spectral or nuclear norms use numpy.linalg.norm on a.detach().numpy().")
    return a.norm(2, dim, keepdim)


def norm(a: Tensor, ord=None, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A002
    if ord is None or (isinstance(ord, (int, float)) and (dim is None or isinstance(dim, int) or len(dim) == 1)):
        return vector_norm(a, 2 if ord is None else ord, dim, keepdim)
    return matrix_norm(a, ord, dim if dim is not None else (-2, -1), keepdim)


def cross(a: Tensor, b: Tensor, dim: int = -1) -> Tensor:
    return _cross(a, b, dim)


def multi_dot(tensors) -> Tensor:
    out = tensors[0]
    for t in tensors[1:]:
        out = _matmul(out, t)
    return out


def __getattr__(name: str):
    from ._unsupported import missing

    raise missing(f"linalg.{name}", [n for n in globals() if not n.startswith("_")])
