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


# ------------------------------------------------------------------------ text alternatives
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from check_book import alt_problem  # noqa: E402  (the browser check's rule for a useful alt)


def _cell_alt(cell):
    return ((cell.get("metadata", {}).get("mystnb") or {}).get("image") or {}).get("alt")


def _widget_state(nb) -> dict:
    return (nb.get("metadata", {}).get("widgets", {})
            .get("application/vnd.jupyter.widget-state+json", {}).get("state", {}))


def _draws_a_picture(state: dict, model_id: str) -> bool:
    """Whether a widget (its model and the models it holds, e.g. an interact's Output) stores an image."""
    seen, todo = set(), [model_id]
    while todo:
        mid = todo.pop()
        if mid in seen or mid not in state:
            continue
        seen.add(mid)
        model = state[mid].get("state", {})
        if any("image/png" in (o.get("data") or {}) for o in model.get("outputs", []) or []):
            return True
        todo += re.findall(r"IPY_MODEL_(\w+)", json.dumps(model))
    return False


def picture_problems(nb: dict) -> list[str]:
    """Pictures of a notebook without a text alternative that says what they show.

    A plot: alt in the cell's metadata; draw_graph: alt in the output's metadata (automatic);
    an animation: alt and per-frame text given to animation_html; a widget's plot: the cell's alt."""
    widgets = _widget_state(nb)
    problems = []
    for i, cell in enumerate(nb["cells"]):
        cell_alt = _cell_alt(cell)
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if "image/png" in data:
                alt = cell_alt or (out.get("metadata", {}).get("image/png") or {}).get("alt")
                if alt_problem(alt):
                    problems.append(f"cell {i}: a plot {alt_problem(alt)}: add "
                                    '"mystnb": {"image": {"alt": "..."}} to the cell\'s metadata (draw_graph '
                                    "writes its own: refresh the notebook)")
            html = "".join(data.get("text/html", ""))
            if "_anim_img" in html:
                m = re.search(r'<img id="_anim_img\w+"(?: alt="([^"]*)")?', html)
                if alt_problem(m.group(1) if m else None) or 'class="anim-frame-text"' not in html:
                    problems.append(f"cell {i}: an animation without alt text or frame text: "
                                    "animation_html(anim, name, alt=..., frame_text=[...])")
            view = data.get("application/vnd.jupyter.widget-view+json", {})
            if view and _draws_a_picture(widgets, view.get("model_id", "")) and alt_problem(cell_alt):
                problems.append(f"cell {i}: a widget that draws a plot: give the cell an alt text "
                                    '("mystnb": {"image": {"alt": "..."}})')
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_picture_has_a_text_alternative(path):
    problems = picture_problems(json.loads(path.read_text()))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_the_picture_rule_finds_pictures_without_words():
    png = {"output_type": "display_data", "data": {"image/png": "iVBOR"}, "metadata": {}}
    described = {"mystnb": {"image": {"alt": "ReLU and the slope that backward returns for it"}}}
    view = {"output_type": "display_data", "metadata": {},
            "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "box"}}}
    state = {"box": {"state": {"children": ["IPY_MODEL_out"]}},
             "out": {"state": {"outputs": [{"data": {"image/png": "iVBOR"}}]}}}
    anim = '<div class="animation"><img id="_anim_imgx" alt="{}">'
    nb = {"metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": state}}},
          "cells": [{"metadata": {}, "outputs": [png]},                             # 0: no alt
                    {"metadata": {"mystnb": {"image": {"alt": "Figure 2"}}}, "outputs": [png]},  # 1: generic
                    {"metadata": described, "outputs": [png]},                        # fine
                    {"metadata": {}, "outputs": [dict(png, metadata={"image/png": {"alt": "Backward graph: "
                                                 "1. SumBackward0 → 2. AccumulateGrad x"}})]},  # fine
                    {"metadata": {}, "outputs": [view]},                              # 4: widget's plot
                    {"metadata": {}, "outputs": [{"output_type": "display_data", "metadata": {},
                     "data": {"text/html": anim.format("The slope explorer sweeping x0 from -1 to 1")}}]}]}  # 5
    found = [p.split(":")[0] for p in picture_problems(nb)]
    assert found == ["cell 0", "cell 1", "cell 4", "cell 5"], picture_problems(nb)  # 5: no frame text
    state["out"]["state"]["outputs"] = [{"data": {"text/plain": "sigmoid(2.0) = 0.8808"}}]
    assert "cell 4" not in " ".join(picture_problems(nb))   # a widget that prints text is no picture
