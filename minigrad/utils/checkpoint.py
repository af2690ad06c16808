"""``torch.utils.checkpoint``: trade compute for memory by recomputing a function's intermediate
results in backward instead of keeping them from forward.

* ``use_reentrant=False`` (what PyTorch recommends) is built on ``saved_tensors_hooks``: during the
  forward every tensor an operation saves is replaced by a small holder; the first backward that
  needs one of them runs the function again (grad mode on, the RNG state of the forward restored
  when ``preserve_rng_state``), keeps what the recomputation saves in the holders, and stops as
  soon as the last holder is filled (``early_stop``). The graph is the function's own graph, so
  ``autograd.grad``, ``inputs=`` and higher-order gradients work, and no warning is given when no
  input requires grad.
* ``use_reentrant=True`` (PyTorch's default when the argument is left out, with a warning) records one
  node, ``CheckpointFunctionBackward``: the forward runs under ``no_grad`` and the node's backward
  recomputes the function on detached inputs and runs a backward of its own through it.

minigrad's RNG is the one NumPy generator behind ``manual_seed``; its state is what
``preserve_rng_state`` saves and restores (so dropout masks are the same in the recomputation).
"""
from __future__ import annotations

import contextlib
import warnings
import weakref

from .. import _factories
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn"]


class CheckpointError(RuntimeError):
    """The recomputation did not save what the forward saved (PyTorch's class of the same name)."""


def noop_context_fn():
    """The default ``context_fn``: no context around the forward, none around the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


_WARN_CHECKPOINT = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)
_WARN_SEQUENTIAL = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. In "
    "version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, "
    "but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for "
    "more details on the differences between the two variants."
)
_DETERMINISM_CHECKS = ("default", "none")


def _rng_state():
    return _factories._rng[0].bit_generator.state


@contextlib.contextmanager
def _forked_rng(state):
    """Run the block with the RNG at ``state`` (None: untouched), then put back the state it had."""
    if state is None:
        yield
        return
    gen = _factories._rng[0]
    outside = gen.bit_generator.state
    gen.bit_generator.state = state
    try:
        yield
    finally:
        gen.bit_generator.state = outside


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True, **kwargs):
    """``function(*args, **kwargs)``, keeping none of its intermediate results for backward: backward
    recomputes them. The gradients are the same as without checkpointing."""
    if use_reentrant is None:
        warnings.warn(_WARN_CHECKPOINT, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
                         f"{determinism_check}")
    if not is_grad_enabled():  # nothing is recorded, so nothing to recompute
        return function(*args, **kwargs)
    forward_ctx, recompute_ctx = context_fn()
    frame = _Frame(function, args, kwargs, _rng_state() if preserve else None, recompute_ctx, early_stop,
                   determinism_check == "default")
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_ctx:
        return function(*args, **kwargs)


def _meta(t: Tensor) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Holder:
    """What a node keeps instead of a saved tensor inside a checkpoint: the recomputed tensor, once there is one."""

    __slots__ = ("value", "__weakref__")

    def __init__(self) -> None:
        self.value = None


class _StopRecomputation(Exception):
    pass


class _Frame:
    """One call of a non-reentrant checkpoint: the function, its inputs, and the holders of what it saved."""

    def __init__(self, function, args, kwargs, rng, recompute_ctx, early_stop, check_meta) -> None:
        self.function, self.args, self.kwargs, self.rng = function, args, kwargs, rng
        self.recompute_ctx, self.early_stop = recompute_ctx, early_stop
        self.holders: list = []   # weak references: a holder dies with the node that saved it
        self.metas: list | None = [] if check_meta else None

    def pack(self, t: Tensor) -> _Holder:
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        if self.metas is not None:
            self.metas.append(_meta(t))
        return holder

    def unpack(self, holder: _Holder) -> Tensor:
        if holder.value is None:
            self._recompute()
        value, holder.value = holder.value, None  # handed over once: the node frees it after its backward
        return value

    def _recompute(self) -> None:
        count = [0]
        wanted = max((i for i, ref in enumerate(self.holders) if ref() is not None), default=-1)
        problems = []

        def pack(t: Tensor):
            i = count[0]
            count[0] += 1
            if i < len(self.holders):
                holder = self.holders[i]()
                if holder is not None:
                    if self.metas is not None and _meta(t) != self.metas[i]:
                        problems.append(f"tensor at position {i}:\nsaved metadata: {self.metas[i]}\n"
                                        f"recomputed metadata: {_meta(t)}\n")
                    holder.value = t.detach()
            if self.early_stop and i >= wanted:
                raise _StopRecomputation
            return None  # the recomputation's own graph is thrown away

        def unpack(_):
            raise CheckpointError("torch.utils.checkpoint: the graph of a recomputation cannot be differentiated")

        with _forked_rng(self.rng), enable_grad(), saved_tensors_hooks(pack, unpack), self.recompute_ctx:
            try:
                self.function(*self.args, **self.kwargs)
            except _StopRecomputation:
                pass
        if (count[0] <= wanted) if self.early_stop else (count[0] != len(self.holders)):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {count[0]}.\n")
        if problems:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\n{''.join(problems)}.\n")


class CheckpointFunction(Function):
    """``use_reentrant=True``: one node; its backward recomputes the function and differentiates it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning,
                          stacklevel=2)
        ctx.run_function = run_function
        ctx.rng = _rng_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad_(t.requires_grad)
            inputs[i] = d
        with _forked_rng(ctx.rng), enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        from ..autograd.engine import backward as _backward

        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in inputs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Run ``functions`` (a list or ``nn.Sequential``) on ``input`` in ``segments`` pieces, checkpointing
    every piece but the last."""
    if use_reentrant is None:
        warnings.warn(_WARN_SEQUENTIAL, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)  # noqa: A001
    return run(end + 1, len(functions) - 1)(input)
