"""Check analytical gradients (backward) against finite differences.

The numerical Jacobian perturbs each input element by +-eps and uses central differences
(one column per input element); the analytical one is built row by row with ``autograd.grad``
and one-hot grad_outputs (one vector-Jacobian product per output element). It is built twice:
a backward that gives different values for the same input and grad_output is reported as
"not reentrant" unless the difference is within ``nondet_tol``, as in PyTorch. Use float64
inputs: in float32 the rounding error of the finite difference is larger than ``atol``.
"""
from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np

from .._tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when the gradients do not match."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(out) -> list:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o._data.dtype.kind == "f"]


def _fmt(a: np.ndarray) -> str:
    from .._printing import tensor_repr

    return tensor_repr(Tensor._wrap(a))


def numerical_jacobian(fn: Callable, inputs: tuple, eps: float = 1e-6) -> list:
    """J[out][inp] as arrays of shape (numel(inp), numel(out)) (PyTorch's layout).

    Column by column in the math layout: input element j is nudged by +-eps (in place, then
    restored) and the central difference of every output is row j here. ``fn`` runs in the
    caller's grad mode, as in PyTorch, so a function that differentiates internally (a
    hand-written vector-Jacobian product, gradgradcheck's) works.
    """
    outs = _differentiable_outputs(fn(*inputs))
    jac = [[None] * len(inputs) for _ in outs]
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x._rg):
            continue
        flat = x._data.reshape(-1)  # a view for contiguous inputs
        shares = np.shares_memory(flat, x._data)
        cols = [np.zeros((x._data.size, o._data.size)) for o in outs]
        for j in range(x._data.size):
            orig = flat[j].item()
            flat[j] = orig + eps
            if not shares:
                x._data[...] = flat.reshape(x._data.shape)
            plus = [o._data.astype(np.float64).reshape(-1) for o in _differentiable_outputs(fn(*inputs))]
            flat[j] = orig - eps
            if not shares:
                x._data[...] = flat.reshape(x._data.shape)
            minus = [o._data.astype(np.float64).reshape(-1) for o in _differentiable_outputs(fn(*inputs))]
            flat[j] = orig
            if not shares:
                x._data[...] = flat.reshape(x._data.shape)
            for k in range(len(outs)):
                cols[k][j] = (plus[k] - minus[k]) / (2 * eps)
        for k in range(len(outs)):
            jac[k][i] = cols[k]
    return jac


def analytical_jacobian(fn: Callable, inputs: tuple, outs: list | None = None) -> list:
    """J[out][inp] from backward, one row per output element; ``outs``: the outputs of one call of
    ``fn`` (their graph is kept), else ``fn`` is called."""
    if outs is None:
        with enable_grad():
            outs = _differentiable_outputs(fn(*inputs))
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x._rg]
    jac = [[None] * len(inputs) for _ in outs]
    for k, o in enumerate(outs):
        rows = {i: np.zeros((x._data.size, o._data.size)) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg}
        if o._rg:
            for m in range(o._data.size):
                seed = np.zeros(o._data.size, dtype=o._data.dtype)
                seed[m] = 1
                gs = _grad(o, diff_inputs, Tensor._wrap(seed.reshape(o._data.shape)), retain_graph=True,
                           allow_unused=True)
                it = iter(gs)
                for i, x in enumerate(inputs):
                    if isinstance(x, Tensor) and x._rg:
                        g = next(it)
                        if g is not None:
                            rows[i][:, m] = g._data.astype(np.float64).reshape(-1)
        for i, r in rows.items():
            jac[k][i] = r
    return jac


def gradcheck(fn: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_batched_grad: bool = False, fast_mode: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, check_batched_forward_grad: bool = False, **_ignored) -> bool:
    """True if backward agrees with finite differences for every input that requires grad.

    As in PyTorch, after the Jacobians it checks that backward multiplies by ``grad_output``
    (zero ``grad_output``, zero gradients) and, with ``check_undefined_grad`` (the default), that
    every custom Function's backward handles undefined output gradients: ``None`` after
    ``ctx.set_materialize_grads(False)``, zeros otherwise; it must return None or zeros.
    ``fast_mode`` compares one number per output/input pair, ``u^T J v`` for random unit vectors
    ``u`` and ``v``, instead of whole Jacobians (on a mismatch the report shows both Jacobians,
    recomputed in slow mode). ``check_batched_grad`` runs backward as PyTorch runs it under
    ``vmap`` would need: a backward that takes a Python number or a NumPy array out of a tensor
    (``item()``, ``tolist()``, ``numpy()``, ``float(t)``, ``if t:``) cannot be batched, and fails.
    ``check_forward_ad`` also builds the Jacobian column by column with forward-mode AD (one dual
    pass per input element, its tangent a basis vector) and compares it with finite differences;
    ``check_backward_ad=False`` leaves out every check that runs backward.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    inputs = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x._rg for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x._rg and x._data.dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or "
                "complex. ",  # PyTorch's words (minigrad has no complex dtype)
                UserWarning, stacklevel=2)
    with enable_grad():  # one call whose graph every backward below uses, as in PyTorch
        outs = _differentiable_outputs(fn(*inputs))
    try:
        if not check_backward_ad:
            pass
        elif fast_mode:
            _fast_check(fn, inputs, outs, eps, atol, rtol, nondet_tol)
        else:
            numerical = numerical_jacobian(fn, inputs, eps)
            analytical = analytical_jacobian(fn, inputs, outs)
            if len(numerical) != len(analytical):
                raise GradcheckError(
                    f"gradcheck: the function returned {len(analytical)} differentiable output(s) on the inputs "
                    f"but {len(numerical)} on the perturbed inputs; it must return the same outputs every time."
                )
            again = analytical_jacobian(fn, inputs, outs)  # the same backward again: deterministic?
            for k in range(len(numerical)):  # per output, as PyTorch: reentrancy first, then the comparison
                _check_reentrant(k, analytical[k], again[k], nondet_tol)
                _check_close(k, numerical[k], analytical[k], atol, rtol)
        if check_forward_ad:
            numerical = numerical_jacobian(fn, inputs, eps)
            forward = _forward_jacobian(fn, inputs)
            for k in range(len(numerical)):
                _check_close(k, numerical[k], forward[k], atol, rtol, forward_mode=True)
            if check_batched_forward_grad:
                _check_batched_forward_grad(fn, inputs)
        if not check_backward_ad:
            return True
        if check_batched_grad:
            _check_batched_grad(outs, inputs)
        _check_backward_mul_by_grad_output(outs, inputs)
        if check_undefined_grad:
            _check_undefined_grad(outs)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


# ---- fast mode: u^T J v for random unit vectors, instead of whole Jacobians --------------------------
_FAST_MODE_NOTE = ("\n\nThe above quantities relating the numerical and analytical jacobians are computed \n"
                   "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
                   "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n")


def _unit(rng, n: int) -> np.ndarray:
    v = rng.random(n)
    return v / np.linalg.norm(v) if n else v


def _fast_check(fn, inputs, outs, eps, atol, rtol, nondet_tol) -> None:
    """For every (output k, input i): the central difference of u_k . f_k along v_i against the
    backward's u_k^T J_ki . v_i, with ``atol`` scaled by sum(u) * sum(v), as PyTorch does."""
    rng = np.random.default_rng(0)
    us = [_unit(rng, o._data.size) for o in outs]
    diff = [(i, x) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._rg]
    vs = {i: _unit(rng, x._data.size) for i, x in diff}
    numerical = {}  # (k, i) -> u_k . (f_k(x + eps v) - f_k(x - eps v)) / (2 eps)
    fn(*inputs)  # as PyTorch's fast mode: the outputs once more, before the perturbations
    for i, x in diff:
        orig = x._data.copy()
        step = vs[i].reshape(x._data.shape).astype(x._data.dtype)
        x._data[...] = orig + eps * step
        plus = [o._data.astype(np.float64).reshape(-1) for o in _differentiable_outputs(fn(*inputs))]
        x._data[...] = orig - eps * step
        minus = [o._data.astype(np.float64).reshape(-1) for o in _differentiable_outputs(fn(*inputs))]
        x._data[...] = orig
        for k in range(len(outs)):
            numerical[k, i] = float(us[k] @ ((plus[k] - minus[k]) / (2 * eps)))

    def analytical():
        got = {}
        for k, o in enumerate(outs):
            if not o._rg:
                for i, _ in diff:
                    got[k, i] = 0.0
                continue
            seed = Tensor._wrap(us[k].reshape(o._data.shape).astype(o._data.dtype))
            gs = _grad(o, [x for _, x in diff], seed, retain_graph=True, allow_unused=True)
            for (i, x), g in zip(diff, gs):
                got[k, i] = 0.0 if g is None else float(g._data.astype(np.float64).reshape(-1) @ vs[i])
        return got

    first, second = analytical(), analytical()
    for k in range(len(outs)):
        for i, x in diff:
            a, b, n = first[k, i], second[k, i], numerical[k, i]
            if abs(a - b) > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                    "times gives different values, although analytical gradient matches numerical gradient."
                    f"The tolerance for nondeterminism was {nondet_tol}.\n\n"
                    f"In fast mode, two runs of backward for output {k} with respect to input {i} differ by "
                    f"{abs(a - b):.3g}.")
            adjusted = atol * float(us[k].sum()) * float(vs[i].sum())
            if not abs(a - n) <= adjusted + rtol * abs(n):
                num_full = numerical_jacobian(fn, inputs, eps)[k][i]
                ana_full = analytical_jacobian(fn, inputs, outs)[k][i]
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n!r}\nanalytical:{a!r}" + _FAST_MODE_NOTE
                    + f"Numerical:\n {_fmt(num_full)}\nAnalytical:\n{_fmt(ana_full)}\n\n"
                    f"The max per-element difference (slow mode) is: {np.abs(num_full - ana_full).max()}.\n")


# ---- checks after the Jacobians, as in PyTorch --------------------------------------------------------
def _check_backward_mul_by_grad_output(outs, inputs) -> None:
    """A zero grad_output must give zero gradients: a backward that forgets grad_output passes the
    Jacobian test of a one-element output (grad_output is always 1 there), not this one."""
    outs = [o for o in outs if o._rg]
    diff = [x for x in inputs if isinstance(x, Tensor) and x._rg]
    if not outs:
        return
    zeros = [Tensor._wrap(np.zeros_like(o._data)) for o in outs]
    for g in _grad(outs, diff, zeros, retain_graph=True, allow_unused=True):
        if g is not None and np.any(g._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")


_UNDEFINED_HELP = 'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'


def _custom_nodes(outs) -> list:
    """The nodes of custom Functions (not minigrad's own operations) in the graph of ``outs``."""
    found, seen = [], set()
    stack = [o.grad_fn for o in outs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        cls = getattr(node, "_forward_cls", None)
        if cls is not None and not getattr(cls, "_builtin", True):
            found.append(node)
        stack.extend(nxt for nxt, _ in getattr(node, "next_functions", ()))
    return found


def _check_undefined_grad(outs) -> None:
    """Every custom Function's backward, called with all its output gradients undefined (None
    after ``ctx.set_materialize_grads(False)``, zeros otherwise), must return None or zeros."""
    from .function import _materialize

    shapes = {id(o.grad_fn): o for o in outs if o.grad_fn is not None}  # a one-output node's output
    for node in _custom_nodes(outs):
        grads = [None] * node._n_outputs
        if node.materialize_grads:
            if node._n_outputs > 1:
                grads = _materialize(node, grads)
            elif id(node) in shapes:
                grads = [Tensor._wrap(np.zeros_like(shapes[id(node)]._data))]
            else:
                continue  # a one-output node inside the function: its output's shape is not known here
        try:
            res = node._forward_cls.backward(node, *grads)
        except RuntimeError as e:
            _warn_undefined()
            raise GradcheckError(f"Expected backward function to handle undefined output grads. {_UNDEFINED_HELP}") \
                from e
        for g in (res if isinstance(res, tuple) else (res,)):
            if isinstance(g, Tensor) and np.any(g._data != 0):
                _warn_undefined()
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                     f"undefined or zero. {_UNDEFINED_HELP}")


def _warn_undefined() -> None:
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
                  "but it may break existing callers of this function. If this is true for you, you can call this "
                  'function with "check_undefined_grad=False" to disable the feature', UserWarning, stacklevel=4)


# the methods that leave the tensor world, and the operation PyTorch names when vmap refuses them
_UNBATCHABLE = {"item": "item", "tolist": "item", "numpy": "numpy", "__bool__": "is_nonzero",
                "__float__": "item", "__int__": "item", "__index__": "item"}


def _check_batched_grad(outs, inputs) -> None:
    """PyTorch computes a batch of vector-Jacobian products at once with vmap, which cannot batch
    an operation that leaves the tensor world. minigrad checks the same property without vmap: it
    runs the backward with several random grad_outputs while those operations raise, and compares
    with one at a time."""
    outs = [o for o in outs if o._rg]
    diff = [x for x in inputs if isinstance(x, Tensor) and x._rg]
    if not outs:
        return
    rng = np.random.default_rng(1)
    seeds = [[Tensor._wrap(rng.standard_normal(o._data.shape).astype(o._data.dtype)) for o in outs]
             for _ in range(2)]
    saved = {name: getattr(Tensor, name) for name in _UNBATCHABLE}

    def refuse(name):
        def method(self, *a, **k):
            raise RuntimeError(f"Batching rule not implemented for aten::{_UNBATCHABLE[name]}. "
                               "We could not generate a fallback.")
        return method

    try:
        for name in _UNBATCHABLE:
            setattr(Tensor, name, refuse(name))
        batched = [_grad(outs, diff, s, retain_graph=True, allow_unused=True) for s in seeds]
    except RuntimeError as e:
        raise GradcheckError(
            f"While computing batched gradients, got: {e}\n\n"
            "gradcheck or gradgradcheck failed while testing batched gradient computation. "
            "(minigrad: the backward takes a Python number or a NumPy array out of a tensor, "
            "which vmap cannot batch; compute with tensor operations instead.)") from e
    finally:
        for name, method in saved.items():
            setattr(Tensor, name, method)
    for s, got in zip(seeds, batched):
        want = _grad(outs, diff, s, retain_graph=True, allow_unused=True)
        for i, (a, b) in enumerate(zip(got, want)):
            if (a is None) != (b is None) or (a is not None and not np.allclose(a._data, b._data)):
                raise GradcheckError(f"For output 0 and input {i}:\nbatched grad differs from the "
                                     "one computed one grad_output at a time.")


def _check_reentrant(k: int, ana_row: list, again_row: list, nondet_tol: float) -> None:
    for i, (a, b) in enumerate(zip(ana_row, again_row)):
        if a is not None and a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                "times gives different values, although analytical gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}.\n\n"
                f"Two runs of backward for output {k} with respect to input {i} differ by up to "
                f"{np.abs(a - b).max():.3g}. (This is checked before, and whatever, the comparison with finite "
                "differences.) If backward is meant to vary that little, e.g. a sum taken in a varying order, "
                "pass nondet_tol=<the largest acceptable difference>."
            )


def _forward_jacobian(fn: Callable, inputs: tuple) -> list:
    """J[out][inp] (layout of numerical_jacobian) from forward-mode AD: row j of J[k][i] is the
    tangent of output k when input i carries the basis tangent e_j (one dual forward pass each)."""
    from . import forward_ad as fwAD

    jac = None
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x._rg):
            continue
        n = x._data.size
        for j in range(n):
            basis = np.zeros(n, dtype=x._data.dtype)
            basis[j] = 1
            with fwAD.dual_level():
                args = list(inputs)
                args[i] = fwAD.make_dual(x, Tensor._wrap(basis.reshape(x._data.shape)))
                outs = _differentiable_outputs(fn(*args))
                if jac is None:
                    jac = [[None] * len(inputs) for _ in outs]
                for k, o in enumerate(outs):
                    if jac[k][i] is None:
                        jac[k][i] = np.zeros((n, o._data.size))
                    t = fwAD.unpack_dual(o).tangent
                    if t is not None:
                        jac[k][i][j] = np.asarray(t._data, dtype=np.float64).reshape(-1)
    return jac or []


_BATCHED_FWD_HELP = ("\ngradcheck(check_batched_forward_grad=True) ran the jvp under vmap, two random tangents at "
                     "once, and compared it with two separate jvps. An op (or a custom Function's vmap rule) that "
                     "vmap cannot batch correctly makes them differ; pass check_batched_forward_grad=False to "
                     "leave this check out.")


def _check_batched_forward_grad(fn: Callable, inputs: tuple) -> None:
    """The jvp of a batch of tangents (vmap) equals the jvps of its members, for each input."""
    from .._functorch.vmap import vmap
    from . import forward_ad as fwAD

    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x._rg and x._data.dtype.kind == "f"):
            continue

        def jvp(tangent, i=i, x=x):
            with fwAD.dual_level():
                args = tuple(fwAD.make_dual(x.detach(), tangent) if k == i else
                             (a.detach() if isinstance(a, Tensor) else a) for k, a in enumerate(inputs))
                res = []
                for o in _differentiable_outputs(fn(*args)):
                    t = fwAD.unpack_dual(o).tangent
                    res.append(t if t is not None else Tensor._wrap(np.zeros_like(o._data)))
                return tuple(res)

        rng = np.random.default_rng(i)
        tangents = [Tensor._wrap(rng.standard_normal(x._data.shape).astype(x._data.dtype)) for _ in range(2)]
        expected = [np.stack([np.asarray(t._data) for t in shards]) for shards in zip(*(jvp(t) for t in tangents))]
        try:
            got = vmap(jvp)(Tensor._wrap(np.stack([t._data for t in tangents])))
        except RuntimeError as ex:
            raise GradcheckError(f"While computing batched gradients, got: {ex}\n{_BATCHED_FWD_HELP}") from ex
        for k, (res, exp) in enumerate(zip(got, expected)):
            if not np.allclose(np.asarray(res._data), exp):
                raise GradcheckError(f"For output {k} and input {i}:\n{_BATCHED_FWD_HELP}\n\nGot:\n{_fmt(res._data)}"
                                     f"\n\nExpected:\n{_fmt(exp)}")


def _check_close(k: int, num_row: list, ana_row: list, atol: float, rtol: float, forward_mode: bool = False) -> None:
    for i, (n, a) in enumerate(zip(num_row, ana_row)):
        if n is None:
            continue
        bad = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
        if bad.any():
            where = np.argwhere(bad)[:5]
            pos = ", ".join(f"(input element {r}, output element {c}): numerical {n[r, c]:.6g}, "
                            f"analytical {a[r, c]:.6g}" for r, c in where)
            raise GradcheckError(
                f"Jacobian {'computed with forward mode ' if forward_mode else ''}mismatch for output {k} with "
                f"respect to input {i},\nnumerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n\n"
                f"The {'jvp' if forward_mode else 'backward'}'s {'tangents' if forward_mode else 'gradient'} "
                f"for input {i} disagrees with finite differences in {int(bad.sum())} "
                f"of {bad.size} entries (rows: input elements, columns: output elements). First: {pos}."
            )


def gradgradcheck(fn: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, **_ignored) -> bool:
    """gradcheck of the gradient itself: checks second derivatives (backward of backward)."""
    inputs = _as_tuple(inputs)
    with enable_grad():
        outs = _differentiable_outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(Tensor._wrap(rng.standard_normal(o._data.shape).astype(np.float64)).requires_grad_()
                             for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_order(*args):
        # Always record (the caller may be in no_grad mode): the first
        # derivative must be built with create_graph so that it can be differentiated again.
        with enable_grad():
            ins, gos = args[:n], args[n:]
            outs = [o for o in _differentiable_outputs(fn(*ins)) if o._rg]
            diff = [x for x in ins if isinstance(x, Tensor) and x._rg]
            grads = _grad(outs, diff, gos[:len(outs)], create_graph=True, allow_unused=True)
            return tuple(g if g is not None else Tensor._wrap(np.zeros_like(x._data)) for g, x in zip(grads, diff))

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)


__all__: Sequence[str] = ("gradcheck", "gradgradcheck", "GradcheckError")
