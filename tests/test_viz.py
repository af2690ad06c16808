"""minigrad.viz.draw_graph: what the drawing says about the graph, and backward_order."""
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

import minigrad as torch  # noqa: E402
from minigrad.autograd import Function  # noqa: E402
from minigrad.viz import backward_order, draw_graph  # noqa: E402


class Double(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.scale = 2
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2


def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts if t.get_text()]


def _graph():
    torch.manual_seed(0)
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(2, 3, requires_grad=True)
    y = Double.apply(x)
    loss = (w * y).sum() + x.sum()
    return x, w, y, loss


def test_returns_figure_with_node_names_and_shapes():
    x, w, _, loss = _graph()
    fig = draw_graph(loss, names={x: "x", w: "w"})
    assert isinstance(fig, Figure)
    text = "\n".join(_texts(fig))
    for name in ("AddBackward0", "SumBackward0", "MulBackward0", "DoubleBackward", "AccumulateGrad"):
        assert name in text
    assert "x: [3]" in text and "w: [2, 3]" in text
    assert "out [2, 3]" in text  # the MulBackward0 node produced a [2, 3] tensor
    assert "saved: [3]" in text  # Double saved its input
    assert "ctx.scale = 2" in text
    fig.canvas.draw()  # the artist-anchored arrows need a renderer: this must not fail


def test_one_box_per_node_numbered_in_backward_order():
    x, w, _, loss = _graph()
    order = backward_order(loss)
    fig = draw_graph(loss, legend=False)
    boxes = _texts(fig)
    assert len(boxes) == len(order) == 7
    for i, node in enumerate(order, start=1):
        label = type(node).__name__
        assert any(b.startswith(f"{i}. {label}") for b in boxes), (i, label, boxes)


def _check_topological(order):
    position = {id(n): i for i, n in enumerate(order)}
    assert len(position) == len(order)  # each node once
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                assert position[id(node)] < position[id(child)], (node.name(), child.name())


def test_backward_order_respects_the_engines_dependencies():
    _, _, _, loss = _graph()
    order = backward_order(loss)
    assert order[0] is loss.grad_fn
    _check_topological(order)
    # x feeds two branches (Double and Sum): its AccumulateGrad runs after both of them
    names = [n.name() for n in order]
    assert names.index("DoubleBackward") < len(names) - 1


def test_backward_order_matches_the_order_the_engine_calls_backward():
    calls = []

    def tracer(tag):
        class Traced(Function):
            @staticmethod
            def forward(ctx, a):
                return a * 1

            @staticmethod
            def backward(ctx, g):
                calls.append(tag)
                return g
        Traced.__name__ = tag
        return Traced

    A, B, C, D = (tracer(t) for t in "ABCD")
    x = torch.ones(2, requires_grad=True)
    a = A.apply(x)
    out = B.apply(a) + C.apply(D.apply(a))
    predicted = [n._forward_cls.__name__ for n in backward_order(out)
                 if getattr(n, "_forward_cls", None) in (A, B, C, D)]
    out.sum().backward()
    assert calls == predicted


def test_leaf_and_plain_tensor():
    x = torch.ones(2, 2, requires_grad=True)
    fig = draw_graph(x, names={x: "x"})
    assert isinstance(fig, Figure)
    assert any("AccumulateGrad" in t and "x: [2, 2]" in t for t in _texts(fig))
    plain = torch.ones(3)
    fig = draw_graph(plain)
    assert isinstance(fig, Figure)
    assert any("no grad_fn" in t for t in _texts(fig))
    assert backward_order(plain) == []


def test_freed_saved_tensors_are_labelled_not_an_error():
    x, _, _, loss = _graph()
    before = "\n".join(_texts(draw_graph(loss)))
    assert "saved tensors freed" not in before
    loss.backward()
    fig = draw_graph(loss)
    fig.canvas.draw()
    text = "\n".join(_texts(fig))
    assert "saved tensors freed" in text
    assert "DoubleBackward" in text


def test_saved_output_is_marked():
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    s = x.sigmoid()
    text = "\n".join(_texts(draw_graph(s)))
    assert "SigmoidBackward0" in text and "(output)" in text


def test_big_graph_and_draw_into_given_axes():
    torch.manual_seed(0)
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    h = x
    for i in range(60):
        h = (h * w).tanh() if i % 2 else h + x
    loss = h.sum()
    order = backward_order(loss)
    assert len(order) > 90
    _check_topological(order)
    fig = draw_graph(loss)
    fig.canvas.draw()
    boxes = [t for t in _texts(fig) if not t.startswith("arrows:")]
    assert len(boxes) == len(order)

    import matplotlib.pyplot as plt

    fig2, ax = plt.subplots()
    try:
        assert draw_graph(torch.ones(2, requires_grad=True) * 3, ax=ax) is fig2
    finally:
        plt.close(fig2)


def test_deterministic_labels_and_positions():
    def snapshot():
        _, _, _, loss = _graph()
        fig = draw_graph(loss)
        return [(t.get_text(), t.get_position()) for t in fig.axes[0].texts if t.get_text()]
    assert snapshot() == snapshot()


def test_rejects_non_tensor():
    with pytest.raises(TypeError, match="draw_graph expects a minigrad Tensor"):
        draw_graph([1, 2, 3])


def test_animation_html_is_offline_and_stable():
    from matplotlib import animation
    import matplotlib.pyplot as plt

    from minigrad.viz import animation_html

    def make():
        fig, ax = plt.subplots(figsize=(2, 2), dpi=40)
        line, = ax.plot([0, 1], [0, 0])
        anim = animation.FuncAnimation(fig, lambda i: line.set_ydata([0, i]), frames=3)
        html = animation_html(anim, "demo", fps=2)
        plt.close(fig)
        return html

    first, second = make(), make()
    assert first == second  # no random ids: stored outputs stay the same
    assert "https://" not in first and 'class="fa ' not in first  # nothing fetched from the web
    assert 'id="_anim_imgdemo"' in first
