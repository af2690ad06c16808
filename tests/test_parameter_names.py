"""Every public minigrad function and Tensor method that PyTorch also has takes its parameters under
PyTorch's names, so that keyword calls (``torch.matmul(input=a, other=b)``) run unchanged.

The oracle is ``torch.overrides.get_testing_overrides()``: one lambda per PyTorch function with that
function's signature. Compared, for each name both libraries have:
- the positional parameters, position by position, as far as both lists go (a minigrad function may
  stop earlier, lacking a parameter, or go on where PyTorch's lambda stops);
- keyword-only-ness of every parameter both have.
Not compared: ``out=`` (minigrad has no out= anywhere), ``self`` of methods, dunder methods (never
called with keywords), and parameters whose name starts with an underscore on either side.
Deliberate differences are listed in ALLOWED, each with its reason; an entry that no longer
matches a difference fails the test too, so the list cannot go stale.
"""
from __future__ import annotations

import inspect

import pytest

import minigrad
import minigrad.linalg
import minigrad.nn.functional
from minigrad._unsupported import _MissingMethod

P = inspect.Parameter
POSITIONAL = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)


def _x(T):
    return T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


_LIKE = ("PyTorch's lambda has dtype/layout/device positional; torch.{0} takes them keyword-only (minigrad too, "
         "without layout)")
_KW = "PyTorch's lambda has {1} positional; torch.{0} takes it keyword-only, as minigrad does"
_FROM = ("PyTorch names the first bound `from`, a Python keyword (the lambda's from_ is refused by torch): it can only "
         "be passed by position")
# "namespace.name": (why minigrad's parameters differ from what PyTorch's testing lambda says, a call with
# minigrad's keywords that runs on torch 2.13 and on minigrad: the proof that minigrad follows PyTorch itself)
ALLOWED: dict[str, tuple] = {
    "addmm": (_KW.format("addmm", "beta, alpha"), lambda T: T.addmm(T.zeros(2, 2), _x(T), _x(T).t(), beta=1, alpha=1)),
    "Tensor.addmm": (_KW.format("Tensor.addmm", "beta, alpha"),
                     lambda T: T.zeros(2, 2).addmm(_x(T), _x(T).t(), beta=1)),
    "addmv": (_KW.format("addmv", "beta, alpha"), lambda T: T.addmv(T.zeros(2), _x(T), T.ones(3), beta=1, alpha=2)),
    "Tensor.addmv": (_KW.format("Tensor.addmv", "beta, alpha"), lambda T: T.zeros(2).addmv(_x(T), T.ones(3), alpha=2)),
    "baddbmm": (_KW.format("baddbmm", "beta, alpha"),
                lambda T: T.baddbmm(T.zeros(1, 2, 2), _x(T)[None], _x(T).t()[None], beta=1, alpha=1)),
    "Tensor.baddbmm": (_KW.format("Tensor.baddbmm", "beta, alpha"),
                       lambda T: T.zeros(1, 2, 2).baddbmm(_x(T)[None], _x(T).t()[None], alpha=1)),
    "aminmax": (_KW.format("aminmax", "dim, keepdim"), lambda T: T.aminmax(_x(T), dim=0, keepdim=True)),
    "Tensor.aminmax": (_KW.format("Tensor.aminmax", "dim, keepdim"), lambda T: _x(T).aminmax(dim=1)),
    "cumprod": (_KW.format("cumprod", "dtype"), lambda T: T.cumprod(_x(T), 0, dtype=T.float64)),
    "Tensor.cumprod": (_KW.format("Tensor.cumprod", "dtype"), lambda T: _x(T).cumprod(dim=1, dtype=T.float64)),
    "gather": (_KW.format("gather", "sparse_grad"),
               lambda T: T.gather(_x(T), 1, T.tensor([[0], [1]]), sparse_grad=False)),
    "Tensor.gather": (_KW.format("Tensor.gather", "sparse_grad"),
                      lambda T: _x(T).gather(dim=1, index=T.tensor([[0], [1]]), sparse_grad=False)),
    "nonzero": (_KW.format("nonzero", "as_tuple"), lambda T: T.nonzero(input=_x(T), as_tuple=True)),
    "Tensor.nonzero": (_KW.format("Tensor.nonzero", "as_tuple"), lambda T: _x(T).nonzero(as_tuple=False)),
    "zeros_like": (_LIKE.format("zeros_like"), lambda T: T.zeros_like(input=_x(T), dtype=T.float64, device="cpu")),
    "ones_like": (_LIKE.format("ones_like"), lambda T: T.ones_like(input=_x(T), dtype=T.float64, requires_grad=True)),
    "empty_like": (_LIKE.format("empty_like"), lambda T: T.empty_like(input=_x(T), dtype=T.float64)),
    "full_like": (_LIKE.format("full_like"), lambda T: T.full_like(input=_x(T), fill_value=2.0, dtype=T.float64)),
    "bernoulli": ("PyTorch's lambda lacks p; torch.bernoulli(input, p, *, generator) takes it as minigrad does",
                  lambda T: T.bernoulli(input=T.full((3,), 0.5), p=0.5, generator=None)),
    "Tensor.bernoulli": ("as bernoulli", lambda T: T.full((3,), 0.5).bernoulli(p=0.5)),
    "Tensor.bernoulli_": ("as bernoulli", lambda T: T.zeros(3).bernoulli_(p=0.5)),
    "broadcast_to": ("PyTorch's lambda says self; torch.broadcast_to takes input=, size=",
                     lambda T: T.broadcast_to(input=T.ones(3), size=(2, 3))),
    "permute": ("PyTorch's lambda says self, dim; torch.permute takes input=, dims=",
                lambda T: T.permute(input=_x(T), dims=(1, 0))),
    "isfinite": ("PyTorch's lambda says tensor; torch.isfinite takes input=", lambda T: T.isfinite(input=_x(T))),
    "isinf": ("PyTorch's lambda says tensor; torch.isinf takes input=", lambda T: T.isinf(input=_x(T))),
    "isreal": ("PyTorch's lambda says tensor; torch.isreal takes input=", lambda T: T.isreal(input=_x(T))),
    "xlogy": ("PyTorch's lambda says x, y; torch.xlogy takes input=, other=",
              lambda T: T.xlogy(input=_x(T), other=_x(T).abs())),
    "Tensor.xlogy": ("as xlogy", lambda T: _x(T).xlogy(other=_x(T).abs())),
    "where": ("PyTorch's lambda says x, y; torch.where takes condition=, input=, other=",
              lambda T: T.where(condition=_x(T) > 0, input=_x(T), other=T.zeros(2, 3))),
    "Tensor.where": ("as where", lambda T: _x(T).where(condition=_x(T) > 0, other=T.zeros(2, 3))),
    "logsumexp": ("PyTorch's lambda is the named-tensor overload (names); the tensor one takes dim=",
                  lambda T: T.logsumexp(input=_x(T), dim=1, keepdim=True)),
    "Tensor.logsumexp": ("as logsumexp", lambda T: _x(T).logsumexp(dim=0)),
    "prod": ("PyTorch's lambda is the no-dim overload (input, dtype); torch.prod(input, dim, keepdim, *, dtype)",
             lambda T: T.prod(_x(T), 1, True, dtype=T.float64)),
    "Tensor.prod": ("as prod", lambda T: _x(T).prod(dim=0, keepdim=False, dtype=T.float64)),
    "repeat_interleave": ("PyTorch's lambda lacks repeats; torch.repeat_interleave(input, repeats, dim, *, "
                          "output_size)",
                          lambda T: T.repeat_interleave(_x(T), repeats=2, dim=0, output_size=4)),
    "Tensor.repeat_interleave": ("as repeat_interleave", lambda T: _x(T).repeat_interleave(repeats=2, dim=1)),
    "swapdims": ("PyTorch's lambda says axis0, axis1; torch.swapdims takes dim0=, dim1=",
                 lambda T: T.swapdims(_x(T), dim0=0, dim1=1)),
    "Tensor.swapdims": ("as swapdims", lambda T: _x(T).swapdims(dim0=0, dim1=1)),
    "topk": ("PyTorch's lambda says descending; torch.topk(input, k, dim, largest, sorted)",
             lambda T: T.topk(_x(T), k=1, dim=1, largest=False, sorted=True)),
    "Tensor.topk": ("as topk", lambda T: _x(T).topk(k=2, dim=1, largest=True, sorted=False)),
    "Tensor.cuda": ("PyTorch's lambda lacks device and non_blocking; Tensor.cuda(device, non_blocking, memory_format) "
                    "(minigrad raises its CPU-only error there: the proof is on torch alone)", None),
    "Tensor.uniform_": (_FROM, lambda T: T.zeros(3).uniform_(0.0, to=2.0)),
    "Tensor.random_": (_FROM, lambda T: T.zeros(3).random_(0, to=5)),
}


def _params(fn, drop_first: bool) -> list | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    if drop_first and ps and ps[0].kind in POSITIONAL:
        ps = ps[1:]
    return [p for p in ps if p.name != "out" and not p.name.startswith("_")]


def _compare(torch_ps: list, mini_ps: list) -> list[str]:
    problems = []
    for i, (t, m) in enumerate(zip(torch_ps, mini_ps)):
        if t.kind not in POSITIONAL or m.kind not in POSITIONAL:
            break
        if t.name != m.name:
            problems.append(f"position {i} is {t.name!r} in PyTorch, {m.name!r} in minigrad")
    torch_kw = {p.name: p.kind == P.KEYWORD_ONLY for p in torch_ps if p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)}
    for m in mini_ps:
        if m.name in torch_kw and m.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            if torch_kw[m.name] != (m.kind == P.KEYWORD_ONLY):
                which = "keyword-only" if torch_kw[m.name] else "positional"
                problems.append(f"{m.name!r} is {which} in PyTorch, not in minigrad")
    return problems


def _pairs(torch):
    """(qualified name, PyTorch's lambda, minigrad's callable, is a method) for the names both have."""
    spaces = [("", torch, minigrad), ("nn.functional.", torch.nn.functional, minigrad.nn.functional),
              ("linalg.", torch.linalg, minigrad.linalg)]
    out = []
    for fn, lam in torch.overrides.get_testing_overrides().items():
        name = getattr(fn, "__name__", None)
        if not name or name.startswith("__"):
            continue
        objclass = getattr(fn, "__objclass__", None)
        is_method = objclass is not None and issubclass(torch.Tensor, objclass) or getattr(torch.Tensor, name,
                                                                                           None) is fn
        if is_method:
            mine = minigrad.Tensor.__dict__.get(name)
            if mine is None:
                for klass in minigrad.Tensor.__mro__:
                    if name in klass.__dict__:
                        mine = klass.__dict__[name]
                        break
            if isinstance(mine, (staticmethod, classmethod)):
                mine = mine.__func__
            if mine is None or isinstance(mine, (_MissingMethod, property)) or not callable(mine):
                continue
            out.append((f"Tensor.{name}", lam, mine, True))
            continue
        for prefix, tspace, mspace in spaces:
            if getattr(tspace, name, None) is fn:
                mine = mspace.__dict__.get(name)
                if callable(mine) and not isinstance(mine, type):
                    out.append((prefix + name, lam, mine, False))
                break
    return out


def test_parameter_names_match_pytorch():
    torch = pytest.importorskip("torch")
    mismatches, used = [], set()
    pairs = _pairs(torch)
    assert len(pairs) > 300  # the oracle found minigrad's names (not a silent empty comparison)
    for qual, lam, mine, is_method in pairs:
        tp, mp = _params(lam, is_method), _params(mine, is_method)
        if tp is None or mp is None:
            continue
        problems = _compare(tp, mp)
        if not problems:
            continue
        if qual in ALLOWED:
            used.add(qual)
            reason, proof = ALLOWED[qual]
            if proof is not None:
                proof(torch)     # PyTorch itself takes these keywords...
                proof(minigrad)  # ...and so does minigrad
            continue
        mismatches.append(f"{qual}: " + "; ".join(problems) + f"  (PyTorch {inspect.signature(lam)}, minigrad "
                          f"{inspect.signature(mine)})")
    stale = sorted(set(ALLOWED) - used)
    assert not mismatches, f"{len(mismatches)} parameter-name mismatches:\n" + "\n".join(mismatches)
    assert not stale, f"ALLOWED entries that match PyTorch now (remove them): {stale}"


def test_the_comparison_can_fail():
    def torch_like(input, other, *, alpha=1):
        pass

    def renamed(a, b, alpha=1):
        pass

    tp, mp = _params(torch_like, False), _params(renamed, False)
    assert _compare(tp, mp) == ["position 0 is 'input' in PyTorch, 'a' in minigrad",
                                "position 1 is 'other' in PyTorch, 'b' in minigrad",
                                "'alpha' is keyword-only in PyTorch, not in minigrad"]
    assert _compare(tp, _params(torch_like, False)) == []
