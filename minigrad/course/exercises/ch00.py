"""Checks for chapter 0 (getting started)."""
from __future__ import annotations

import numbers

from minigrad.course import CheckFailed, exercise
from minigrad.course._i18n import _


@exercise("ch00-ex1", points=1, title="The steepest point of the sigmoid",
          minutes=10, objective="find a derivative by hand and confirm it numerically with NumPy")
def _check_steepest(answer):
    if not (isinstance(answer, tuple) and len(answer) == 2
            and all(isinstance(v, (numbers.Real,)) or hasattr(v, "item") for v in answer)):
        raise CheckFailed(_("Pass a pair of numbers: check(\"ch00-ex1\", (max_slope, at_x))."))
    max_slope, at_x = (float(v) for v in answer)
    if abs(max_slope - 1.0) < 0.02:
        raise CheckFailed(_("1 is the largest value of the sigmoid itself (far to the right), not of its "
                            "slope: compute sig * (1 - sig) on the grid and take its maximum."))
    if abs(max_slope - 0.5) < 0.02:
        raise CheckFailed(_("0.5 is the sigmoid's value at x = 0; its slope there is sig * (1 - sig)."))
    if abs(max_slope - 0.25) > 1e-3:
        raise CheckFailed(_("max_slope = {max_slope} is not the largest value of sig * (1 - sig): the "
                            "product of two numbers that add up to 1 is largest when both are 1/2.")
                          .format(max_slope=f"{max_slope:.4f}"))
    if abs(at_x) > 0.05:
        raise CheckFailed(_("The largest slope is right, but at_x = {at_x}: take the grid point where "
                            "the slope is largest (argmax), not where the sigmoid is.").format(at_x=f"{at_x:.3f}"))
    return _("right: sigma (1 - sigma) peaks where sigma = 1/2, at x = 0, at 1/4.")
