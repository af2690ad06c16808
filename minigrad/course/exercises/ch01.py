"""Checks for chapter 1 (what autograd.Function is)."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.course import CheckFailed, _remote, exercise
from minigrad.course._seed import check_seed
from minigrad.course.diagnose import diagnose_function


@exercise("ch01-ex1", points=2, title="Multiply two tensors",
          minutes=15, objective="write a two-input Function whose backward returns one gradient per input")
def _check_multiply(Multiply):
    return diagnose_function(Multiply, lambda a, b: a * b, inputs=[(3, 4), (3, 4)], input_names=["a", "b"])


@exercise("ch01-ex2", points=2, title="Interpolate, with a Python number",
          minutes=15, objective="take a Python number in forward and return None as its gradient")
def _check_lerp(Lerp, t=0.3):
    # t = 0.3, not 0.5: the two gradients differ, so exchanging them is caught
    return diagnose_function(Lerp, lambda a, b, t: a + t * (b - a), inputs=[(4, 3), (4, 3)], args=(t,),
                             input_names=["a", "b"], arg_names=["t"])


def _reference_count(t) -> dict:
    counts: dict = {}
    seen = set()
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        name = type(node).__name__
        counts[name] = counts.get(name, 0) + 1
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return counts


def _graphs(mg, rng):
    """The graphs, built with ``mg`` (minigrad here, or the worker's copy when graded: the student's
    function walks a graph of its own process). Fresh values per grading run; the structure is
    what is counted."""
    data = [rng.uniform(-2.0, 2.0, 3).round(3).tolist() for _ in range(3)]
    x = mg.tensor(data[0], requires_grad=True)
    w = mg.tensor(data[1], requires_grad=True)
    c = mg.tensor(data[2])
    yield "(x * w).sum()", (x * w).sum()
    yield "(x * w + x).sum()  (x is used twice)", (x * w + x).sum()
    h = x * w
    yield "(h * h + h).sum() with h = x * w  (h is used three times)", (h * h + h).sum()
    yield "(x * c).exp().sum()  (c does not require grad)", (x * c).exp().sum()
    yield "x.detach() * 2 (no graph at all)", x.detach() * 2


@exercise("ch01-ex3", points=2, title="Count the nodes of a graph",
          minutes=25, objective="walk a graph through grad_fn and next_functions, counting shared nodes once")
def _check_count_nodes(count_nodes):
    seed = check_seed(1)
    mine = _graphs(_remote.library(count_nodes), np.random.default_rng(seed))
    for (what, t), (_, ref) in zip(mine, _graphs(minigrad, np.random.default_rng(seed))):
        expected = _reference_count(ref)
        got = count_nodes(t)
        if not isinstance(got, dict):
            raise CheckFailed(f"count_nodes must return a dict {{name: count}}, got a {type(got).__name__} "
                              f"for {what}.")
        if got != expected:
            hint = ""
            if any(got.get(k, 0) > v for k, v in expected.items()):
                hint = (" Some nodes were counted more than once: a node reached along two paths (a tensor "
                        "used twice) is still one node. Remember which nodes you have already visited.")
            elif ref.grad_fn is None:
                hint = " A tensor whose grad_fn is None has no graph: return an empty dict."
            elif any(got.get(k, 0) < v for k, v in expected.items()):
                hint = (" Some nodes are missing: follow next_functions all the way down, skipping the "
                        "(None, 0) entries, and name nodes with type(node).__name__.")
            raise CheckFailed(f"For {what}: expected {expected}, got {got}.{hint}")
    return "count_nodes gives the right counts on 5 graphs, including fan-out (a tensor used twice) and no graph."


@exercise("ch01-ex4", points=3, title="Absolute value, kink included",
          minutes=20, objective="write a backward at a kink, choosing PyTorch's subgradient convention")
def _check_abs(Abs):
    return diagnose_function(Abs, lambda x: x.abs(), inputs=[(4, 5)], kinks=[0.0],
                             at_kinks={0.0: (0.0, "PyTorch's abs, the middle of the subgradients [-1, 1]")})
