"""Wrong answers to chapter 9's exercises (inside the engine).

The exercises extend the chapter's engine, so the submitted notebook also holds the engine's
cells (PRELUDE_CELLS, by id).
"""
from exercise_catalogue import Wrong

PRELUDE_CELLS = ["ch09-engine-tensor", "ch09-engine-node", "ch09-engine-ops", "ch09-engine-orders",
                 "ch09-engine-backward"]


def _div(forward: str, backward: str) -> str:
    return f"""\
class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


_SAVE = "        ctx.save_for_backward(a, b)\n        return a.data / b.data"
_LOAD = "        a, b = ctx.saved_tensors\n"


_SKIP = """\
        if grad_output is None:
            continue
"""


def _loop(order: str = "order_by_seq", add: str = "buffers[nxt] + g if nxt in buffers else g",
          pop: str = "buffers.pop(node, None)", skip: str = _SKIP) -> str:
    return f"""\
def backward_once(tensor):
    buffers = {{tensor.grad_fn: np.ones_like(tensor.data)}}
    for node in {order}(tensor.grad_fn):
        grad_output = {pop}
{skip}        grads = node.apply(grad_output)
        node.release()
        for nxt, g, shape in zip(node.next_functions, grads,
                                 node.input_shapes):
            if nxt is not None and g is not None:
                g = sum_to(np.asarray(g, float), shape)
                buffers[nxt] = {add}
"""


_RECURSIVE = """\
    topo, seen = [], set()

    def visit(node):
        if node not in seen:
            seen.add(node)
            for nxt in node.next_functions:
                if nxt is not None:
                    visit(nxt)
            topo.append(node)

    visit(root)
    yield from reversed(topo)
"""

WRONG = [
    # ---------------------------------------------------------------- Exercise 9.1: Div
    Wrong("ch09-ex1", "sign", _div(_SAVE, _LOAD + "        return grad_output / b.data, grad_output * a.data / b.data ** 2"),
          says="wrong sign"),
    Wrong("ch09-ex1", "factor", _div(_SAVE, _LOAD + "        return grad_output / b.data, -grad_output * a.data / b.data"),
          says="missing a factor 1 / b"),
    Wrong("ch09-ex1", "swapped", _div(_SAVE, _LOAD + "        return -grad_output * a.data / b.data ** 2, grad_output / b.data"),
          says="swapped"),
    Wrong("ch09-ex1", "grad-output", _div(_SAVE, _LOAD + "        return 1 / b.data, -a.data / b.data ** 2"),
          says="multiply by grad_output"),
    Wrong("ch09-ex1", "count", _div(_SAVE, _LOAD + "        return grad_output / b.data"),
          says="two gradients"),
    Wrong("ch09-ex1", "saves", _div("        ctx.a, ctx.b = a, b\n        return a.data / b.data",
                                    "        a, b = ctx.a, ctx.b\n"
                                    "        return grad_output / b.data, -grad_output * a.data / b.data ** 2"),
          says="ctx.save_for_backward"),
    Wrong("ch09-ex1", "saves", _div("        ctx.b = b.data.copy()\n        ctx.save_for_backward(a)\n"
                                    "        return a.data / b.data",
                                    "        a, = ctx.saved_tensors\n"
                                    "        return grad_output / ctx.b, -grad_output * a.data / ctx.b ** 2"),
          says="did not notice"),
    Wrong("ch09-ex1", "correct", _div("        out = Tensor(a.data / b.data)\n"
                                      "        ctx.save_for_backward(b, out)\n        return out",
                                      "        b, out = ctx.saved_tensors\n"
                                      "        g = grad_output / b.data\n        return g, -g * out.data")),

    # ------------------------------------------------------- Exercise 9.2: fan-out in backward
    Wrong("ch09-ex2", "paths", """\
def backward_once(tensor):
    backward_paths(tensor)
""", says="a node ran twice"),
    Wrong("ch09-ex2", "overwrite", _loop(add="g"), says="not added up"),
    Wrong("ch09-ex2", "early", """\
def backward_once(tensor):
    # breadth-first: a node is queued when its first gradient arrives
    buffers = {tensor.grad_fn: np.ones_like(tensor.data)}
    queue, seen = collections.deque([tensor.grad_fn]), {tensor.grad_fn}
    while queue:
        node = queue.popleft()
        grads = node.apply(buffers.pop(node))
        node.release()
        for nxt, g, shape in zip(node.next_functions, grads,
                                 node.input_shapes):
            if nxt is not None and g is not None:
                g = sum_to(np.asarray(g, float), shape)
                buffers[nxt] = buffers[nxt] + g if nxt in buffers else g
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
""", says="before all of its gradients"),
    Wrong("ch09-ex2", "recursion", """\
def order_recursive(root):
""" + _RECURSIVE + "\n\n" + _loop(order="order_recursive"), says="RecursionError"),
    Wrong("ch09-ex2", "no-leaves", """\
def backward_once(tensor):
    buffers = {tensor.grad_fn: np.ones_like(tensor.data)}
    for node in order_by_seq(tensor.grad_fn):
        if isinstance(node, AccumulateGrad):
            continue            # leaves: nothing to compute
        grads = node.apply(buffers.pop(node))
        node.release()
        for nxt, g, shape in zip(node.next_functions, grads,
                                 node.input_shapes):
            if nxt is not None and g is not None:
                g = sum_to(np.asarray(g, float), shape)
                buffers[nxt] = buffers[nxt] + g if nxt in buffers else g
""", says="never ran"),
    Wrong("ch09-ex2", "no-release", _loop().replace("        node.release()\n", ""), says="still holds its saved"),
    Wrong("ch09-ex2", "no-gradient", _loop(pop="buffers.pop(node)", skip=""), says="received no gradient"),
    Wrong("ch09-ex2", "correct", _loop(order="order_by_counts")),

    # ---------------------------------------------------- Exercise 9.3: fix the traversal
    Wrong("ch09-ex3", "unchanged", """\
def order_fixed(root):
    yield from order_breadth_first(root)
""", says="before"),
    Wrong("ch09-ex3", "depth-first", """\
def order_fixed(root):
    stack, seen = [root], {root}
    while stack:
        node = stack.pop()
        yield node
        for nxt in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
""", says="which sends it a gradient"),
    Wrong("ch09-ex3", "recursion", "def order_fixed(root):\n" + _RECURSIVE, says="RecursionError"),
    Wrong("ch09-ex3", "twice", """\
def order_fixed(root):
    queue = collections.deque([root])
    while queue:
        node = queue.popleft()
        yield node
        for nxt in node.next_functions:
            if nxt is not None:
                queue.append(nxt)
""", says="more than once"),
    # newest first by the numbers alone: every AccumulateGrad has seq 2**64 - 1, so the heap compares nodes
    Wrong("ch09-ex3", "ties", """\
def order_fixed(root):
    heap, seen = [(-root.seq, root)], {root}
    while heap:
        node = heapq.heappop(heap)[1]
        yield node
        for nxt in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                heapq.heappush(heap, (-nxt.seq, nxt))
""", says="the same seq"),
    # ... with a tie-breaker: an AccumulateGrad is taken as soon as its first gradient arrives
    Wrong("ch09-ex3", "early", """\
def order_fixed(root):
    heap, seen = [(-root.seq, 0, root)], {root}
    while heap:
        node = heapq.heappop(heap)[2]
        yield node
        for nxt in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                heapq.heappush(heap, (-nxt.seq, len(seen), nxt))
""", says="which sends it a gradient"),
    # PyTorch's rule: the counts, and a heap with a tie-breaker
    Wrong("ch09-ex3", "correct", """\
def order_fixed(root):
    counts, stack = collections.Counter(), [root]
    while stack:
        for nxt in stack.pop().next_functions:
            if nxt is not None:
                counts[nxt] += 1
                if counts[nxt] == 1:
                    stack.append(nxt)
    heap, k = [(-root.seq, 0, root)], 0
    while heap:
        node = heapq.heappop(heap)[2]
        yield node
        for nxt in node.next_functions:
            if nxt is not None:
                counts[nxt] -= 1
                if counts[nxt] == 0:
                    k += 1
                    heapq.heappush(heap, (-nxt.seq, k, nxt))
"""),
]
