"""The slope explorer (minigrad.course.explorer): its numbers, its pictures, its website animation."""
import numpy as np
import pytest

import minigrad
from minigrad.autograd import Function
from minigrad.course.explorer import FONT, SlopeExplorer

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


class Buggy(Function):
    """Doubles in forward, masks like ReLU in backward (chapter 2's bug hunt)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (x > 0).to(grad_output.dtype)


def test_slopes_backward_and_finite_difference():
    e = SlopeExplorer({"square": lambda x: x * x, "relu": minigrad.relu, "buggy": Buggy})
    backward, fd = e.slopes("square", 1.5)
    assert backward == pytest.approx(3.0) and fd == pytest.approx(3.0, abs=1e-6)
    assert e.slopes("relu", 0.0, eps=0.5) == (0.0, pytest.approx(0.5))   # the convention vs the average
    assert e.slopes("relu", 1.0, eps=0.5) == (1.0, pytest.approx(1.0))   # both probes on one side
    assert e.slopes("buggy", 1.0) == (1.0, pytest.approx(2.0))           # a Function class is applied
    assert e.slopes("buggy", -1.0) == (0.0, pytest.approx(2.0))


def test_draw_titles_the_verdict_and_keeps_fonts_readable():
    import matplotlib.pyplot as plt

    e = SlopeExplorer({"relu": minigrad.relu, "buggy": Buggy}, ylim=(-1, 3))
    fig = e.show(["relu", "buggy"], x0=0.0, eps=0.5)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["relu, x0 = +0.00: DISAGREE", "buggy, x0 = +0.00: DISAGREE"]
    fig2 = e.show("relu", x0=1.0, eps=0.5)
    assert fig2.axes[0].get_title() == "relu, x0 = +1.00: agree"
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None and min(t.get_fontsize() for t in legend.get_texts()) >= FONT - 1 >= 10
    assert min(t.get_fontsize() for t in ax.get_xticklabels()) >= FONT
    assert [t.get_text() for t in legend.get_texts()] == ["relu", "finite difference: 0.5", "backward: 0"]
    assert fig.get_size_inches()[0] * fig.dpi <= 760      # fits the page's text column at 1:1
    for line in legend.get_lines():                       # what the legend names is seen: 3:1 on white
        assert _contrast(line.get_color()) >= 3.0 and (line.get_alpha() or 1.0) == 1.0, line.get_label()
    plt.close("all")


def _contrast(colour, background="white"):
    from matplotlib.colors import to_rgb

    def lum(c):
        rgb = np.array(to_rgb(c))
        rgb = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        return rgb @ [0.2126, 0.7152, 0.0722]
    hi, lo = sorted([lum(colour), lum(background)], reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_animation_is_offline_and_stable():
    e = SlopeExplorer({"relu": minigrad.relu})
    html = e.animate("relu", np.linspace(-1, 1, 3), eps=0.5, html_id="test_anim")
    assert 'id="_anim_imgtest_anim"' in html and "https://" not in html
    assert html.count("data:image/png;base64") == 3 or html.count("frames[") >= 3
    assert e.animate("relu", np.linspace(-1, 1, 3), eps=0.5, html_id="test_anim") == html   # same every run


def test_animation_describes_itself_in_words():
    """A reader who cannot see the frames gets what they show: a summary, and each frame's slopes."""
    e = SlopeExplorer({"relu": minigrad.relu, "buggy": Buggy})
    html = e.animate(["relu", "buggy"], [-1.0, 0.0, 1.0], eps=0.5, html_id="words")
    summary = e.summary(["relu", "buggy"], [-1.0, 0.0, 1.0], 0.5)
    assert f'<img id="_anim_imgwords" alt="{summary}"' in html
    assert "relu and buggy" in summary and "red dashed" in summary and "green" in summary
    assert e.describe(["relu", "buggy"], 0.0, 0.5) == (
        "x0 = +0.00: relu: backward 0, finite difference 0.5, DISAGREE; "
        "buggy: backward 0, finite difference 2, DISAGREE")
    assert e.describe(["relu"], 1.0, 0.5) == "x0 = +1.00: relu: backward 1, finite difference 1, agree"
    assert 'class="anim-frame-text"' in html and "finite difference 2, DISAGREE" in html


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="at least one function"):
        SlopeExplorer({})
    with pytest.raises(KeyError, match="no function named .nope. in this explorer; it has .relu."):
        SlopeExplorer({"relu": minigrad.relu}).slopes("nope", 0.0)
