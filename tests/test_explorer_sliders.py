"""The explorer's sliders start where the code says (minigrad.course.explorer.slider_step).

A slider snaps its value to min + k * step. With the old grid (xlim / 40, eps by 0.25),
chapter 3's `explorer.interact(x0=0.2, log10_eps=-0.3)` started at 0.225 (shown 0.23) and -0.25.
"""
import pytest

from minigrad.course.explorer import slider_step

widgets = pytest.importorskip("ipywidgets")


def _snapped(value, lo, step):
    """Where a slider from ``lo`` by ``step`` shows ``value`` (what the front end does)."""
    return lo + round((value - lo) / step) * step


@pytest.mark.parametrize("value, lo, hi, steps", [
    (0.2, -1.5, 1.5, 40), (-0.3, -6.0, 0.0, 24),          # chapter 3's call
    (0.0, -1.5, 1.5, 40), (1.0, -2.0, 2.0, 40), (-0.5, -6.0, 0.0, 24), (-6.0, -6.0, 0.0, 24),
    (0.123456789, -1.5, 1.5, 40),                         # no nice grid: the grid goes through it
    (0.7, -1.0, 3.0, 40),
])
def test_the_start_value_is_on_the_grid(value, lo, hi, steps):
    low, high, step = slider_step(value, lo, hi, steps)
    assert lo <= low <= value <= high <= hi
    assert _snapped(value, low, step) == pytest.approx(value, abs=1e-12)
    assert (high - low) / step >= steps - 1 - 1e-9, "at least as fine as asked"


def test_chapter_3_call_starts_at_0_2_and_minus_0_3():
    import minigrad
    from minigrad.course.explorer import SlopeExplorer

    w = SlopeExplorer({"relu": minigrad.relu}, xlim=(-1.5, 1.5)).interact(x0=0.2, log10_eps=-0.3)
    by_name = {c.description: c for c in w.children if hasattr(c, "step")}
    x0, eps = by_name["x0"], by_name["log10 eps"]
    assert (x0.value, eps.value) == (0.2, -0.3)
    assert _snapped(x0.value, x0.min, x0.step) == pytest.approx(0.2, abs=1e-12)
    assert _snapped(eps.value, eps.min, eps.step) == pytest.approx(-0.3, abs=1e-12)
    assert (x0.min, x0.max, eps.min, eps.max) == (-1.5, 1.5, -6.0, 0.0)   # the ranges did not shrink
    assert f"{x0.value:{x0.readout_format}}" == "0.20" and f"{eps.value:{eps.readout_format}}" == "-0.3"
    # the old grid would have shown another picture
    assert _snapped(0.2, -1.5, 3.0 / 40) == pytest.approx(0.225) and _snapped(-0.3, -6.0, 0.25) == -0.25


def test_a_start_outside_the_range_is_an_error():
    with pytest.raises(ValueError, match="outside its range"):
        slider_step(2.0, -1.5, 1.5)
