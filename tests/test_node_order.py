"""The order in which backward() runs the nodes of a graph whose leaves have hooks is PyTorch's.

PyTorch gives every AccumulateGrad node the largest sequence number (2**64 - 1) and counts each
node's dependencies first: a leaf's hooks and accumulation run as soon as its gradient is
complete, and nodes that become ready together are taken as its C++ heap gives them. Hooks on
the leaves (``register_hook`` before the accumulation, ``register_post_accumulate_grad_hook``
after) and on some non-leaf tensors log their calls; on seeded random graphs the log must be
the same on minigrad as on PyTorch (the oracle, skipped where it is not installed).

Also: ``register_post_accumulate_grad_hook`` itself (PyTorch's semantics and errors), and that
without a leaf hook backward() stays on its fast loop.
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.autograd import engine

N_GRAPHS = 150


def make_ops(lib):
    """(name, arity, fn) for ``lib`` (minigrad or torch); every result has shape (3,)."""

    class Mix3(lib.autograd.Function):  # a custom Function with three tensor inputs
        @staticmethod
        def forward(ctx, a, b, c):
            ctx.save_for_backward(a, b)
            return a * b + c

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return grad_output * b, grad_output * a, grad_output

    return [
        ("add", 2, lambda a, b: a + b),
        ("mul", 2, lambda a, b: a * b),
        ("exp", 1, lambda a: (a * 0.5).exp()),
        ("tanh", 1, lambda a: a.tanh()),
        ("mix3", 3, Mix3.apply),
        ("stack", 4, lambda *ts: lib.stack(ts).sum(0)),
        ("cat", 3, lambda *ts: lib.cat(ts).reshape(3, 3).mean(0)),
        ("scale", 1, lambda a: a * 1.5 + 0.25),
    ]


def recipe(seed: int):
    """Leaves, ops drawing operands from everything so far (leaves often), hooked tensors, roots."""
    rng = np.random.default_rng(seed)
    n_leaves = int(rng.integers(1, 6))
    values = [rng.uniform(-1.0, 1.0, 3) for _ in range(n_leaves)]
    arities = [a for _, a, _ in make_ops(minigrad)]
    steps = []
    for k in range(int(rng.integers(1, 10))):
        op = int(rng.integers(0, len(arities)))
        pool = n_leaves + k
        # half of the operands are leaves: several AccumulateGrad nodes often become ready together
        operands = [int(rng.integers(0, n_leaves)) if rng.random() < 0.5 else int(rng.integers(0, pool))
                    for _ in range(arities[op])]
        steps.append((op, operands))
    total = n_leaves + len(steps)
    hooked = [i for i in range(n_leaves, total) if rng.random() < 0.4]
    n_roots = int(rng.integers(1, 3))
    roots = [int(rng.integers(n_leaves, total)) if rng.random() < 0.8 else int(rng.integers(0, total))
             for _ in range(n_roots)]
    return values, steps, hooked, roots


def hook_log(lib, seed: int, leaf_hooks=("pre", "post")) -> tuple[list, list]:
    """Run the recipe's backward on ``lib``; the hook calls in order, and the leaves' gradients."""
    values, steps, hooked, roots = recipe(seed)
    ops = make_ops(lib)
    log: list = []
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
    for k, x in enumerate(leaves):
        if "pre" in leaf_hooks:
            x.register_hook(lambda g, k=k: log.append(f"pre x{k}"))
        if "post" in leaf_hooks:
            x.register_post_accumulate_grad_hook(lambda t, k=k: log.append(f"post x{k} {t.grad.sum().item():.6f}"))
    pool = list(leaves)
    for op, operands in steps:
        out = ops[op][2](*[pool[i] for i in operands])
        pool.append(out)
    for i in hooked:
        pool[i].register_hook(lambda g, i=i: log.append(f"t{i}"))
    outs = [pool[i].sum() * float(j + 1) for j, i in enumerate(roots)]
    if len(outs) == 1:
        outs[0].backward()
    else:
        lib.autograd.backward(outs)
    grads = [None if x.grad is None else x.grad.detach().numpy().copy() for x in leaves]
    return log, grads


def test_the_recipes_exercise_ties_and_several_roots():
    """The random graphs reach the cases where the order is decided: not a vacuous oracle."""
    many_leaves_one_node = several_roots = 0
    for seed in range(N_GRAPHS):
        values, steps, _, roots = recipe(seed)
        n = len(values)
        many_leaves_one_node += any(len({i for i in ops if i < n}) >= 3 for _, ops in steps)
        several_roots += len(roots) > 1
    assert many_leaves_one_node >= 20 and several_roots >= 20


@pytest.mark.parametrize("seed", range(N_GRAPHS))
def test_hook_order_is_pytorchs(seed):
    torch = pytest.importorskip("torch")
    want, want_grads = hook_log(torch, seed)
    got, got_grads = hook_log(minigrad, seed)
    assert got == want, f"seed {seed}: recipe {recipe(seed)}"
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        assert (g is None) == (w is None), f"seed {seed}, leaf {k}"
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_known_orders():
    """The issue's graph, and four leaves of one node (PyTorch's heap takes them as x0 x2 x1 x3)."""
    log = []
    xs = [minigrad.tensor([0.0, 1.0], requires_grad=True) for _ in range(4)]
    for k, x in enumerate(xs):
        x.register_post_accumulate_grad_hook(lambda t, k=k: log.append(f"x{k}"))
    a, b = xs[0].exp(), xs[1].exp()
    a.register_hook(lambda g: log.append("Exp(x0)"))
    b.register_hook(lambda g: log.append("Exp(x1)"))
    (a * b).sum().backward()
    assert log == ["Exp(x1)", "x1", "Exp(x0)", "x0"]
    log.clear()
    minigrad.stack(xs).sum().backward()
    assert log == ["x0", "x2", "x1", "x3"]
    log.clear()
    minigrad.cat(xs + [xs[0] * 1.0]).sum().backward()
    assert log == ["x1", "x3", "x2", "x0"]  # x0 waits for its second sender, the product


def test_same_gradients_as_the_fast_loop():
    for seed in range(0, N_GRAPHS, 7):
        _, with_hooks = hook_log(minigrad, seed)
        _, without = hook_log(minigrad, seed, leaf_hooks=())
        for g, w in zip(with_hooks, without):
            assert (g is None) == (w is None)
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


# ----------------------------------------------------------- register_post_accumulate_grad_hook
def test_post_accumulate_grad_hook_semantics():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
    (x * 2).sum().backward()
    assert seen == [(True, [2.0, 2.0])]  # called with the tensor, after .grad was filled
    (x * 3).sum().backward()
    assert seen[-1] == (True, [5.0, 5.0])  # after accumulation
    minigrad.autograd.grad((x * 2).sum(), x)
    assert len(seen) == 2  # autograd.grad accumulates nothing: no call
    (x * 1).sum().backward(inputs=[x])
    assert seen[-1] == (True, [6.0, 6.0])
    handle.remove()
    (x * 2).sum().backward()
    assert len(seen) == 3


def test_post_hook_sees_what_register_hook_changed_and_may_edit_grad():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 10)
    seen = []

    def post(t):
        seen.append(t.grad.tolist())
        t.grad.zero_()  # an optimizer step in a hook: in place, returns None

    x.register_post_accumulate_grad_hook(post)
    (x * 2).sum().backward()
    assert seen == [[20.0, 20.0]] and x.grad.tolist() == [0.0, 0.0]


def test_post_accumulate_grad_hook_errors():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        minigrad.tensor([1.0]).register_post_accumulate_grad_hook(lambda t: None)
    h = x.register_post_accumulate_grad_hook(lambda t: t * 2)
    with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None"):
        (x * 2).sum().backward()
    h.remove()
    x.register_post_accumulate_grad_hook(lambda t: 5)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        (x * 2).sum().backward()


def test_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, minigrad):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf"):
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        x.register_post_accumulate_grad_hook(lambda t: t * 2)
        with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None"):
            (x * 2).sum().backward()


def test_no_leaf_hook_keeps_the_fast_loop(monkeypatch):
    """PyTorch's order costs a counting pass: backward() takes it only while a leaf has a hook."""
    calls = []
    real = engine._run_in_torch_order
    monkeypatch.setattr(engine, "_run_in_torch_order", lambda *a: (calls.append(1), real(*a)))
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert calls == []
    handle = x.register_post_accumulate_grad_hook(lambda t: None)
    (x * x).sum().backward()
    assert calls == [1]
    handle.remove()  # the last hook of the last hooked leaf gone: the fast loop again
    (x * x).sum().backward()
    assert calls == [1]
    assert x.grad.tolist() == [6.0, 12.0]


# ------------------------------------------------- chapter 9's order_by_seq is PyTorch's order
def _chapter_engine():
    import test_ch09_engine  # tests/: the chapter's engine cells, read from the notebook

    return test_ch09_engine.ENGINE


CHAPTER_OPS = [
    lambda a, b: a + b,
    lambda a, b: a * b,
    lambda a, b: a + b * -1.0,
    lambda a, b: (a * 0.5).exp(),
    lambda a, b: a * 1.5 + 0.25,
    lambda a, b: a.sum(),
]


def chapter_recipe(seed: int):
    rng = np.random.default_rng(1000 + seed)
    n_leaves = int(rng.integers(1, 5))
    shapes = [[(2, 3), (3,), (1, 3), (2, 1)][int(rng.integers(0, 4))] for _ in range(n_leaves)]
    values = [rng.uniform(-1.0, 1.0, s) for s in shapes]
    steps = [(int(rng.integers(0, len(CHAPTER_OPS))), int(rng.integers(0, n_leaves + k)),
              int(rng.integers(0, n_leaves + k))) for k in range(int(rng.integers(1, 10)))]
    terms = [int(rng.integers(0, n_leaves + len(steps))) for _ in range(int(rng.integers(1, 4)))]
    return values, steps, terms


def chapter_build(seed: int, make_leaf):
    values, steps, terms = chapter_recipe(seed)
    leaves = [make_leaf(v) for v in values]
    pool = list(leaves)
    for op, i, j in steps:
        pool.append(CHAPTER_OPS[op](pool[i], pool[j]))
    loss = pool[terms[0]].sum()
    for k, i in enumerate(terms[1:], start=2):
        loss = loss + pool[i].sum() * float(k)
    return leaves, loss


def node_label(node, leaves) -> str:
    name = node.name()
    if name.endswith("AccumulateGrad"):
        return f"AccumulateGrad(x{next(k for k, x in enumerate(leaves) if x is node.variable)})"
    return name.replace("Backward0", "").replace("Backward", "")


@pytest.mark.parametrize("seed", range(60))
def test_chapter_order_by_seq_is_pytorchs(seed):
    """Every node, AccumulateGrad included, in the order PyTorch runs it (pre-hooks on its nodes)."""
    torch = pytest.importorskip("torch")
    E = _chapter_engine()
    leaves, loss = chapter_build(seed, lambda v: torch.tensor(v, requires_grad=True))
    ran: list = []
    seen, stack = set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grad, node=node: ran.append(node_label(node, leaves)))
        stack += [n for n, _ in node.next_functions]
    loss.backward()
    mine_leaves, mine_loss = chapter_build(seed, lambda v: E.Tensor(v, requires_grad=True))
    mine = [node_label(n, mine_leaves) for n in E.order_by_seq(mine_loss.grad_fn)]
    assert mine == ran



@pytest.mark.parametrize("seed", range(0, N_GRAPHS, 3))
def test_register_hook_alone_gives_pytorchs_order(seed):
    """A leaf with only a register_hook hook switches backward() to PyTorch's order too."""
    torch = pytest.importorskip("torch")
    want, _ = hook_log(torch, seed, leaf_hooks=("pre",))
    got, _ = hook_log(minigrad, seed, leaf_hooks=("pre",))
    assert got == want


def test_register_hook_on_a_leaf_is_noted():
    leaf = minigrad.tensor([1.0], requires_grad=True)
    handle = leaf.register_hook(lambda g: None)
    assert id(leaf) in engine._LEAF_HOOKS
    handle.remove()
    assert not engine._leaf_hooks_remain() or id(leaf) not in engine._LEAF_HOOKS
