"""Wrong answers to chapter 0's exercise (the steepest point of the sigmoid)."""
from exercise_catalogue import Wrong

PRELUDE_CELLS = ["870a9b02"]  # import numpy as np, from minigrad.course import check

_GRID = "grid = np.linspace(-10, 10, 2001)\n"
_PRINT = 'print(f"max slope {max_slope:.4f} at x = {at_x:.2f}")\n'

WRONG = [
    Wrong("ch00-ex1", "value", _GRID + """\
sig = 1 / (1 + np.exp(-grid))
max_slope, at_x = sig.max(), grid[sig.argmax()]     # the sigmoid, not its slope
""" + _PRINT, says="largest value of the sigmoid itself"),
    Wrong("ch00-ex1", "value", _GRID + """\
sig = 1 / (1 + np.exp(-grid))
max_slope, at_x = sig[grid.size // 2], 0.0          # the sigmoid's value at 0
""" + _PRINT, says="0.5 is the sigmoid's value"),
    Wrong("ch00-ex1", "value", _GRID + """\
sig = 1 / (1 + np.exp(-grid))
slope = sig * (1 - sig)
max_slope, at_x = slope.max(), grid[sig.argmax()]   # the right slope, at the wrong place
""" + _PRINT, says="at_x"),
    Wrong("ch00-ex1", "factor", _GRID + """\
sig = 1 / (1 + np.exp(-grid))
slope = sig * (1 + sig)                             # a sign slip in the derivative
max_slope, at_x = slope.max(), grid[slope.argmax()]
""" + _PRINT, says="not the largest value"),
    Wrong("ch00-ex1", "correct", _GRID + """\
max_slope, at_x = 0.25, 0.0                         # worked out by hand: also right
""" + _PRINT),
]
