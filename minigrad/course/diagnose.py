"""Diagnostic checks for custom autograd Functions: what is wrong, not just *that* it is wrong.

``diagnose_function`` runs the learner's Function (or any callable built on it) and a reference
on the same float64 inputs, chosen away from the kinks of the function, and compares:

1. the forward output (shape and values);
2. what ``backward`` returns when called directly: how many gradients, their shapes;
3. the gradients (vector-Jacobian products for random grad_outputs) against the reference's:
   the reference is differentiated with minigrad's built-in autograd or, if it is not
   differentiable (e.g. plain NumPy), with central finite differences;
4. the same gradients through the engine (``minigrad.autograd.grad``).

On a mismatch it names the likely bug: sign flipped, gradient not multiplied by grad_output,
a constant factor off (and the factor), gradients returned in the wrong order, a mask on the
wrong side of a kink, the wrong value exactly at a kink, a forward that changes its input in
place, a saved intermediate that makes the second derivative wrong, a wrong shape or a missing
reduction over a broadcast dimension, the wrong number of returned gradients, or an exception in
forward/backward; and it shows a few entries where the values differ.
"""
from __future__ import annotations

import inspect
import traceback
from typing import Any, Callable, Sequence

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.course._seed import check_seed

from . import CheckResult
from ._i18n import _, current_language

__all__ = ["diagnose_function", "make_inputs", "compare_arrays", "Diagnosis"]


class Diagnosis(Exception):
    """Internal: a named bug found by the diagnosis."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# ---------------------------------------------------------------------------------- inputs
def make_inputs(shapes: Sequence[Sequence[int]], *, seed: int = 0, low: float = -2.0, high: float = 2.0,
                kinks: Sequence[float] = (), margin: float = 0.2) -> list[np.ndarray]:
    """Random float64 arrays of the given shapes with no entry within ``margin`` of a kink."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes:
        x = rng.uniform(low, high, size=tuple(shape))
        for k in kinks:
            near = np.abs(x - k) < margin
            side = np.where(x >= k, 1.0, -1.0)
            # push onto the nearer side, alternating so both sides stay populated
            x = np.where(near, k + side * (margin + rng.uniform(0.05, 0.5, size=x.shape)), x)
        out.append(x.astype(np.float64))
    return out


def _grad_outputs(shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(10_000 + seed)
    mag = rng.uniform(0.5, 2.0, size=shape)
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return (mag * sign).astype(np.float64)


# ------------------------------------------------------------------------------ formatting
def _f(v: float) -> str:
    return f"{v:.4g}"


def _factor_words(c: float) -> str:
    if c > 1:
        return _("{c} times too large").format(c=_f(c))
    if c > 0:
        return _("{c} times the right value ({inverse} times too small)").format(c=_f(c), inverse=_f(1 / c))
    return _("{c} times the right value (wrong sign and scaled by {minus_c})").format(c=_f(c), minus_c=_f(-c))


def _table(idx_arrays, expected, got, inputs_named, max_show: int) -> str:
    """A few entries where ``got`` differs from ``expected``, with the inputs there."""
    lines = []
    for idx in idx_arrays[:max_show]:
        idx = tuple(int(i) for i in idx)
        ins = ", ".join(f"{n}={_f(float(a[idx]))}" for n, a in inputs_named if a.shape == expected.shape)
        lines.append("    " + _("at {index}: ").format(index=list(idx)) + (f"{ins}, " if ins else "")
                     + _("expected {expected}, got {got}").format(expected=_f(float(expected[idx])),
                                                                 got=_f(float(got[idx]))))
    return "  " + _("where they differ (first entries):") + "\n" + "\n".join(lines) if lines else ""


# ------------------------------------------------------------------------------ comparing
def _close(a, b, atol, rtol) -> np.ndarray:
    return np.abs(a - b) <= atol + rtol * np.abs(b)


def _sum_to(g: np.ndarray, shape: tuple) -> np.ndarray | None:
    """Sum a broadcast-shaped array back to ``shape`` (None if ``shape`` does not broadcast to it)."""
    try:
        np.broadcast_shapes(shape, g.shape)
    except ValueError:
        return None
    if np.broadcast_shapes(shape, g.shape) != g.shape:
        return None
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def compare_arrays(got: np.ndarray, expected: np.ndarray, *, what: str, atol: float = 1e-6,
                   rtol: float = 1e-5, inputs_named=(), max_show: int = 4,
                   kinks: Sequence[float] = (), grad_output: np.ndarray | None = None,
                   kink_input: np.ndarray | None = None, kink_name: str = "x") -> None:
    """Raise :class:`Diagnosis` naming how ``got`` differs from ``expected`` (shapes already equal)."""
    ok = _close(got, expected, atol, rtol)
    if ok.all():
        return
    bad = np.argwhere(~ok) if got.ndim else np.zeros((1, 0), dtype=int)
    n_bad, n = int((~ok).sum()), ok.size
    table = _table(bad, expected, got, inputs_named, max_show)
    scale = float(np.abs(expected).max()) if expected.size else 0.0
    if scale > atol and np.allclose(got, -expected, atol=atol, rtol=rtol):
        raise Diagnosis("sign", _("{what} has the wrong sign: it is exactly minus the expected value "
                                  "(look for a missing or extra minus sign).").format(what=what) + f"\n{table}")
    denom = float(np.sum(expected * expected))
    if denom > 0:
        c = float(np.sum(got * expected) / denom)
        if abs(c) > 1e-8 and abs(c - 1) > 1e-6 and np.allclose(got, c * expected, atol=atol, rtol=rtol):
            raise Diagnosis("factor", _("{what} is off by a constant factor: it is {factor} "
                                        "(got = {c} x expected everywhere). Look for a missing or extra constant "
                                        "(a 2 from a square, a 1/2 from a square root, a slope, ...).")
                            .format(what=what, factor=_factor_words(c), c=_f(c)) + f"\n{table}")
    # piecewise behaviour around kinks (elementwise functions)
    if kink_input is not None and kink_input.shape == got.shape and grad_output is not None \
            and grad_output.shape == got.shape and kinks:
        g_nz = np.abs(grad_output) > 1e-12
        r = np.where(g_nz, got / np.where(g_nz, grad_output, 1), np.nan)
        e = np.where(g_nz, expected / np.where(g_nz, grad_output, 1), np.nan)
        for k in kinks:
            above, below = (kink_input > k) & g_nz, (kink_input < k) & g_nz
            if not above.any() or not below.any():
                continue
            ea, eb = e[above], e[below]
            if np.ptp(ea) < 1e-9 and np.ptp(eb) < 1e-9 and abs(ea[0] - eb[0]) > 1e-9:
                if (np.allclose(r[above], eb[0], atol=atol, rtol=rtol)
                        and np.allclose(r[below], ea[0], atol=atol, rtol=rtol)):
                    raise Diagnosis("mask", f"{what} uses a mask on the wrong side of the kink at {kink_name} = {_f(k)}: "
                                    f"where {kink_name} > {_f(k)} you use the slope that belongs to {kink_name} < {_f(k)} "
                                    f"and the other way round (expected local slope {_f(ea[0])} above, {_f(eb[0])} "
                                    f"below). Check the comparison that builds the mask ({kink_name} > {_f(k)} vs "
                                    f"{kink_name} < {_f(k)}) and which side gets which factor.\n{table}")
            wrong = ~ok
            if wrong[above].all() and not wrong[below].any():
                raise Diagnosis("one-side", f"{what} is right where {kink_name} < {_f(k)} but wrong everywhere "
                                f"{kink_name} > {_f(k)}: check that branch of your formula or mask.\n{table}")
            if wrong[below].all() and not wrong[above].any():
                raise Diagnosis("one-side", f"{what} is right where {kink_name} > {_f(k)} but wrong everywhere "
                                f"{kink_name} < {_f(k)}: check that branch of your formula or mask.\n{table}")
    raise Diagnosis("values", _("{what} differs from the expected value in {n_bad} of {n} entries.")
                    .format(what=what, n_bad=n_bad, n=n) + f"\n{table}")


# ------------------------------------------------------------------------------ running
def _as_array(t: Any) -> np.ndarray:
    if isinstance(t, minigrad.Tensor):
        return np.asarray(t.detach().numpy(), dtype=np.float64)
    return np.asarray(t, dtype=np.float64)


def _where_raised(e: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if "minigrad/" not in f.filename.replace("\\", "/") or "minigrad/course/exercises" in f.filename]
    if not frames:
        return ""
    f = frames[-1]
    return f"\n    at line {f.lineno} in {f.name}: {(f.line or '').strip()}"


def _is_function_class(fn) -> bool:
    return inspect.isclass(fn) and issubclass(fn, Function)


def _display_name(fn) -> str:
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "your function" if name.startswith("<") else name


def diagnose_function(fn: Any, reference: Callable, inputs: Sequence[Sequence[int]] | Callable, *,
                      args: Sequence[Any] = (), reference_backward: Callable | None = None,
                      kinks: Sequence[float] = (), at_kinks: dict | None = None, margin: float = 0.2,
                      low: float = -2.0, high: float = 2.0, seed: int = 0, trials: int = 2,
                      atol: float = 1e-6, rtol: float = 1e-5, double_backward: bool = False,
                      input_names: Sequence[str] | None = None, arg_names: Sequence[str] | None = None,
                      max_show: int = 4, fd_eps: float = 1e-6) -> CheckResult:
    """Check a custom autograd Function against a reference and name the likely bug.

    fn: a ``Function`` subclass (called as ``fn.apply(*tensors, *args)``) or any callable of tensors.
    reference: callable with the same signature computing the right answer, written with minigrad
        built-ins (differentiated by autograd) or returning a NumPy array (differentiated by finite
        differences).
    inputs: the shapes of the tensor inputs, e.g. ``[(4, 5)]``, or a callable ``seed -> list of arrays``.
    args: non-tensor arguments appended after the tensors (e.g. a slope); backward must return
        ``None`` for each of them.
    reference_backward: optional ``(grad_output, *input_arrays) -> tuple of arrays``, used instead of
        differentiating ``reference``.
    kinks: points where the function is not differentiable (e.g. ``[0.0]`` for ReLU): inputs stay
        ``margin`` away from them, and a gradient that is wrong on one side of a kink is reported so.
    at_kinks: ``{kink: slope}`` or ``{kink: (slope, why)}``: the gradient required at exactly the
        kink (the convention), checked on a one-input elementwise Function; ``why`` is shown
        when it is wrong (e.g. "PyTorch's relu").
    double_backward: also run ``gradgradcheck`` (second derivatives), and name a saved
        intermediate as the likely cause when it fails.

    Every call also checks that forward leaves its inputs unchanged (no in-place writes).
    """
    fname = _display_name(fn)
    call = fn.apply if _is_function_class(fn) else fn
    if not callable(call):
        return CheckResult(False, f"expected a Function subclass or a callable, got {type(fn).__name__}.")
    verified: list[str] = []
    seed = check_seed(seed)  # the public seed in a self-check, a fresh one in each grading run
    try:
        for trial in range(trials):
            arrays = (inputs(seed + trial) if callable(inputs) else
                      make_inputs(inputs, seed=seed + trial, low=low, high=high, kinks=kinks, margin=margin))
            arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
            names = list(input_names or (["x"] if len(arrays) == 1 else [f"input{i}" for i in range(len(arrays))]))
            _one_trial(fn, fname, call, reference, reference_backward, arrays, names, list(args),
                       list(arg_names or [f"argument {len(arrays) + j}" for j in range(len(args))]),
                       kinks, atol, rtol, max_show, fd_eps, seed + trial, verified)
        if at_kinks:
            _check_at_kinks(call, fname, args, at_kinks, verified)
        if double_backward:
            _check_double_backward(fn, fname, call, arrays, args, verified)
    except Diagnosis as d:
        text = str(d)
        if current_language() == "en":  # "The gradient for x ..."; Chinese has no capitals ("x 的梯度")
            text = text[:1].upper() + text[1:]
        return CheckResult(False, text, details={"kind": d.kind})
    shapes = ", ".join(str(tuple(a.shape)) for a in arrays)
    away = ((_(", away from the kinks at {kinks}") if len(kinks) > 1 else _(", away from the kink at {kinks}"))
            .format(kinks=", ".join(_f(k) for k in kinks)) if kinks else "")
    msg = (_("{function} is correct. Checked on {trials} sets of random float64 inputs of shape {shapes}{away}:")
           .format(function=fname, trials=trials, shapes=shapes, away=away) + "\n"
           + "\n".join(f"  - {v}" for v in dict.fromkeys(verified)))
    return CheckResult(True, msg, details={"kind": "ok"})


def _check_at_kinks(call, fname, args, at_kinks, verified):
    """The gradient at exactly each kink must be the convention's (random inputs never land there)."""
    for k, rule in at_kinks.items():
        slope, why = rule if isinstance(rule, tuple) else (rule, "")
        G = np.array([1.7])
        x = minigrad.from_numpy(np.array([float(k)])).requires_grad_()
        out = _fwd(call, [x], args, f"{fname} forward")
        try:
            (g,) = minigrad.autograd.grad(out, [x], minigrad.from_numpy(G.copy()), allow_unused=True)
        except NotImplementedError:
            raise
        except Exception as e:
            raise Diagnosis("backward-raised", f"backpropagating through {fname} at x = {_f(k)} raised "
                            f"{type(e).__name__}: {str(e).strip()}{_where_raised(e)}") from None
        got = 0.0 if g is None else float(_as_array(g).reshape(-1)[0]) / G[0]
        if abs(got - slope) > 1e-9:
            raise Diagnosis("kink", _("{function} is right away from x = {k}, but at exactly x = {k} its "
                                      "gradient is {got} times grad_output; the convention there is {slope}")
                            .format(function=fname, k=_f(k), got=_f(got), slope=_f(slope))
                            + (f" ({why})" if why else "")
                            + _(". Check which comparison (> or >=, < or <=) decides the value at {k}.").format(k=_f(k)))
    points = ", ".join(_("{value} at x = {k}").format(value=_f(rule[0] if isinstance(rule, tuple) else rule), k=_f(k))
                       for k, rule in at_kinks.items())
    verified.append(_("the gradient at exactly the kink follows the convention ({points})").format(points=points))


def _check_double_backward(fn, fname, call, arrays, args, verified):
    """gradgradcheck; a failure with a saved intermediate is named as such."""
    xs = [minigrad.from_numpy(a.copy()).requires_grad_() for a in arrays]
    try:
        ok = minigrad.autograd.gradgradcheck(lambda *t: call(*t, *args), tuple(xs), raise_exception=False)
    except NotImplementedError:
        raise
    except Exception as e:
        ok, err = False, f" (it raised {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''})"
    else:
        err = ""
    if ok:
        verified.append(_("second derivatives (gradgradcheck) are right too"))
        return
    intermediate = _saved_intermediate(fn, call, arrays, args)
    if intermediate is not None:
        raise Diagnosis("saved-intermediate", f"{fname}'s gradients are right, but its second derivative is "
                        f"wrong (gradgradcheck fails{err}): forward saves a tensor ({intermediate}) that is "
                        "neither an input nor an output. Computed inside forward, it is a constant to autograd, "
                        "so differentiating backward misses how it depends on the input. Save the input and "
                        "recompute it in backward, or return it as an extra output.")
    raise Diagnosis("double-backward", f"{fname}'s gradients are right, but its second derivative is wrong "
                    f"(gradgradcheck fails{err}): write backward with minigrad operations on the saved tensors "
                    "and grad_output (no NumPy, no .detach()), so that backward can itself be differentiated.")


def _saved_intermediate(fn, call, arrays, args) -> str | None:
    """'saved_tensors[i]' if forward saved a tensor equal to no input and not to the output."""
    if not _is_function_class(fn):
        return None
    xs = [minigrad.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = call(*xs, *args)
    node = getattr(out, "grad_fn", None)
    try:
        saved = node.saved_tensors if node is not None else ()
    except Exception:
        return None
    known = [a for a in arrays] + [_as_array(out)]
    for i, t in enumerate(saved):
        if t is None or not t.is_floating_point():
            continue
        v = _as_array(t)
        if not any(v.shape == k.shape and np.array_equal(v, k) for k in known):
            return f"saved_tensors[{i}]"
    return None


def _fwd(call, tensors, args, what):
    try:
        return call(*tensors, *args)
    except NotImplementedError:
        raise
    except Exception as e:
        raise Diagnosis("forward-raised", f"{what} raised {type(e).__name__}: {e}{_where_raised(e)}") from None


def _one_trial(fn, fname, call, reference, reference_backward, arrays, names, args, arg_names, kinks,
               atol, rtol, max_show, fd_eps, seed, verified):
    named = list(zip(names, arrays))
    kink_input = arrays[0] if len(arrays) == 1 else None
    # ---- forward
    xs = [minigrad.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = _fwd(call, xs, args, f"{fname} forward")
    for name, a, x in zip(names, arrays, xs):
        now = _as_array(x)
        if now.shape != a.shape or not np.array_equal(now, a, equal_nan=True):
            raise Diagnosis("in-place", f"{fname} forward changed its input {name} in place: the caller's tensor "
                            "is not the same after the call. Work on a copy (input.clone()) or use out-of-place "
                            "operations (torch.where, x * 2, ...), never x[...] = ..., += or a method ending in _.")
    if isinstance(out, (tuple, list)):
        raise Diagnosis("forward-type", f"{fname} returned {len(out)} outputs; this exercise expects a single tensor.")
    if not isinstance(out, minigrad.Tensor):
        raise Diagnosis("forward-type", f"{fname} forward returned a {type(out).__name__}, not a minigrad Tensor. "
                        "Wrap NumPy results with minigrad.tensor(...) / from_numpy(...).")
    ref_xs = [minigrad.from_numpy(a.copy()).requires_grad_() for a in arrays]
    ref_out = reference(*ref_xs, *args)
    want = _as_array(ref_out)
    got = _as_array(out)
    if got.shape != want.shape:
        raise Diagnosis("forward-shape", f"{fname} forward returned shape {tuple(got.shape)}, expected {tuple(want.shape)}.")
    compare_arrays(got, want, what=_("the forward output of {function}").format(function=fname), atol=atol, rtol=rtol, inputs_named=named,
                   max_show=max_show)
    verified.append(_("forward: values and shape match the reference; the inputs are left unchanged"))
    if not out.requires_grad:
        raise Diagnosis("no-grad", f"the output of {fname} does not require grad although its input does: "
                        "call it through .apply(...) and return a new tensor computed from the inputs.")

    # ---- expected gradients (two different grad_outputs, to see whether backward uses them)
    G1 = _grad_outputs(want.shape, seed)
    G2 = _grad_outputs(want.shape, seed + 500) * 1.7
    exp1 = _reference_grads(reference, reference_backward, arrays, args, ref_out, ref_xs, G1, fd_eps)
    exp2 = _reference_grads(reference, reference_backward, arrays, args, None, None, G2, fd_eps)

    # ---- the raw return value of backward (Function subclasses): count and shapes
    n_args = len(arrays) + len(args)
    if _is_function_class(fn) and type(out.grad_fn).__dict__.get("_forward_cls", getattr(type(out.grad_fn), "_forward_cls", None)) is fn:
        raw = _raw_backward(fn, fname, out, G1)
        res = raw if isinstance(raw, (tuple, list)) else (raw,)
        res = list(res)
        returned = len(res)
        while len(res) > n_args and res[-1] is None:
            res.pop()  # trailing Nones beyond the arguments: PyTorch ignores them
        if len(res) != n_args:
            who = ", ".join(names + arg_names)
            hint = (f" Return one value per forward argument ({who}), using None for the non-tensor ones "
                    f"({', '.join(arg_names)})." if args else f" Return one gradient per forward argument ({who}).")
            raise Diagnosis("count", f"{fname}.backward returned {len(res)} value(s) but forward takes {n_args} "
                            f"argument(s): wrong number of returned gradients.{hint}")
        for j, arg_name in enumerate(arg_names):
            if res[len(arrays) + j] is not None:
                raise Diagnosis("non-tensor", f"{fname}.backward returned a gradient for {arg_name}, which is not a "
                                f"tensor (it is {type(args[j]).__name__} {args[j]!r}): return None in its place.")
        for i, (name, a) in enumerate(zip(names, arrays)):
            g = res[i]
            if g is None:
                raise Diagnosis("none", f"{fname}.backward returned None for {name}, which requires a gradient.")
            ga = _as_array(g)
            if ga.shape != a.shape:
                _shape_diagnosis(fname, name, a, ga, exp1[i], atol, rtol)
        extra = returned - n_args
        verified.append(_("backward returns one value per forward argument ({n}), each of its input's shape")
                        .format(n=n_args)
                        + (_(" (and {extra} extra trailing None, which the engine ignores)").format(extra=extra)
                           if extra > 0 else ""))

    # ---- the gradients through the engine
    got1 = _engine_grads(call, fname, arrays, args, G1)
    got2 = _engine_grads(call, fname, arrays, args, G2)
    for i, name in enumerate(names):
        g1, g2, e1, e2 = got1[i], got2[i], exp1[i], exp2[i]
        if g1 is None:
            g1 = np.zeros_like(arrays[i])
            g2 = np.zeros_like(arrays[i])
        if g1.shape != arrays[i].shape:
            _shape_diagnosis(fname, name, arrays[i], g1, e1, atol, rtol)
        if not _close(g1, e1, atol, rtol).all():
            # not multiplied by grad_output: the result does not change when grad_output does
            if np.allclose(g1, g2, atol=atol, rtol=rtol) and not np.allclose(e1, e2, atol=atol, rtol=rtol):
                raise Diagnosis("grad-output", f"the gradient for {name} ignores grad_output: backward must "
                                f"multiply the local derivative by the incoming gradient (chain rule), e.g. "
                                f"`return grad_output * local_derivative`. With two different grad_outputs "
                                f"your backward returned the same values.\n"
                                + _table(np.argwhere(~_close(g1, e1, atol, rtol)), e1, g1, list(zip(names, arrays)), max_show))
            swapped = [other for j, other in enumerate(names) if j != i and exp1[j].shape == g1.shape
                       and _close(g1, exp1[j], atol, rtol).all() and not _close(exp1[j], e1, atol, rtol).all()]
            if swapped:
                raise Diagnosis("swapped", f"the gradient for {name} is the one that belongs to {swapped[0]}: "
                                f"backward must return the gradients in the order of forward's arguments "
                                f"({', '.join(names + arg_names)}).")
            compare_arrays(g1, e1, what=_("the gradient for {name}").format(name=name), atol=atol, rtol=rtol,
                           inputs_named=named, max_show=max_show, kinks=kinks, grad_output=G1,
                           kink_input=arrays[i] if g1.shape == G1.shape else kink_input, kink_name=name)
        if not _close(g2, e2, atol, rtol).all():
            compare_arrays(g2, e2, what=_("the gradient for {name} (second grad_output)").format(name=name), atol=atol, rtol=rtol,
                           inputs_named=named, max_show=max_show)
    src = _("finite differences of the reference") if reference_backward is None and not _differentiable(ref_out) \
        else _("the reference gradients")
    verified.append(_("gradients (vector-Jacobian products for 2 random grad_outputs) match {source}").format(source=src))
    verified.append(_("backward multiplies by grad_output (chain rule)"))


def _differentiable(t) -> bool:
    return isinstance(t, minigrad.Tensor) and t.requires_grad


def _raw_backward(fn, fname, out, G):
    ctx = out.grad_fn
    try:
        return fn.backward(ctx, minigrad.from_numpy(G.copy()))
    except NotImplementedError:
        raise
    except Exception as e:
        raise Diagnosis("backward-raised", f"{fname}.backward raised {type(e).__name__}: {e}{_where_raised(e)}") from None


def _engine_grads(call, fname, arrays, args, G) -> list:
    xs = [minigrad.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = _fwd(call, xs, args, f"{fname} forward")
    try:
        gs = minigrad.autograd.grad(out, xs, minigrad.from_numpy(G.copy()), allow_unused=True)
    except NotImplementedError:
        raise
    except Exception as e:
        raise Diagnosis("backward-raised", f"backpropagating through {fname} raised {type(e).__name__}: "
                        f"{str(e).strip()}{_where_raised(e)}") from None
    return [None if g is None else _as_array(g) for g in gs]


def _shape_diagnosis(fname, name, a, g, expected, atol, rtol):
    reduced = _sum_to(g, a.shape)
    if reduced is not None:
        lead = g.ndim - a.ndim
        dims = list(range(lead)) + [lead + i for i, s in enumerate(a.shape) if s == 1 and g.shape[lead + i] != 1]
        ok = np.allclose(reduced, expected, atol=atol, rtol=rtol)
        raise Diagnosis("broadcast", f"the gradient for {name} has shape {tuple(g.shape)} but {name} has shape "
                        f"{tuple(a.shape)}: missing reduction over the broadcast dimension(s) {dims}. {name} was "
                        f"broadcast in forward, so its gradient must be summed over those dimensions"
                        + (" (keepdim=True where it had size 1)" if any(s == 1 for s in a.shape) else "")
                        + (". After that sum your values would be right." if ok else "."))
    raise Diagnosis("shape", f"the gradient for {name} has the wrong shape: {tuple(g.shape)}, expected "
                    f"{tuple(a.shape)} (the shape of {name}). A gradient always has the shape of its input.")


def _reference_grads(reference, reference_backward, arrays, args, ref_out, ref_xs, G, eps) -> list:
    if reference_backward is not None:
        gs = reference_backward(G.copy(), *[a.copy() for a in arrays])
        gs = gs if isinstance(gs, (tuple, list)) else (gs,)
        return [np.zeros_like(a) if g is None else _as_array(g) for a, g in zip(arrays, gs)]
    if ref_out is None:
        ref_xs = [minigrad.from_numpy(a.copy()).requires_grad_() for a in arrays]
        ref_out = reference(*ref_xs, *args)
    if _differentiable(ref_out):
        gs = minigrad.autograd.grad(ref_out, ref_xs, minigrad.from_numpy(G.copy()), allow_unused=True)
        return [np.zeros_like(a) if g is None else _as_array(g) for a, g in zip(arrays, gs)]
    # finite differences of a non-differentiable reference (central, float64)
    grads = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        flat = g.reshape(-1)
        for j in range(a.size):
            vals = []
            for d in (eps, -eps):
                pert = [b.copy() for b in arrays]
                pert[i].reshape(-1)[j] += d
                vals.append(_as_array(reference(*[minigrad.from_numpy(p) for p in pert], *args)))
            flat[j] = float(np.sum((vals[0] - vals[1]) / (2 * eps) * G))
        grads.append(g)
    return grads
