"""torchviz (``make_dot``) on minigrad graphs, with ``torch`` aliased to minigrad as a reader does to run
PyTorch's tutorials: the DOT source it writes must have PyTorch's nodes and edges for the same code.

torchviz is installed with the PyTorch oracle (scripts/setup.sh, WITH_TORCH=1: it declares a dependency on
torch). Only the DOT source is compared: no graphviz binary is needed.
"""
from __future__ import annotations

import importlib.util
import re
import sys
import warnings
from collections import Counter

import pytest

import minigrad

torchviz = pytest.importorskip("torchviz")


def _make_dot_for(T):
    """torchviz's make_dot bound to library ``T``: torchviz.dot imported afresh while ``torch`` is ``T``."""
    spec = importlib.util.find_spec("torchviz.dot")
    saved = {k: sys.modules.get(k) for k in ("torch", "torch.autograd")}
    try:
        sys.modules["torch"], sys.modules["torch.autograd"] = T, T.autograd
        module = importlib.util.module_from_spec(spec)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torchviz imports distutils
            spec.loader.exec_module(module)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module.make_dot


_NODE = re.compile(r'^\t(\d+) \[(.*)\]$', re.S)
_EDGE = re.compile(r'^\t(\d+) -> (\d+)(?: \[(.*)\])?$')
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def parse_dot(source: str):
    """(nodes: id -> attrs, edges: [(src, dst, attrs)]) of a graphviz DOT source (torchviz's flat format)."""
    statements, cur = [], None
    for line in source.strip().split("\n")[1:-1]:
        if line.startswith("\t"):
            if cur is not None:
                statements.append(cur)
            cur = line
        else:
            cur += "\n" + line
    statements.append(cur)
    nodes, edges = {}, []
    for st in statements:
        e = _EDGE.match(st)
        if e:
            edges.append((e.group(1), e.group(2), dict(_ATTR.findall(e.group(3) or ""))))
            continue
        n = _NODE.match(st)
        if n:
            nodes.setdefault(n.group(1), {}).update(dict(_ATTR.findall(n.group(2))))
    return nodes, edges


def canonical(source: str) -> tuple:
    """The graph up to renaming of node ids: each node's label and colour, refined three times by the
    signatures of its neighbours (Weisfeiler-Lehman), then the multisets of node and edge signatures."""
    nodes, edges = parse_dot(source)
    sig = {i: (a.get("label", "").strip('"'), a.get("fillcolor", "")) for i, a in nodes.items()}
    for _ in range(3):
        sig = {i: (sig[i], tuple(sorted(repr(sig[s]) for s, d, _ in edges if d == i)),
                   tuple(sorted(repr(sig[d]) for s, d, _ in edges if s == i))) for i in nodes}
    return (Counter(repr(s) for s in sig.values()),
            Counter((repr(sig[s]), repr(sig[d]), tuple(sorted(a.items()))) for s, d, a in edges))


# --- the programs: PyTorch's double-backward tutorial, and graphs of built-in ops -----------------------------------
def tutorial_functions(T):
    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * 2 * x

    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = T.exp(x)
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            (result,) = ctx.saved_tensors
            return result * grad_out

    class Sinh(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = T.exp(x)
            expnegx = T.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    class SinhBad(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = T.exp(x)
            expnegx = T.exp(-x)
            ctx.expx = expx
            ctx.expnegx = expnegx
            return (expx - expnegx) / 2

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out * (ctx.expx + ctx.expnegx) / 2

    class CubeBackward(T.autograd.Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(x, grad_out)
            return grad_out * 3 * x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            x, sav_grad_out = ctx.saved_tensors
            return grad_out * 3 * x ** 2, grad_out * sav_grad_out * 6 * x

    class Cube(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return CubeBackward.apply(grad_out, x)

    return {"Square": Square, "Exp": Exp, "Sinh": lambda x: Sinh.apply(x)[0], "SinhBad": SinhBad, "Cube": Cube}


def tutorial_graph(T, name):
    fns = tutorial_functions(T)
    fn = fns[name].apply if hasattr(fns[name], "apply") else fns[name]
    if name in ("Sinh", "SinhBad"):
        x = T.tensor([[0.1, 0.5], [0.9, 0.3]], dtype=T.float64, requires_grad=True)
        out = fn(x)
        (grad_x,) = T.autograd.grad(out.sum(), x, create_graph=True)
    else:
        x = T.tensor(1.0 if name == "Square" else 2.0, dtype=T.float64, requires_grad=True)
        if name != "Cube":
            x = x.clone()
        out = fn(x)
        (grad_x,) = T.autograd.grad(out, x, create_graph=True)
    return (grad_x, x, out), {"grad_x": grad_x, "x": x, "out": out}


def builtin_graph(T):
    x = T.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], requires_grad=True)
    w = T.tensor([0.2, -0.4, 1.1], requires_grad=True)
    h = (x * w).exp() / (x.sin() + 2) - x ** 2
    s = h.softmax(1).log_softmax(0).T.reshape(6) * 3
    y = s.tanh().sigmoid().relu().sum() + h.mean() + h.sum(1).abs().sqrt().view(2, 1).squeeze(1).sum()
    return y, {"x": x, "w": w}


@pytest.mark.parametrize("name", ["Square", "Exp", "Sinh", "SinhBad", "Cube"])
def test_double_backward_tutorial_graphs_match_torch(name):
    torch = pytest.importorskip("torch")
    dots = []
    for T in (minigrad, torch):
        var, params = tutorial_graph(T, name)
        dots.append(_make_dot_for(T)(var, params).source)
    assert canonical(dots[0]) == canonical(dots[1])


@pytest.mark.parametrize("show_attrs, show_saved", [(False, False), (False, True), (True, True)])
def test_builtin_graph_with_saved_tensors_and_attributes_matches_torch(show_attrs, show_saved):
    torch = pytest.importorskip("torch")
    dots = []
    for T in (minigrad, torch):
        var, params = builtin_graph(T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torchviz reads minigrad's version as "PyTorch < 1.9"
            dots.append(_make_dot_for(T)(var, params, show_attrs=show_attrs, show_saved=show_saved).source)
    mine, theirs = canonical(dots[0]), canonical(dots[1])
    assert mine[0] == theirs[0]  # the same nodes (labels: names, saved attributes, sizes)
    assert mine[1] == theirs[1]  # and the same edges


def test_make_dot_works_on_minigrad_alone():
    """Without PyTorch installed: torchviz on a minigrad graph (custom Function and built-ins, saved tensors shown)."""
    var, params = tutorial_graph(minigrad, "Sinh")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        dot = _make_dot_for(minigrad)(var, params, show_attrs=True, show_saved=True)
    nodes, edges = parse_dot(dot.source)
    labels = [a.get("label", "").strip('"') for a in nodes.values()]
    assert "SinhBackward" in labels and "AccumulateGrad" in labels and any(l.startswith("MulBackward0") for l in labels)
    assert sum(a.get("fillcolor") == "orange" for a in nodes.values()) >= 2  # Sinh's saved expx, expnegx
    assert len(edges) >= len(nodes) - 1


def test_views_are_drawn_with_their_base():
    x = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = (x * 2)[0]  # a view of x * 2
    assert y._is_view() and y._base is not None and not (x * 2)._is_view() and not x.detach()._is_view()
    dot = _make_dot_for(minigrad)(y)
    nodes, edges = parse_dot(dot.source)
    assert any(a.get("style") == "dotted" for _, _, a in edges)  # torchviz's base -> view edge
