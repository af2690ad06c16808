"""What the committed notebooks show a reader: nothing of the machine that ran them.

(The website gets the same treatment at build time, and the browser check looks at every page.)
"""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
from machine_paths import LEFTOVER as MACHINE_PATH, rules, scrub  # noqa: E402

NOTEBOOKS = sorted(p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _output_text(out) -> str:
    parts = ["".join(out.get("text", "")), out.get("evalue", ""), "\n".join(out.get("traceback", []))]
    for mime, value in (out.get("data") or {}).items():
        if mime.startswith("text/"):
            parts.append("".join(value) if isinstance(value, list) else str(value))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_machine_paths_in_committed_outputs(path):
    nb = json.loads(path.read_text())
    found = []
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            text = _output_text(out)
            for m in MACHINE_PATH.finditer(text):
                found.append(f"cell {i}: ...{text[max(0, m.start() - 30):m.end() + 30]!r}...")
    assert not found, (f"{path.name}: outputs show this machine's paths; run "
                       f".venv/bin/python scripts/refresh_notebooks.py book/{path.name}\n" + "\n".join(found))


def test_the_rules_make_paths_readable_and_leave_the_rest_alone():
    assert len(rules()) >= 4
    ansi = "\x1b[32m"
    cases = {
        f"File {ansi}{ROOT}/minigrad/autograd/function.py:112\x1b[39m, in apply":
            f"File {ansi}minigrad/autograd/function.py:112\x1b[39m, in apply",
        'File "/srv/x/.venv/lib/python3.12/site-packages/numpy/_core/fromnumeric.py", line 3':
            'File "numpy/_core/fromnumeric.py", line 3',
        "/usr/lib/python3.11/contextlib.py:81: in helper": "python3.11/contextlib.py:81: in helper",
        "/home/ada/course/book/03_relu.ipynb": "book/03_relu.ipynb",
        "/tmp/ipykernel_4242/123.py:3: UserWarning": "123.py:3: UserWarning",
        # not paths: left as they are
        "https://github.com/org/repo/blob/main/book/x.ipynb": None,
        "sigma = 1/(1+e) and a / b": None,
    }
    for text, expected in cases.items():
        assert scrub(text) == (text if expected is None else expected), text
        assert not MACHINE_PATH.search(scrub(text)) or expected is None


def test_nbval_reads_the_same_rules():
    nbval_plugin = pytest.importorskip("nbval.plugin")
    cfg = (ROOT / "nbval_sanitize.cfg").read_text()
    nbval_rules = nbval_plugin.get_sanitize_patterns(cfg)
    ours = [(p.pattern, r) for p, r in rules()]
    assert all(rule in nbval_rules for rule in ours), "nbval would not see every machine-path rule"
    for pattern, replacement in nbval_rules:  # nbval's own parsing: same effect as ours
        re.compile(pattern)
        assert replacement, "an empty replacement is not read by nbval's line parser"
