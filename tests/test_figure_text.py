"""Figures say how small their text is (minigrad/course/figure_text.py), for the browser check."""
import io

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from minigrad.course import figure_text  # noqa: E402


def _png(fig, **kw) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **kw)
    return buf.getvalue()


def test_smallest_text_counts_ticks_titles_and_annotations_but_not_hidden_or_empty_text():
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 3), dpi=90)
    a.plot([0, 1]); a.set_title("title", fontsize=14)
    a.text(0.5, 0.5, "seven", fontsize=7)
    b.text(0.5, 0.5, "", fontsize=3)                    # empty: not text anyone reads
    b.text(0.5, 0.2, "hidden", fontsize=4, visible=False)
    assert figure_text.smallest_text_pt(fig) == 7.0
    for t in a.texts:
        t.set_fontsize(12)
    # the tick labels (10 pt, matplotlib's default) are the smallest now: found after layout
    assert figure_text.smallest_text_pt(fig) == 10.0
    plt.close(fig)


def test_the_png_carries_font_size_and_dpi_and_the_rendered_size_follows():
    fig, ax = plt.subplots(figsize=(4, 3), dpi=90)
    ax.plot([0, 1]); ax.set_xlabel("x", fontsize=8)
    meta = figure_text.text_metadata(fig)
    png = _png(fig, metadata=meta)
    read = figure_text.png_text(png)
    assert read[figure_text.KEY_PT] == "8" and read[figure_text.KEY_DPI] == "90"
    # 8 pt at 90 dpi = 10 px in the PNG; shown at half its width: 5 CSS px, too small
    assert figure_text.rendered_text_px(read, 360, 360) == pytest.approx(10.0)
    half = figure_text.rendered_text_px(read, 360, 180)
    assert half == pytest.approx(5.0) and half < figure_text.MIN_CSS_PX
    assert figure_text.rendered_text_px({}, 360, 360) is None       # a PNG without the entries
    plt.close(fig)


def test_install_wraps_ipythons_print_figure():
    pytest.importorskip("IPython")
    import IPython.core.pylabtools as pylabtools

    original = pylabtools.print_figure
    try:
        figure_text._installed = False
        assert figure_text.install(shell=None) is True
        assert pylabtools.print_figure is not original
        fig, ax = plt.subplots(figsize=(3, 2), dpi=80)
        ax.set_title("t", fontsize=9)
        data = pylabtools.print_figure(fig, "png")        # what the inline backend calls
        read = figure_text.png_text(data)
        assert read[figure_text.KEY_DPI] == "80" and float(read[figure_text.KEY_PT]) <= 9
        assert figure_text.install() is False              # once
        plt.close(fig)
    finally:
        pylabtools.print_figure = original
        figure_text._installed = False
