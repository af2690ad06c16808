"""Every differentiable op of minigrad, checked against finite differences.

One table (``CASES``) lists the ops: each row is an id, a function of tensors, and the
specs of its inputs.  Every row runs through ``gradcheck`` (first derivatives) and
``gradgradcheck`` (second derivatives through ``create_graph=True``), in float64.
Inputs are kept away from kinks (relu/abs at 0, ties in max/min, clamp bounds).
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad import _ops
from minigrad.autograd import enable_grad, gradcheck
from minigrad.autograd import gradgradcheck as _mg_gradgradcheck


def _recording(fn):
    """``fn`` with grad mode forced on.

    minigrad's gradgradcheck evaluates its first-order function for the finite
    differences under no_grad, where the outputs need no grad, so it compares nothing
    (see test_gradgradcheck_detects_wrong_double_backward, xfail).  Forcing grad mode
    inside ``fn`` makes the finite differences real, so the checks below are meaningful.
    """

    def wrapped(*args):
        with enable_grad():
            return fn(*args)

    return wrapped


def gradgradcheck(fn, inputs, **kw):
    return _mg_gradgradcheck(_recording(fn), inputs, **kw)


# --- input specs ---------------------------------------------------------------------
class Spec:
    """How to make one input: shape + value range; ``grad=False`` for constants."""

    def __init__(self, shape, kind="normal", grad=True):
        self.shape, self.kind, self.grad = tuple(shape), kind, grad

    def make(self, rng):
        s = self.shape
        if self.kind == "normal":
            a = rng.standard_normal(s)
        elif self.kind == "pos":  # for log, sqrt, pow with a real exponent
            a = rng.uniform(0.5, 2.0, s)
        elif self.kind == "away":  # |x| >= 0.2: away from the kinks of relu / abs / sign
            a = rng.uniform(0.2, 1.5, s) * rng.choice([-1.0, 1.0], s)
        elif self.kind == "prob":  # probabilities for BCE
            a = rng.uniform(0.1, 0.9, s)
        elif self.kind == "distinct":  # well separated values: no ties in max/min
            a = rng.permutation(np.arange(int(np.prod(s, dtype=int)))).reshape(s) * 0.37 - 1.0
        else:
            raise ValueError(self.kind)
        return minigrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=self.grad)


def N(*shape):
    return Spec(shape)


def P(*shape):
    return Spec(shape, "pos")


def A(*shape):
    return Spec(shape, "away")


def D(*shape):
    return Spec(shape, "distinct")


def C(value):
    """A constant (non-tensor, or a tensor that does not require grad)."""
    return value


def make_inputs(specs, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(s.make(rng) if isinstance(s, Spec) else s for s in specs)


def case(id_, fn, *specs, gradgrad=True):
    return pytest.param(fn, specs, gradgrad, id=id_)


def const(arr, dtype=None):
    return minigrad.tensor(np.asarray(arr), dtype=dtype)


MASK_34 = np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]])
IDX_REPEAT = const([0, 2, 0, 0])  # int64 index tensor with repeats


def _setitem_basic(x, v):
    y = x * 1.0
    y[1] = v * 2.0  # recorded in the graph: x gets zeros in row 1, v gets the rows' gradient
    return y


def _setitem_mask(x, v):
    y = x.clone()
    y[const(MASK_34)] = v
    return y


def _inplace_on_slice(x, w):
    y = x.sin()  # sin saves x, not its output: the in-place write below is legal
    y[1:3].mul_(w)
    y[:, 0] += w[0]
    return y * x


def _inplace_ops_chain(x, w):
    y = x * 1.0
    y.add_(w).mul_(x).div_(2.0).sub_(w * w)
    y.clamp_(-2.0, 2.0)
    return y


def _setitem_scalar(x):
    y = x * 2.0  # (not exp: exp saves its output, and PyTorch would refuse the in-place write too)
    y[:, 1:3] = 0.5
    return y * x


# --- the op table ----------------------------------------------------------------------
CASES = [
    # arithmetic, with broadcasting, scalars and reflected forms
    case("add-(3,1)+(1,4)", lambda a, b: a + b, N(3, 1), N(1, 4)),
    case("add-(2,3)+(3,)", lambda a, b: a + b, N(2, 3), N(3)),
    case("add-0d+(2,3)", lambda a, b: a + b, N(), N(2, 3)),
    case("add-scalar", lambda a: a + 2.5, N(2, 3)),
    case("radd-scalar", lambda a: 2.5 + a, N(2, 3)),
    case("add-fn", lambda a, b: minigrad.add(a, b), N(4), N(4)),
    case("add-const-tensor", lambda a, b: a + b, N(2, 3), C(const(np.ones((2, 3))))),
    case("sub-(3,1)-(1,4)", lambda a, b: a - b, N(3, 1), N(1, 4)),
    case("sub-(2,3)-(3,)", lambda a, b: a - b, N(2, 3), N(3)),
    case("sub-scalar", lambda a: a - 1.5, N(4)),
    case("rsub-scalar", lambda a: 1.5 - a, N(2, 2)),
    case("mul-(3,1)*(1,4)", lambda a, b: a * b, N(3, 1), N(1, 4)),
    case("mul-(2,3)*(3,)", lambda a, b: a * b, N(2, 3), N(3)),
    case("mul-0d*(2,3)", lambda a, b: a * b, N(), N(2, 3)),
    case("mul-same-tensor", lambda a: a * a, N(3)),
    case("mul-scalar", lambda a: a * 3.0, N(2, 3)),
    case("rmul-scalar", lambda a: 3.0 * a, N(2, 3)),
    case("div-(2,3)/(3,)", lambda a, b: a / b, N(2, 3), A(3)),
    case("div-(3,1)/(1,4)", lambda a, b: a / b, N(3, 1), A(1, 4)),
    case("div-scalar", lambda a: a / 4.0, N(5)),
    case("rdiv-scalar", lambda a: 2.0 / a, A(5)),
    case("neg", lambda a: -a, N(2, 3)),
    case("pow-square", lambda a: a ** 2, N(2, 3)),
    case("pow-cube", lambda a: a ** 3, N(4)),
    case("pow-sqrt", lambda a: a ** 0.5, P(4)),
    case("pow-negative", lambda a: a ** -1.5, P(2, 2)),
    case("pow-zero", lambda a: a ** 0, N(3)),
    case("rpow-scalar", lambda a: 2.0 ** a, N(2, 3)),
    case("pow-tensor-tensor", lambda a, b: a ** b, P(2, 3), N(2, 3)),
    case("pow-tensor-tensor-bcast", lambda a, b: a ** b, P(3, 1), N(1, 4)),
    case("pow-fn", lambda a: minigrad.pow(a, 3), N(3)),
    case("square", lambda a: a.square(), N(3)),
    # unary pointwise
    case("exp", lambda a: a.exp(), N(2, 3)),
    case("exp-fn", lambda a: minigrad.exp(a), N(4)),
    case("log", lambda a: a.log(), P(2, 3)),
    case("log1p", lambda a: a.log1p(), P(2, 3)),
    case("sqrt", lambda a: a.sqrt(), P(2, 3)),
    case("rsqrt", lambda a: a.rsqrt(), P(3)),
    case("reciprocal", lambda a: a.reciprocal(), A(3)),
    case("abs", lambda a: a.abs(), A(2, 3)),
    case("abs-builtin", lambda a: abs(a), A(5)),
    case("sin", lambda a: a.sin(), N(2, 3)),
    case("cos", lambda a: a.cos(), N(2, 3)),
    case("tanh", lambda a: a.tanh(), N(2, 3)),
    case("sinh", lambda a: a.sinh(), N(2, 3)),
    case("cosh", lambda a: a.cosh(), N(2, 3)),
    case("sigmoid", lambda a: a.sigmoid(), N(2, 3)),
    case("sigmoid-fn", lambda a: minigrad.sigmoid(a), N(4)),
    case("relu", lambda a: a.relu(), A(2, 3)),
    case("relu-fn", lambda a: minigrad.relu(a), A(6)),
    case("clamp-min-max", lambda a: a.clamp(-0.5, 0.5), A(3, 4)),
    case("clamp-min", lambda a: a.clamp(min=0.1), Spec((3, 4), "away")),
    case("clamp-max", lambda a: minigrad.clamp(a, max=0.1), A(3, 4)),
    case("maximum", lambda a, b: minigrad.maximum(a, b), N(2, 3), N(2, 3)),
    case("maximum-bcast", lambda a, b: a.maximum(b), N(3, 1), N(1, 4)),
    case("minimum", lambda a, b: minigrad.minimum(a, b), N(2, 3), N(2, 3)),
    case("minimum-bcast", lambda a, b: minigrad.minimum(a, b), N(2, 3), N(3)),
    case("where", lambda a, b: minigrad.where(const(MASK_34), a, b), N(3, 4), N(3, 4)),
    case("where-bcast", lambda a, b: minigrad.where(const(MASK_34), a, b), N(3, 1), N(4)),
    case("where-scalar", lambda a: minigrad.where(const(MASK_34), a, 0.0), N(3, 4)),
    case("where-method", lambda a, b: a.where(const(MASK_34), b), N(3, 4), N(3, 4)),
    case("clone", lambda a: a.clone() * 2, N(2, 3)),
    # reductions
    case("sum-all", lambda a: a.sum(), N(2, 3, 4)),
    case("sum-dim1", lambda a: a.sum(dim=1), N(2, 3, 4)),
    case("sum-dim-neg-keepdim", lambda a: a.sum(-1, keepdim=True), N(2, 3, 4)),
    case("sum-tuple-dims", lambda a: a.sum(dim=(0, 2)), N(2, 3, 4)),
    case("sum-tuple-keepdim", lambda a: minigrad.sum(a, (0, 2), keepdim=True), N(2, 3, 4)),
    case("sum-0d", lambda a: a.sum(), N()),
    case("cumsum-dim0", lambda a: a.cumsum(0), N(4, 3)),
    case("cumsum-dim-neg", lambda a: minigrad.cumsum(a, -1), N(2, 3, 4)),
    case("cumsum-0d", lambda a: a.cumsum(0), N()),
    case("mean-all", lambda a: a.mean(), N(2, 3, 4)),
    case("mean-dim0", lambda a: a.mean(0), N(2, 3)),
    case("mean-keepdim", lambda a: a.mean(dim=1, keepdim=True), N(2, 3, 4)),
    case("mean-tuple", lambda a: minigrad.mean(a, dim=(1, 2)), N(2, 3, 4)),
    case("max-all", lambda a: a.max(), D(3, 4)),
    case("min-all", lambda a: minigrad.min(a), D(3, 4)),
    case("max-dim", lambda a: a.max(dim=1)[0], D(3, 4)),
    case("max-dim-values", lambda a: a.max(dim=0).values, D(3, 4)),
    case("max-dim-keepdim", lambda a: a.max(dim=-1, keepdim=True)[0], D(2, 3, 4)),
    case("min-dim", lambda a: a.min(dim=1)[0], D(3, 4)),
    case("min-dim-keepdim", lambda a: minigrad.min(a, 0, keepdim=True).values, D(3, 4)),
    case("max-of-two-tensors", lambda a, b: minigrad.max(a, b), N(2, 3), N(2, 3)),
    case("amax-all", lambda a: a.amax(), D(3, 4)),
    case("amax-dim", lambda a: a.amax(dim=1), D(3, 4)),
    case("amax-tuple", lambda a: minigrad.amax(a, dim=(0, 2)), D(2, 3, 4)),
    case("amax-keepdim", lambda a: a.amax(dim=0, keepdim=True), D(3, 4)),
    case("amin-dim", lambda a: a.amin(dim=-1), D(3, 4)),
    case("amin-tuple-keepdim", lambda a: minigrad.amin(a, (0, 1), keepdim=True), D(2, 3, 4)),
    case("var", lambda a: a.var(), N(3, 4)),
    case("var-dim", lambda a: a.var(dim=1, keepdim=True), N(3, 4)),
    case("std", lambda a: a.std(dim=0), N(3, 4)),
    case("norm", lambda a: a.norm(), N(3, 4)),
    case("logsumexp", lambda a: a.logsumexp(1), N(3, 4)),
    # softmax family
    case("softmax-dim1", lambda a: a.softmax(1), N(3, 4)),
    case("softmax-dim0", lambda a: minigrad.softmax(a, dim=0), N(3, 4)),
    case("softmax-3d-neg", lambda a: a.softmax(-1), N(2, 3, 4)),
    case("softmax-3d-mid", lambda a: a.softmax(1), N(2, 3, 4)),
    case("log_softmax-dim1", lambda a: a.log_softmax(1), N(3, 4)),
    case("log_softmax-dim0", lambda a: minigrad.log_softmax(a, 0), N(3, 4)),
    case("log_softmax-3d", lambda a: a.log_softmax(dim=-1), N(2, 3, 4)),
    case("LogSoftmax-op", lambda a: _ops.LogSoftmax.apply(a, 1), N(3, 5)),
    # matmul
    case("matmul-1d-1d", lambda a, b: a @ b, N(4), N(4)),
    case("dot", lambda a, b: minigrad.dot(a, b), N(5), N(5)),
    case("dot-method-const", lambda a, b: a.dot(b), N(5), Spec((5,), grad=False)),
    case("matmul-1d-2d", lambda a, b: a @ b, N(3), N(3, 4)),
    case("matmul-2d-1d", lambda a, b: a @ b, N(3, 4), N(4)),
    case("matmul-2d-2d", lambda a, b: a @ b, N(2, 3), N(3, 4)),
    case("matmul-batched-2d", lambda a, b: a @ b, N(2, 3, 4), N(4, 5)),
    case("matmul-2d-batched", lambda a, b: minigrad.matmul(a, b), N(3, 4), N(2, 4, 2)),
    case("matmul-batch-bcast", lambda a, b: a @ b, N(2, 1, 3, 4), N(3, 4, 2)),
    case("matmul-batched-1d", lambda a, b: a @ b, N(2, 3, 4), N(4)),
    case("matmul-1d-batched", lambda a, b: a @ b, N(3), N(2, 3, 4)),
    case("mm", lambda a, b: minigrad.mm(a, b), N(2, 3), N(3, 2)),
    case("matmul-method", lambda a, b: a.matmul(b), N(2, 3), N(3, 2)),
    # shape operations
    case("reshape", lambda a: a.reshape(3, 2) * 1.5, N(2, 3)),
    case("reshape-tuple-infer", lambda a: a.reshape((-1, 4)), N(2, 3, 4)),
    case("reshape-fn", lambda a: minigrad.reshape(a, (6,)), N(2, 3)),
    case("view", lambda a: a.view(6), N(2, 3)),
    case("view-as", lambda a, b: a.view_as(b) * b, N(2, 3), N(3, 2)),
    case("flatten", lambda a: a.flatten(), N(2, 3, 4)),
    case("flatten-start", lambda a: minigrad.flatten(a, 1), N(2, 3, 4)),
    case("transpose", lambda a: a.transpose(0, 1), N(2, 3)),
    case("transpose-3d", lambda a: minigrad.transpose(a, 0, -1), N(2, 3, 4)),
    case("T", lambda a: a.T, N(2, 3)),
    case("t", lambda a: a.t(), N(2, 3)),
    case("permute", lambda a: a.permute(2, 0, 1), N(2, 3, 4)),
    case("permute-tuple", lambda a: minigrad.permute(a, (1, 2, 0)), N(2, 3, 4)),
    case("squeeze-all", lambda a: a.squeeze(), N(2, 1, 3, 1)),
    case("squeeze-dim", lambda a: a.squeeze(1), N(2, 1, 3)),
    case("unsqueeze", lambda a: a.unsqueeze(0), N(2, 3)),
    case("unsqueeze-neg", lambda a: minigrad.unsqueeze(a, -1), N(2, 3)),
    case("expand", lambda a: a.expand(2, 3, 4), N(3, 1)),
    case("expand-minus1", lambda a: a.expand(-1, 4), N(3, 1)),
    case("expand-as", lambda a, b: a.expand_as(b) * b, N(1, 4), N(3, 4)),
    case("cat-dim0", lambda a, b: minigrad.cat([a, b]), N(2, 3), N(1, 3)),
    case("cat-dim1", lambda a, b, c: minigrad.cat((a, b, c), dim=1), N(2, 3), N(2, 1), N(2, 2)),
    case("cat-with-const", lambda a: minigrad.cat([a, const(np.zeros((2, 3)))], dim=-1), N(2, 3)),
    case("stack-dim0", lambda a, b: minigrad.stack([a, b]), N(2, 3), N(2, 3)),
    case("stack-dim-last", lambda a, b: minigrad.stack((a, b), dim=-1), N(2, 3), N(2, 3)),
    case("narrow", lambda a: a.narrow(1, 1, 2), N(3, 4)),
    case("select", lambda a: a.select(0, 1), N(3, 4)),
    # indexing
    case("index-int", lambda a: a[1], N(3, 4)),
    case("index-slice", lambda a: a[:, 1:3], N(3, 4)),
    case("index-step", lambda a: a[::2, ::-1], N(5, 4)),
    case("index-ellipsis-none", lambda a: a[..., None, 1], N(2, 3, 4)),
    case("index-list-repeated", lambda a: a[[0, 2, 0]], N(3, 4)),
    case("index-tensor-repeated", lambda a: a[IDX_REPEAT], N(3, 4)),
    case("index-advanced-pair", lambda a: a[[0, 1, 2, 0], [1, 3, 1, 1]], N(3, 4)),
    case("index-mixed", lambda a: a[1:, [0, 0, 2]], N(3, 4)),
    case("index-bool-mask", lambda a: a[const(MASK_34)], N(3, 4)),
    case("index-bool-rows", lambda a: a[const([True, False, True])], N(3, 4)),
    case("setitem-basic", _setitem_basic, N(3, 4), N(4)),
    case("setitem-mask", _setitem_mask, N(3, 4), N(int(MASK_34.sum()))),
    case("setitem-scalar", _setitem_scalar, N(3, 4)),
    case("setitem-leading-one", _setitem_basic, N(3, 4), N(1, 4)),
    case("inplace-on-slice", _inplace_on_slice, N(3, 4), N(4)),
    case("inplace-chain", _inplace_ops_chain, Spec((3,), "normal"), Spec((3,), "normal")),
    case("norm-dim", lambda a: a.norm(dim=1, keepdim=True), N(3, 4)),
    # fused nn ops
    case("linear", lambda x, w, b: _ops.linear(x, w, b), N(4, 3), N(2, 3), N(2)),
    case("linear-no-bias", lambda x, w: minigrad._ops.linear(x, w), N(4, 3), N(2, 3)),
    case("linear-3d-input", lambda x, w, b: _ops.linear(x, w, b), N(2, 4, 3), N(5, 3), N(5)),
    case("linear-1d-input", lambda x, w, b: _ops.linear(x, w, b), N(3), N(2, 3), N(2)),
    case("nll-mean", lambda x: _ops.NLLLoss.apply(_ops.LogSoftmax.apply(x, 1), const([0, 2, 1, 2]), "mean"),
         N(4, 3)),
    case("nll-sum", lambda x: _ops.NLLLoss.apply(_ops.LogSoftmax.apply(x, 1), const([1, 1, 0]), "sum"), N(3, 4)),
    case("nll-none", lambda x: _ops.NLLLoss.apply(_ops.LogSoftmax.apply(x, 1), const([3, 0]), "none"), N(2, 4)),
    case("mse-mean", lambda a, b: _ops.MSELoss.apply(a, b, "mean"), N(3, 4), N(3, 4)),
    case("mse-sum", lambda a, b: _ops.MSELoss.apply(a, b, "sum"), N(5), N(5)),
    case("mse-none", lambda a, b: _ops.MSELoss.apply(a, b, "none"), N(2, 3), N(2, 3)),
    case("mse-const-target", lambda a, b: _ops.MSELoss.apply(a, b, "mean"), N(2, 3), Spec((2, 3), grad=False)),
    case("bce-mean", lambda p, y: _ops.BCELoss.apply(p, y, "mean"), Spec((3, 4), "prob"),
         C(const(np.random.default_rng(1).integers(0, 2, (3, 4)).astype(np.float64)))),
    case("bce-sum", lambda p, y: _ops.BCELoss.apply(p, y, "sum"), Spec((5,), "prob"),
         C(const(np.array([0.0, 1.0, 1.0, 0.0, 0.3])))),
    case("bce-none", lambda p, y: _ops.BCELoss.apply(p, y, "none"), Spec((2, 3), "prob"),
         C(const(np.array([[0.0, 1.0, 1.0], [0.0, 0.5, 1.0]])))),
    # small compositions that mix the families
    case("mlp-layer", lambda x, w, b: (x @ w.T + b).tanh().sum(1), N(4, 3), N(2, 3), N(2)),
    case("softmax-xent-manual", lambda x: -(x.log_softmax(1) * const(np.eye(3)[[0, 2]])).sum(1).mean(), N(2, 3)),
    case("fan-out", lambda x: x * x.sin() + x.exp() * x, N(3)),
]


@pytest.mark.parametrize("fn, specs, gradgrad", CASES)
def test_gradcheck(fn, specs, gradgrad):
    inputs = make_inputs(specs)
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("fn, specs, gradgrad", CASES)
def test_gradgradcheck(fn, specs, gradgrad):
    inputs = make_inputs(specs, seed=1)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# Unary ops on several shapes (0-d, 1-D, 2-D, 3-D), first and second order.
UNARY = {
    "exp": (lambda a: a.exp(), "normal"),
    "log": (lambda a: a.log(), "pos"),
    "log1p": (lambda a: minigrad.log1p(a), "pos"),
    "sqrt": (lambda a: a.sqrt(), "pos"),
    "tanh": (lambda a: a.tanh(), "normal"),
    "sigmoid": (lambda a: a.sigmoid(), "normal"),
    "relu": (lambda a: a.relu(), "away"),
    "abs": (lambda a: a.abs(), "away"),
    "sin": (lambda a: a.sin(), "normal"),
    "pow3": (lambda a: a ** 3, "normal"),
    "sum": (lambda a: a.sum(), "normal"),
    "mean": (lambda a: a.mean(), "normal"),
}
SHAPES = [(), (5,), (2, 3), (2, 1, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_shapes(name, shape):
    fn, kind = UNARY[name]
    (x,) = make_inputs([Spec(shape, kind)], seed=hash(name) % 1000)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("shapes", [((3, 1), (1, 4)), ((2, 3), (3,)), ((), (2, 3)), ((2, 1, 3), (4, 1)),
                                    ((4,), (4,))], ids=str)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_broadcast_shapes(op, shapes):
    fn = {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b, "maximum": minigrad.maximum, "minimum": minigrad.minimum,
    }[op]
    a, b = make_inputs([A(*shapes[0]), A(*shapes[1])], seed=3)
    out = fn(a, b)
    assert out.shape == np.broadcast_shapes(a.shape, b.shape)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))


def test_gradcheck_catches_a_wrong_backward():
    """The checker itself must be able to fail (else every test above is vacuous)."""

    class Wrong(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0)  # a ReLU mask: the seed document's bug

    x = minigrad.tensor([-1.0, 2.0, -3.0], dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    with pytest.raises(minigrad.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(Wrong.apply, (x,))


class _FirstOrderOnly(minigrad.autograd.Function):
    """x ** 3 whose backward is right to first order but treats x as a constant."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * minigrad.tensor(3 * x.detach().numpy() ** 2)


def test_gradgradcheck_detects_wrong_double_backward():
    x = minigrad.tensor([0.5, -1.2, 2.0], dtype=minigrad.float64, requires_grad=True)
    assert _mg_gradgradcheck(_FirstOrderOnly.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_catches_a_wrong_double_backward():
    x = minigrad.tensor([0.5, -1.2, 2.0], dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(_FirstOrderOnly.apply, (x,))
    assert gradgradcheck(_FirstOrderOnly.apply, (x,), raise_exception=False) is False


# --- PyTorch's conventions at kinks, ties and extremes (values recorded from PyTorch 2.13) ------------------------
EDGE_CASES = [
    ("max-ties-all", lambda x: x.max(), [[1.0, 3.0, 3.0, 2.0]], [[0.0, 0.5, 0.5, 0.0]]),
    ("min-ties-all", lambda x: x.min(), [[1.0, 1.0, 3.0, 2.0]], [[0.5, 0.5, 0.0, 0.0]]),
    ("max-dim-ties", lambda x: x.max(0)[0], [[[1.0, 3.0], [1.0, 2.0]]], [[[1.0, 1.0], [0.0, 0.0]]]),
    ("amax-ties", lambda x: x.amax(1), [[[3.0, 3.0], [1.0, 2.0]]], [[[0.5, 0.5], [0.0, 1.0]]]),
    ("maximum-ties", lambda x, y: minigrad.maximum(x, y), [[1.0, 2.0], [1.0, 3.0]], [[0.5, 0.0], [0.5, 1.0]]),
    ("abs-at-0", lambda x: x.abs(), [[0.0, -1.0, 2.0]], [[0.0, -1.0, 1.0]]),
    ("relu-at-0", lambda x: x.relu(), [[0.0, -1.0, 2.0]], [[0.0, 0.0, 1.0]]),
    ("clamp-bounds", lambda x: x.clamp(0.0, 1.0), [[0.0, 1.0, 0.5, 2.0, -1.0]], [[1.0, 1.0, 1.0, 0.0, 0.0]]),
    ("sqrt-at-0", lambda x: x.sqrt(), [[0.0, 4.0]], [[float("inf"), 0.25]]),
    ("pow2-at-0", lambda x: x ** 2, [[0.0, 1.0]], [[0.0, 2.0]]),
    ("pow0", lambda x: x ** 0, [[0.0, 2.0]], [[0.0, 0.0]]),
    ("pow-tensor-zero-base", lambda x, y: x ** y, [[0.0, 0.0, 2.0], [2.0, 0.0, 0.0]],
     [[0.0, 0.0, 0.0], [0.0, 0.0, 0.6931471805599453]]),
    ("rpow-zero-base", lambda x: 0.0 ** x, [[1.0, 2.0]], [[0.0, 0.0]]),
    ("norm-at-0", lambda x: x.norm(), [[0.0, 0.0]], [[0.0, 0.0]]),
    ("sigmoid-extreme", lambda x: x.sigmoid(), [[-800.0, 800.0, 0.0]], [[0.0, 0.0, 0.25]]),
    ("softmax-extreme", lambda x: x.softmax(0), [[1000.0, 0.0, -1000.0]], [[0.0, 0.0, 0.0]]),
    ("log_softmax-extreme", lambda x: x.log_softmax(0), [[1000.0, 0.0, -1000.0]], [[-2.0, 1.0, 1.0]]),
    ("logsumexp-extreme", lambda x: x.logsumexp(0), [[1000.0, 1000.0]], [[0.5, 0.5]]),
    ("sign", lambda x: x.sign() * x, [[-1.0, 0.0, 2.0]], [[-1.0, 0.0, 1.0]]),
    ("where-masks-nan-branch", lambda x: minigrad.where(x > 0, x.log(), minigrad.zeros_like(x)), [[-1.0, 2.0]],
     [[0.0, 0.5]]),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("fn, data, expected", [(f, d, e) for _, f, d, e in EDGE_CASES], ids=[c[0] for c in EDGE_CASES])
def test_gradient_conventions_match_pytorch(fn, data, expected):
    xs = [minigrad.tensor(d, dtype=minigrad.float64, requires_grad=True) for d in data]
    fn(*xs).sum().backward()
    for x, e in zip(xs, expected):
        np.testing.assert_allclose(x.grad.numpy(), np.array(e), rtol=1e-12, atol=1e-12)
