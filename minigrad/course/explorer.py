"""The slope explorer: what ``backward`` reports at a point, against a finite difference.

One picture, used by several chapters with different Functions::

    from minigrad.course.explorer import SlopeExplorer
    explorer = SlopeExplorer({"relu": torch.relu, "MyFunction": MyFunction})
    explorer.interact()                    # sliders, in a running notebook
    explorer.animate(["relu"], x0=np.linspace(-1, 1, 21), eps=0.5, html_id="relu_sweep")  # the website

At a point x0 it draws the function, the line through (x0, f(x0)) whose slope is the gradient
that ``backward`` returns there (red, dashed), and the secant through x0 - eps and x0 + eps, the
central finite difference that ``gradcheck`` uses (green). Where the two slopes agree, backward
is the derivative of forward at that point; the title says whether they do.

Course tooling: the engine never imports it (it needs matplotlib, and ipywidgets for ``interact``).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

import minigrad
from minigrad.autograd import Function

__all__ = ["SlopeExplorer"]

FONT = 11  # points: legends, ticks and titles stay readable on the page (a 100 dpi figure is shown at 1:1)
TANGENT, SECANT, CURVE = "tab:red", "tab:green", "tab:blue"


_NICE = (1.0, 0.5, 0.25, 0.2, 0.1)


def slider_step(value: float, lo: float, hi: float, steps: int = 40) -> tuple[float, float, float]:
    """(min, max, step) of a slider over [lo, hi] on whose grid ``value`` lies exactly.

    A slider snaps its value to ``min + k * step``: ``interact(x0=0.2)`` on a slider from -1.5 by
    0.075 would start at 0.225, shown as 0.23, and draw another picture than the code asks for.
    The step is the coarsest "nice" one (1, 0.5, 0.25, 0.2, 0.1 times a power of ten) with at
    least ``steps`` positions that puts both ``value`` and ``hi`` on the grid; if none does (a
    value like 0.123456789), the grid is shifted to go through ``value``."""
    if not lo <= value <= hi:
        raise ValueError(f"the slider's starting value {value} is outside its range [{lo}, {hi}]")
    width = hi - lo

    def on_grid(x, step):
        k = x / step
        return abs(k - round(k)) < 1e-9 * max(1.0, abs(k))

    for exponent in range(0, -7, -1):
        for nice in _NICE:
            step = nice * 10.0 ** exponent
            if width / step + 1e-9 < steps:
                continue
            if on_grid(width, step) and on_grid(value - lo, step):
                return lo, hi, step
    step = width / steps
    below = int(np.floor((value - lo) / step + 1e-9))
    above = int(np.floor((hi - value) / step + 1e-9))
    return value - below * step, value + above * step, step


def slider(value: float, lo: float, hi: float, *, description: str, steps: int = 40):
    """An ipywidgets FloatSlider over [lo, hi] that starts at exactly ``value`` (see slider_step)."""
    from ipywidgets import FloatSlider

    low, high, step = slider_step(value, lo, hi, steps)
    decimals = max(0, -int(np.floor(np.log10(step) + 1e-9)))
    frac = f"{step:.{decimals}f}".rstrip("0")
    digits = max(decimals, len(frac.split(".")[1]) if "." in frac else 0)
    return FloatSlider(value=value, min=low, max=high, step=step, description=description,
                       readout_format=f".{digits}f")


def _verdict(backward: float, secant: float) -> str:
    return "agree" if abs(backward - secant) <= 1e-4 * max(1.0, abs(secant)) else "DISAGREE"


def _as_callable(f: Any) -> Callable:
    return f.apply if isinstance(f, type) and issubclass(f, Function) else f


class SlopeExplorer:
    """Draw f, backward's slope at x0 and the finite-difference slope over [x0 - eps, x0 + eps].

    functions: ``{name: Function subclass or callable of one tensor}``; each is evaluated in
    float64 on a one-element tensor for the slopes and on a grid for the curve.
    """

    def __init__(self, functions: Mapping[str, Any], *, xlim: tuple[float, float] = (-2.0, 2.0),
                 ylim: tuple[float, float] | None = None, points: int = 401):
        if not functions:
            raise ValueError("SlopeExplorer needs at least one function")
        self.functions = {name: _as_callable(f) for name, f in functions.items()}
        self.xlim, self.ylim = xlim, ylim
        self.grid = np.linspace(xlim[0], xlim[1], points)

    # ------------------------------------------------------------------ numbers
    def _function(self, name: str) -> Callable:
        if name not in self.functions:
            raise KeyError(f"no function named {name!r} in this explorer; it has {', '.join(map(repr, self.functions))}")
        return self.functions[name]

    def value(self, name: str, x0: float) -> float:
        with minigrad.no_grad():
            return float(self._function(name)(minigrad.tensor([x0], dtype=minigrad.float64)).item())

    def backward_slope(self, name: str, x0: float) -> float:
        """The gradient ``backward`` returns at x0 (0 if it returns None)."""
        x = minigrad.tensor([x0], dtype=minigrad.float64, requires_grad=True)
        y = self._function(name)(x)
        y.backward(minigrad.ones_like(y))
        return 0.0 if x.grad is None else float(x.grad.item())

    def finite_difference(self, name: str, x0: float, eps: float) -> float:
        """The central difference (f(x0 + eps) - f(x0 - eps)) / (2 eps), as gradcheck computes it."""
        return (self.value(name, x0 + eps) - self.value(name, x0 - eps)) / (2 * eps)

    def slopes(self, name: str, x0: float, eps: float = 1e-6) -> tuple[float, float]:
        """(slope from backward, finite-difference slope) at x0."""
        return self.backward_slope(name, x0), self.finite_difference(name, x0, eps)

    # ----------------------------------------------------------------- in words
    def describe(self, names: Sequence[str], x0: float, eps: float = 1e-6) -> str:
        """One frame in words (its text alternative): both slopes and the verdict, per function."""
        parts = []
        for name in names:
            backward, secant = self.slopes(name, x0, eps)
            parts.append(f"{name}: backward {backward:.3g}, finite difference {secant:.3g}, "
                         f"{_verdict(backward, secant)}")
        return f"x0 = {x0:+.2f}: " + "; ".join(parts)

    def summary(self, names: Sequence[str], x0: Sequence[float], eps: float) -> str:
        """What the animation shows, in one sentence (the alt text of its frames)."""
        return (f"Slope explorer for {' and '.join(names)}, x0 from {min(x0):+.2f} to {max(x0):+.2f}, "
                f"eps = {eps:g}: each panel draws the function (blue curve on a pale band), a solid green "
                f"secant through x0 - eps and x0 + eps with the finite-difference slope, and a red dashed "
                f"line with the slope that backward returns; the title says whether the two agree.")

    # ----------------------------------------------------------------- pictures
    def draw(self, ax, name: str, x0: float, eps: float = 1e-6, *, legend: bool = True) -> None:
        """Draw one panel on the matplotlib axes ``ax``."""
        with minigrad.no_grad():
            curve = self._function(name)(minigrad.tensor(self.grid, dtype=minigrad.float64)).numpy()
        y0 = self.value(name, x0)
        backward, secant = self.slopes(name, x0, eps)
        ax.plot(self.grid, curve, lw=6, alpha=0.3, color=CURVE)  # a wide pale band: lines on it stay visible
        ax.plot(self.grid, curve, lw=1.4, color=CURVE, label=name)  # the curve itself, at 3:1 contrast
        ax.plot(self.grid, y0 + secant * (self.grid - x0), lw=1.6, color=SECANT,
                label=f"finite difference: {secant:.3g}")
        ax.plot(self.grid, y0 + backward * (self.grid - x0), "--", lw=1.8, color=TANGENT,
                label=f"backward: {backward:.3g}")
        if eps >= 0.01 * (self.xlim[1] - self.xlim[0]):  # the probes are visible: show them
            probes = [x0 - eps, x0 + eps]
            ax.plot(probes, [self.value(name, v) for v in probes], "o", color=SECANT, ms=6)
        ax.plot([x0], [y0], "o", color="black", ms=6)
        ax.set_xlim(*self.xlim)
        if self.ylim is not None:
            ax.set_ylim(*self.ylim)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=FONT)
        ax.set_title(f"{name}, x0 = {x0:+.2f}: {_verdict(backward, secant)}", fontsize=FONT + 1)
        if legend:
            ax.legend(loc="upper left", fontsize=FONT - 1, framealpha=0.9)

    def figure(self, names: Sequence[str], *, panel_width: float = 5.0, height: float = 3.6, dpi: int = 100):
        import matplotlib.pyplot as plt

        width = min(7.6, panel_width * len(names))  # the page's text column: about 760 px at 100 dpi
        fig, axes = plt.subplots(1, len(names), figsize=(width, height), dpi=dpi, squeeze=False)
        return fig, list(axes[0])

    def show(self, names: Sequence[str] | str, x0: float, eps: float = 1e-6):
        """A static figure: one panel per name, at the same x0 and eps."""
        names = [names] if isinstance(names, str) else list(names)
        fig, axes = self.figure(names)
        for ax, name in zip(axes, names):
            self.draw(ax, name, x0, eps)
        fig.tight_layout()
        return fig

    def interact(self, name: str | None = None, x0: float = 0.5, log10_eps: float = -6.0):
        """Sliders (function, x0, log10 eps) that redraw the picture; needs a running kernel."""
        import matplotlib.pyplot as plt
        from ipywidgets import Dropdown, FloatSlider, interactive

        lo, hi = self.xlim

        def update(name, x0, log10_eps):
            self.show(name, x0, 10 ** log10_eps)
            plt.show()

        return interactive(update,
                           name=Dropdown(options=list(self.functions), value=name or next(iter(self.functions))),
                           x0=slider(x0, lo, hi, description="x0", steps=40),
                           log10_eps=slider(log10_eps, -6.0, 0.0, description="log10 eps", steps=24))

    def animate(self, names: Sequence[str] | str, x0: Sequence[float], eps: float = 1e-6, *,
                html_id: str, fps: float = 3, mode: str = "once") -> str:
        """The website's stand-in for the sliders: x0 sweeps through ``x0``; offline, stable HTML.

        The player describes itself: a one-sentence summary as the frames' alt text, and each
        frame's slopes and verdict in words (under the player, and read out as it steps)."""
        import matplotlib.pyplot as plt
        from matplotlib import animation

        from minigrad.viz import animation_html

        names = [names] if isinstance(names, str) else list(names)
        points = [float(v) for v in x0]
        fig, axes = self.figure(names)

        def frame(i):
            for ax, name in zip(axes, names):
                ax.clear()
                self.draw(ax, name, points[i], eps)
            fig.tight_layout()

        anim = animation.FuncAnimation(fig, frame, frames=len(points))
        try:
            return animation_html(anim, html_id, fps=fps, default_mode=mode,
                                  alt=self.summary(names, points, eps),
                                  frame_text=[self.describe(names, p, eps) for p in points])
        finally:
            plt.close(fig)
