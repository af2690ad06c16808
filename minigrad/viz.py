"""Draw the backward graph behind a tensor, with matplotlib only.

    from minigrad.viz import draw_graph
    draw_graph(loss)                      # a matplotlib Figure (shown inline in Jupyter)
    draw_graph(loss, names={x: "x", w: "w"})

What the picture shows:

* one box per graph node: its ``grad_fn`` name and the shape of the tensor it
  produced in forward (the shape of the gradient it receives in backward);
* leaves as green ``AccumulateGrad`` boxes with a dashed border and the leaf's shape
  (and its name when you pass ``names``);
* custom Functions (``<Name>Backward``) as square orange boxes with a thick border,
  built-in operations as rounded blue boxes (shape and border tell them apart, not
  colour alone; the legend says it in words);
* under a node, what it keeps for backward: the shapes of its saved tensors
  ("saved tensors freed" once a backward without ``retain_graph`` has run) and,
  for custom Functions, plain ``ctx`` attributes such as ``ctx.n = 3``;
* arrows from each node to its ``next_functions`` (the direction gradients flow);
* a number in front of each name: the order in which the engine runs the nodes in
  ``backward()`` (1 = first).

The same content in words is ``describe_graph(tensor)``; ``draw_graph`` attaches it to the
figure, and the book shows it as the image's alt text (for readers who cannot see it).

matplotlib is imported only when ``draw_graph`` is called (``import minigrad`` needs NumPy only).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ._tensor import Tensor
from .autograd.function import AccumulateGrad, BackwardNode

__all__ = ["draw_graph", "describe_graph", "backward_order", "animation_html"]

_HIDDEN_CTX_ATTRS = {"needs_input_grad", "variable", "materialize_grads"}
_SIMPLE = (int, float, bool, str, type(None))


def _fmt_shape(shape) -> str:
    shape = tuple(shape)
    return "scalar" if shape == () else "[" + ", ".join(str(s) for s in shape) + "]"


def _edges(node) -> tuple:
    """(child, output_nr, shape) for every edge of ``node`` that leads to another node."""
    out = []
    raw = getattr(node, "_edges", None)
    if raw is not None:  # 4 entries per input: node, output_nr, shape, dtype
        for j in range(0, len(raw), 4):
            if raw[j]:
                out.append((raw[j], raw[j + 1], tuple(raw[j + 2])))
        return tuple(out)
    for child, nr in getattr(node, "next_functions", ()):  # a node without minigrad internals
        if child is not None:
            out.append((child, nr, None))
    return tuple(out)


def _root_node(tensor: Tensor):
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if tensor.requires_grad:
        return tensor._grad_accumulator()
    return None


def backward_order(tensor: Tensor) -> list:
    """The graph nodes behind ``tensor`` in the order ``tensor.backward()`` runs them.

    The engine's rule (PyTorch's too): among the nodes that have received a gradient, the
    newest runs first. A node is always newer than the nodes that produced its inputs, so
    every node runs after all the nodes that send it a gradient (the gradients of a
    fan-out are summed first). Returns [] for a tensor with no graph.
    """
    root = _root_node(tensor)
    if root is None:
        return []
    seen = {id(root): root}
    stack = [root]
    while stack:
        for child, _, _ in _edges(stack.pop()):
            if id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    return sorted(seen.values(), key=lambda node: getattr(node, "_seq", 0), reverse=True)


def _kind(node) -> str:
    if isinstance(node, AccumulateGrad):
        return "leaf"
    fwd = getattr(node, "_forward_cls", None)
    if fwd is not None and not str(getattr(fwd, "__module__", "")).startswith("minigrad."):
        return "custom"
    return "builtin"


def _short_repr(value: Any) -> str:
    if isinstance(value, _SIMPLE):
        text = repr(value)
    elif isinstance(value, (tuple, list)) and len(value) <= 6 and all(isinstance(v, _SIMPLE) for v in value):
        text = repr(value)
    elif isinstance(value, Tensor):
        text = f"tensor {_fmt_shape(value.shape)}"
    else:
        text = type(value).__name__  # never a repr that could contain a memory address
    return text if len(text) <= 24 else text[:21] + "..."


def _saved_lines(node, with_attrs: bool) -> list[str]:
    """What the node keeps for backward, one short line each (ctx attributes if ``with_attrs``)."""
    if isinstance(node, AccumulateGrad) or not isinstance(node, BackwardNode):
        return []
    lines = []
    if getattr(node, "_freed", False):
        lines.append("saved tensors freed")
    else:
        saved = getattr(node, "_saved", None)
        if saved:
            parts = []
            for s in saved:
                if s is None:
                    parts.append("None")
                elif s.__class__ is tuple:  # a saved output: (array, version counter, output_nr)
                    parts.append(f"{_fmt_shape(s[0].shape)} (output)")
                else:
                    parts.append(_fmt_shape(s.shape))
            lines.append("saved: " + ", ".join(parts))
    if not with_attrs:
        return lines
    attrs = [(k, v) for k, v in vars(node).items() if not k.startswith("_") and k not in _HIDDEN_CTX_ATTRS]
    for k, v in attrs[:3]:
        lines.append(f"ctx.{k} = {_short_repr(v)}")
    if len(attrs) > 3:
        lines.append(f"(+{len(attrs) - 3} more ctx attributes)")
    return lines


def _output_shapes(order: list, tensor: Tensor) -> dict:
    """id(node) -> {output_nr: shape}, read from the edges that point at each node."""
    shapes: dict = {id(order[0]): {getattr(tensor, "_output_nr", 0): tuple(tensor.shape)}}
    for node in order:
        for child, nr, shape in _edges(node):
            if shape is not None:
                shapes.setdefault(id(child), {}).setdefault(nr, shape)
    for node in order:
        for nr, meta in enumerate(getattr(node, "_output_meta", ()) or ()):
            shapes.setdefault(id(node), {}).setdefault(nr, tuple(meta[0]))
    return shapes


# ------------------------------------------------------------------------------ layout
# Everything is laid out in typographic points (1/72 inch) and drawn with 1 data unit = 1
# point, so a box is exactly as large as its measured text plus padding: boxes cannot
# overlap and labels cannot stick out, whatever the names, shapes or number of nodes.
# Gaps are in units of the font size, so that a smaller font shrinks the whole drawing.
_GAP_X = 2.2          # between two boxes of a row
_GAP_Y = 3.0          # between two rows (room for the arrows)
_WAYPOINT = 1.0       # width kept free in a row for an edge that passes through it
_LEGEND_WIDTH = 24.0  # the legend wraps at this width (or the drawing's, if wider)
_MARGIN = 4.0         # points, around the drawing
_MAX_SIZE = (16 * 72.0, 30 * 72.0)   # largest new figure, in points (16 x 30 inches)
_SMALLEST_READABLE = 6.0             # pt: below this, draw_graph warns that the axes is too small


def _rows(order: list):
    """Longest-path layers from the root, waypoints for long edges, barycentre order.

    Returns (rows, routes): rows[k] lists the items of layer k, ("n", id(node)) or a
    waypoint ("w", ...); routes lists (parent, child, [waypoints]) for every edge.
    """
    layer = {id(order[0]): 0}
    for node in order:  # ``order`` is topological: every parent comes before its children
        for child, _, _ in _edges(node):
            layer[id(child)] = max(layer.get(id(child), 0), layer[id(node)] + 1)
    n_layers = max(layer.values()) + 1
    rows: list[list] = [[] for _ in range(n_layers)]
    for node in order:
        rows[layer[id(node)]].append(("n", id(node)))
    up: dict = {}
    down: dict = {}
    routes = []
    for node in order:
        a = ("n", id(node))
        for j, (child, _, _) in enumerate(_edges(node)):
            chain = [a]
            for k in range(layer[id(node)] + 1, layer[id(child)]):
                w = ("w", id(node), j, k)
                rows[k].append(w)
                chain.append(w)
            chain.append(("n", id(child)))
            for p, c in zip(chain, chain[1:]):
                down.setdefault(p, []).append(c)
                up.setdefault(c, []).append(p)
            routes.append((node, child, chain[1:-1]))
    rank = {item: i for row in rows for i, item in enumerate(row)}
    tie = {item: i for i, item in enumerate(it for row in rows for it in row)}

    def sweep(indices, neighbours):
        for k in indices:
            def key(item):
                ps = [rank[p] for p in neighbours.get(item, [])]
                return (sum(ps) / len(ps) if ps else rank[item], tie[item])
            rows[k].sort(key=key)
            for i, item in enumerate(rows[k]):
                rank[item] = i

    sweep(range(1, n_layers), up)
    sweep(range(n_layers - 2, -1, -1), down)
    sweep(range(1, n_layers), up)
    return rows, routes


class _Measure:
    """Text sizes in points, measured once per (text, font size) on an off-screen canvas.

    Measured at the dpi the drawing will be rendered at: hinted glyphs are a few percent
    wider or narrower at one dpi than at another, enough to push a label out of its box.
    """

    def __init__(self, dpi: float = 72.0):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self._fig = Figure(dpi=dpi)
        self._to_points = 72.0 / dpi
        self._renderer = FigureCanvasAgg(self._fig).get_renderer()
        self._cache: dict = {}

    def __call__(self, text: str, fontsize: float, **kw) -> tuple[float, float]:
        key = (text, fontsize, tuple(sorted(kw.items())))
        if key not in self._cache:
            t = self._fig.text(0, 0, text, fontsize=fontsize, **kw)
            bb = t.get_window_extent(self._renderer)
            t.remove()
            w, h = bb.width * self._to_points, bb.height * self._to_points
            self._cache[key] = (w * 1.03 + 1.5, h * 1.02 + 1.0)  # slack for saving at another dpi
        return self._cache[key]


def _wrap(items: list[str], width: float, measure, fontsize: float) -> str:
    """Join ``items`` with wide spaces into lines no wider than ``width`` points."""
    lines: list[str] = []
    for item in items:
        if lines and measure(lines[-1] + "    " + item, fontsize)[0] <= width:
            lines[-1] += "    " + item
        else:
            lines.append(item)
    return "\n".join(lines)


def _plan(rows, labels, fs, measure, legend_items, title):
    """Positions (in points) of every box, waypoint, the legend and the title at font size ``fs``."""
    pad = 0.45 * fs
    gap_x, gap_y = _GAP_X * fs, _GAP_Y * fs
    size = {}
    for row in rows:
        for item in row:
            if item[0] == "n":
                w, h = measure(labels[item[1]], fs, linespacing=1.25)
                size[item] = (w + 2 * pad, h + 2 * pad)
            else:
                size[item] = (_WAYPOINT * fs, 0.0)
    widths = [sum(size[it][0] for it in row) + gap_x * (len(row) - 1) for row in rows]
    heights = [max(size[it][1] for it in row) for row in rows]
    graph_w = max(widths)
    xy = {}
    y = 0.0
    title_h = 0.0
    if title:
        title_h = measure(title, fs * 1.15, weight="bold")[1] + 0.8 * fs
        graph_w = max(graph_w, measure(title, fs * 1.15, weight="bold")[0])
        y -= title_h
    span = {}  # item -> (top, bottom) of its row
    for row, w_row, h_row in zip(rows, widths, heights):
        x = -w_row / 2
        for item in row:
            w, h = size[item]
            xy[item] = (x + w / 2, y - h / 2 if item[0] == "n" else y - h_row / 2)  # boxes hang from the row's top
            span[item] = (y, y - h_row)
            x += w + gap_x
        y -= h_row + gap_y
    y += gap_y
    legend = None
    if legend_items:
        lfs = fs * 0.85
        text = _wrap(legend_items, max(graph_w, _LEGEND_WIDTH * fs), measure, lfs)
        lw, lh = measure(text, lfs, linespacing=1.3)
        legend = (text, lfs, (0.0, y - fs), lw, lh)
        graph_w = max(graph_w, lw)
        y -= fs + lh
    width = graph_w + 2 * _MARGIN
    height = -y + 2 * _MARGIN
    return dict(fs=fs, pad=pad, size=size, xy=xy, span=span, width=width, height=height, legend=legend,
                title=(title, fs * 1.15, title_h) if title else None)


def _fit(rows, labels, fs, measure, legend_items, title, room):
    """The plan at the largest font size (up to ``fs``) whose drawing fits ``room`` (points)."""
    plan = _plan(rows, labels, fs, measure, legend_items, title)
    for _ in range(6):
        scale = min(room[0] / plan["width"], room[1] / plan["height"])
        if scale >= 1:
            return plan
        fs = fs * scale * 0.98
        plan = _plan(rows, labels, fs, measure, legend_items, title)
    return plan


# --------------------------------------------------------------------------- labels
_KIND_WORDS = {"builtin": "built-in op", "custom": "your Function", "leaf": "AccumulateGrad (a leaf)"}
_LEGEND = {
    "builtin": "rounded blue box: a built-in op",
    "custom": "square orange box, thick border: your Function",
    "leaf": "dashed green box: AccumulateGrad (a leaf)",
}
# face colour, border colour, border style, border width, box shape. The kinds differ in
# shape and border as well as colour; borders have at least 4.5:1 contrast on white.
_STYLE = {
    "builtin": ("#dbe9f6", "#2f5f8f", "solid", 1.2, "round"),
    "custom": ("#fde3c8", "#a3520e", "solid", 2.6, "square"),
    "leaf": ("#dff0d8", "#2e6b2e", (0, (4, 2)), 1.5, "round"),
    "plain": ("#eeeeee", "#666666", "solid", 1.0, "round"),
}
_ARROW = "#4d4d4d"
_INK = "#1a1a1a"


def _node_lines(node, tensor, order, name_of, shapes, show_saved, big) -> tuple[str, list[str]]:
    """(heading, body lines) of one node's box."""
    kind = _kind(node)
    if kind == "leaf":
        var = node.variable
        leaf_name = name_of.get(id(var))
        body = [(f"{leaf_name}: " if leaf_name else "leaf ") + _fmt_shape(var.shape)]
        head = "AccumulateGrad"
    else:
        head = node.name()
        outs = shapes.get(id(node), {})
        if getattr(node, "_n_outputs", 1) > 1 or len(outs) > 1:
            body = ["outs " + ", ".join(_fmt_shape(outs[k]) for k in sorted(outs))]
        else:
            body = ["out " + (_fmt_shape(next(iter(outs.values()))) if outs else "?")]
        if node is order[0] and id(tensor) in name_of:
            body[0] = f"{name_of[id(tensor)]}: " + body[0]
    if show_saved and not big:
        body += _saved_lines(node, with_attrs=(kind == "custom"))
    return head, body


def _join_numbers(nums: list[int]) -> str:
    words = [str(n) for n in nums]
    counts = {w: words.count(w) for w in words}
    uniq = [w + (" (twice)" if counts[w] == 2 else f" ({counts[w]} times)" if counts[w] > 2 else "")
            for w in dict.fromkeys(words)]
    return uniq[0] if len(uniq) == 1 else ", ".join(uniq[:-1]) + " and " + uniq[-1]


def _describe(order, tensor, heads, bodies, step, name_of) -> str:
    """The drawing in words: every node in backward order, what it holds, where it sends gradients."""
    if not order:
        return ""
    root = name_of.get(id(tensor))
    parts = [f"Backward graph{' of ' + root if root else ''}: {len(order)} node"
             f"{'s' if len(order) != 1 else ''}, numbered in the order backward() runs them."]
    for node in order:
        kind = _kind(node)
        words = f"{step[id(node)]}. {heads[id(node)]}"
        if kind == "custom":
            words += " (your Function)"
        if kind == "leaf":  # the box says "x: [3]" or, for an unnamed leaf, "leaf [3]"
            first = bodies[id(node)][0]
            words += (" of a leaf, " + first[len("leaf "):] if first.startswith("leaf ")
                      else " of the leaf " + first.replace(": ", ", ", 1))
        else:
            words += ": " + "; ".join(bodies[id(node)])
        targets = sorted(step[id(c)] for c, _, _ in _edges(node))
        if targets:
            words += f"; sends gradients to {'node' if len(set(targets)) == 1 else 'nodes'} " + _join_numbers(targets)
        parts.append(words + ".")
    return " ".join(parts)


def describe_graph(tensor: Tensor, names: Mapping[Tensor, str] | None = None, *,
                   show_saved: bool = True) -> str:
    """The backward graph behind ``tensor`` in words: the text alternative of ``draw_graph``.

    Every node, numbered in the order ``backward()`` runs it, with what its box shows
    (output shape, saved tensors, ctx attributes) and the nodes it sends gradients to.
    ``draw_graph`` attaches this text to its figure, so the book's image has it as alt text;
    print it for a version of the drawing a screen reader can read.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"describe_graph expects a minigrad Tensor, got {type(tensor).__name__}")
    name_of = {id(t): str(n) for t, n in (names or {}).items()}
    order = backward_order(tensor)
    if not order:
        label = name_of.get(id(tensor), "tensor")
        return f"{label} {_fmt_shape(tensor.shape)} has no grad_fn: it is not part of a graph (requires_grad=False)."
    shapes = _output_shapes(order, tensor)
    heads, bodies = {}, {}
    for node in order:
        heads[id(node)], bodies[id(node)] = _node_lines(node, tensor, order, name_of, shapes,
                                                        show_saved, len(order) > 30)
    step = {id(n): i + 1 for i, n in enumerate(order)}
    return _describe(order, tensor, heads, bodies, step, name_of)


# ------------------------------------------------------------------------ alt text in Jupyter
def _alt_bundle(fig, include=None, exclude=None):
    """IPython asks a displayed object for extra metadata: the figure's alt text rides along."""
    texts = [t for t in getattr(fig, "_minigrad_alt", {}).values() if t]
    if not texts:
        return {}, {}
    axes = [ax for ax in fig.axes if ax.get_visible()]
    stacked = len(axes) > 1 and len({round(ax.get_position().x0, 3) for ax in axes}) == 1
    where = "one above the other" if stacked else "side by side"
    alt = texts[0] if len(texts) == 1 else f"{len(texts)} drawings {where}. " + " ".join(
        f"Drawing {i}: {t}" for i, t in enumerate(texts, start=1))
    return {}, {"image/png": {"alt": alt}}


def _attach_alt(fig, ax, text: str) -> None:
    """Remember ``text`` as the description of ``ax``'s drawing in ``fig`` (one per axes)."""
    import types

    store = fig.__dict__.setdefault("_minigrad_alt", {})
    store[id(ax)] = text
    # An instance attribute: IPython looks it up on the object it displays (draw_graph's
    # own figures and figures of yours that draw_graph drew into).
    fig._repr_mimebundle_ = types.MethodType(_alt_bundle, fig)


def _new_figure(size):
    """A Figure that Jupyter displays once, as the value of the cell.

    Made through pyplot (which sets up Jupyter's inline display of Figures) and then closed
    at once, so that pyplot does not show it a second time at the end of the cell.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - a matplotlib without pyplot
        from matplotlib.figure import Figure

        return Figure(figsize=size)
    fig = plt.figure(figsize=size)
    plt.close(fig)
    return fig


def draw_graph(tensor: Tensor, ax=None, names: Mapping[Tensor, str] | None = None, *,
               show_saved: bool = True, show_order: bool = True, legend: bool = True,
               title: str | None = None, fontsize: float | None = None):
    """Draw the backward graph behind ``tensor`` and return the matplotlib Figure.

    tensor: the tensor whose graph to draw (usually a loss or an output).
    ax: a matplotlib Axes to draw into (e.g. one of several side by side); by default a
        new Figure as large as the drawing needs. In a given Axes the text is made smaller
        when needed, so that the drawing fits: boxes never overlap and no label is cut.
    names: optional ``{tensor: "name"}`` to label leaves (and the output) by name.
    show_saved: list saved-tensor shapes under each node (and ctx attributes of custom Functions).
    show_order: number the nodes in the order ``backward()`` runs them (1 = first).
    legend: add a key under the drawing (only for the kinds of node it shows).
    title: a title above the drawing.
    fontsize: the text size in points (default 10; 7 for graphs of more than 30 nodes).

    The Figure carries a description of the graph in words (``describe_graph``), which
    Jupyter stores with the image and the book uses as its alt text. The Figure is closed in
    pyplot right away, so in Jupyter it is displayed once (as the value of the cell).
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"draw_graph expects a minigrad Tensor, got {type(tensor).__name__}\n"
                        "Pass the tensor whose graph you want to see, e.g. draw_graph(loss).")
    from matplotlib.patches import FancyBboxPatch

    name_of = {id(t): str(n) for t, n in (names or {}).items()}
    order = backward_order(tensor)
    import matplotlib

    measure = _Measure(ax.figure.dpi if ax is not None else matplotlib.rcParams["figure.dpi"])

    if not order:
        label = name_of.get(id(tensor), "tensor")
        text = f"{label} {_fmt_shape(tensor.shape)}\nno grad_fn: not part of a graph\n(requires_grad=False)"
        fs = fontsize or 10
        w, h = measure(text, fs, linespacing=1.25)
        pad = 0.45 * fs
        box = (w + 2 * pad + 2 * _MARGIN, h + 2 * pad + 2 * _MARGIN)
        if ax is None:
            fig = _new_figure((box[0] / 72, box[1] / 72))
            ax = fig.add_axes((0, 0, 1, 1))
        fig = ax.figure
        ax.set_axis_off()
        face, edge, ls, lw, shape = _STYLE["plain"]
        ax.add_patch(FancyBboxPatch((-w / 2, -h / 2), w, h, boxstyle=f"{shape},pad={pad}",
                                    fc=face, ec=edge, lw=lw, ls=ls))
        ax.text(0, 0, text, ha="center", va="center", fontsize=fs, linespacing=1.25, color=_INK)
        _set_view(ax, box[0], box[1], 0.0, -box[1] / 2 + _MARGIN + h / 2 + pad)
        _attach_alt(fig, ax, describe_graph(tensor, names))
        return fig

    big = len(order) > 30
    fs = fontsize or (7 if big else 10)
    step = {id(n): i + 1 for i, n in enumerate(order)}
    shapes = _output_shapes(order, tensor)
    heads, bodies, labels = {}, {}, {}
    for node in order:
        head, body = _node_lines(node, tensor, order, name_of, shapes, show_saved, big)
        heads[id(node)], bodies[id(node)] = head, body
        labels[id(node)] = (f"{step[id(node)]}. " if show_order else "") + head + "\n" + "\n".join(body)
    rows, routes = _rows(order)
    kinds = [k for k in ("builtin", "custom", "leaf") if any(_kind(n) == k for n in order)]
    legend_items = []
    if legend:
        legend_items = ["arrows: next_functions (gradients flow down)"]
        if show_order:
            legend_items.append("numbers: the order backward() runs the nodes")
        legend_items += [_LEGEND[k] for k in kinds]

    given_ax = ax is not None
    if ax is None:
        plan = _fit(rows, labels, fs, measure, legend_items, title, _MAX_SIZE)
        fig = _new_figure((plan["width"] / 72, plan["height"] / 72))
        ax = fig.add_axes((0, 0, 1, 1))
        room = (plan["width"], plan["height"])
    else:
        fig = ax.figure
        bbox = ax.get_position()
        fw, fh = fig.get_size_inches()
        room = (bbox.width * fw * 72, bbox.height * fh * 72)
        plan = _fit(rows, labels, fs, measure, legend_items, title, room)
    ax.set_axis_off()
    fs, pad, xy, size = plan["fs"], plan["pad"], plan["xy"], plan["size"]
    if given_ax and fs < _SMALLEST_READABLE:
        import warnings

        warnings.warn(f"draw_graph: the graph of {len(order)} nodes fits this axes only with "
                      f"{fs:.1f} pt text; give it a larger axes (figsize) to make it readable",
                      stacklevel=2)
    thin = min(1.0, fs / 10)  # borders and arrow heads shrink with the text

    for node in order:
        item = ("n", id(node))
        x, y = xy[item]
        w, h = size[item]
        face, edge, ls, lw, shape = _STYLE[_kind(node)]
        ax.add_patch(FancyBboxPatch((x - w / 2 + pad, y - h / 2 + pad), w - 2 * pad, h - 2 * pad,
                                    boxstyle=f"{shape},pad={pad}", fc=face, ec=edge, lw=lw * thin,
                                    ls=ls, zorder=3))
        ax.text(x, y, labels[id(node)], ha="center", va="center", fontsize=fs, linespacing=1.25,
                color=_INK, zorder=4)

    # An edge goes straight down inside its own column of a row (from the parent's bottom
    # to the row's bottom, or through a waypoint) and runs diagonally only between rows, where
    # there are no boxes: it never crosses a box.
    span = plan["span"]
    style = dict(color=_ARROW, lw=thin)
    for node, child, waypoints in routes:
        a, b = ("n", id(node)), ("n", id(child))
        pts = [(xy[a][0], xy[a][1] - size[a][1] / 2), (xy[a][0], span[a][1])]
        for wp in waypoints:
            pts += [(xy[wp][0], span[wp][0]), (xy[wp][0], span[wp][1])]
        pts.append((xy[b][0], span[b][0]))
        if len(pts) > 2:
            ax.plot([p[0] for p in pts[:-1]], [p[1] for p in pts[:-1]], zorder=2, **style)
        ax.annotate("", xy=pts[-1], xytext=pts[-2], xycoords="data", textcoords="data",
                    arrowprops=dict(arrowstyle="-|>", shrinkA=0, shrinkB=0, mutation_scale=fs, **style),
                    zorder=2)

    if plan["title"]:
        text, tfs, th = plan["title"]
        ax.text(0, -th / 2, text, ha="center", va="center", fontsize=tfs, weight="bold", color=_INK)
    if plan["legend"]:
        text, lfs, (lx, ly), _, _ = plan["legend"]
        ax.text(lx, ly, text, ha="center", va="top", fontsize=lfs, linespacing=1.3, color="#333333")
    _set_view(ax, room[0], room[1], 0.0, -(plan["height"] - 2 * _MARGIN) / 2)
    _attach_alt(fig, ax, (f"{title}. " if title else "") + _describe(order, tensor, heads, bodies, step, name_of))
    return fig


def _set_view(ax, width: float, height: float, cx: float, cy: float) -> None:
    """Show ``width`` x ``height`` points around (cx, cy): one data unit is one point on the page."""
    ax.set_xlim(cx - width / 2, cx + width / 2)
    ax.set_ylim(cy - height / 2, cy + height / 2)


_PLAYER_SYMBOLS = {"fa-minus": "\u2212", "fa-fast-backward": "\u21e4", "fa-step-backward": "\u25c1",
                   "fa-play fa-flip-horizontal": "\u25c0", "fa-pause": "\u2016", "fa-play": "\u25b6",
                   "fa-step-forward": "\u25b7", "fa-fast-forward": "\u21e5", "fa-plus": "+"}


def animation_html(anim, name: str, *, alt: str | None = None, frame_text: Sequence[str] | None = None,
                   **kwargs) -> str:
    """A matplotlib animation as self-contained HTML: the static stand-in for a slider.

    ``anim.to_jshtml()`` names its elements with a random id and loads its button icons from
    the internet. Here the id is ``name`` (the same page on every run, so stored notebook
    outputs do not change) and the buttons use plain symbols (the page works offline).

    alt: one sentence saying what the animation shows: the frames' alt text, and the name
        of the player for screen readers.
    frame_text: one short line per frame saying what that frame shows (e.g. "x0 = -1.5:
        slope -3"). It is shown under the player and read out when the frame changes, so
        the animation can be followed without seeing it; the frame slider announces it too.

    The player works with the keyboard: Tab to the frame slider (arrow keys step through
    the frames) and to the labelled buttons (play, pause, step, first/last frame, speed).
    Other keyword arguments go to ``to_jshtml`` (e.g. ``fps``, ``default_mode``).
    """
    import html as html_lib
    import json
    import re

    page = anim.to_jshtml(**kwargs)
    random_id = re.search(r'id="_anim_img(\w+)"', page).group(1)
    page = page.replace(random_id, name)
    page = re.sub(r'<link rel="stylesheet"\s+href="https?://[^"]*">', "", page)
    for icon, symbol in _PLAYER_SYMBOLS.items():  # the buttons keep their aria-label
        page = page.replace(f'<i class="fa {icon}"></i>', f'<span aria-hidden="true">{symbol}</span>')
    if "https://" in page or 'class="fa ' in page:
        raise RuntimeError("animation_html: matplotlib's player changed; it still loads something from the web")
    n_frames = int(re.search(r"var frames = new Array\((\d+)\);", page).group(1))
    if frame_text is not None and len(frame_text) != n_frames:
        raise ValueError(f"animation_html({name!r}): frame_text has {len(frame_text)} entries for "
                         f"{n_frames} frames; give one line of text per frame")
    summary = " ".join(str(alt).split()) if alt else ""
    texts = [" ".join(str(t).split()) for t in frame_text] if frame_text is not None else []

    def attr(value: str) -> str:
        return html_lib.escape(value, quote=True)

    player = f"Animation, {n_frames} frames" + (f": {summary}" if summary else "")
    page = page.replace('<div class="animation">',
                        f'<div class="animation" role="group" aria-label="{attr(player)}">', 1)
    img = f'<img id="_anim_img{name}"'
    page = page.replace(img, img + (f' alt="{attr(summary)}"' if summary else ""), 1)
    slider = f'<input id="_anim_slider{name}" type="range"'
    page = page.replace(slider, slider + f' aria-label="Frame of the animation (1 to {n_frames})"', 1)
    if texts:
        caption = (f'<p id="_anim_text{name}" class="anim-frame-text" aria-live="polite">'
                   f'{html_lib.escape(texts[0])}</p>')
        script = f"""<script>
  /* The frame's text: under the player, in the image's alt text and in the slider's value. */
  (function() {{
    var texts = {json.dumps(texts)}, summary = {json.dumps(summary)};
    var img = document.getElementById("_anim_img{name}");
    var slider = document.getElementById("_anim_slider{name}");
    var out = document.getElementById("_anim_text{name}");
    function update() {{
      var i = Math.min(texts.length - 1, Math.max(0, parseInt(slider.value) || 0));
      var where = "Frame " + (i + 1) + " of " + texts.length + ": " + texts[i];
      out.textContent = texts[i];
      img.alt = summary ? summary + " " + where : where;
      slider.setAttribute("aria-valuetext", where);
    }}
    new MutationObserver(update).observe(img, {{attributes: true, attributeFilter: ["src"]}});
    slider.addEventListener("input", update);
    update();
  }})();
</script>"""
        page = page.replace('  <div class="anim-controls">', caption + '\n  <div class="anim-controls">', 1)
        page += script
    return page
