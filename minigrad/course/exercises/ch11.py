"""Checks for chapter 11 (forward mode, function transforms, memory): a jvp for the sigmoid, a NumPy
Function made vmap-compatible, and checkpointed blocks (judged by their values and their source; a
self-check also measures the memory saved)."""
from __future__ import annotations

import ast
import tracemalloc
import warnings
from typing import Any

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.course import CheckFailed, exercise
from minigrad.course._structure import _dotted
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
# The verdict: output and weight gradients equal the plain loop's (on two networks of different
# depths), and the source of checkpointed_forward runs every block through checkpoint(...,
# use_reentrant=False) (_checkpoints_every_block). The memory saving is measured with tracemalloc and
# reported by a self-check only: graded, the student's code runs in another process, and a number it
# reports could be anything, so it decides nothing there, and so nothing here either.
_DEPTH, _LAYERS, _WIDTH, _BATCH = 4, 3, 256, 256   # the network whose memory a self-check measures
_NETWORKS = [(4, 3, 24, 6), (3, 2, 16, 5)]         # (blocks, layers per block, width, batch): the values
_CKPT = "minigrad.utils.checkpoint.checkpoint"
_CKPT_SEQ = "minigrad.utils.checkpoint.checkpoint_sequential"
_REDUCE = "functools.reduce"
MEMORY_NOTE = "Memory held between forward and backward"  # the self-check's report starts so


def _network(mg, network: tuple, rng, dtype=np.float64):
    """Blocks of Linear + ReLU layers (minigrad.nn modules of ``mg``: the worker's minigrad when graded,
    so that the blocks run in the student's process, with no call back to the judge), their Linear
    layers, the input, and the values drawn here from ``rng``: the weights (shape (out, in)) and x."""
    depth, layers, width, batch = network
    weights = [rng.normal(0, 1.2 / np.sqrt(width), (width, width)).astype(dtype) for _ in range(depth * layers)]
    x_data = rng.normal(size=(batch, width)).astype(dtype)
    blocks, linears = [], []
    for k in range(depth):
        mods = []
        for w in weights[k * layers:(k + 1) * layers]:
            lin = mg.nn.Linear(width, width, bias=False, dtype=getattr(mg, np.dtype(dtype).name))
            with minigrad.no_grad():  # the judge's grad mode: a graded copy_ is asked for without grad
                lin.weight.copy_(mg.tensor(w))
            linears.append(lin)
            mods += [lin, mg.nn.ReLU()]
        blocks.append(mg.nn.Sequential(*mods))
    return blocks, linears, mg.tensor(x_data), weights, x_data


def _plain(blocks, x):
    for b in blocks:
        x = b(x)
    return x


def _reference(weights: list, x: np.ndarray, depth: int, layers: int):
    """The plain loop, computed here with this process's minigrad: (output, weight gradients)."""
    Ws = [minigrad.tensor(w, requires_grad=True) for w in weights]
    h = minigrad.tensor(x)
    for W in Ws:
        h = minigrad.relu(h @ W.T)
    h.sum().backward()
    return h.detach().numpy(), [W.grad.numpy() for W in Ws]


def _on(network: tuple) -> str:
    return f"(on {network[0]} blocks of {network[1]} layers)"


def _run(checkpointed_forward, mg, network: tuple, seed: int):
    """Run the learner's function on one network: its output and weight gradients (arrays), and the
    weights and input drawn here (the reference is computed from these, never from what comes back)."""
    from minigrad.course import _remote

    blocks, linears, x, weights, x_data = _network(mg, network, np.random.default_rng(seed))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            out = checkpointed_forward(blocks, x)
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
        raise CheckFailed(f"checkpointed_forward raised {_first_line(e)} {_on(network)}{hint}") from None
    except Exception as e:  # noqa: BLE001
        raise CheckFailed(f"checkpointed_forward raised {_first_line(e)} {_on(network)}") from None
    if not _remote.instance_of(out, mg.Tensor):
        raise CheckFailed(f"checkpointed_forward returned {_type_name(out)}, not the output tensor.")
    if out.requires_grad is not True:
        raise CheckFailed("the output does not require grad, so no gradient can reach the weights: were the "
                          "blocks run under torch.no_grad(), or with use_reentrant=True (which, when the "
                          "input x needs no gradient, records nothing)? Use checkpoint(b, x, "
                          "use_reentrant=False).")
    try:
        out.sum().backward()
    except Exception as e:  # noqa: BLE001
        raise CheckFailed(f"out.sum().backward() on checkpointed_forward's output raised {_first_line(e)}") from None
    got = np.asarray(out.detach().numpy())
    grads = []
    for lin in linears:
        g = lin.weight.grad
        grads.append(None if g is None else np.asarray(g.numpy()))
    return got, grads, weights, x_data


def _type_name(v) -> str:
    from minigrad.course import _remote

    # graded, a proxy's type name is the one the worker reports: text for the message, never a verdict
    return object.__getattribute__(v, "_name") if _remote.is_remote(v) and not isinstance(v, type) else type(v).__name__


def _compare(got, grads, weights, x_data, network: tuple) -> None:
    depth, layers = network[:2]
    ref_out, ref_grads = _reference(weights, x_data, depth, layers)
    where = _on(network)
    if got.shape != ref_out.shape or not np.allclose(got, ref_out, rtol=1e-5, atol=1e-6):
        raise CheckFailed(f"the output differs from the plain loop `for b in blocks: x = b(x)` {where}: apply "
                          "every block, in order, each to the previous block's output, and return the last.")
    for k, (g, r) in enumerate(zip(grads, ref_grads)):
        if g is None:
            raise CheckFailed(f"after backward, weight {k} (block {k // layers}) has no gradient {where}: is the "
                              "graph cut between blocks (a detach, or a block run under no_grad)?")
        if g.shape != r.shape or not np.allclose(g, r, rtol=1e-4, atol=1e-6):
            raise CheckFailed(f"the gradient of weight {k} (block {k // layers}) differs from the plain loop's "
                              f"{where}.")


# ---- the structure: every block through checkpoint(..., use_reentrant=False), read from the source
def _parents(tree: ast.AST) -> dict:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _line(node: ast.AST, fn: ast.FunctionDef) -> str:
    return f"line {node.lineno - fn.lineno + 1} of checkpointed_forward"


def _code(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _checkpoints_every_block(src) -> str | None:
    """Why the function does not run every block through checkpoint(..., use_reentrant=False), or None.

    Read from the source (never run). ``blocks`` is the first parameter. A *block* is a name that a
    ``for`` or a comprehension takes from ``blocks`` (``for b in blocks``, ``for i, b in
    enumerate(blocks)``, a slice of it), the block parameter of a lambda given to
    ``functools.reduce(..., blocks, x)``, or ``blocks[i]``. Accepted: every checkpoint call has
    ``use_reentrant=False`` and a block as its first argument (or ``lambda h: b(h)``); a block is
    used nowhere else (no ``b(x)`` outside checkpoint), and ``blocks`` only where it is iterated,
    indexed, measured (``len``) or reduced. With the output and gradients right on networks of two
    depths, that is every block, in order, under checkpoint.
    """
    fn = src.node
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if len(params) < 2:
        return "checkpointed_forward should take two arguments, (blocks, x)."
    B = params[0]
    parent = _parents(fn)
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
    seq = next((c for c in calls if src.refers_to(c.func, _CKPT_SEQ)), None)
    if seq is not None:
        return (f"`{_code(seq)}` ({_line(seq, fn)}): checkpoint_sequential runs its last segment without "
                "checkpoint, so one block is not checkpointed. Loop over the blocks and run each one through "
                "checkpoint(b, x, use_reentrant=False).")
    ckpts = [c for c in calls if src.refers_to(c.func, _CKPT)]
    other = next((c for c in calls if (_dotted(c.func) or [""])[-1] == "checkpoint" and c not in ckpts), None)
    if not ckpts and other is not None:
        return (f"`{_code(other)}` ({_line(other, fn)}): this `checkpoint` is not minigrad's "
                "(minigrad.utils.checkpoint.checkpoint), so nothing is checkpointed: import it with "
                "`from minigrad.utils.checkpoint import checkpoint` and do not define a function of that name.")
    if not ckpts:
        return ("the output and gradients are right, but checkpointed_forward itself runs no block under "
                "checkpoint: no saving, every activation is kept until backward. Run every block through "
                "checkpoint(b, x, use_reentrant=False) in checkpointed_forward (from minigrad.utils.checkpoint "
                "import checkpoint).")
    for c in ckpts:
        flag = next((k.value for k in c.keywords if k.arg == "use_reentrant"), None)
        if flag is None:
            return (f"`{_code(c)}` ({_line(c, fn)}) does not say use_reentrant: pass use_reentrant=False "
                    "(the non-reentrant checkpoint this chapter uses; left out, it is the reentrant one, with a "
                    "warning).")
        if not (isinstance(flag, ast.Constant) and flag.value is False):
            return (f"`{_code(c)}` ({_line(c, fn)}): write use_reentrant=False, the non-reentrant checkpoint "
                    "this chapter uses.")

    def is_blocks(e) -> bool:  # blocks, or a slice of it
        if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
            e = e.value
        return isinstance(e, ast.Name) and e.id == B

    # the names that hold one block
    names: set = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.comprehension)):
            it, target = node.iter, node.target
            if is_blocks(it) and isinstance(target, ast.Name):
                names.add(target.id)
            elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" \
                    and it.args and is_blocks(it.args[0]) and isinstance(target, ast.Tuple) \
                    and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name):
                names.add(target.elts[1].id)
        if isinstance(node, ast.Call) and src.refers_to(node.func, _REDUCE) and len(node.args) >= 2 \
                and isinstance(node.args[0], ast.Lambda) and is_blocks(node.args[1]):
            lam = node.args[0].args.args
            if len(lam) == 2:
                names.add(lam[1].arg)
    stored = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
              and not isinstance(parent.get(id(n)), (ast.For, ast.comprehension, ast.Tuple))]
    names -= set(stored)  # a name also assigned some other way is not surely a block
    if B in stored or B in names:
        return f"checkpointed_forward assigns to {B}: leave the list of blocks as it is given."

    def is_block(e) -> bool:
        return (isinstance(e, ast.Name) and isinstance(e.ctx, ast.Load) and e.id in names) or (
            isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and e.value.id == B
            and not isinstance(e.slice, ast.Slice))

    def wrapper(lam) -> bool:  # lambda h: b(h), lambda h, b=b: b(h)
        if not (isinstance(lam, ast.Lambda) and isinstance(lam.body, ast.Call)):
            return False
        f = lam.body.func
        if is_block(f) and not (isinstance(f, ast.Name) and f.id in {a.arg for a in lam.args.args}):
            return True
        defaults = dict(zip([a.arg for a in lam.args.args][::-1], lam.args.defaults[::-1]))
        return isinstance(f, ast.Name) and f.id in defaults and is_block(defaults[f.id])

    for c in ckpts:
        first = c.args[0] if c.args else next((k.value for k in c.keywords if k.arg == "function"), None)
        if first is None or not (is_block(first) or wrapper(first)):
            return (f"`{_code(c)}` ({_line(c, fn)}): checkpoint's first argument should be one block, "
                    f"checkpoint(b, x, use_reentrant=False) for each b in {B}, so that every block is "
                    "checkpointed on its own (several blocks under one checkpoint are recomputed together in "
                    "backward, which holds all their activations again).")
    in_ckpt = {id(c.args[0]) for c in ckpts if c.args} | {id(k.value) for c in ckpts for k in c.keywords
                                                          if k.arg == "function"}
    for node in ast.walk(fn):
        if not is_block(node) or id(node) in in_ckpt:
            continue
        up = parent.get(id(node))
        if isinstance(up, ast.Call) and up.func is node:
            lam = parent.get(id(up))
            if isinstance(lam, ast.Lambda) and lam.body is up and id(lam) in in_ckpt:
                continue  # checkpoint(lambda h: b(h), x, ...)
            return (f"`{_code(up)}` ({_line(up, fn)}) runs a block outside checkpoint: its activations stay in "
                    "memory until backward. Run every block through checkpoint(b, x, use_reentrant=False), and "
                    "use what checkpoint returns.")
        if isinstance(up, ast.arguments):  # lambda h, b=b: ...: a default value
            continue
        return (f"`{_code(up if isinstance(up, ast.expr) else node)}` ({_line(node, fn)}) hands a block to "
                "something else than checkpoint: run every block through checkpoint(b, x, use_reentrant=False) "
                "itself.")
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Name) and node.id == B):
            continue
        up = parent.get(id(node))
        if isinstance(up, ast.Subscript):
            if not isinstance(up.slice, ast.Slice):
                continue  # blocks[i]: a block, checked above
            node, up = up, parent.get(id(up))
        if isinstance(up, (ast.For, ast.comprehension)) and up.iter is node:
            continue
        if isinstance(up, ast.Call) and node in up.args and (
                (isinstance(up.func, ast.Name) and up.func.id in ("len", "enumerate") and up.args[0] is node)
                or (src.refers_to(up.func, _REDUCE) and len(up.args) >= 2 and up.args[1] is node)):
            continue
        return (f"`{_code(up if isinstance(up, ast.expr) else node)}` ({_line(node, fn)}) hands {B} to "
                "something else than a loop: run every block through checkpoint(b, x, use_reentrant=False) "
                "yourself.")
    return None


def _structure_verdict(checkpointed_forward) -> str | None:
    from minigrad.course import _structure

    src = _structure.function_source(checkpointed_forward)
    if src is None:
        return ("the check reads checkpointed_forward's source to see that every block runs under checkpoint, "
                "and finds no `def checkpointed_forward(blocks, x):` to read: define it with def, in a "
                "notebook cell (a lambda or a function made at run time cannot be read).")
    return _checkpoints_every_block(src)


def _memory(forward) -> float:
    """MiB held between forward and backward by ``forward(blocks, x)`` on the measured network (here)."""
    blocks, _, x, _, _ = _network(minigrad, (_DEPTH, _LAYERS, _WIDTH, _BATCH), np.random.default_rng(13),
                                  np.float32)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = forward(blocks, x)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    out.sum().backward()
    return held / 2 ** 20


@exercise("ch11-ex3", points=2, title="Checkpoint the blocks and prove the saving", minutes=15,
          objective="checkpoint every block of a network and measure the memory it saves")
def _check_checkpointed(checkpointed_forward: Any):
    from minigrad.course import _remote
    from minigrad.course._seed import check_seed

    if not callable(checkpointed_forward):
        raise CheckFailed("checkpointed_forward should be a function checkpointed_forward(blocks, x).")
    mg = _remote.library(checkpointed_forward)  # graded: the worker's minigrad, the blocks live there
    for k, network in enumerate(_NETWORKS):
        got, grads, weights, x = _run(checkpointed_forward, mg, network, check_seed(13 + k))
        _compare(got, grads, weights, x, network)
    problem = _structure_verdict(checkpointed_forward)
    if problem is not None:
        raise CheckFailed(problem)
    message = ("right: the same output and gradients as the plain loop (on networks of "
               f"{' and '.join(str(n[0]) for n in _NETWORKS)} blocks), and every block runs under "
               "checkpoint(..., use_reentrant=False).")
    if _remote.is_remote(checkpointed_forward):
        return message
    try:  # a self-check: the saving, measured in this process, is reported (it decides nothing)
        held, plain = _memory(checkpointed_forward), _memory(_plain)
    except Exception as e:  # noqa: BLE001
        return message + f"\n{MEMORY_NOTE}: not measured ({_first_line(e)})."
    return (message + f"\n{MEMORY_NOTE}: {held:.1f} MiB instead of {plain:.1f} MiB for the plain loop "
            f"({_DEPTH} blocks of {_LAYERS} layers, width {_WIDTH}, batch {_BATCH}, measured with tracemalloc).")
