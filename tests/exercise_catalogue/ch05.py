"""Wrong answers to chapter 5's exercises (gradcheck from the inside)."""
from exercise_catalogue import Wrong

_MY_GRADCHECK_HEAD = "def my_gradcheck(fn, x, eps=1e-6, atol=1e-5, rtol=1e-3):\n"

# The numerical and analytical Jacobians, (m, n), as in the solution; each wrong answer changes one part.
_NUMERICAL = """\
    base = x.detach()
    n = base.numel()
    columns = []
    with torch.no_grad():
        for j in range(n):
            step = torch.zeros(n, dtype=base.dtype)
            step[j] = eps
            step = step.reshape(base.shape)
            columns.append(((fn(base + step) - fn(base - step)) / (2 * eps)).reshape(-1))
    numerical = torch.stack(columns, dim=1)
"""
_FORWARD_DIFFERENCE = _NUMERICAL.replace("(fn(base + step) - fn(base - step)) / (2 * eps)",
                                         "(fn(base + step) - fn(base)) / eps")
_ANALYTICAL = """\
    y = fn(x)
    rows = []
    for i in range(y.numel()):
        v = torch.zeros(y.numel(), dtype=y.dtype)
        v[i] = 1.0
        g, = torch.autograd.grad(y, x, grad_outputs=v.reshape(y.shape), retain_graph=True, allow_unused=True)
        rows.append(torch.zeros(n, dtype=x.dtype) if g is None else g.reshape(-1))
    analytical = torch.stack(rows, dim=0)
"""
_RULE = "    return bool(((analytical - numerical).abs() <= atol + rtol * numerical.abs()).all())\n"


def _my_gradcheck(numerical=_NUMERICAL, analytical=_ANALYTICAL, rule=_RULE) -> str:
    return _MY_GRADCHECK_HEAD + numerical + analytical + rule


WRONG = [
    # ---- Exercise 5.1: read the reports
    Wrong("ch05-ex1", "value", 'diagnosis = {"A": 3, "B": 3, "C": 6, "D": 1}', says="3 of 4 right"),
    Wrong("ch05-ex1", "value", 'diagnosis = {"A": 4, "B": 3, "C": 6, "D": 2}', says="D: not 2"),
    Wrong("ch05-ex1", "value", 'diagnosis = {"A": 5, "B": 4, "C": 1, "D": 6}', says="0 of 4 right"),
    Wrong("ch05-ex1", "value", "diagnosis = [4, 3, 6, 1]", says="must be a dict"),
    Wrong("ch05-ex1", "value", 'diagnosis = {"A": 4, "B": 3, "C": 6}', says="exactly one diagnosis"),
    # ---- Exercise 5.2: float32 settings
    Wrong("ch05-ex2", "value", "FLOAT32_SETTINGS = dict(eps=1e-6, atol=1e-5, rtol=1e-3)", says="FAILS the correct"),
    Wrong("ch05-ex2", "value", "FLOAT32_SETTINGS = dict(eps=1e-3, atol=1e-5, rtol=1e-3)", says="FAILS the correct"),
    Wrong("ch05-ex2", "value", "FLOAT32_SETTINGS = dict(eps=1e-3, atol=0.1, rtol=0.5)", says="PASSES a broken"),
    Wrong("ch05-ex2", "value", "FLOAT32_SETTINGS = dict(eps=0.5, atol=1e-3, rtol=1e-2)", says="far too large"),
    Wrong("ch05-ex2", "value", "FLOAT32_SETTINGS = dict(eps=1e-3, atol=1e-3)", says="exactly the keys"),
    Wrong("ch05-ex2", "correct", "FLOAT32_SETTINGS = dict(eps=3e-3, atol=2e-3, rtol=2e-2)"),
    # ---- Exercise 5.3: my_gradcheck
    Wrong("ch05-ex3", "value", _my_gradcheck(numerical=_FORWARD_DIFFERENCE), says="central differences"),
    Wrong("ch05-ex3", "value", _my_gradcheck(rule="    return bool(((analytical - numerical).abs() <= atol).all())\n"),
          says="acceptance rule"),
    Wrong("ch05-ex3", "value", _my_gradcheck(rule="    return bool(((analytical - numerical.T).abs() <= atol + rtol * "
                                                  "numerical.abs()).all())\n"),
          says="raised"),
    Wrong("ch05-ex3", "value", _my_gradcheck(analytical=_ANALYTICAL.replace(
        "g, = torch.autograd.grad(y, x, grad_outputs=v.reshape(y.shape), retain_graph=True, allow_unused=True)",
        "y.backward(v.reshape(y.shape), retain_graph=True)\n        g = x.grad")), says="x.grad"),
    Wrong("ch05-ex3", "value", _my_gradcheck(numerical=_NUMERICAL.replace(
        "    base = x.detach()\n", "    base = x.detach()  # shares memory with x\n").replace(
        "            columns.append(((fn(base + step) - fn(base - step)) / (2 * eps)).reshape(-1))",
        "            base += step\n            plus = fn(base)\n            base -= 2 * step\n"
        "            columns.append(((plus - fn(base)) / (2 * eps)).reshape(-1))")),
          says="changed the values of x"),
]
