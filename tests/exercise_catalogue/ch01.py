"""Wrong answers to chapter 1's exercises."""
from exercise_catalogue import Wrong, function


def _multiply(forward: str, backward: str) -> str:
    return function("Multiply", forward, backward, args="a, b")


_SAVE_AB = "        ctx.save_for_backward(a, b)\n        return a * b"
_AB = "        a, b = ctx.saved_tensors\n"


def _lerp(backward: str) -> str:
    return function("Lerp", "        ctx.t = t\n        return a + t * (b - a)",
                    "        t = ctx.t\n" + backward, args="a, b, t")


def _abs(forward: str, backward: str) -> str:
    return function("Abs", forward, "        x, = ctx.saved_tensors\n" + backward)


_ABS_FORWARD = "        ctx.save_for_backward(x)\n        return torch.where(x < 0, -x, x)"
_SIGN = "        sign = (x > 0).to(grad_output.dtype) - (x < 0).to(grad_output.dtype)\n"

WRONG = [
    # ---- Exercise 1.1: Multiply
    Wrong("ch01-ex1", "sign", _multiply(_SAVE_AB, _AB + "        return -grad_output * b, -grad_output * a"),
          says="wrong sign"),
    Wrong("ch01-ex1", "swapped", _multiply(_SAVE_AB, _AB + "        return grad_output * a, grad_output * b"),
          says="belongs to b"),
    Wrong("ch01-ex1", "grad-output", _multiply(_SAVE_AB, _AB + "        return b, a"),
          says="ignores grad_output"),
    Wrong("ch01-ex1", "count", _multiply(_SAVE_AB, _AB + "        return grad_output * b"),
          says="wrong number of returned gradients"),
    Wrong("ch01-ex1", "factor", _multiply(_SAVE_AB, _AB + "        return 2 * grad_output * b, 2 * grad_output * a"),
          says="constant factor"),
    Wrong("ch01-ex1", "in-place", _multiply("        ctx.save_for_backward(a.clone(), b)\n        return a.mul_(b)",
                                            _AB + "        return grad_output * b, grad_output * a"),
          says="in place"),
    # ---- Exercise 1.2: Lerp
    Wrong("ch01-ex2", "count", _lerp("        return grad_output * (1 - t), grad_output * t"),
          says="wrong number of returned gradients"),
    Wrong("ch01-ex2", "non-tensor", _lerp("        return grad_output * (1 - t), grad_output * t, grad_output.sum()"),
          says="not a tensor"),
    Wrong("ch01-ex2", "swapped", _lerp("        return grad_output * t, grad_output * (1 - t), None"),
          says="belongs to b"),
    Wrong("ch01-ex2", "sign", _lerp("        return grad_output * (t - 1), grad_output * t, None"),
          says="wrong sign"),
    Wrong("ch01-ex2", "factor", _lerp("        return grad_output, grad_output * t, None"),
          says="constant factor"),
    # ---- Exercise 1.3: count_nodes
    Wrong("ch01-ex3", "value", """\
def count_nodes(t):
    counts = {}
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:                      # no record of visited nodes
        node = stack.pop()
        name = type(node).__name__
        counts[name] = counts.get(name, 0) + 1
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return counts
""", says="counted more than once"),
    Wrong("ch01-ex3", "value", """\
def count_nodes(t):
    counts, seen = {}, set()
    stack = [t.grad_fn]               # forgets that a tensor may have no graph
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        counts[type(node).__name__] = counts.get(type(node).__name__, 0) + 1
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return counts
""", says="raised AttributeError"),
    Wrong("ch01-ex3", "value", """\
def count_nodes(t):
    counts, seen = {}, set()
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        counts[type(node).__name__] = counts.get(type(node).__name__, 0) + 1
        for child, _ in node.next_functions[:1]:   # follows only the first input
            if child is not None:
                stack.append(child)
    return counts
""", says="Some nodes are missing"),
    Wrong("ch01-ex3", "correct", """\
def count_nodes(t):
    seen = {}
    def visit(node):                  # recursive, and just as right
        if node is None or id(node) in seen:
            return
        seen[id(node)] = type(node).__name__
        for child, _ in node.next_functions:
            visit(child)
    visit(t.grad_fn)
    counts = {}
    for name in seen.values():
        counts[name] = counts.get(name, 0) + 1
    return counts
"""),
    # ---- Exercise 1.4: Abs
    Wrong("ch01-ex4", "kink", _abs(_ABS_FORWARD, "        sign = (x >= 0).to(grad_output.dtype) - (x < 0).to(grad_output.dtype)\n"
                                                 "        return grad_output * sign"),
          says="at exactly x = 0"),
    Wrong("ch01-ex4", "sign", _abs(_ABS_FORWARD, _SIGN + "        return -grad_output * sign"), says="wrong sign"),
    Wrong("ch01-ex4", "grad-output", _abs(_ABS_FORWARD, _SIGN + "        return sign"), says="ignores grad_output"),
    Wrong("ch01-ex4", "factor", _abs(_ABS_FORWARD, _SIGN + "        return 2 * grad_output * sign"),
          says="constant factor"),
    Wrong("ch01-ex4", "in-place", _abs("        ctx.save_for_backward(x.clone())\n        x[x < 0] = -x[x < 0]\n"
                                       "        return x", _SIGN + "        return grad_output * sign"),
          says="in place"),
]
