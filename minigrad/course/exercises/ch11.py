"""Checks for chapter 11 (forward mode, function transforms, memory): a jvp for the sigmoid, a NumPy
Function made vmap-compatible, and checkpointed blocks whose memory saving is measured."""
from __future__ import annotations

import tracemalloc
import warnings
from typing import Any

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.course import CheckFailed, exercise
from minigrad.course.diagnose import diagnose_function

_fwAD = minigrad.autograd.forward_ad


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def _is_function(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, Function)


# ------------------------------------------------------------------------------------------ ex1
def _tangent(SigmoidFunction, x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The tangent of SigmoidFunction's output at x along t, through dual tensors."""
    primal = minigrad.tensor(x, dtype=minigrad.float64)
    tangent = minigrad.tensor(t, dtype=minigrad.float64)
    try:
        with _fwAD.dual_level():
            out = SigmoidFunction.apply(_fwAD.make_dual(primal, tangent))
            got = _fwAD.unpack_dual(out).tangent
    except NotImplementedError:
        raise CheckFailed("SigmoidFunction has no jvp yet: add `@staticmethod def jvp(ctx, x_t)` that returns "
                          "the tangent of the output, x_t * y * (1 - y).") from None
    except (ValueError, RuntimeError, AttributeError, TypeError) as e:
        hint = ""
        if "unpack" in str(e) or "saved" in str(e) or "save_for_forward" in str(e):
            hint = (" -- in jvp, ctx.saved_tensors holds what forward gave ctx.save_for_forward(...): "
                    "call ctx.save_for_forward(y) in forward.")
        raise CheckFailed(f"forward mode through SigmoidFunction raised {_first_line(e)}{hint}") from None
    if got is None:
        raise CheckFailed("the output of SigmoidFunction carries no tangent: jvp must return the tangent of "
                          "the output (a tensor), x_t * y * (1 - y).")
    return got.detach().numpy()


@exercise("ch11-ex1", points=2, title="A jvp for chapter 4's sigmoid", minutes=15,
          objective="give a Function forward mode: jvp and save_for_forward, checked by gradcheck")
def _check_sigmoid_jvp(SigmoidFunction: Any):
    if not _is_function(SigmoidFunction):
        raise CheckFailed("pass the class SigmoidFunction (a subclass of Function), not an instance or a call.")
    result = diagnose_function(SigmoidFunction, lambda x: minigrad.sigmoid(x), inputs=[(4, 3)],
                               input_names=["x"])
    if not result.passed:
        return result
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, size=(4, 3))
    t = rng.uniform(0.5, 2.0, size=(4, 3)) * rng.choice([-1.0, 1.0], size=(4, 3))
    got = _tangent(SigmoidFunction, x, t)
    s = 1 / (1 + np.exp(-x))
    want = t * s * (1 - s)
    if got.shape != want.shape:
        raise CheckFailed(f"jvp returned a tangent of shape {got.shape}; it must have the output's shape "
                          f"{want.shape}.")
    if not np.allclose(got, want, rtol=1e-6, atol=1e-9):
        diagnoses = [
            (-want, "the tangent has the wrong sign: sigma'(x) = y (1 - y) is positive, return x_t * y * (1 - y)."),
            (s * (1 - s), "the tangent is y (1 - y) whatever x_t is: multiply by the input's tangent x_t "
                          "(jvp computes J v, the derivative times the direction)."),
            (t * s, "the tangent is x_t * y: the factor (1 - y) is missing, sigma'(x) = y (1 - y)."),
            (t * (1 - s), "the tangent is x_t * (1 - y): the factor y is missing, sigma'(x) = y (1 - y)."),
            (t * x * (1 - x), "the tangent is x_t * x * (1 - x): that uses the input x where the formula needs "
                              "the output y = sigma(x); save the output with ctx.save_for_forward(y)."),
            (t * s * s, "the tangent is x_t * y * y: sigma'(x) = y (1 - y), not y squared."),
        ]
        for value, why in diagnoses:
            if np.allclose(got, value, rtol=1e-6, atol=1e-9):
                raise CheckFailed(why)
        i = np.unravel_index(int(np.argmax(np.abs(got - want))), want.shape)
        raise CheckFailed(f"at x = {x[i]:.4g} with tangent x_t = {t[i]:.4g} the output's tangent should be "
                          f"x_t * y * (1 - y) = {want[i]:.6g}, your jvp gives {got[i]:.6g}.")
    xt = minigrad.tensor(np.linspace(-3, 3, 7), dtype=minigrad.float64, requires_grad=True)
    try:
        minigrad.autograd.gradcheck(SigmoidFunction.apply, (xt,), check_forward_ad=True)
    except Exception as e:  # noqa: BLE001  (any failure of gradcheck is the learner's to see)
        raise CheckFailed(f"the tangents are right, but gradcheck(..., check_forward_ad=True) fails: "
                          f"{_first_line(e)}") from None
    return (result.message + "\n  - jvp: the output's tangent is x_t * y * (1 - y) on random inputs and "
            "tangents, and gradcheck(check_forward_ad=True) passes")


# ------------------------------------------------------------------------------------------ ex2
def _vmap_call(SquareV, batch, in_dims=0):
    try:
        return minigrad.vmap(SquareV.apply, in_dims=in_dims)(batch)
    except RuntimeError as e:
        text = str(e)
        if "setup_context" in text:
            raise CheckFailed("vmap refuses SquareV: " + _first_line(e).split(":", 1)[1].strip()[:90]
                              + "... Write forward(x) without ctx, and save in "
                                "setup_context(ctx, inputs, output).") from None
        if "vmap support" in text:
            raise CheckFailed("vmap does not know how to batch SquareV: add a staticmethod "
                              "vmap(info, in_dims, x) that returns (output, out_dims).") from None
        if "data pointer" in text or "NumPy" in text or "numpy" in text:
            raise CheckFailed("under vmap, forward received a batched tensor and could not turn it into a "
                              "NumPy array: generate_vmap_rule = True cannot see into NumPy. Write a vmap "
                              "staticmethod instead (and leave generate_vmap_rule False).") from None
        raise CheckFailed(f"vmap(SquareV.apply) raised {_first_line(e)}") from None
    except Exception as e:  # noqa: BLE001
        raise CheckFailed(f"vmap(SquareV.apply) raised {_first_line(e)}") from None


@exercise("ch11-ex2", points=2, title="Make a NumPy Function vmap-compatible", minutes=20,
          objective="write setup_context and a vmap staticmethod, so that vmap and per-sample gradients work")
def _check_square_vmap(SquareV: Any):
    if not _is_function(SquareV):
        raise CheckFailed("pass the class SquareV (a subclass of Function).")
    result = diagnose_function(SquareV, lambda x: x ** 2, inputs=[(4, 3)], input_names=["x"])
    if not result.passed:
        return result
    rng = np.random.default_rng(12)
    batch = minigrad.tensor(rng.normal(size=(5, 3)), dtype=minigrad.float64)
    got = _vmap_call(SquareV, batch)
    if not isinstance(got, minigrad.Tensor) or tuple(got.shape) != (5, 3):
        shape = tuple(got.shape) if isinstance(got, minigrad.Tensor) else type(got).__name__
        raise CheckFailed(f"vmap(SquareV.apply) over a batch of 5 rows of 3 returned {shape}, expected (5, 3): "
                          "the rule must return (output, out_dims), with out_dims where the output's batch "
                          "dimension is (in_dims[0] for an elementwise Function).")
    if not np.allclose(got.numpy(), batch.numpy() ** 2):
        if np.allclose(got.numpy(), (batch.numpy() ** 2).T.reshape(5, 3)):
            raise CheckFailed("vmap(SquareV.apply) returns the squares in the wrong layout: out_dims must say "
                              "where the output's batch dimension is, in_dims[0].")
        raise CheckFailed("vmap(SquareV.apply) over a batch does not give x ** 2 for each row: the rule "
                          "should call SquareV.apply on the whole batch and return (output, in_dims[0]).")
    cols = _vmap_call(SquareV, batch, in_dims=1)
    if tuple(cols.shape) != (3, 5) or not np.allclose(cols.numpy(), (batch.numpy() ** 2).T):
        raise CheckFailed("with the batch dimension last (vmap(..., in_dims=1)) the result is not the squares "
                          "of each column, shape (3, 5): return out_dims = in_dims[0].")
    try:
        per_sample = minigrad.vmap(minigrad.func.grad(lambda r: SquareV.apply(r).sum()))(batch)
    except Exception as e:  # noqa: BLE001
        raise CheckFailed(f"vmap works, but per-sample gradients vmap(func.grad(...)) raise "
                          f"{_first_line(e)}") from None
    if not np.allclose(per_sample.numpy(), 2 * batch.numpy()):
        raise CheckFailed("vmap works, but the per-sample gradients vmap(func.grad(lambda r: "
                          "SquareV.apply(r).sum())) are not 2 x: check backward.")
    return (result.message + "\n  - vmap over the first and over the last dimension gives the squares, "
            "and per-sample gradients vmap(func.grad(...)) are 2 x")


# ------------------------------------------------------------------------------------------ ex3
_DEPTH, _LAYERS, _WIDTH, _BATCH = 4, 3, 256, 256


def _block(Ws):
    def block(h):
        for W in Ws:
            h = minigrad.relu(h @ W)
        return h
    return block


def _blocks():
    """_DEPTH blocks of _LAYERS Linear + ReLU layers each (a block's inner activations are what checkpoint drops)."""
    rng = np.random.default_rng(13)
    weights = [minigrad.tensor(rng.normal(0, 0.06, (_WIDTH, _WIDTH)).astype(np.float32), requires_grad=True)
               for _ in range(_DEPTH * _LAYERS)]
    blocks = [_block(weights[k:k + _LAYERS]) for k in range(0, len(weights), _LAYERS)]
    x = minigrad.tensor(rng.normal(size=(_BATCH, _WIDTH)).astype(np.float32))
    return weights, blocks, x


def _plain(blocks, x):
    for b in blocks:
        x = b(x)
    return x


def _measure(forward):
    """(output, gradients, MiB held between forward and backward)."""
    weights, blocks, x = _blocks()
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            out = forward(blocks, x)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    if not isinstance(out, minigrad.Tensor):
        raise CheckFailed(f"checkpointed_forward returned {type(out).__name__}, not the output tensor.")
    if not out.requires_grad:
        raise CheckFailed("the output does not require grad, so no gradient can reach the weights: were the "
                          "blocks run under torch.no_grad(), or with use_reentrant=True (which, when the "
                          "input x needs no gradient, records nothing)? Use checkpoint(b, x, "
                          "use_reentrant=False).")
    out.sum().backward()
    grads = [None if W.grad is None else W.grad.numpy() for W in weights]
    return out.detach().numpy(), grads, held / 2 ** 20


@exercise("ch11-ex3", points=2, title="Checkpoint the blocks and prove the saving", minutes=15,
          objective="checkpoint every block of a network and measure the memory it saves")
def _check_checkpointed(checkpointed_forward: Any):
    if not callable(checkpointed_forward):
        raise CheckFailed("checkpointed_forward should be a function checkpointed_forward(blocks, x).")
    try:
        out, grads, held = _measure(checkpointed_forward)
    except CheckFailed:
        raise
    except UserWarning as w:
        raise CheckFailed(f"checkpointed_forward warned: {str(w).splitlines()[0][:220]} -- pass "
                          "use_reentrant=False to checkpoint.") from None
    except TypeError as e:
        hint = ""
        if "not callable" in str(e):
            hint = (" -- checkpoint takes the function and its inputs, checkpoint(b, x, use_reentrant=False), "
                    "not the result b(x).")
        raise CheckFailed(f"checkpointed_forward raised {_first_line(e)}{hint}") from None
    except Exception as e:  # noqa: BLE001
        raise CheckFailed(f"checkpointed_forward raised {_first_line(e)}") from None
    ref_out, ref_grads, ref_held = _measure(_plain)
    if out.shape != ref_out.shape or not np.allclose(out, ref_out, rtol=1e-5, atol=1e-6):
        raise CheckFailed("the output differs from the plain loop `for b in blocks: x = b(x)`: apply every "
                          "block, in order, each to the previous block's output, and return the last.")
    for k, (g, r) in enumerate(zip(grads, ref_grads)):
        if g is None:
            raise CheckFailed(f"after backward, weight {k} has no gradient.")
        if not np.allclose(g, r, rtol=1e-4, atol=1e-6):
            raise CheckFailed(f"the gradient of weight {k} differs from the plain loop's.")
    if held > 0.5 * ref_held:
        raise CheckFailed(f"output and gradients are right, but the memory held between forward and backward "
                          f"is {held:.1f} MiB against {ref_held:.1f} MiB for the plain loop: no saving. Run "
                          f"every block under checkpoint(b, x, use_reentrant=False).")
    return (f"right: the same output and gradients as the plain loop, and {held:.1f} MiB held between forward "
            f"and backward instead of {ref_held:.1f} MiB ({_DEPTH} blocks of {_LAYERS} layers, width {_WIDTH}, "
            f"batch {_BATCH}, measured with tracemalloc).")
