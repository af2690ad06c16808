"""minigrad.viz.draw_graph: what the drawing says about the graph, and backward_order."""
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

import minigrad as torch  # noqa: E402
from minigrad.autograd import Function  # noqa: E402
from minigrad.viz import backward_order, describe_graph, draw_graph  # noqa: E402


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


# --------------------------------------------------------------------------- geometry
# What a reader sees: no box covers another, no label sticks out of its box or off the
# figure, no edge runs through a box. Checked on the rendered figure, in pixels.
from matplotlib.patches import FancyBboxPatch  # noqa: E402

import numpy as np  # noqa: E402


def _rendered(fig):
    if not hasattr(fig.canvas, "get_renderer"):  # a figure closed in pyplot: render it with Agg
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes, texts, segments = [], [], []
    for ax in fig.axes:
        for patch in ax.patches:
            if isinstance(patch, FancyBboxPatch):
                boxes.append((ax, patch.get_window_extent(renderer)))
        for t in ax.texts:
            if t.get_text():
                texts.append((ax, t, t.get_window_extent(renderer)))
        to_px = ax.transData.transform
        for line in ax.lines:
            pts = to_px(np.column_stack(line.get_data()))
            segments += list(zip(pts[:-1], pts[1:]))
        for ann in ax.texts:
            if hasattr(ann, "xyann") and ann.arrow_patch is not None:
                segments.append((to_px(ann.xyann), to_px(ann.xy)))
        if ax.title.get_text():
            texts.append((ax, ax.title, ax.title.get_window_extent(renderer)))
    return boxes, texts, segments


def _overlap(a, b, tol=0.5):
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tol) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tol)


def _inside(inner, outer, tol=1.0):
    return (inner.x0 >= outer.x0 - tol and inner.x1 <= outer.x1 + tol
            and inner.y0 >= outer.y0 - tol and inner.y1 <= outer.y1 + tol)


def assert_readable(fig, n_boxes=None):
    boxes, texts, segments = _rendered(fig)
    if n_boxes is not None:
        assert len(boxes) == n_boxes
    w, h = fig.canvas.get_width_height()
    page = matplotlib.transforms.Bbox([[0, 0], [w, h]])
    for i, (ax_i, a) in enumerate(boxes):
        assert _inside(a, page), f"box {i} is cut off by the figure's edge: {a} not in {page}"
        assert _inside(a, ax_i.bbox), f"box {i} leaves its axes"
        for j, (_, b) in enumerate(boxes[:i]):
            assert not _overlap(a, b), f"boxes {j} and {i} overlap: {b} / {a}"
    for ax, t, bb in texts:
        assert _inside(bb, page), f"text {t.get_text()!r} is cut off by the figure's edge"
        owners = [b for a2, b in boxes if a2 is ax and _overlap(bb, b)]
        if t.get_text()[:1].isdigit():  # a node label ("3. MulBackward0 ...")
            assert len(owners) == 1 and _inside(bb, owners[0]), f"label {t.get_text()!r} sticks out of its box"
        else:  # legend, title: over no box
            assert not owners, f"{t.get_text()[:30]!r} covers a box"
    for p, q in segments:  # sample every edge segment: no point strictly inside a box
        for s in np.linspace(0.02, 0.98, 25):
            x, y = p + s * (q - p)
            for _, b in boxes:
                assert not (b.x0 + 1.5 < x < b.x1 - 1.5 and b.y0 + 1.5 < y < b.y1 - 1.5), \
                    f"an edge runs through a box at ({x:.0f}, {y:.0f})"


def _named(name, n_saved=1, attrs=0):
    """A custom Function with a long name, n_saved saved tensors and a few ctx attributes."""
    def forward(ctx, a):
        ctx.save_for_backward(*([a] * n_saved))
        for k in range(attrs):
            setattr(ctx, f"attribute_{k}", (k, "a longish value"))
        return a * 1

    def backward(ctx, g):
        return g
    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def _random_graph(seed, max_nodes=15):
    """A random expression over a few leaves, with built-in ops and custom Functions."""
    rng = np.random.default_rng(seed)
    shape = [(3,), (1000,), (2, 3), (64, 128)][seed % 4]
    leaves = [torch.ones(*shape, requires_grad=True) for _ in range(int(rng.integers(1, 4)))]
    names = {t: ["x", "weight_matrix", "bias"][i] for i, t in enumerate(leaves)}
    pool = list(leaves)
    customs = [_named("AVeryLongCustomFunctionName", 2, 2), _named("Scale", 1, 1), _named("Clamp01", 0, 5)]
    out = pool[0]
    for _ in range(int(rng.integers(2, 14))):
        a = pool[int(rng.integers(len(pool)))]
        b = pool[int(rng.integers(len(pool)))]
        op = int(rng.integers(5))
        out = (a * b if op == 0 else a + b if op == 1 else a.sigmoid() if op == 2
               else customs[int(rng.integers(3))].apply(a) if op == 3 else (a - b).tanh())
        pool.append(out)
        if len(backward_order(out.sum())) >= max_nodes:
            break
    loss = out.sum()
    names[loss] = "loss"
    return loss, names


def test_no_overlap_or_cut_label_on_random_graphs_up_to_15_nodes():
    sizes = []
    for seed in range(20):
        loss, names = _random_graph(seed)
        n = len(backward_order(loss))
        sizes.append(n)
        fig = draw_graph(loss, names=names)
        assert_readable(fig, n_boxes=n)
    assert max(sizes) >= 12 and min(sizes) <= 5, sizes  # the generator covers small and large graphs


def test_no_overlap_on_wide_and_deep_graphs():
    xs = [torch.ones(3, requires_grad=True) for _ in range(7)]
    wide = sum(x * x for x in xs[1:]) + xs[0]          # 7 leaves side by side
    deep = xs[0]
    for _ in range(12):
        deep = deep.sigmoid()                            # 13 nodes in a column
    long_edge = (xs[0].sigmoid().tanh().exp() + xs[0]).sum()  # an edge that skips rows
    for t in (wide.sum(), deep.sum(), long_edge):
        assert_readable(draw_graph(t, names={x: f"x{i}" for i, x in enumerate(xs)}), len(backward_order(t)))


@pytest.mark.filterwarnings("ignore:draw_graph")  # the small figures make small text, on purpose
@pytest.mark.parametrize("dpi", [100, 90, 144])  # hinted text is wider at some dpis (CI drew at 90)
def test_side_by_side_drawings_fit_their_axes(dpi):
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"figure.dpi": dpi}):
        _side_by_side_drawings_fit()


def _side_by_side_drawings_fit():
    import matplotlib.pyplot as plt

    graphs = [_random_graph(s) for s in (3, 7, 11)]
    for n_cols, size in ((2, (11, 6)), (2, (8, 3)), (3, (9, 3))):
        fig, axes = plt.subplots(1, n_cols, figsize=size)
        try:
            for ax, (loss, names), title in zip(axes, graphs, ["SigmoidSavesInput", "SigmoidSavesOutput", "a third"]):
                assert draw_graph(loss, ax=ax, names=names, title=title, legend=(n_cols == 2)) is fig
            assert_readable(fig, n_boxes=sum(len(backward_order(g[0])) for g in graphs[:n_cols]))
        finally:
            plt.close(fig)


def test_kinds_differ_by_shape_and_border_not_colour_alone():
    _, _, _, loss = _graph()
    fig = draw_graph(loss)
    fig.canvas.draw()
    styles = {}
    for patch, t in zip(fig.axes[0].patches, [t for t in fig.axes[0].texts if t.get_text()[:1].isdigit()]):
        kind = "leaf" if "AccumulateGrad" in t.get_text() else "custom" if "Double" in t.get_text() else "builtin"
        styles.setdefault(kind, set()).add((type(patch.get_boxstyle()).__name__, patch.get_linestyle(),
                                            round(patch.get_linewidth(), 1)))
    assert all(len(v) == 1 for v in styles.values()) and len(set().union(*styles.values())) == 3, styles
    legend = [t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("arrows:")][0]
    assert "your Function" in legend and "built-in op" in legend and "AccumulateGrad" in legend


def _contrast(c1, c2="white"):
    from matplotlib.colors import to_rgb

    def lum(c):
        rgb = np.array(to_rgb(c))
        rgb = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
    hi, lo = sorted([lum(c1), lum(c2)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_colour_contrast():
    _, _, _, loss = _graph()
    fig = draw_graph(loss)
    ax = fig.axes[0]
    for patch in ax.patches:  # borders against the page (WCAG 1.4.11: 3:1), text against the fill (4.5:1)
        assert _contrast(patch.get_edgecolor()) >= 3.0
    for t in ax.texts:
        if t.get_text():
            assert _contrast(t.get_color()) >= 4.5
            for patch in ax.patches:
                assert _contrast(t.get_color(), patch.get_facecolor()) >= 4.5
    for line in ax.lines:
        assert _contrast(line.get_color()) >= 3.0


# --------------------------------------------------------------------------- text alternative
def test_alt_text_describes_every_node_in_backward_order():
    x, w, _, loss = _graph()
    names = {x: "x", w: "w", loss: "loss"}
    text = describe_graph(loss, names=names)
    order = backward_order(loss)
    positions = [text.index(f" {i}. {n.name().split('::')[-1]}") for i, n in enumerate(order, start=1)]
    assert positions == sorted(positions)
    assert text.startswith("Backward graph of loss: 7 nodes")
    assert "DoubleBackward (your Function)" in text and "ctx.scale = 2" in text
    assert "AccumulateGrad of the leaf w, [2, 3]" in text
    assert "sends gradients to nodes 5 and 6" in text  # MulBackward0 -> w and Double
    # the figure carries it: IPython stores it in the output's metadata, the book in <img alt>
    fig = draw_graph(loss, names=names)
    data, metadata = fig._repr_mimebundle_()
    assert data == {} and metadata["image/png"]["alt"] == text


def test_alt_text_of_side_by_side_drawings_names_each():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    try:
        a = torch.ones(2, requires_grad=True)
        draw_graph(a.sigmoid().sum(), ax=axes[0], title="left")
        draw_graph((a * a).sum(), ax=axes[1], title="right")
        alt = fig._repr_mimebundle_()[1]["image/png"]["alt"]
        assert alt.startswith("2 drawings side by side.")
        assert "Drawing 1: left. Backward graph" in alt and "Drawing 2: right. Backward graph" in alt
        assert "sends gradients to node 3 (twice)" in alt  # a * a: both edges go to a's AccumulateGrad
        assert "3. AccumulateGrad of a leaf, [2]." in alt
    finally:
        plt.close(fig)
    fig, axes = plt.subplots(2, 1)  # stacked: the alt text must not say "side by side"
    try:
        a = torch.ones(2, requires_grad=True)
        draw_graph(a.sigmoid().sum(), ax=axes[0], title="top")
        draw_graph((a * a).sum(), ax=axes[1], title="bottom")
        alt = fig._repr_mimebundle_()[1]["image/png"]["alt"]
        assert alt.startswith("2 drawings one above the other. Drawing 1: top.")
    finally:
        plt.close(fig)


def test_alt_text_reaches_the_notebook_output():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import matplotlib.pyplot as plt\nimport minigrad as torch\nfrom minigrad.viz import draw_graph\n"
        "x = torch.ones(3, requires_grad=True)"),
        nbformat.v4.new_code_cell('draw_graph((x * 2).sum(), names={x: "x"})')]
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120).execute()
    out = nb.cells[1].outputs[0]
    assert "image/png" in out["data"]
    assert out["metadata"]["image/png"]["alt"].startswith("Backward graph: 3 nodes")


def test_a_too_small_axes_gets_small_text_and_a_warning_not_overlaps():
    import matplotlib.pyplot as plt

    loss, names = _random_graph(10)  # 15 nodes
    fig, ax = plt.subplots(figsize=(2, 1.5))
    try:
        with pytest.warns(UserWarning, match="give it a larger axes"):
            draw_graph(loss, ax=ax, names=names)
        assert_readable(fig, n_boxes=len(backward_order(loss)))
    finally:
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(8, 10))
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            draw_graph(loss, ax=ax, names=names)  # room enough: no warning
    finally:
        plt.close(fig)


def test_animation_html_is_accessible():
    from matplotlib import animation
    import matplotlib.pyplot as plt

    from minigrad.viz import animation_html

    fig, ax = plt.subplots(figsize=(2, 2), dpi=40)
    line, = ax.plot([0, 1], [0, 0])
    anim = animation.FuncAnimation(fig, lambda i: line.set_ydata([0, i]), frames=3)
    try:
        html = animation_html(anim, "demo", alt="A line that tilts up", frame_text=["flat", "up 1", "up 2"])
        with pytest.raises(ValueError, match="frame_text has 2 entries for 3 frames"):
            animation_html(anim, "demo", frame_text=["a", "b"])
    finally:
        plt.close(fig)
    assert 'id="_anim_imgdemo" alt="A line that tilts up"' in html
    assert 'role="group" aria-label="Animation, 3 frames: A line that tilts up"' in html
    assert 'aria-label="Frame of the animation (1 to 3)"' in html
    assert '<p id="_anim_textdemo" class="anim-frame-text" aria-live="polite">flat</p>' in html
    assert '["flat", "up 1", "up 2"]' in html
    for label in ("Play", "Pause", "Previous frame", "Next frame", "First frame", "Last frame"):
        assert f'aria-label="{label}"' in html  # every button is named; its symbol is aria-hidden
    assert html.count('<span aria-hidden="true">') == 9


def test_course_plot_colours_have_contrast():
    """book/matplotlibrc: every colour of the line cycle has 3:1 contrast on white (WCAG 1.4.11)."""
    from pathlib import Path

    rc = matplotlib.rc_params_from_file(str(Path(__file__).resolve().parent.parent / "book" / "matplotlibrc"),
                                        use_default_template=False)
    colours = rc["axes.prop_cycle"].by_key()["color"]
    assert len(colours) >= 8
    for c in colours:
        assert _contrast(c) >= 3.0, c
