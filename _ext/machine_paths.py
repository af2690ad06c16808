"""Nothing of the machine that ran a notebook appears in its outputs.

Tracebacks and warnings print absolute paths ("/home/<you>/.../minigrad/autograd/function.py:112").
The rules that turn them into paths a reader can look up ("minigrad/autograd/function.py:112")
live in ONE place, the ``[machine paths: ...]`` sections of nbval_sanitize.cfg, and are applied

* by nbval, when it compares a fresh run with the stored outputs;
* by scripts/refresh_notebooks.py, to the outputs it stores in book/*.ipynb;
* by this Sphinx extension, to the outputs of the notebooks the book build executes.

tests/test_notebook_outputs.py checks that no committed output shows an absolute path, and
the browser check that no page does.
"""
from __future__ import annotations

import configparser
import functools
import re
from pathlib import Path

CFG = Path(__file__).resolve().parent.parent / "nbval_sanitize.cfg"
SECTION_PREFIX = "machine paths"


@functools.lru_cache(maxsize=None)
def rules(cfg: Path = CFG) -> tuple[tuple[re.Pattern, str], ...]:
    """The (regex, replacement) pairs of the ``[machine paths: ...]`` sections, in file order."""
    if not cfg.is_file():
        raise FileNotFoundError(f"{cfg} is missing: it holds the rules that keep machine paths out of outputs")
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(cfg)
    return tuple((re.compile(parser[s]["regex"]), parser[s]["replace"])
                 for s in parser.sections() if s.startswith(SECTION_PREFIX))


def scrub(text: str) -> str:
    """``text`` with every machine-specific path replaced as nbval_sanitize.cfg says."""
    for pattern, replacement in rules():
        text = pattern.sub(replacement, text)
    return text


def scrub_outputs(outputs: list) -> None:
    """Scrub nbformat outputs in place: streams, tracebacks, error values and text data."""
    for out in outputs:
        if "text" in out:
            out["text"] = scrub("".join(out["text"]))
        if "traceback" in out:
            out["traceback"] = [scrub(line) for line in out["traceback"]]
        if "evalue" in out:
            out["evalue"] = scrub(out["evalue"])
        for mime, value in (out.get("data") or {}).items():
            if mime.startswith("text/") or mime == "application/javascript":
                out["data"][mime] = scrub("".join(value) if isinstance(value, list) else value)


# ------------------------------------------------------------------------------- Sphinx
def _scrub_doctree(app, doctree) -> None:
    from docutils import nodes

    def in_output(node) -> bool:
        while node is not None:
            if "cell_output" in node.get("classes", ()) or "output" in node.get("classes", ()):
                return True
            node = node.parent
        return False

    for node in list(doctree.findall(nodes.Text)):
        parent = node.parent
        if parent is None or not in_output(parent):
            continue
        new = scrub(str(node))
        if new != str(node):
            parent.replace(node, nodes.Text(new))
    for node in doctree.findall(lambda n: isinstance(n, (nodes.literal_block, nodes.raw))):
        if in_output(node) and node.rawsource:
            node.rawsource = scrub(node.rawsource)


def setup(app):
    app.connect("doctree-read", _scrub_doctree)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# What must not be left after scrubbing (tests/test_notebook_outputs.py and the browser check
# look for it): an absolute path under a folder that only a machine has, a venv's packages,
# or this checkout.
_START = r"(?:^|(?<=[\s\"'(=\[])|(?<=\x1b\[\dm)|(?<=\x1b\[\d\dm))"
LEFTOVER = re.compile(
    _START + r"/(?:home|Users|root|tmp|work|opt|usr|var|private|mnt|srv)/[\w.+~-]+"
    r"|site-packages/|dist-packages/|" + re.escape(str(CFG.parent)), re.M)
