"""The grader's notebook kernel (minigrad/course/_kernel.py) and the runner's client of it.

The kernel is an IPython shell served over pipes. What the runner reads of a cell must be what
a Jupyter kernel's messages gave it: the printed text and the displayed values' text, in order,
the error's type name and message, a status (ok, error, timeout, dead), and the output capped.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("IPython")

from minigrad.course import _runner  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    (tmp_path / "work").mkdir()
    (tmp_path / "run").mkdir()
    iso = _runner.Isolation({"isolation": "local", "python": sys.executable, "workdir": str(tmp_path / "work"),
                             "rundir": str(tmp_path / "run"), "memory_mb": 2048})
    iso.env = lambda extra, _env=iso.env: {**_env(extra), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    k = _runner.Kernel(iso)
    k.start(60)
    yield k
    k.stop()


def test_output_in_order_values_and_errors_as_a_jupyter_kernel_gives_them(kernel):
    r = kernel.run("print('a')\nfrom IPython.display import display\ndisplay([1, 2])\nprint('b')\n6 * 7",
                   timeout=60)
    assert r == {"status": "ok", "text": "a\n[1, 2]\nb\n42\n", "error": None, "truncated": False}
    r = kernel.run("x = 1\nprint('before')\n1 / 0", timeout=60)
    assert r["status"] == "error" and r["error"] == ("ZeroDivisionError", "division by zero")
    assert r["text"] == "before\n"  # no traceback text: the error travels apart, as in an error message
    assert kernel.run("x + 1", timeout=60)["text"] == "2\n"  # the namespace lives on
    assert kernel.run("def f(:\n    pass", timeout=60)["error"][0] == "SyntaxError"
    assert kernel.run("_ * 2", timeout=60)["text"] == "4\n"  # IPython's variables


def test_magics_figures_and_widgets_run(kernel):
    r = kernel.run("%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2]);", timeout=120)
    assert r["status"] == "ok" and r["text"] == "<Figure size 640x480 with 1 Axes>\n", r
    r = kernel.run("import ipywidgets as w\ns = w.IntSlider(3)\ns.value", timeout=120)
    assert r == {"status": "ok", "text": "3\n", "error": None, "truncated": False}, r
    r = kernel.run("input('name? ')", timeout=60)
    assert r["status"] == "error" and r["error"][0] == "EOFError"  # nothing to read, never a hang


def test_big_output_is_capped(kernel):
    r = kernel.run("import sys\nfor _ in range(50):\n    sys.stdout.write('y' * 2**20)\n'done'", timeout=120)
    assert r["status"] == "ok" and r["truncated"] and len(r["text"]) == _runner.OUTPUT_CAP


def test_time_limit_and_death(kernel):
    assert kernel.run("import time\ntime.sleep(30)", timeout=1.0)["status"] == "timeout"
    kernel.stop()
    kernel.start(60)
    assert kernel.run("import os\nos._exit(3)", timeout=60)["status"] == "dead"
    assert not kernel.alive()


def test_a_cell_that_writes_to_the_kernels_channel_reads_as_a_dead_kernel(kernel):
    """The answer's file descriptor is reachable from a cell: a forged or garbled answer is refused
    (the runner treats that cell as one that killed the kernel), never read as the cell's output."""
    code = ("import os\nfor fd in range(3, 40):\n    try:\n        os.write(fd, b'5\\n{\"a\"}')\n"
            "    except OSError:\n        pass\n")
    assert kernel.run(code, timeout=60)["status"] == "dead"
