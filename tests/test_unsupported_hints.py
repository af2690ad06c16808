"""The hints of minigrad/_unsupported.py stay true as minigrad grows.

A hint is shown only for a PyTorch name minigrad lacks; an entry for a name minigrad has since
gained is dead, and its text ("minigrad has no convolution layers") has become false. This test
names every such entry.
"""
from __future__ import annotations

import importlib

import minigrad
from minigrad._unsupported import SUBSTITUTES, _MissingMethod


def _minigrad_has(qualname: str) -> bool:
    if qualname.startswith("Tensor."):
        attr = getattr(minigrad.Tensor, qualname.split(".", 1)[1], None)
        return attr is not None and not isinstance(attr, _MissingMethod)
    obj = minigrad
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
            except (ImportError, AttributeError):
                return False
    return True


def test_no_hint_for_a_name_minigrad_has():
    stale = [q for q in SUBSTITUTES if _minigrad_has(q)]
    assert not stale, f"minigrad has these names now; drop or fix their hints in _unsupported.py: {stale}"


def test_the_check_sees_a_missing_name_and_a_present_one():
    assert _minigrad_has("nn.Linear") and _minigrad_has("Tensor.sum") and _minigrad_has("vmap")
    assert not _minigrad_has("nn.Conv3d") and not _minigrad_has("fft")


def test_a_missing_convolution_names_the_ones_minigrad_has():
    try:
        minigrad.nn.Conv3d
    except AttributeError as e:
        assert "nn.Conv2d" in str(e) and "torch.nn.Conv3d" in str(e)
    else:
        raise AssertionError("minigrad.nn.Conv3d exists now: update this test and the hint")
