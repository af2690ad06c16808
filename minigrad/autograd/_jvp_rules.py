"""The jvp of every built-in operation: how an op maps input tangents to output tangents.

A rule is ``rule(cls, ctx, args, out, tangents) -> tangent or tuple of tangents``; ``tangents``
has one entry per forward argument (None: no tangent, i.e. zero). It runs with propagation
paused, on minigrad operations (so the tangent is differentiable in turn), after the op's
forward filled ``ctx`` (its saved tensors, needs_input_grad covering the inputs with a tangent).

Four generic rules cover the catalogue; each op is assigned one in ``_TABLE`` below:

* ``linear(*positions)``: the op is linear in those arguments (shape ops, indexing, sums, ...):
  the jvp is the op itself applied to the tangents (zeros where one input has none);
* ``diagonal``: an elementwise op of one tensor (exp, sin, relu, every ``_Unary`` row...), whose
  Jacobian is diagonal, so ``J t = J^T t``: the op's own backward applied to the tangent. The
  derivative is written once, in backward, and forward mode reuses it;
* ``multilinear(*positions)``: linear in each of those arguments separately (mul, matmul,
  einsum...): the sum over the inputs with a tangent of the op with that input replaced by its tangent;
* ``via_vjp``: any other op whose backward is differentiable: ``J t`` is the gradient with
  respect to ``u`` of ``<J^T u, t>`` (the double-vjp trick); it costs a backward and a
  double backward of the op, so the hot ops have a hand-written rule below instead.

An op missing from the table has no jvp: forward AD raises PyTorch's NotImplementedError.

What the hand-written rules buy (benchmarks/forward_ad_rules.py: one op on 16 x 16 float64 inside
a dual level, against via_vjp for the same op): add 5x, mul 5x, div 6x, F.linear 5x, matmul 2.6x
faster; the diagonal rule (exp) 4x. conv2d and max_pool2d have their own rule because their
backward is NumPy only (via_vjp could not differentiate it).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor

_wrap = Tensor._wrap


def _zeros(a: Tensor) -> Tensor:
    return _wrap(np.zeros_like(a._data))


def _is_float(a) -> bool:
    return isinstance(a, Tensor) and a._data.dtype.kind == "f"


def _add(x, y):
    if x is None:
        return y
    if y is None:
        return x
    if isinstance(x, tuple):
        return tuple(_add(a, b) for a, b in zip(x, y))
    return x + y


# --- the generic rules ------------------------------------------------------------------------------------------
def linear(*positions):
    """The op applied to the tangents: for ops linear (jointly) in the arguments at ``positions``
    (all floating tensor arguments when none are given)."""

    def rule(cls, ctx, args, out, tangents):
        subst = list(args)
        for k, a in enumerate(args):
            if (k in positions if positions else _is_float(a)):
                if isinstance(a, (int, float)) and not isinstance(a, bool):
                    subst[k] = 0.0  # a number where the op is linear (x[i] = 0.5): its tangent is 0
                elif _is_float(a):
                    subst[k] = tangents[k] if tangents[k] is not None else _zeros(a)
        return cls.apply(*subst)

    rule.__name__ = f"linear{positions or ''}"
    return rule


def diagonal(cls, ctx, args, out, tangents):
    """Elementwise op of its first argument: J is diagonal, so J t = J^T t = backward(t)."""
    t = tangents[0]
    if t is None:
        return None
    g = cls.backward(ctx, t)
    return g[0] if isinstance(g, tuple) else g


def multilinear(*positions):
    """Sum over the inputs with a tangent of the op with that input replaced by its tangent."""

    def rule(cls, ctx, args, out, tangents):
        total = None
        for k in positions:
            if tangents[k] is None:
                continue
            subst = list(args)
            subst[k] = tangents[k]
            total = _add(total, cls.apply(*subst))
        return total

    rule.__name__ = f"multilinear{positions}"
    return rule


def via_vjp(cls, ctx, args, out, tangents):
    """J t as d/du <J^T u, t> (the op's backward is linear in u; differentiating it in u gives J)."""
    from .engine import grad
    from .grad_mode import _GradMode, enable_grad

    outs = out if isinstance(out, tuple) else (out,)
    keep_graph = _GradMode.enabled and (
        any(isinstance(a, Tensor) and a._rg for a in args) or any(t is not None and t._rg for t in tangents))
    us = []
    for o in outs:
        if _is_float(o):
            # Any u will do (backward is linear in u); ones, not zeros: a backward written for stability
            # (logcumsumexp's works on log|u|) has a degenerate point at u = 0
            u = _wrap(np.ones_like(o._data))
            u._rg = True
            us.append(u)
        else:
            us.append(_wrap(np.zeros_like(o._data)) if isinstance(o, Tensor) else None)
    with enable_grad():
        grads = cls.backward(ctx, *us)
        if not isinstance(grads, tuple):
            grads = (grads,)
        total = None
        for g, t in zip(grads, tangents):
            if g is not None and t is not None:
                term = (g * t).sum()
                total = term if total is None else total + term
        leaves = [u for u in us if u is not None and u._rg]
        if total is None or not total._rg:
            res = [None] * len(leaves)
        else:
            res = list(grad(total, leaves, create_graph=keep_graph, allow_unused=True))
    it = iter(res)
    out_t = tuple(next(it) if (u is not None and u._rg) else None for u in us)
    out_t = tuple(t if t is not None or not _is_float(o) else _zeros(o) for t, o in zip(out_t, outs))
    return out_t if isinstance(out, tuple) else out_t[0]


def _zero_rule(cls, ctx, args, out, tangents):
    """Piecewise-constant ops (sign, rounding...): the tangent is 0."""
    outs = out if isinstance(out, tuple) else (out,)
    res = tuple(_zeros(o) if _is_float(o) else None for o in outs)
    return res if isinstance(out, tuple) else res[0]


# --- hand-written rules of the hot ops (each avoids via_vjp's backward + double backward) ----------------------
def _add_rule(cls, ctx, args, out, tangents):
    """a + b: ta + tb (a single tangent is broadcast to the output by _attach): one op instead of two zeros + add."""
    ta, tb = tangents
    return _add(ta, tb)


def _sub_rule(cls, ctx, args, out, tangents):
    ta, tb = tangents
    if tb is None:
        return ta
    return -tb if ta is None else ta - tb


def _div_rule(cls, ctx, args, out, tangents):
    """a / b: (ta - out tb) / b: three ops instead of via_vjp's ~12."""
    a, b = args
    ta, tb = tangents
    if tb is None:
        return ta / b
    num = -(out * tb) if ta is None else ta - out * tb
    return num / b


def _pow_rule(cls, ctx, args, out, tangents):
    """a ** b: tb out log a + ta b a^(b-1) (0 where a == 0 and the term has no tangent)."""
    a, b = args
    ta, tb = tangents
    total = None
    if ta is not None:
        total = ta * b * a ** (b - 1)
    if tb is not None:
        from .._ops.pointwise import where

        safe = where(a == 0, a + 1, a)
        total = _add(total, tb * out * safe.log() * (a != 0))
    return total


def _linear_rule(cls, ctx, args, out, tangents):
    """F.linear(x, w, b): tx w^T + x tw^T + tb: two matmuls instead of via_vjp's backward + double backward."""
    x, w, b = args
    tx, tw, tb = tangents
    total = None
    if tx is not None:
        total = cls.apply(tx, w, None)
    if tw is not None:
        total = _add(total, cls.apply(x, tw, None))
    if tb is not None:
        total = _add(total, tb)
    return total


def _conv_rule(cls, ctx, args, out, tangents):
    """conv(x, w) + b: conv(tx, w) + conv(x, tw) + tb (its backward is NumPy, @once_differentiable,
    so via_vjp cannot differentiate it; this costs two convolutions)."""
    x, w, b, *geometry = args
    tx, tw, tb = tangents[:3]
    total = None
    if tx is not None:
        total = cls.apply(tx, w, None, *geometry)
    if tw is not None:
        total = _add(total, cls.apply(x, tw, None, *geometry))
    if tb is not None:
        total = _add(total, tb.reshape((1, -1) + (1,) * (out._data.ndim - 2)))
    return total


def _max_pool_rule(cls, ctx, args, out, tangents):
    """Each output is one input element (the window's maximum): the tangent there, by the indices."""
    values, idx = out
    t = tangents[0].flatten(-2)
    return t.gather(-1, idx.flatten(-2)).reshape(tuple(idx.shape)), None


def _masked_fill_rule(cls, ctx, args, out, tangents):
    a, mask, value = args
    return cls.apply(tangents[0], mask, 0.0)


def _index_fill_rule(cls, ctx, args, out, tangents):
    a, dim, index, value = args
    return cls.apply(tangents[0], dim, index, 0.0)


def _scatter_value_rule(cls, ctx, args, out, tangents):
    a, dim, index, value = args
    return cls.apply(tangents[0], dim, index, 0.0)


def _pad_rule(cls, ctx, args, out, tangents):
    a, pads, value = args
    return cls.apply(tangents[0], pads, 0.0)


def _fill_rule(cls, ctx, args, out, tangents):
    a, value = args
    if isinstance(value, Tensor) and tangents[1] is not None:
        return cls.apply(_zeros(a), tangents[1])
    return _zeros(out)


def _to_dtype_rule(cls, ctx, args, out, tangents):
    return cls.apply(tangents[0], *args[1:])


# --- the table --------------------------------------------------------------------------------------------------
def _table() -> dict:
    from .._ops import activation as act, arithmetic as ar, elementwise as el, indexing as ix, layers as ly
    from .._ops import linalg as la, loss as lo, matrix as mx, nn_ops as nn, pointwise as pw, product as pr
    from .._ops import rearrange as re, reduction as rd, shape as sh, sorting as so, special as sp
    from ..nn import _conv as cv

    table = {}

    def put(rule, *classes):
        for c in classes:
            table[c] = rule

    put(diagonal, pw.Exp, pw.Log, pw.Log1p, pw.Sqrt, pw.Abs, pw.Sin, pw.Cos, pw.Tanh, pw.Sinh, pw.Cosh, pw.Sigmoid,
        pw.Relu, pw.Clamp, sp.Erf, sp.Erfc, el.Frac, el.NanToNum, act.Celu, act.Elu, act.Gelu, act.Hardtanh,
        act.LeakyRelu, act.LogSigmoid, act.Mish, act.Silu, act.Softplus, ar.MulScalar, ar.DivScalar, ar.RDivScalar,
        ar.PowScalar, ar.RPowScalar, ar.AddScalar, ar.SubScalar, ar.RSubScalar, ar.Neg, ar.Clone, el.FmodScalar,
        el.RemainderScalar)
    # every row of the _Unary table (acos, tan, expm1, rsqrt...): its derivative, once, through backward
    for c in _all_subclasses(el._Unary):
        table[c] = diagonal
    put(_zero_rule, pw.Sign, el.Ceil, el.Floor, el.Trunc, el.Round, el.RoundDecimals)
    put(linear(), sh.Cat, sh.Stack, sh.Copy)
    put(linear(0), sh.View, sh.Transpose, sh.Permute, sh.Squeeze, sh.SqueezeDim, sh.Unsqueeze, sh.Expand, sh.Index,
        sh.IndexUnsqueeze, sh.Select, sh.Slice, sh.Alias, sh.IndexBackward, rd.Sum, rd.SumDim, rd.Mean, rd.MeanDim,
        rd.CumSum, re.Flip, re.Repeat, re.Roll, re.Split, re.SplitWithSizes, re.Unbind, re.UnsafeView, mx.Diagonal,
        mx.DiagonalScatter, mx.Trace, mx.Tril, mx.Triu, ix.Gather, ix.IndexSelect, ix.MaskedSelect, ix.Take,
        pw.ThresholdBackward, cv._PixelShuffle, cv._PixelUnshuffle, cv._AvgPool2d, cv._AdaptiveAvgPool2d)
    put(linear(0, 1), sh.CopySlices, sh.IndexPut, sh.ViewCopySlices)
    put(linear(1, 2), pw.Where)
    put(linear(0, 2), ix.MaskedFillTensor)
    put(linear(0, 3), ix.Scatter, ix.ScatterAdd, ix.IndexAdd)
    put(linear(1), ly.Embedding)
    put(_masked_fill_rule, ix.MaskedFill)
    put(_index_fill_rule, ix.IndexFill)
    put(_scatter_value_rule, ix.ScatterValue)
    put(_pad_rule, ly.ConstantPad)
    put(_fill_rule, sh.Fill)
    put(_to_dtype_rule, ar.ToDtype)
    put(_add_rule, ar.Add)
    put(_sub_rule, ar.Sub)
    put(multilinear(0, 1), ar.Mul, la.MatMul, la.Dot, mx.Bmm, mx.Mv, mx.Cross)
    put(_div_rule, ar.Div)
    put(_pow_rule, ar.Pow)
    put(_linear_rule, nn.Linear)
    put(via_vjp, el.Atan2, el.Hypot, el.Lerp, el.LerpScalar, el.Logaddexp, el.Logaddexp2, el.Fmod, el.Remainder,
        pw.Maximum, pw.Minimum, nn.Softmax, nn.LogSoftmax, nn.MSELoss, nn.NLLLoss, nn.BCELoss,
        lo.BinaryCrossEntropyWithLogits, ly.BatchNorm, ly.LayerNorm, mx.Det, mx.Inverse, mx.Solve, mx.Addmm,
        mx.Einsum, pr.Cumprod, pr.Prod, pr.ProdDim, rd.Amax, rd.Amin, rd.MaxAll, rd.MaxDim, rd.MinAll, rd.MinDim,
        rd.Norm2, so.Kthvalue, so.Median, so.MedianDim, so.Sort, so.SortStable, so.Topk, sp.LogCumSumExp,
)
    try:  # vmap's own Functions move a batch dim in or out: linear in the tensor
        from .._functorch import vmap as vm

        put(linear(0), vm._AddBatchDim, vm._RemoveBatchDim)
    except (ImportError, AttributeError):
        pass
    put(_conv_rule, cv._Conv2d)
    put(_max_pool_rule, cv._MaxPool2d)
    return table


def _all_subclasses(c) -> list:
    out = []
    for s in c.__subclasses__():
        out.append(s)
        out += _all_subclasses(s)
    return out


_installed = False


def install() -> None:
    """Set ``cls._jvp`` on every op of the table (once, at the first dual level: costs nothing at import)."""
    global _installed
    if _installed:
        return
    for cls, rule in _table().items():
        cls._jvp = staticmethod(rule)
    _installed = True
