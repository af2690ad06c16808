"""Draw the backward graph behind a tensor, with matplotlib only.

    from minigrad.viz import draw_graph
    draw_graph(loss)                      # a matplotlib Figure (shown inline in Jupyter)
    draw_graph(loss, names={x: "x", w: "w"})

What the picture shows:

* one box per graph node: its ``grad_fn`` name and the shape of the tensor it
  produced in forward (the shape of the gradient it receives in backward);
* leaves as green ``AccumulateGrad`` boxes with the leaf's shape (and its name when
  you pass ``names``);
* custom Functions (``<Name>Backward``) in orange, built-in operations in blue;
* under a node, what it keeps for backward: the shapes of its saved tensors
  ("saved tensors freed" once a backward without ``retain_graph`` has run) and,
  for custom Functions, plain ``ctx`` attributes such as ``ctx.n = 3``;
* arrows from each node to its ``next_functions`` (the direction gradients flow);
* a number in front of each name: the order in which the engine runs the nodes in
  ``backward()`` (1 = first).

matplotlib is imported only when ``draw_graph`` is called (``import minigrad`` needs NumPy only).
"""
from __future__ import annotations

from typing import Any, Mapping

from ._tensor import Tensor
from .autograd.function import AccumulateGrad, BackwardNode

__all__ = ["draw_graph", "backward_order"]

_COLORS = {
    "builtin": ("#dbe9f6", "#3a6ea5"),
    "custom": ("#fde3c8", "#c0651a"),
    "leaf": ("#dff0d8", "#3c7a3c"),
    "plain": ("#eeeeee", "#777777"),
}
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


def _layout(order: list):
    """Layered layout: longest-path layers from the root, waypoints for long edges, barycentre order.

    Returns (n_layers, width, xy, routes): xy maps ("n", id(node)) and waypoints to (x, y);
    routes lists (parent, child, [waypoints]) for every edge.
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
    width = max(len(r) for r in rows)
    xy = {item: (i - (len(row) - 1) / 2, -k) for k, row in enumerate(rows) for i, item in enumerate(row)}
    return n_layers, width, xy, routes


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
    ax: a matplotlib Axes to draw into; by default a new Figure of a fitting size.
    names: optional ``{tensor: "name"}`` to label leaves (and the output) by name.
    show_saved: list saved-tensor shapes under each node (and ctx attributes of custom Functions).
    show_order: number the nodes in the order ``backward()`` runs them (1 = first).
    legend: add a two-line key under the drawing.
    title: a title for the axes.

    The Figure is closed in pyplot right away, so in Jupyter it is displayed once (as the
    value of the cell) and pyplot does not keep it open.
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"draw_graph expects a minigrad Tensor, got {type(tensor).__name__}\n"
                        "Pass the tensor whose graph you want to see, e.g. draw_graph(loss).")
    name_of = {id(t): str(n) for t, n in (names or {}).items()}
    order = backward_order(tensor)
    layout = _layout(order) if order else None

    if ax is None:
        if layout is None:
            size = (3.6, 1.4)
        else:
            n_layers, width = layout[0], layout[1]
            size = (min(max(3.0 * width, 5.0), 16), min(max(1.4 * n_layers + 0.7, 2.4), 30))
        fig = _new_figure(size)
        ax = fig.add_subplot(1, 1, 1)
    fig = ax.figure
    ax.set_axis_off()
    if title:
        ax.set_title(title)

    if layout is None:
        label = name_of.get(id(tensor), "tensor")
        ax.text(0.5, 0.5, f"{label} {_fmt_shape(tensor.shape)}\nno grad_fn: not part of a graph\n"
                "(requires_grad=False)", ha="center", va="center", fontsize=fontsize or 10,
                bbox=dict(boxstyle="round,pad=0.5", fc=_COLORS["plain"][0], ec=_COLORS["plain"][1]))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        return fig

    n_layers, width, xy, routes = layout
    step = {id(n): i + 1 for i, n in enumerate(order)}
    shapes = _output_shapes(order, tensor)
    big = len(order) > 30
    fs = fontsize or (7 if big else 10.5)

    artists: dict = {}
    for node in order:
        kind = _kind(node)
        face, edge = _COLORS[kind]
        if kind == "leaf":
            var = node.variable
            head = "AccumulateGrad"
            leaf_name = name_of.get(id(var))
            body = [(f"{leaf_name}: " if leaf_name else "leaf ") + _fmt_shape(var.shape)]
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
        text = (f"{step[id(node)]}. " if show_order else "") + head + "\n" + "\n".join(body)
        x, y = xy[("n", id(node))]
        artists[id(node)] = ax.text(
            x, y, text, ha="center", va="center", fontsize=fs, linespacing=1.25,
            bbox=dict(boxstyle="round,pad=0.45", fc=face, ec=edge, lw=1.2), zorder=3)

    style = dict(color="#555555", lw=1.0)
    for node, child, waypoints in routes:
        src, dst = artists[id(node)], artists[id(child)]
        if not waypoints:
            ax.annotate("", xy=(0.5, 1.0), xycoords=dst, xytext=(0.5, 0.0), textcoords=src,
                        arrowprops=dict(arrowstyle="-|>", shrinkA=5, shrinkB=6, **style), zorder=2)
            continue
        pts = [xy[w] for w in waypoints]
        ax.annotate("", xy=pts[0], xycoords="data", xytext=(0.5, 0.0), textcoords=src,
                    arrowprops=dict(arrowstyle="-", shrinkA=5, shrinkB=0, **style), zorder=2)
        if len(pts) > 1:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], zorder=2, **style)
        ax.annotate("", xy=(0.5, 1.0), xycoords=dst, xytext=pts[-1], textcoords="data",
                    arrowprops=dict(arrowstyle="-|>", shrinkA=0, shrinkB=6, **style), zorder=2)

    ax.set_xlim(-width / 2 - 0.05, width / 2 + 0.05)
    ax.set_ylim(-(n_layers - 1) - 0.55, 0.55)
    if legend:
        key = ("arrows: next_functions (gradients flow down)"
               + ("    numbers: order of backward" if show_order else "")
               + "\nblue: built-in op    orange: your Function    green: AccumulateGrad (a leaf)")
        ax.text(0.5, -0.01, key, transform=ax.transAxes, ha="center", va="top", fontsize=max(fs - 1.5, 6),
                color="#444444")
    return fig


_PLAYER_SYMBOLS = {"fa-minus": "\u2212", "fa-fast-backward": "\u21e4", "fa-step-backward": "\u25c1",
                   "fa-play fa-flip-horizontal": "\u25c0", "fa-pause": "\u2016", "fa-play": "\u25b6",
                   "fa-step-forward": "\u25b7", "fa-fast-forward": "\u21e5", "fa-plus": "+"}


def animation_html(anim, name: str, **kwargs) -> str:
    """A matplotlib animation as self-contained HTML: the static stand-in for a slider.

    ``anim.to_jshtml()`` names its elements with a random id and loads its button icons from
    the internet. Here the id is ``name`` (the same page on every run, so stored notebook
    outputs do not change) and the buttons use plain symbols (the page works offline).
    Keyword arguments go to ``to_jshtml`` (e.g. ``fps``, ``default_mode``).
    """
    import re

    html = anim.to_jshtml(**kwargs)
    random_id = re.search(r'id="_anim_img(\w+)"', html).group(1)
    html = html.replace(random_id, name)
    html = re.sub(r'<link rel="stylesheet"\s+href="https?://[^"]*">', "", html)
    for icon, symbol in _PLAYER_SYMBOLS.items():
        html = html.replace(f'<i class="fa {icon}"></i>', symbol)
    if "https://" in html or 'class="fa ' in html:
        raise RuntimeError("animation_html: matplotlib's player changed; it still loads something from the web")
    return html
