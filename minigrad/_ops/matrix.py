"""Matrix operations beyond matmul: addmm, mv, bmm, baddbmm, einsum (and tensordot, inner, kron
built on it), outer, trace, diag / diagonal / diag_embed, tril / triu, det, inverse, solve,
matrix_power, cross.

einsum is the general one: its gradient with respect to an operand is another einsum (the
output's gradient contracted with the other operands), so it is differentiable to any order.
"""
from __future__ import annotations

import string

import numpy as np

from .._functorch.batched import asarray as _asarray  # np.asarray, batched arrays kept (vmap)

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from ..autograd.grad_mode import _GradMode
from .linalg import _mm_error
from .reduction import _TORCH_TYPE

_wrap = Tensor._wrap


class _LinAlgError(RuntimeError):
    """PyTorch's ``torch.linalg.LinAlgError`` (a RuntimeError): a singular matrix where an inverse is needed."""


def _first_zero_pivot(m: np.ndarray) -> int:
    """The 1-based index of the first zero diagonal element of U in m's LU factorisation with partial pivoting
    (what LAPACK reports for a singular matrix). One Python step per column, on the error path only."""
    a = np.array(m, dtype=np.float64)
    n = a.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k:] -= np.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return n


def _square(op: str, a: Tensor) -> np.ndarray:
    x = a._data
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        if x.ndim < 2:
            raise RuntimeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are {x.shape[-2]} by "
                           f"{x.shape[-1]} matrices")
    if x.dtype.kind != "f":
        raise RuntimeError(f"linalg.{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_TORCH_TYPE.get(a.dtype.name, a.dtype.name)}")
    return x


def _inv_array(x: np.ndarray, op: str = "inv") -> np.ndarray:
    try:
        return np.linalg.inv(x)
    except np.linalg.LinAlgError:
        flat = x.reshape((-1,) + x.shape[-2:])
        for b, m in enumerate(flat):  # which matrix of the batch (error path only)
            try:
                np.linalg.inv(m)
            except np.linalg.LinAlgError:
                where = f"(Batch element {b}): " if x.ndim > 2 else ""
                raise _LinAlgError(
                    f"linalg.{op}: {where}The diagonal element {_first_zero_pivot(m)} is zero, the inversion could "
                    "not be completed because the input matrix is singular.\nA singular matrix has no inverse: "
                    "its rows are linearly dependent.") from None
        raise


class Inverse(Function):
    """inv(A); d inv = -inv dA inv, so the gradient is -inv^T g inv^T."""

    _node_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, a):
        out = _wrap(_inv_array(_square("inv", a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (inv,) = ctx.saved_tensors
        t = inv.mT
        return -(t @ g @ t)


def _cofactor_array(x: np.ndarray) -> np.ndarray:
    """The cofactor matrix (d det / dA), exact for singular matrices too: from the SVD A = U S V^T,
    cof(A) = det(U) det(V^T) U diag(prod of the other singular values) V^T."""
    u, s, vh = np.linalg.svd(x)
    from .product import _others_product

    others = _others_product(s, s.ndim - 1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return (u * others[..., None, :]) @ vh * sign[..., None, None]


class Det(Function):
    _node_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _square("det", a)
        out = _wrap(_asarray(np.linalg.det(x), dtype=x.dtype))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, det = ctx.saved_tensors
        gm = g.unsqueeze(-1).unsqueeze(-1)
        if not _GradMode.enabled:
            return _wrap(gm._data * _cofactor_array(a._data).astype(a._data.dtype))
        # recorded (second derivatives): det(A) inv(A)^T, which needs A invertible
        return gm * det.unsqueeze(-1).unsqueeze(-1) * Inverse.apply(a).mT


class Solve(Function):
    """X with A X = B; gradients: gB = A^-T g, gA = -gB X^T."""

    _node_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x = _square("solve", a)
        bd = b._data
        vector = bd.ndim == x.ndim - 1
        try:
            out = np.linalg.solve(x, bd[..., None] if vector else bd)
        except np.linalg.LinAlgError:
            _inv_array(x, "solve")
            raise
        out = _wrap(out[..., 0] if vector else out)
        ctx.vector = vector
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        gb = Solve.apply(a.mT, g)
        if ctx.vector:
            ga = -(gb.unsqueeze(-1) @ x.unsqueeze(-2))
        else:
            ga = -(gb @ x.mT)
        return ga, gb


class Addmm(Function):
    """beta * input + alpha * (mat1 @ mat2), mat1 and mat2 matrices."""

    _node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, c, a, b, beta, alpha):
        x, y = a._data, b._data
        if x.ndim != 2 or y.ndim != 2:
            raise RuntimeError(f"{'mat1' if x.ndim != 2 else 'mat2'} must be a matrix, got {x.ndim if x.ndim != 2 else y.ndim}-D "
                               "tensor")
        if x.shape[1] != y.shape[0]:
            raise _mm_error("addmm", x, y)
        ctx.save_for_backward(a, b)
        ctx.beta, ctx.alpha = beta, alpha
        prod = x @ y
        try:
            return _wrap(beta * c._data + alpha * prod if (beta != 1 or alpha != 1) else c._data + prod)
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({prod.shape[-1]}) must match the existing size "
                               f"({c._data.shape[-1]}) at non-singleton dimension 1.  Target sizes: "
                               f"{list(prod.shape)}.  Tensor sizes: {list(c._data.shape)}") from None

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        gc = g * ctx.beta if need[0] and ctx.beta != 1 else g if need[0] else None
        ga = (g @ b.mT) * ctx.alpha if need[1] else None
        gb = (a.mT @ g) * ctx.alpha if need[2] else None
        return gc, ga, gb, None, None


class Mv(Function):
    _node_name = "MvBackward0"

    @staticmethod
    def forward(ctx, m, v):
        x, y = m._data, v._data
        if x.ndim != 2 or y.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got {y.ndim}, {x.ndim}, {y.ndim}")
        if x.shape[1] != y.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), vec "
                               f"({y.shape[0]})")
        ctx.save_for_backward(m, v)
        return _wrap(x @ y)

    @staticmethod
    def backward(ctx, g):
        m, v = ctx.saved_tensors
        return g.unsqueeze(-1) * v, m.mT @ g


class Bmm(Function):
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting)."""

    _node_name = "BmmBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor")
        if y.ndim != 3:
            raise RuntimeError("batch2 must be a 3D tensor")
        if y.shape[:2] != (x.shape[0], x.shape[2]):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{x.shape[0]}, "
                               f"{x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}].")
        ctx.save_for_backward(a, b)
        return _wrap(np.matmul(x, y))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (Bmm.apply(g, b.mT) if need[0] else None), (Bmm.apply(a.mT, g) if need[1] else None)


class Trace(Function):
    _node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
        ctx.shape = x.shape
        return _wrap(_asarray(np.trace(x), dtype=np.int64 if x.dtype.kind in "biu" else x.dtype))

    @staticmethod
    def backward(ctx, g):
        return g * _wrap(np.eye(*ctx.shape, dtype=g._data.dtype))


def _diag_index(shape: tuple, offset: int, d1: int, d2: int) -> tuple:
    """The NumPy index of the elements (i, i + offset) of dims d1, d2 (the diagonal moved last, as PyTorch)."""
    n1, n2 = shape[d1], shape[d2]
    start1, start2 = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(min(n1 - start1, n2 - start2), 0)
    k = np.arange(length)
    return k + start1, k + start2


class Diagonal(Function):
    """The diagonal ``offset`` of dims ``dim1``, ``dim2`` (a view, the diagonal as the last dim)."""

    _node_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        x = a._data
        n = x.ndim
        d1, d2 = _wrap_dim(d1, n, "diagonal"), _wrap_dim(d2, n, "diagonal")
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {d1}, {d2}")
        ctx.shape, ctx.offset, ctx.d1, ctx.d2 = x.shape, offset, d1, d2
        return a._view_of(diagonal_view(x, offset, d1, d2), ("diagonal", offset, d1, d2))

    @staticmethod
    def backward(ctx, g):
        return DiagonalScatter.apply(g, ctx.shape, ctx.offset, ctx.d1, ctx.d2), None, None, None


def diagonal_view(x: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """np.diagonal's view, made writable when x is (NumPy hands it out read-only; PyTorch's diagonal is writable)."""
    view = np.diagonal(x, offset, d1, d2)
    if x.flags.writeable:
        view.flags.writeable = True
    return view


class DiagonalScatter(Function):
    """Zeros of ``shape`` with ``g`` written on the diagonal (diagonal's backward; its own is diagonal)."""

    _node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, g, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        out = np.zeros_like(g._data, shape=shape)
        diagonal_view(out, offset, d1, d2)[...] = g._data
        return _wrap(out)

    @staticmethod
    def backward(ctx, gg):
        offset, d1, d2 = ctx.args
        return Diagonal.apply(gg, offset, d1, d2), None, None, None, None


class Tril(Function):
    _node_name = "TrilBackward0"
    fn = staticmethod(np.tril)

    @classmethod
    def forward(cls, ctx, a, k):
        x = a._data
        if x.ndim < 2:
            raise RuntimeError(f"{cls.__name__.lower()}: input tensor must have at least 2 dimensions")
        ctx.k = k
        return _wrap(cls.fn(x, k))

    @classmethod
    def backward(cls, ctx, g):
        return cls.apply(g, ctx.k), None


class Triu(Tril):
    _node_name = "TriuBackward0"
    fn = staticmethod(np.triu)


class Cross(Function):
    _node_name = "LinalgCrossBackward0"

    @staticmethod
    def forward(ctx, a, b, dim):
        if a._data.ndim != b._data.ndim:
            raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.\ncross: got shapes "
                               f"{list(a._data.shape)} and {list(b._data.shape)}.")
        try:
            x, y = np.broadcast_arrays(a._data, b._data)
        except ValueError:
            from .arithmetic import _broadcast_error

            raise _broadcast_error("cross", a._data, b._data) from None
        d = _wrap_dim(dim, x.ndim, "cross")
        if x.shape[d] != 3 or y.shape[d] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {x.shape[d]} and "
                               f"{y.shape[d]}")
        ctx.d = d
        ctx.save_for_backward(a, b)
        return _wrap(np.cross(x, y, axis=d))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return Cross.apply(b, g, ctx.d), Cross.apply(g, a, ctx.d), None


# --- einsum --------------------------------------------------------------------------------------------------
_POOL = string.ascii_letters


def _parse_einsum(equation: str, shapes: list) -> tuple[list, str]:
    """Explicit subscripts: each operand's labels (ellipses expanded to letters, aligned from the right) and the
    output's (implicit output: ellipsis letters, then the labels used once, sorted)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the equation"
                           if len(shapes) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    used = set(eq) - set(".,->")
    free = [c for c in _POOL if c not in used]
    ell_ndim = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            ell_ndim = max(ell_ndim, len(s) - (len(t) - 3))
    ell = "".join(free[:ell_ndim])
    labels = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[ell_ndim - k:])
        if len(t) != len(s):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) does not match the "
                               f"number of dimensions ({len(s)}) for operand {len(labels)}"
                               + ("" if "..." in terms[len(labels)] else " and no ellipsis was given"))
        labels.append(t)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {c: sum(t.count(c) for t in labels) for c in set("".join(labels)) - set(ell)}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    return labels, out


class Einsum(Function):
    """np.einsum over explicit subscripts; the gradient of each operand is another einsum."""

    _node_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, spec, *operands):
        labels, out = spec
        arrays = [t._data for t in operands]
        sizes = {}
        for k, (lab, arr) in enumerate(zip(labels, arrays)):
            for c, n in zip(lab, arr.shape):
                prev = sizes.get(c)
                if prev is None or prev == 1:
                    sizes[c] = n
                elif n != 1 and n != prev:
                    raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not "
                                       f"broadcast with previously seen size {prev}")
        ctx.labels, ctx.out, ctx.sizes = labels, out, sizes
        ctx.save_for_backward(*operands)
        eq = ",".join(labels) + "->" + out
        return _wrap(_asarray(np.einsum(eq, *arrays, optimize=len(arrays) > 2)))

    @staticmethod
    def backward(ctx, g):
        operands = ctx.saved_tensors
        grads = [None]
        for i, need in enumerate(ctx.needs_input_grad[1:]):
            grads.append(_einsum_grad(ctx, g, operands, i) if need else None)
        return tuple(grads)


def _einsum_grad(ctx, g: Tensor, operands, i: int) -> Tensor:
    """d out / d operand i, contracted with g: einsum of g with the other operands, producing operand i's labels.
    A label only operand i has (summed away in forward) is broadcast back with a ones operand; a label repeated
    in operand i (a diagonal) is written back on the diagonal with an identity-matrix operand."""
    labels, out = ctx.labels, ctx.out
    target = labels[i]
    others = [(lab, t) for k, (lab, t) in enumerate(zip(labels, operands)) if k != i]
    seen = set(out) | {c for lab, _ in others for c in lab}
    used = set("".join(labels)) | set(out)
    fresh = iter(c for c in _POOL if c not in used)
    subs, ops = [out], [g]
    for lab, t in others:
        subs.append(lab)
        ops.append(t)
    dtype = g._data.dtype
    private = "".join(dict.fromkeys(c for c in target if c not in seen))
    if private:
        subs.append(private)
        ops.append(_wrap(np.ones([ctx.sizes[c] for c in private], dtype)))
    result, first = [], {}
    for c in target:
        if c in first:  # a repeated label: a fresh one, tied to the first by an identity matrix
            r = next(fresh)
            subs.append(c + r)
            ops.append(_wrap(np.eye(ctx.sizes[c], dtype=dtype)))
            result.append(r)
        else:
            first[c] = True
            result.append(c)
    return Einsum.apply((subs, "".join(result)), *ops)


def einsum(equation: str, *operands) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): argument 'tensors' must be tuple of Tensors, but found element of type "
                            f"{type(t).__name__} at pos {k}")
    labels, out = _parse_einsum(equation, [t._data.shape for t in operands])
    return Einsum.apply((labels, out), *operands)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    elif isinstance(dims, Tensor):
        da, db = dims._data.tolist()
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [_wrap_dim(d, a.ndim, "tensordot") for d in da]
    db = [_wrap_dim(d, b.ndim, "tensordot") for d in db]
    letters = iter(_POOL)
    la = [next(letters) for _ in range(a.ndim)]
    lb = [next(letters) for _ in range(b.ndim)]
    for x, y in zip(da, db):
        if a._data.shape[x] != b._data.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a._data.shape[x]} in dim "
                               f"{x} and second has size {b._data.shape[y]} in dim {y}")
        lb[y] = la[x]
    out = [c for k, c in enumerate(la) if k not in da] + [c for k, c in enumerate(lb) if k not in db]
    return Einsum.apply((["".join(la), "".join(lb)], "".join(out)), a, b)


def inner(input: Tensor, other: Tensor) -> Tensor:
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    for name, t in (("vec1", input), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    return input.reshape(-1, 1) * vec2


def kron(input: Tensor, other: Tensor) -> Tensor:
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + input._data.shape
    sb = (1,) * (n - other.ndim) + other._data.shape
    ia = [s for pair in zip(sa, (1,) * n) for s in pair]
    ib = [s for pair in zip((1,) * n, sb) for s in pair]
    return (input.reshape(ia) * other.reshape(ib)).reshape([x * y for x, y in zip(sa, sb)])


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    return Addmm.apply(input, mat1, mat2, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    return input * beta + Mv.apply(mat, vec) * alpha


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    return input * beta + Bmm.apply(batch1, batch2) * alpha


def mv(input: Tensor, vec: Tensor) -> Tensor:
    return Mv.apply(input, vec)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    return Bmm.apply(input, mat2)


def trace(input: Tensor) -> Tensor:
    return Trace.apply(input)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return Diagonal.apply(input, offset, dim1, dim2)


def diag_embed(input: Tensor, diagonal: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    n = input._data.shape[-1] + abs(diagonal)
    nd = input._data.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd, "diag_embed"), _wrap_dim(dim2, nd, "diag_embed")
    shape = list(input._data.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    return DiagonalScatter.apply(input, tuple(shape), diagonal, d1, d2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    nd = input._data.ndim
    if nd == 1:
        return diag_embed(input, diagonal, 0, 1)
    if nd == 2:
        return Diagonal.apply(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    return Tril.apply(input, diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    return Triu.apply(input, diagonal)


def det(input: Tensor) -> Tensor:
    return Det.apply(input)


def inverse(input: Tensor) -> Tensor:
    return Inverse.apply(input)


def solve(a: Tensor, b: Tensor) -> Tensor:
    return Solve.apply(a, b)


def matrix_power(input: Tensor, n: int) -> Tensor:
    _square("matrix_power", input)
    if n == 0:
        return input * 0 + _wrap(np.eye(input._data.shape[-1], dtype=input._data.dtype))
    if n < 0:
        input, n = Inverse.apply(input), -n
    out = input
    for _ in range(n - 1):  # one matmul per power (n is small); PyTorch shows MmBackward0 nodes too
        out = out @ input
    return out


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        shape = np.broadcast_shapes(input._data.shape, other._data.shape)
        dim = next((k for k, s in enumerate(shape) if s == 3), -1)
    return Cross.apply(input, other, dim)

