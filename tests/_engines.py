"""The engines a test can run on: minigrad always, PyTorch too where it is installed (the oracle).

``@LIBS`` parametrizes a test with ``T``, the module to use as ``torch``: a test written once runs
on both, so any difference from PyTorch shows as a failing ``[torch]`` case next to a passing
``[minigrad]`` one (or the reverse).
"""
from __future__ import annotations

import pytest

import minigrad


def engines() -> list:
    libs = [minigrad]
    try:
        import torch
    except ImportError:
        return libs
    return libs + [torch]


LIBS = pytest.mark.parametrize("T", engines(), ids=lambda T: T.__name__)
