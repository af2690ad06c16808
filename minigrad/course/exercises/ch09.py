"""Checks for chapter 9 (inside the engine): a new operation, a backward loop that handles
fan-out, and the bug in a breadth-first traversal.

The exercises extend the chapter's own engine (``Tensor``, ``Function`` and ``run_backward``,
defined in the notebook), so the check cells pass those classes in: ``check("ch09-ex1", Div,
Tensor=Tensor)``. Reference gradients come from minigrad, on the same computation.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np

import minigrad
from minigrad.course import CheckFailed, _remote, _structure, exercise
from minigrad.course._seed import check_seed

_RNG_SEED = 9


def _need(name: str, value: Any) -> Any:
    if value is None:
        raise CheckFailed(f"the check needs the chapter's {name}: run the engine cells of the chapter, "
                          f"and keep the check cell as it is (it passes {name}={name}).")
    return value


def _array(t: Any) -> np.ndarray | None:
    """The array inside one of the chapter engine's tensors (or None)."""
    if t is None:
        return None
    return np.asarray(getattr(t, "data", t), dtype=np.float64)


def _lib(data: np.ndarray, grad: bool = True):
    return minigrad.tensor(data, dtype=minigrad.float64, requires_grad=grad)


def _fmt(a: np.ndarray) -> str:
    return np.array2string(np.asarray(a), precision=4, separator=", ")


# ------------------------------------------------------------------------------- ch09-ex1: Div
def _div_inputs(rng, shape_b=(3, 4)):
    a = rng.uniform(-2.0, 2.0, (3, 4))
    b = rng.choice([-1.0, 1.0], shape_b) * rng.uniform(0.5, 2.0, shape_b)
    g = rng.uniform(-1.0, 1.0, (3, 4))
    return a, b, g


def _div_grads(Div, Tensor, a, b, g):
    ta, tb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = Div.apply(ta, tb)
    (out * Tensor(g)).sum().backward()
    return _array(ta.grad), _array(tb.grad)


def _close(x, y) -> bool:
    return x is not None and y is not None and np.shape(x) == np.shape(y) and np.allclose(x, y, rtol=1e-6,
                                                                                          atol=1e-9)


@exercise("ch09-ex1", points=2, title="A new operation: division",
          minutes=15, objective="add an operation with two inputs to a small engine: forward, saved values, both gradients")
def _check_div(Div: Any, Tensor: Any = None):
    Tensor = _need("Tensor", Tensor)
    if not hasattr(Div, "apply") or not hasattr(Div, "backward"):
        raise CheckFailed("Div must be a class with forward and backward, a subclass of the chapter's Function "
                          "(call it as Div.apply(a, b)).")
    rng = np.random.default_rng(check_seed(_RNG_SEED))
    a, b, g = _div_inputs(rng)

    # forward
    out = Div.apply(Tensor(a, requires_grad=True), Tensor(b, requires_grad=True))
    if not _remote.instance_of(out, Tensor):
        raise CheckFailed(f"Div.apply returned a {type(out).__name__}, not a Tensor of the chapter's engine: "
                          "subclass the chapter's Function (not minigrad's), and return an array (or a Tensor) "
                          "from forward.")
    if np.shape(out.data) != a.shape or not np.allclose(out.data, a / b):
        raise CheckFailed(f"forward does not compute a / b: for a = {_fmt(a[0, :2])}, b = {_fmt(b[0, :2])} "
                          f"expected {_fmt((a / b)[0, :2])}, got {_fmt(np.ravel(out.data)[:2])}.")
    node = out.grad_fn
    if node is None:
        raise CheckFailed("the output of Div.apply has no grad_fn although a and b require grad: Div must "
                          "subclass the chapter's Function, whose apply records the node.")

    # backward: the number of values, called directly
    grads = Div.backward(node, g)
    grads = grads if isinstance(grads, tuple) else (grads,)
    if len(grads) != 2:
        raise CheckFailed(f"backward returned {len(grads)} value(s): it must return two gradients, one for a "
                          "and one for b, in that order (the chapter's engine would silently drop a missing one).")

    # backward through the engine
    ga, gb = _div_grads(Div, Tensor, a, b, g)
    want_a, want_b = g / b, -g * a / b ** 2
    if ga is None or gb is None:
        raise CheckFailed("after backward, a.grad or b.grad is None: backward must return a gradient for each "
                          "input.")
    if not (_close(ga, want_a) and _close(gb, want_b)):
        if _close(ga, want_b) and _close(gb, want_a):
            raise CheckFailed("the two gradients are swapped: return the gradient for a first, then for b.")
        if _close(ga, 1 / b) or _close(gb, -a / b ** 2):
            raise CheckFailed("the gradients do not depend on grad_output: multiply by grad_output (the chain "
                              "rule), e.g. grad_output / b for a.")
        if _close(ga, want_a) and _close(gb, -want_b):
            raise CheckFailed("b's gradient has the wrong sign: d(a / b)/db = -a / b**2.")
        if _close(ga, want_a) and _close(gb, -g * a / b):
            raise CheckFailed("b's gradient is missing a factor 1 / b: d(a / b)/db = -a / b**2 (b squared).")
        which = "a" if not _close(ga, want_a) else "b"
        got, want = (ga, want_a) if which == "a" else (gb, want_b)
        raise CheckFailed(f"the gradient for {which} is wrong: at a = {a[0, 0]:.4f}, b = {b[0, 0]:.4f}, "
                          f"grad_output = {g[0, 0]:.4f} expected {want[0, 0]:.4f}, got {np.ravel(got)[0]:.4f}.")

    # broadcasting (the engine's sum_to) and fan-out (a / a)
    a2, b2, g2 = _div_inputs(rng, shape_b=(4,))
    ga2, gb2 = _div_grads(Div, Tensor, a2, b2, g2)
    if not (_close(ga2, g2 / b2) and _close(gb2, (-g2 * a2 / b2 ** 2).sum(0))):
        raise CheckFailed("with b of shape (4,) broadcast against a of shape (3, 4), the gradients are wrong: "
                          "return the gradients of the output's shape and let the engine sum them (sum_to), or "
                          "sum over the broadcast dimension yourself.")
    x = Tensor(a[0], requires_grad=True)
    Div.apply(x, x).sum().backward()
    if not _close(_array(x.grad), np.zeros_like(a[0])):
        raise CheckFailed(f"Div.apply(x, x) is 1 everywhere, so x.grad must be 0; got {_fmt(_array(x.grad))}.")

    # the version check: b changed in place between forward and backward
    ta, tb = Tensor(a, requires_grad=True), Tensor(b)
    out = Div.apply(ta, tb)
    tb.add_(1.0)
    try:
        out.sum().backward()
    except RuntimeError as err:
        if "inplace" not in str(err) and "in-place" not in str(err):
            raise CheckFailed(f"changing b in place after forward made backward raise an unexpected error: {err}")
    else:
        raise CheckFailed("b was changed in place (b.add_(1.0)) between forward and backward, and backward "
                          "did not notice: save a and b with ctx.save_for_backward (not as ctx attributes or "
                          "copies), so that the version check protects them.")
    if _remote.is_remote(Div) and _structure.method_calls(Div, "forward", "save_for_backward") is False:
        # graded: the source must show it too (the worker's answers above are observations)
        raise CheckFailed("b was changed in place between forward and backward and backward did raise, but "
                          "forward never calls ctx.save_for_backward: save a and b with it (not as ctx "
                          "attributes or copies), so that the engine's version check protects them.")
    return ("Div is correct: a / b in forward, g / b and -g a / b**2 in backward (checked through the "
            "chapter's engine, with broadcasting and with a / a), and an in-place change of a saved input "
            "is caught by the version check.")


# ------------------------------------------------------------------------ graphs for ex2 and ex3
class _Graph:
    """One computation built twice: in the chapter's engine and in minigrad (the reference)."""

    def __init__(self, name: str, build: Callable, leaves: list[np.ndarray]):
        self.name, self.build, self.leaves = name, build, leaves

    def mine(self, Tensor, counted=None):
        xs = [Tensor(v, requires_grad=True) for v in self.leaves]
        loss = self.build(xs, counted or (lambda t: t), lambda t: t.exp())
        return xs, loss

    def reference(self) -> tuple[list, dict]:
        xs = [_lib(v) for v in self.leaves]
        kept: list = []

        def counted(t):
            t = t * 1.0
            t.retain_grad()
            kept.append(t)
            return t

        loss = self.build(xs, counted, lambda t: t.exp())
        loss.backward()
        return [x.grad.numpy() if x.grad is not None else None for x in xs], [k.grad.numpy() for k in kept]


def _nested_diamonds(xs, counted, exp, levels=8):
    h = counted(xs[0])
    for _ in range(levels):
        h = counted(h * 0.5 + h * 0.5)
    return (h * xs[1]).sum()


def _long_chain(xs, counted, exp, n=5000):
    h = xs[0]
    for _ in range(n):
        h = h * 1.0
    return (counted(h) * xs[1]).sum()


_GRAPHS = [
    _Graph("a chain, loss = sum(exp(x * 2) * w)", lambda xs, c, exp: (exp(c(xs[0] * 2.0)) * xs[1]).sum(),
           [np.array([0.1, -0.3]), np.array([1.0, 2.0])]),
    _Graph("section 1's example, loss = sum(h * w + h) with h = exp(x)",
           lambda xs, c, exp: (lambda h: (h * xs[1] + h).sum())(c(exp(xs[0]))),
           [np.array([0.0, 1.0]), np.array([2.0, 3.0])]),
    _Graph("h used three times, loss = sum(h * exp(h) + h) with h = x * w",
           lambda xs, c, exp: (lambda h: (h * exp(h) + h).sum())(c(xs[0] * xs[1])),
           [np.array([0.5, -1.0, 0.2]), np.array([1.5, 0.3, -2.0])]),
    _Graph("paths of different lengths, loss = sum(h + exp(h) * w) with h = exp(x)",
           lambda xs, c, exp: (lambda h: (h + exp(h) * xs[1]).sum())(c(exp(xs[0]))),
           [np.array([0.0, 0.5]), np.array([1.0, -1.0])]),
    _Graph("a leaf used several times, loss = sum(x * x + x * w)",
           lambda xs, c, exp: c(xs[0] * xs[0] + xs[0] * xs[1]).sum(),
           [np.array([1.0, -2.0]), np.array([0.5, 3.0])]),
    _Graph("8 nested diamonds (h = h * 0.5 + h * 0.5, 256 paths)", _nested_diamonds,
           [np.array([0.3, -0.7]), np.array([1.0, 2.0])]),
    _Graph("a chain of 5,000 products", _long_chain, [np.array([1.0, 2.0]), np.array([0.5, -0.5])]),
]


class _NoGradientGraph(_Graph):
    """loss = sum(FirstOnly(x * 2, exp(w))): FirstOnly's backward returns None for its second input,
    so no gradient reaches exp(w)'s node or w's AccumulateGrad (w.grad stays None)."""

    def __init__(self):
        super().__init__("a node that receives no gradient, loss = sum(first_only(x * 2, exp(w))), where "
                         "first_only's backward returns None for exp(w)", None,
                         [np.array([0.5, -1.0]), np.array([1.0, 2.0])])

    @staticmethod
    def _first_only(Function, data):
        class FirstOnly(Function):
            @staticmethod
            def forward(ctx, a, b):
                return np.array(data(a), dtype=np.float64) if data else a + b * 0.0

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, None

        return FirstOnly

    def mine(self, Tensor, counted=None):
        xs = [Tensor(v, requires_grad=True) for v in self.leaves]
        Function = (Tensor([1.0], requires_grad=True) * 1.0).grad_fn.function.__bases__[0]
        first_only = self._first_only(Function, lambda a: a.data)
        c = counted or (lambda t: t)
        ew = xs[1].exp()
        self.silent = {ew.grad_fn}  # it never runs, so it keeps its saved tensors
        return xs, c(first_only.apply(c(xs[0] * 2.0), ew)).sum()

    def reference(self) -> tuple[list, dict]:
        from ...autograd import Function

        xs = [_lib(v) for v in self.leaves]
        kept: list = []

        def counted(t):
            t = t * 1.0
            t.retain_grad()
            kept.append(t)
            return t

        first_only = self._first_only(Function, None)
        loss = counted(first_only.apply(counted(xs[0] * 2.0), xs[1].exp())).sum()
        loss.backward()
        return [x.grad.numpy() if x.grad is not None else None for x in xs], [k.grad.numpy() for k in kept]


_EX2_GRAPHS = _GRAPHS + [_NoGradientGraph()]


class _Calls(list):
    """The gradients one Counted node's backward received (kept by the check, not on the node)."""


def _counted_class(Function):
    """An identity Function that records the gradient of each call of its backward.

    The records stay with the check (graded, the class is made in the student's process and its
    methods are called back here): returns (Counted, the list of its nodes' :class:`_Calls`, in forward order)."""
    nodes: list = []
    by_ctx: dict = {}

    class Counted(Function):
        @staticmethod
        def forward(ctx, a):
            calls = _Calls()
            nodes.append(calls)
            by_ctx[id(ctx)] = calls
            return np.array(a.data, dtype=np.float64)

        @staticmethod
        def backward(ctx, grad_output):
            by_ctx[id(ctx)].append(np.array(grad_output, dtype=np.float64))
            return grad_output

    return Counted, nodes


def _run_learner(what: str, fn: Callable, graph: _Graph):
    """Run fn(); translate the errors a wrong answer typically raises into feedback."""
    try:
        return fn()
    except RecursionError:
        raise CheckFailed(f"on {graph.name}: RecursionError. Your code walks the graph by recursion, and a "
                          "chain deeper than Python's recursion limit (about 1,000) breaks it: keep the "
                          "pending nodes in a list, a deque or a heap instead.") from None
    except RuntimeError as err:
        if "second time" in str(err) or "freed" in str(err):
            raise CheckFailed(f"on {graph.name}: a node ran twice (its saved tensors had already been freed by "
                              f"its first run): {what} must run each node once, after every gradient for it has "
                              "arrived.") from None
        raise CheckFailed(f"on {graph.name}: {what} raised RuntimeError: {err}") from None
    except TypeError as err:
        if "'<' not supported" not in str(err) or "AccumulateGrad" not in str(err):
            raise
        raise CheckFailed(f"on {graph.name}: TypeError in {what}: {err}. Every AccumulateGrad has the same seq, "
                          "2**64 - 1 (PyTorch's number for it), so a heap of (-seq, node) compares two nodes: put "
                          "a tie-breaker between them, e.g. a counter, (-seq, k, node). And with AccumulateGrad "
                          "numbered highest, the numbers alone no longer make sure that all of a node's gradients "
                          "have arrived: count its senders first (section 5).") from None
    except KeyError:
        if isinstance(graph, _NoGradientGraph):
            raise CheckFailed(f"on {graph.name}: KeyError in {what}: the order also yields the nodes that "
                              "received no gradient at all (here exp(w)'s node and w's AccumulateGrad), and they "
                              "have no buffer: skip such a node, e.g. buffers.pop(node, None) and continue when "
                              "it is None, as run_backward does.") from None
        raise CheckFailed(f"on {graph.name}: KeyError in {what}: a node was run that had no gradient buffer "
                          "(it ran twice, or before any gradient reached it).") from None


def _compare_leaves(graph: _Graph, xs, want: list, what: str) -> None:
    for k, (x, w) in enumerate(zip(xs, want)):
        got = _array(x.grad)
        name = "xw"[k] if k < 2 else f"leaf {k}"
        if w is None:
            if got is not None:
                raise CheckFailed(f"on {graph.name}: {name}.grad is {_fmt(got)} after {what}, but no gradient "
                                  f"reaches {name}: it must stay None.")
            continue
        if got is None:
            raise CheckFailed(f"on {graph.name}: {name}.grad is None after {what}: the AccumulateGrad node of "
                              f"{name} never ran (or received nothing).")
        if not _close(got, w):
            raise CheckFailed(f"on {graph.name}: {name}.grad is {_fmt(got)}, expected {_fmt(w)}. A node that "
                              "receives several gradients must run once, on their sum.")


# ------------------------------------------------------------------ ch09-ex2: fan-out in backward
@exercise("ch09-ex2", points=2, title="A backward loop that handles fan-out",
          minutes=25, objective="write the engine loop: sum every gradient a node receives before it runs, then free it")
def _check_backward_once(backward_once: Any, Tensor: Any = None, Function: Any = None):
    Tensor = _need("Tensor", Tensor)
    # The chapter's Function is the base class of the operations its Tensor records. (A notebook
    # that also imported minigrad's Function may hand that one in under the same name.)
    Function = (Tensor([1.0], requires_grad=True) * 1.0).grad_fn.function.__bases__[0]
    if not callable(backward_once):
        raise CheckFailed(f"backward_once must be a function of one tensor, got a {type(backward_once).__name__}.")
    for graph in _EX2_GRAPHS:
        Counted, counted_nodes = _counted_class(Function)
        xs, loss = graph.mine(Tensor, Counted.apply)
        _run_learner("backward_once", lambda: backward_once(loss), graph)
        want_leaves, want_counted = graph.reference()
        for calls, want in zip(counted_nodes, want_counted):
            if len(calls) != 1:
                raise CheckFailed(f"on {graph.name}: a node ran {len(calls)} times; backward_once must run "
                                  "each node exactly once (with one gradient buffer per node, where the "
                                  "gradients of a fan-out are added).")
            if not _close(calls[0], want):
                raise CheckFailed(f"on {graph.name}: a node ran on grad_output {_fmt(calls[0])}, but the sum "
                                  f"of the gradients it receives is {_fmt(want)}: it ran before all of its "
                                  "gradients had arrived, or they were not added up (+, not =).")
        _compare_leaves(graph, xs, want_leaves, "backward_once(loss)")
        silent = getattr(graph, "silent", set())  # nodes that receive no gradient do not run
        kept = [n for n in _reachable(loss.grad_fn) if getattr(n, "saved", None) is not None
                and n.saved != () and n not in silent]
        if kept:
            raise CheckFailed(f"on {graph.name}: after backward_once, {_name(kept[0])} still holds its saved "
                              "tensors: free them once a node has run (node.release()), as run_backward does "
                              "without retain_graph.")
    return ("backward_once runs each node once, on the sum of its gradients, on all 8 graphs (fan-out, "
            "nested diamonds, leaves used several times, a node that receives no gradient, a chain of 5,000 "
            "products), and gives minigrad's gradients.")


# ------------------------------------------------------------ ch09-ex3: fix the broken traversal
def _reachable(root, edges: dict | None = None) -> list:
    """The nodes behind ``root``, in the order they are found (the same on the student's real nodes
    and on the judge's proxies of them, so that feedback names the same node). ``edges``, when
    given, keeps each node's next_functions (graded, each read is a request to the worker)."""
    seen, order, stack = {root}, [root], [root]
    while stack:
        node = stack.pop()
        nexts = list(node.next_functions)
        if edges is not None:
            edges[node] = nexts
        for nxt in nexts:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                stack.append(nxt)
    return order


def _name(node) -> str:
    try:
        return node.name()
    except Exception:  # pragma: no cover - not a node of the chapter's engine
        return type(node).__name__


@exercise("ch09-ex3", points=2, title="Find the bug in a traversal",
          minutes=20, objective="recognise why a breadth-first order gives wrong gradients under fan-out, and fix it")
def _check_order(order_fixed: Any, Tensor: Any = None):
    Tensor = _need("Tensor", Tensor)
    if not callable(order_fixed):
        raise CheckFailed(f"order_fixed must be a function of the root node, got a {type(order_fixed).__name__}.")
    for graph in _GRAPHS:
        xs, loss = graph.mine(Tensor)
        root = loss.grad_fn
        edges: dict = {}
        nodes = set(_reachable(root, edges))

        def walk():
            return list(itertools.islice(iter(order_fixed(root)), 3 * len(nodes) + 10))

        order = _run_learner("order_fixed", walk, graph)
        if any(n is None for n in order):
            raise CheckFailed(f"on {graph.name}: order_fixed yielded None; yield only nodes.")
        position: dict = {}
        for i, node in enumerate(order):
            if node in position:
                raise CheckFailed(f"on {graph.name}: order_fixed yields {_name(node)} more than once: each node "
                                  "must run exactly once.")
            position[node] = i
        missing = nodes - set(position)
        if missing:
            raise CheckFailed(f"on {graph.name}: order_fixed never yields {_name(next(iter(missing)))} "
                              f"({len(missing)} of {len(nodes)} nodes missing): it must yield every node "
                              "behind the root.")
        for node in order:
            for nxt in edges[node]:
                if nxt is not None and position[nxt] < position[node]:
                    raise CheckFailed(f"on {graph.name}: order_fixed yields {_name(nxt)} before {_name(node)}, "
                                      f"which sends it a gradient: {_name(nxt)} would run on part of its "
                                      "gradient. A node may come only after every node with an edge to it.")
        xs, loss = graph.mine(Tensor)
        _run_learner("order_fixed", lambda: loss.backward(order=order_fixed), graph)
        want, _ = graph.reference()
        _compare_leaves(graph, xs, want, "loss.backward(order=order_fixed)")
    return ("order_fixed yields every node once, each after all the nodes that send it a gradient, on all 7 "
            "graphs (including paths of different lengths and a chain of 5,000 products, without "
            "recursion); the gradients equal minigrad's.")
