"""How small is a figure's text? Each notebook figure says so in its own PNG.

A figure's text is readable on the website when its smallest font, as rendered, is at least
9 CSS px at 1280 px. That size is ``points * dpi / 72`` pixels in the PNG, times the scale at which
the page shows the PNG (its rendered width over its natural width). The page knows the scale;
the PNG does not know its font sizes. So, in the book build, every inline matplotlib figure is
written with two PNG text entries (``tEXt`` chunks):

- ``minigrad:min-text-pt``: the smallest font size, in points, of the figure's visible,
  non-empty text (titles, labels, tick labels, legends, annotations, colour bars);
- ``minigrad:dpi``: the dpi it was rendered at.

``install()`` does it, for the IPython kernel it runs in; scripts/build_book.sh runs it at the
start of every notebook's kernel (an IPython startup file). The browser check
(tests/browser/check_book.py) reads both entries from each figure on the page and fails on text
under 9 CSS px. Nothing of this is visible in the picture.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

KEY_PT = "minigrad:min-text-pt"
KEY_DPI = "minigrad:dpi"
MIN_CSS_PX = 9.0  # what the browser check asks of every figure's text at 1280 px


def smallest_text_pt(fig) -> float | None:
    """The smallest font size (points) of the visible, non-empty text of ``fig``; None if it has none."""
    from matplotlib.text import Text

    try:  # tick labels exist only once the figure has been laid out
        fig.draw_without_rendering()
    except Exception:  # a figure that cannot draw: the real rendering will say why
        return None
    sizes = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if any(not a.get_visible() for a in _ancestors(t)):
            continue
        sizes.append(float(t.get_fontsize()))
    return min(sizes) if sizes else None


def _ancestors(artist):
    axes = getattr(artist, "axes", None)
    return [axes] if axes is not None else []


def text_metadata(fig, dpi: float | None = None) -> dict:
    """The PNG text entries for ``fig`` ({} when it has no text)."""
    pt = smallest_text_pt(fig)
    if pt is None:
        return {}
    return {KEY_PT: f"{pt:g}", KEY_DPI: f"{float(dpi if dpi is not None else fig.dpi):g}"}


_installed = False


def install(shell=None) -> bool:
    """Make the inline backend of this IPython kernel write :func:`text_metadata` into every PNG.

    IPython's ``print_figure`` renders inline figures; the inline backend registers it (a
    ``functools.partial``) as the PNG formatter of matplotlib figures when it is activated. This
    wraps it, and re-registers the formatter if the backend is already active."""
    global _installed
    import functools

    import IPython.core.pylabtools as pylabtools

    if _installed:
        return False
    original = pylabtools.print_figure

    @functools.wraps(original)
    def print_figure(fig, fmt="png", bbox_inches="tight", base64=False, **kwargs):
        if fmt == "png" and "metadata" not in kwargs:
            meta = text_metadata(fig, kwargs.get("dpi"))
            if meta:
                kwargs["metadata"] = meta
        return original(fig, fmt, bbox_inches, base64, **kwargs)

    pylabtools.print_figure = print_figure
    _installed = True
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is not None:  # the backend may already have registered the original
        try:
            from matplotlib.figure import Figure

            png = shell.display_formatter.formatters["image/png"]
            current = png.lookup_by_type(Figure)
        except (KeyError, ImportError, AttributeError):
            current = None
        if isinstance(current, functools.partial) and current.func is original:
            png.for_type(Figure, functools.partial(print_figure, *current.args, **current.keywords))
    return True


def png_text(data: bytes | str | Path) -> dict:
    """The ``tEXt`` / ``zTXt`` / ``iTXt`` entries of a PNG (bytes or a path)."""
    if not isinstance(data, bytes):
        data = Path(data).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return {}
    out, pos = {}, 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"tEXt" and b"\0" in body:
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = v.decode("latin-1")
        elif kind == b"zTXt" and b"\0" in body:
            k, v = body.split(b"\0", 1)
            out[k.decode("latin-1")] = zlib.decompress(v[1:]).decode("latin-1")
        elif kind == b"iTXt" and b"\0" in body:
            k, rest = body.split(b"\0", 1)
            compressed, rest = rest[0], rest[2:]
            _lang, rest = rest.split(b"\0", 1)
            _tkey, text = rest.split(b"\0", 1)
            out[k.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode("utf-8")
        elif kind == b"IEND":
            break
    return out


def rendered_text_px(meta: dict, natural_width: float, rendered_width: float) -> float | None:
    """The smallest text of a figure in CSS px, as shown ``rendered_width`` px wide (None: not known)."""
    try:
        pt, dpi = float(meta[KEY_PT]), float(meta[KEY_DPI])
    except (KeyError, ValueError):
        return None
    if natural_width <= 0:
        return None
    return pt * dpi / 72.0 * rendered_width / natural_width


def load_ipython_extension(shell) -> None:  # %load_ext minigrad.course.figure_text
    install(shell)
