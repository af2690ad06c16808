"""Chapter 9's engine, taken from the notebook itself, computes minigrad's gradients.

The engine of ``book/09_inside_the_engine.ipynb`` is the notebook's code cells tagged
``engine``. They are read from the notebook and executed as a module here (no copy of the
engine exists anywhere else, so the chapter and this test cannot drift apart). On random graphs
(hypothesis: several leaves, broadcasting, tensors used many times), both of the chapter's
orders must give minigrad's gradients, every order must be topological, and the order by
sequence numbers must be the order in which minigrad runs the same graph.
"""
from __future__ import annotations

import ast
import io
import json
import tokenize
import types
from pathlib import Path

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import minigrad  # noqa: E402
from minigrad.viz import backward_order  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[1] / "book" / "09_inside_the_engine.ipynb"
CELL_IDS = ["ch09-engine-tensor", "ch09-engine-node", "ch09-engine-ops", "ch09-engine-orders",
            "ch09-engine-backward"]


def engine_cells() -> dict[str, str]:
    """{cell id: source} of the notebook's cells tagged ``engine``, in the notebook's order."""
    nb = json.loads(NOTEBOOK.read_text())
    return {c["id"]: "".join(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "code" and "engine" in c.get("metadata", {}).get("tags", [])}


def load_engine() -> types.ModuleType:
    module = types.ModuleType("ch09_engine")
    source = "\n\n".join(engine_cells().values())
    exec(compile(source, f"{NOTEBOOK.name} (cells tagged engine)", "exec"), module.__dict__)
    return module


def code_lines(source: str) -> int:
    """Lines that hold code: not blank, not only a comment, not part of a docstring."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    lines = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstrings)


ENGINE = load_engine()


# ------------------------------------------------------------------------------ the notebook
def test_engine_cells_are_found_in_order():
    assert list(engine_cells()) == CELL_IDS


def test_engine_is_about_150_lines():
    """The chapter says: about 150 lines of code for the engine, plus its four operations."""
    cells = engine_cells()
    core = sum(code_lines(src) for cid, src in cells.items() if cid != "ch09-engine-ops")
    ops = code_lines(cells["ch09-engine-ops"])
    assert 120 <= core <= 160, f"the engine has {core} lines of code; the chapter says about 150"
    assert ops <= 40, f"the four operations take {ops} lines of code"


# --------------------------------------------------------------------------- random graphs
SHAPES = [(2, 3), (3,), (1, 3), (2, 1)]
# (name, arity, how to compute it): the same Python expression in both engines
OPS = [
    ("add", 2, lambda a, b: a + b),
    ("mul", 2, lambda a, b: a * b),
    ("sub", 2, lambda a, b: a + b * -1.0),
    ("exp", 1, lambda a: (a * 0.5).exp()),
    ("scale", 1, lambda a: a * 1.5 + 0.25),
    ("sum", 1, lambda a: a.sum()),
]


@st.composite
def graphs(draw):
    """A recipe: leaf shapes and values, then ops whose operands are drawn from everything so far."""
    n_leaves = draw(st.integers(1, 4))
    leaf_shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_leaves)]
    seed = draw(st.integers(0, 2**32 - 1))
    steps = []
    for k in range(draw(st.integers(1, 12))):
        op = draw(st.integers(0, len(OPS) - 1))
        operands = [draw(st.integers(0, n_leaves + k - 1)) for _ in range(OPS[op][1])]
        steps.append((op, operands))
    # the loss: a weighted sum of some of the tensors (fan-out of the last ones is common)
    n_terms = draw(st.integers(1, 3))
    terms = [draw(st.integers(0, n_leaves + len(steps) - 1)) for _ in range(n_terms)]
    return leaf_shapes, seed, steps, terms


def build(recipe, make_leaf):
    leaf_shapes, seed, steps, terms = recipe
    rng = np.random.default_rng(seed)
    leaves = [make_leaf(rng.uniform(-1.0, 1.0, shape)) for shape in leaf_shapes]
    pool = list(leaves)
    for op, operands in steps:
        pool.append(OPS[op][2](*[pool[i] for i in operands]))
    loss = pool[terms[0]].sum()
    for k, i in enumerate(terms[1:], start=2):
        loss = loss + pool[i].sum() * float(k)
    return leaves, loss


def mine_leaf(data):
    return ENGINE.Tensor(data, requires_grad=True)


def library_leaf(data):
    return minigrad.tensor(data, dtype=minigrad.float64, requires_grad=True)


def library_grads(recipe):
    leaves, loss = build(recipe, library_leaf)
    if not loss.requires_grad:  # pragma: no cover - a loss always depends on a leaf here
        return None, loss
    loss.backward()
    return [None if x.grad is None else x.grad.numpy() for x in leaves], loss


def reachable(root) -> set:
    seen, stack = {root}, [root]
    while stack:
        for nxt in stack.pop().next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def assert_topological(root, order):
    nodes = list(order(root))
    position = {n: i for i, n in enumerate(nodes)}
    assert len(position) == len(nodes), f"{order.__name__} yields a node twice"
    assert set(nodes) == reachable(root), f"{order.__name__} misses nodes"
    for node in nodes:
        for nxt in node.next_functions:
            if nxt is not None:
                assert position[node] < position[nxt], f"{order.__name__}: {nxt.name()} before its sender"
    return nodes


@settings(max_examples=80, deadline=None)
@given(graphs())
def test_random_graphs_same_gradients_as_minigrad(recipe):
    want, _ = library_grads(recipe)
    for order in (ENGINE.order_by_seq, ENGINE.order_by_counts):
        leaves, loss = build(recipe, mine_leaf)
        assert_topological(loss.grad_fn, order)
        ENGINE.run_backward(loss, order=order)
        for k, (x, w) in enumerate(zip(leaves, want)):
            got = None if x.grad is None else x.grad.data
            assert (got is None) == (w is None), f"leaf {k}: gradient {got} against minigrad's {w}"
            if w is not None:
                assert got.shape == w.shape, f"leaf {k}: shape {got.shape} against {w.shape}"
                np.testing.assert_allclose(got, w, rtol=1e-10, atol=1e-12,
                                           err_msg=f"leaf {k}, order {order.__name__}")


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_order_by_seq_is_minigrads_order(recipe):
    """The chapter's newest-first order runs the operations' nodes as minigrad does."""
    _, loss = build(recipe, mine_leaf)
    _, lib_loss = build(recipe, library_leaf)
    mine = [n.name() for n in ENGINE.order_by_seq(loss.grad_fn) if not isinstance(n, ENGINE.AccumulateGrad)]
    theirs = [n.name() for n in backward_order(lib_loss) if not n.name().endswith("AccumulateGrad")]
    assert [name.replace("Backward", "Backward0") for name in mine] == theirs


# ------------------------------------------------------------------------ engine behaviour
def test_version_check_and_freeing():
    T = ENGINE.Tensor
    a = T([1.0, 2.0], requires_grad=True)
    b = a * 2.0
    y = (b * b).sum()
    b.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()

    x = T([0.0, 1.0], requires_grad=True)
    y = (x * x).exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    x2 = T([0.0, 1.0], requires_grad=True)
    y2 = (x2 * x2).exp().sum()
    y2.backward(retain_graph=True)
    y2.backward()
    np.testing.assert_allclose(x2.grad.data, 2 * 2 * np.array([0.0, 1.0]) * np.exp([0.0, 1.0]))


def test_deep_chain_is_iterative():
    x = ENGINE.Tensor([1.0, 2.0], requires_grad=True)
    h = x
    for _ in range(20_000):
        h = h * 1.0
    for order in (ENGINE.order_by_seq, ENGINE.order_by_counts):
        x.grad = None
        h.sum().backward(retain_graph=True, order=order)
        np.testing.assert_array_equal(x.grad.data, [1.0, 1.0])


def test_wrong_gradient_shape_is_an_error():
    class Bad(ENGINE.Function):
        @staticmethod
        def forward(ctx, a):
            return a.data * 2

        @staticmethod
        def backward(ctx, grad_output):
            return np.ones((5, 7))

    x = ENGINE.Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="BadBackward returned a gradient of shape"):
        Bad.apply(x).sum().backward()
