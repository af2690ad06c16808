"""The backward pass: walk the graph from the output to the leaves, once per node.

1. Every graph node has a sequence number, given when it was created; a node is always
   newer than the nodes its edges point to (they produced its inputs).
2. Start from the roots with their gradients. Repeatedly take the *newest* node that has
   received a gradient (a priority queue, no recursion, so a chain of 100,000 operations
   is fine). Every node that could still send it a gradient is newer, so has already run:
   fan-out gradients are summed before a node runs. PyTorch orders its ready queue by the
   same numbers, after counting each node's dependencies in a first pass over the graph;
   the numbering alone already guarantees that the newest waiting node is ready, so
   minigrad skips that pass (it costs as much as running a simple node).
3. Run the node's backward, check what it returned (number, type, shape; a broadcast
   input gets its gradient summed back to its shape), pass the results on.
Saved tensors are freed as each node finishes, unless ``retain_graph``.

The order of the ``AccumulateGrad`` nodes differs from PyTorch's: PyTorch gives each of them
the largest sequence number (2**64 - 1), so a leaf's gradient is stored as soon as it is
complete, which needs the dependency counts. Only a hook on a leaf can see that order, so
``backward()`` runs PyTorch's rule exactly (``_run_in_torch_order``: counts, and a copy of the
binary heap of its C++ ``std::priority_queue``, which decides between equal numbers) while a
leaf has a hook, and the loop above otherwise.
"""
from __future__ import annotations

import warnings
import weakref
from heapq import heappop, heappush
from typing import Sequence

import numpy as np

from .._functorch.batched import BatchedArray as _BatchedArray

from .._tensor import Tensor
from .anomaly_mode import _Anomaly
from .function import _FREED, AccumulateGrad, _materialize
from .grad_mode import _GradMode, _set_grad_mode


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate d(tensors)/d(leaf) into the ``.grad`` of every leaf that requires grad."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if grad_tensors is None or isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,) * len(tensors) if grad_tensors is None else (grad_tensors,)
    grads = _make_grads(tensors, tuple(grad_tensors), "backward", create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
        found = _run(tensors, grads, retain_graph, create_graph, targets=inputs, accumulate=False)
        for t, g in zip(inputs, found):
            if g is not None:
                t._grad_accumulator()._accumulate(g, create_graph)
                if t._extra is not None and t._extra.get("post_accumulate_hooks"):
                    _run_post_accumulate_hooks(t)
        return
    if _LEAF_HOOKS and _leaf_hooks_remain():
        _run_in_torch_order(tensors, grads, retain_graph, create_graph)
        return
    _run(tensors, grads, retain_graph, create_graph)


# --- PyTorch's order, for graphs whose leaves may have hooks --------------------------------------
# The leaves that have (or had) a hook: register_hook on a leaf, register_post_accumulate_grad_hook.
# {id(leaf): weak reference} (a WeakSet would compare tensors with ==). While it is empty,
# backward() pays one truth test for all of this.
_LEAF_HOOKS: dict = {}
_LAST = 2**64 - 1  # PyTorch's sequence number of every AccumulateGrad node (UINT64_MAX)


def _note_leaf_hook(leaf: Tensor) -> None:
    """Called when a hook is registered on a leaf: backward() then runs PyTorch's order."""
    key = id(leaf)
    if key not in _LEAF_HOOKS:
        _LEAF_HOOKS[key] = weakref.ref(leaf, lambda ref: _LEAF_HOOKS.pop(key, None)
                                       if _LEAF_HOOKS.get(key) is ref else None)


def _leaf_hooks_remain() -> bool:
    """Forget the leaves whose hooks were all removed; True if any leaf still has one."""
    for key, ref in list(_LEAF_HOOKS.items()):
        t = ref()
        extra = t._extra if t is not None else None
        if not (extra and (extra.get("hooks") or extra.get("post_accumulate_hooks"))):
            del _LEAF_HOOKS[key]
    return bool(_LEAF_HOOKS)


def _run_post_accumulate_hooks(leaf: Tensor) -> None:
    for hook in list(leaf._extra["post_accumulate_hooks"].values()):
        result = hook(leaf)
        if result is None:
            continue
        why = ("\nA post-accumulate-grad hook is called as hook(tensor) after tensor.grad was updated; it may "
               "change tensor.grad in place, but must return None.")
        if isinstance(result, Tensor):
            raise RuntimeError("Tensor post accumulate grad hooks should return None." + why)
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'" + why)


def _sift_up(heap: list, hole: int, item: tuple) -> None:
    """libstdc++'s __push_heap: move ``item`` up from ``hole`` while its parent's key is smaller."""
    key = item[0]
    while hole > 0:
        parent = (hole - 1) >> 1
        if not heap[parent][0] < key:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole] = item


def _heap_push(heap: list, item: tuple) -> None:
    """std::push_heap (libstdc++), max-heap on item[0]: equal keys keep PyTorch's order."""
    heap.append(item)
    _sift_up(heap, len(heap) - 1, item)


def _heap_pop(heap: list) -> tuple:
    """std::pop_heap + pop_back (libstdc++): the top item, the rest re-heaped the same way."""
    top = heap[0]
    value = heap.pop()
    n = len(heap)
    if not n:
        return top
    hole, child = 0, 0
    while child < (n - 1) >> 1:  # __adjust_heap: move the hole down to a leaf, larger child first
        child = 2 * (child + 1)
        if heap[child][0] < heap[child - 1][0]:
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if not n & 1 and child == (n - 2) >> 1:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    _sift_up(heap, hole, value)  # then the last item back up from there
    return top


def _run_in_torch_order(roots: Sequence[Tensor], root_grads: list, retain_graph: bool,
                        create_graph: bool) -> None:
    """backward() in exactly PyTorch's node order (engine.cpp), for graphs whose leaves have hooks.

    First count, for every node, the edges that point to it; a node is ready when all of them
    have delivered. The ready queue pops the highest sequence number, and AccumulateGrad has
    the highest possible one: a leaf's hooks and accumulation run as soon as its gradient is
    complete. Several roots hang under one root node, as PyTorch's GraphRoot.
    """
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    root_edges = [(t.grad_fn, t._output_nr) if t.grad_fn is not None else (t._grad_accumulator(), 0)
                  for t in roots]
    counts: dict = {}
    for node, _ in root_edges:
        counts[node] = counts.get(node, 0) + 1
    stack = list(counts)
    seen = set(stack)
    while stack:  # the counting pass
        for nxt in stack.pop()._edges[::4]:
            if nxt:
                if nxt in counts:
                    counts[nxt] += 1
                else:
                    counts[nxt] = 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

    buffers: dict = {}
    ready: list = []

    def deliver(nxt, nr: int, g) -> None:
        if g is not None:
            _add_to_buffer(buffers, nxt, nr, g)
        counts[nxt] -= 1
        if not counts[nxt]:
            _heap_push(ready, (_LAST if nxt.__class__ is AccumulateGrad else nxt._seq, nxt))

    if len(root_edges) == 1:  # PyTorch starts at the root's node itself ...
        (node, nr), = root_edges
        _add_to_buffer(buffers, node, nr, root_grads[0])
        ready.append((0, node))
    else:  # ... or at a GraphRoot, the newest node, whose outputs are the roots' gradients
        for (node, nr), g in zip(root_edges, root_grads):
            deliver(node, nr, g)

    prev_mode = _set_grad_mode(bool(create_graph))
    try:
        while ready:
            node = _heap_pop(ready)[1]
            buf = buffers.pop(node, None)
            multi = node._n_outputs > 1
            if buf is not None and multi and all(g is None for g in buf):
                buf = None
            if node.__class__ is AccumulateGrad:
                if buf is not None:
                    node._accumulate(buf, create_graph)  # its leaf's register_hook hooks, then .grad
                    extra = node.variable._extra
                    if extra is not None and extra.get("post_accumulate_hooks"):
                        _run_post_accumulate_hooks(node.variable)
                buf = None
                continue
            edges = node._edges
            if buf is None and node._forward_cls._builtin:  # it sends none, but its edges still count
                results = (None,) * (len(edges) >> 2)
            elif buf is None:  # a custom Function is still called (zeros, or None without materialize)
                results = _call_backward(node, [None] * node._n_outputs)
            else:
                if node._hooked:
                    buf = _run_tensor_hooks(node, buf, multi)
                results = _call_backward(node, buf if multi else (buf,))
                if not retain_graph and node._saved is not None:
                    node._saved = _FREED
            buf = None
            for j, g in zip(range(0, len(edges), 4), results):
                nxt = edges[j]
                if nxt:
                    if g is not None and (g._data.shape != edges[j + 2] or g._data.dtype is not edges[j + 3]):
                        g = _fix_grad(node, j >> 2, g, edges[j + 2], edges[j + 3])
                    deliver(nxt, edges[j + 1], g)
            g = results = None  # AccumulateGrad may take a gradient that nothing else holds
    finally:
        _set_grad_mode(prev_mode)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """Return d(outputs)/d(inputs) without touching any ``.grad``."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    single_input = isinstance(inputs, Tensor)
    inputs = (inputs,) if single_input else tuple(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t._rg:
            raise RuntimeError(
                f"One of the differentiated Tensors does not require grad\n"
                f"autograd.grad: inputs[{i}] does not require grad, so it cannot be differentiated against. "
                "Create it with requires_grad=True."
            )
    if grad_outputs is None or isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,) * len(outputs) if grad_outputs is None else (grad_outputs,)
    if is_grads_batched:  # one backward with the first dim of each grad_output as a vmap batch
        from .._functorch.vmap import grad_batched

        return grad_batched(outputs, inputs, tuple(grad_outputs), retain_graph, create_graph, allow_unused,
                            materialize_grads)
    grads = _make_grads(outputs, tuple(grad_outputs), "grad", create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    found = _run(outputs, grads, retain_graph, create_graph, targets=inputs, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, found)):
        if g is None:
            if materialize_grads:
                g = Tensor._wrap(np.zeros_like(t._data))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. Set "
                    f"allow_unused=True if this is the desired behavior.\nautograd.grad: inputs[{i}] (shape "
                    f"{list(t.shape)}) is not connected to the outputs, so its gradient would be None."
                )
        result.append(g)
    return tuple(result)


def _make_grads(tensors: Sequence[Tensor], grads: Sequence, where: str, create_graph: bool) -> list:
    if len(grads) != len(tensors):
        raise RuntimeError(f"grad_tensors should have the same length as tensors ({len(grads)} != {len(tensors)})")
    out = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{where}: expected a Tensor as output {i}, got {type(t).__name__}")
        if not t._rg:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn\n"
                f"{where}(): this tensor (shape {list(t.shape)}) was not computed from any tensor with "
                "requires_grad=True, or it was computed under no_grad() / after .detach(). Create the "
                "inputs with requires_grad=True."
            )
        if g is None:
            if t._data.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs\n"
                    f"{where}() was called on a tensor of shape {list(t.shape)} without a gradient. Pass "
                    "one of the same shape, e.g. y.backward(minigrad.ones_like(y)), or reduce first, "
                    "e.g. y.sum().backward()."
                )
            d = t._data  # one element: np.array(1) is 1 us cheaper than np.ones_like
            g = Tensor._wrap(np.array(1, d.dtype).reshape(d.shape))
        else:
            if not isinstance(g, Tensor):
                g = Tensor._wrap(np.asarray(g, dtype=t._data.dtype))
            elif not (create_graph and g._rg):
                # A tensor of our own around the caller's data: AccumulateGrad then sees that the
                # array is shared and copies it instead of taking it. (When the backward is recorded
                # and the gradient requires grad, it must stay the caller's tensor.)
                g = Tensor._wrap(g._data)
            if g._data.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and output[{i}] has a "
                    f"shape of {t.shape!r}.\nThe gradient passed to {where}() must have the shape of the "
                    "tensor it is the gradient of."
                )
        out.append(g)
    return out


def _run(roots: Sequence[Tensor], root_grads: list, retain_graph: bool, create_graph: bool,
         targets: Sequence[Tensor] | None = None, accumulate: bool = True) -> list | None:
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    # Entry points: a root's grad_fn, or the AccumulateGrad node of a root that is a leaf.
    root_edges = [(t.grad_fn, t._output_nr) if t.grad_fn is not None else (t._grad_accumulator(), 0)
                  for t in roots]

    # For autograd.grad: which (node, output_nr) to capture, and which nodes to run at all.
    capture = None
    if targets is not None:
        capture = {}
        for k, t in enumerate(targets):
            node = t.grad_fn if t.grad_fn is not None else t._grad_accumulator()
            capture.setdefault(node, []).append((t._output_nr, k))
        runnable = _nodes_leading_to(capture, root_edges)
    found = [None] * len(targets) if targets is not None else None

    # The queue holds the nodes that have received a gradient, newest (highest _seq) first.
    buffers: dict = {}
    queue: list = []
    for (node, nr), g in zip(root_edges, root_grads):
        if _add_to_buffer(buffers, node, nr, g):
            heappush(queue, (-node._seq, node))

    fast = capture is None and not _Anomaly.enabled
    # Nodes that only None has reached so far (a backward returned None for their output). PyTorch
    # still runs them: a custom Function's backward gets zeros (or None, without materialize_grads),
    # a built-in op passes None on, so a custom node further down is called too.
    undefined: set = set()
    prev_mode = _set_grad_mode(bool(create_graph))  # in this thread only, as everything below
    upcoming = None  # see the shortcut below
    try:
        while True:
            if upcoming is not None:
                node, upcoming = upcoming, None
            elif queue:
                node = heappop(queue)[1]
            else:
                break
            buf = buffers.pop(node, None)
            if buf is None:  # reached by None only (rare: a returned None)
                undefined.discard(node)
                if node.__class__ is AccumulateGrad or (capture is not None and node not in runnable):
                    continue
                if node._forward_cls._builtin:
                    results = (None,) * (len(node._edges) >> 2)
                else:
                    results = _call_backward(node, [None] * node._n_outputs)
            elif fast and (backward_fn := node._fast_backward) is not None:
                # A built-in single-output op without hooks: it returns the right number and types
                # of gradients; shapes (broadcast inputs) and dtypes are checked below, as for all.
                results = backward_fn(node, buf)
                if type(results) is not tuple:
                    results = (results,)
            else:
                multi = node._n_outputs > 1
                if capture is not None and node not in runnable and node not in capture:
                    continue  # leads to no input of autograd.grad: PyTorch runs neither it nor its hooks
                if node._hooked:
                    buf = _run_tensor_hooks(node, buf, multi)
                if capture is not None:
                    if node in capture:
                        for nr, k in capture[node]:
                            found[k] = buf[nr] if multi else buf
                    if node not in runnable and node.__class__ is not AccumulateGrad:
                        continue
                if node.__class__ is AccumulateGrad:
                    if accumulate:
                        node._accumulate(buf, create_graph)
                    continue
                results = _call_backward(node, buf if multi else (buf,))
            if not retain_graph and node._saved is not None:
                node._saved = _FREED  # free the saved tensors
            edges = node._edges  # 4 entries per input: node, output_nr, shape, dtype
            j = 0
            for g in results:  # one gradient per input
                nxt = edges[j]
                if nxt and g is None:
                    if nxt not in buffers and nxt not in undefined:
                        undefined.add(nxt)
                        heappush(queue, (-nxt._seq, nxt))
                elif nxt:
                    arr = g._data
                    if arr.shape != edges[j + 2] or arr.dtype is not edges[j + 3]:
                        g = _fix_grad(node, j >> 2, g, edges[j + 2], edges[j + 3])
                    if nxt._n_outputs == 1:
                        prev = buffers.get(nxt)
                        if prev is None:
                            buffers[nxt] = g
                        elif prev._data.__class__ is not _BatchedArray and arr.__class__ is not _BatchedArray:
                            buffers[nxt] = prev + g
                        else:  # per-sample gradients (vmap) meet
                            buffers[nxt] = _add_grads(prev, g)
                        first = prev is None
                    else:
                        first = _add_to_buffer(buffers, nxt, edges[j + 1], g)
                    if first and undefined and nxt in undefined:
                        undefined.discard(nxt)  # already queued by a None: it runs once, with g
                    elif first:  # nxt has just received its first gradient: it is now pending
                        if upcoming is None and not queue:
                            # Shortcut (chains): the only pending node is the newest, so it runs
                            # next without going through the queue.
                            upcoming = nxt
                        else:
                            heappush(queue, (-nxt._seq, nxt))
                            if upcoming is not None:
                                heappush(queue, (-upcoming._seq, upcoming))
                                upcoming = None
                j += 4
            # The loop's variables must not keep this node's gradients alive: AccumulateGrad takes
            # a gradient without copying it only when nothing else holds it (it counts references).
            arr = g = results = None
    finally:
        _set_grad_mode(prev_mode)
    if found is not None:
        for k, g in enumerate(found):
            if g is not None and g._data.__class__ is _BatchedArray:  # a per-sample gradient (vmap)
                found[k] = _unbatch_grad(g, targets[k])
    return found


def _unbatch_grad(g, target):
    from .._functorch.vmap import unbatch_grad

    return unbatch_grad(g, target)


def _add_to_buffer(buffers: dict, node, nr: int, g: Tensor) -> bool:
    """Add a gradient for output ``nr`` of ``node``; True if the node had received none yet."""
    if node._n_outputs == 1:
        prev = buffers.get(node)
        buffers[node] = g if prev is None else _add(prev, g)
        return prev is None
    buf = buffers.get(node)
    new = buf is None
    if new:
        buf = buffers[node] = [None] * node._n_outputs
    buf[nr] = g if buf[nr] is None else _add(buf[nr], g)
    return new


def _add(prev: Tensor, g: Tensor) -> Tensor:
    """prev + g, two gradients for one output (per-sample ones from vmap are summed first when needed)."""
    if prev._data.__class__ is _BatchedArray or g._data.__class__ is _BatchedArray:
        return _add_grads(prev, g)
    return prev + g


def _add_grads(prev, g):
    from .._functorch.vmap import add_grads

    return add_grads(prev, g)


def _nodes_leading_to(capture: dict, root_edges) -> set:
    """Nodes with a path to a captured node: the only ones autograd.grad needs to run."""
    seen = {n for n, _ in root_edges}
    stack = list(seen)
    while stack:
        for nxt in stack.pop()._edges[::4]:
            if nxt and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    leads: set = set()
    runnable: set = set()
    for node in sorted(seen, key=_seq_of):  # oldest first: every node after the nodes it points to
        if any(nxt and nxt in leads for nxt in node._edges[::4]):
            runnable.add(node)
            leads.add(node)
        if node in capture:
            leads.add(node)
    return runnable


def _seq_of(node) -> int:
    return node._seq


def _run_tensor_hooks(node, buf, multi: bool):
    grads = list(buf) if multi else [buf]
    if node._hooks:
        for nr, hooks in node._hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is not None:
                    new = hook(grads[nr])
                    if new is not None:
                        grads[nr] = new
    if node._retain:
        for nr, ref in node._retain.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr]
                t._grad = g if _GradMode.enabled else Tensor._wrap(g._data.copy())
    return grads if multi else grads[0]


def _call_backward(node, grads) -> tuple | list:
    """Run one node's backward (the general path: custom Functions, multi-output or anomaly mode)."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    fwd = node._forward_cls
    if fwd._builtin and not _Anomaly.enabled:
        if node._n_outputs > 1 and node.materialize_grads:
            grads = _materialize(node, grads)
        res = fwd.backward(node, *grads)
        return res if res.__class__ is tuple else (res,)
    return _call_custom_backward(node, grads)


def _fix_grad(node, i: int, g: Tensor, shape: tuple, dtype) -> Tensor:
    """Bring the gradient for input ``i`` to the input's shape (sum_to) and dtype."""
    if g._data.shape != shape:
        g = _reduce_grad(node, i, g, shape)
    if g._data.dtype != dtype:
        g = g.to(_dtype_of(dtype))
    return g


def _call_custom_backward(node, grads) -> list:
    """A user's backward: check everything it returned, with errors that name the Function."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    if node.materialize_grads and (node._n_outputs > 1 or grads[0] is None):
        grads = _materialize(node, grads)
    fwd = node._engine_forward_cls or node._forward_cls
    try:
        res = fwd.backward(node, *grads)
    except Exception:
        if _Anomaly.enabled and node._forward_trace:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                          + "".join(node._forward_trace), UserWarning, stacklevel=2)
        raise
    if res.__class__ is not tuple:
        res = (res,)  # one gradient (a list is one object too, refused below as PyTorch does)
    edges = node._edges
    n = len(edges) >> 2
    if len(res) != n:
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        else:
            raise RuntimeError(
                f"function {node.name()} returned an incorrect number of gradients (expected {n}, got {len(res)})"
                f"\n{fwd.__name__}.forward takes {n} argument(s) after ctx, so backward must return {n} value(s), "
                "one per forward argument, in order (None for arguments that are not tensors or need no grad)."
            )
    out = list(res)
    for i in range(n):
        g = out[i]
        if g is None:
            continue
        nxt = edges[4 * i]
        if not isinstance(g, Tensor):
            raise RuntimeError(
                f"expected Variable or None (got {_c_type_name(g)})\n{fwd.__name__}.backward returned a "
                f"{type(g).__name__} as gradient {i}; return a Tensor (or None) for each forward argument."
            )
        if nxt is None:
            raise RuntimeError(
                f"function {node.name()} returned a gradient different than None at position {i + 1}, but the "
                "corresponding forward input was not a Variable\n"
                f"{fwd.__name__}.forward's argument {i + 1} (after ctx) is not a tensor, so backward must "
                "return None in that position."
            )
        if nxt is False:
            out[i] = None  # this input needs no gradient
            continue
        g = _fix_grad(node, i, g, edges[4 * i + 2], edges[4 * i + 3])
        if _Anomaly.enabled and g._data.dtype.kind == "f" and np.isnan(g._data).any():
            where = ""
            if node._forward_trace:
                where = "\nThe forward call that created this node:\n" + "".join(node._forward_trace[-3:])
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output.\n"
                f"The NaN comes from the backward of {fwd.__name__} (gradient for its input {i})." + where
            )
        out[i] = g
    return out


def _dtype_of(np_dtype):
    from .._dtype import _FROM_NUMPY

    return _FROM_NUMPY[np_dtype]


def _reduce_grad(node, i: int, g: Tensor, shape: tuple) -> Tensor:
    """PyTorch's sum_to: sum a gradient over the dimensions its input was broadcast along."""
    gshape = g._data.shape
    lead = len(gshape) - len(shape)
    ok = lead >= 0 and all(s == 1 or s == gs for s, gs in zip(shape, gshape[lead:]))
    if not ok:
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {i} - got {list(gshape)} but "
            f"expected shape compatible with {list(shape)}\n{node._forward_cls.__name__}.backward must return, "
            f"for input {i}, a gradient of the input's shape {list(shape)} (or a shape it was broadcast to)."
        )
    axes = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(shape) if s == 1 and gshape[lead + k] != 1)
    if axes:
        g = g.sum(dim=axes, keepdim=True)
    if g._data.shape != shape:
        g = g.reshape(shape)
    return g



def _c_type_name(obj) -> str:
    """The type's name as PyTorch's C++ prints it (tp_name): NumPy's C types carry their module."""
    t = type(obj)
    return f"numpy.{t.__name__}" if t.__module__ == "numpy" and not t.__flags__ & (1 << 9) else t.__name__
