"""The grader's pieces, without a sandbox: what is loaded from a notebook, what is screened, how values
cross, and what the checker process answers (verdicts, sign errors, tampering, hidden-test silence)."""
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from _grading import FIXTURE

from minigrad.course import _extract, _values, _wire
from minigrad.course.grade import course_bundle

CUBE = '''import minigrad
from minigrad.autograd import Function

class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return SIGN * grad_output * 3 * x * x
'''


def _cells(*sources):
    return _extract.code_cells([{"cell_type": "code", "source": s} for s in sources])


def _plan(sources, needed, **kw):
    return _extract.plan(_cells(*sources), set(needed), **kw)


# ------------------------------------------------------------------------------------ loading
def test_cells_are_numbered_as_jupyter_numbers_them():
    nb = [{"cell_type": "markdown", "source": "# title"}, {"cell_type": "code", "source": "x = 1"},
          {"cell_type": "code", "source": "   \n"}, {"cell_type": "code", "source": "%matplotlib inline\ny = 2"},
          {"cell_type": "code", "source": "%%bash\necho hi"}, {"cell_type": "code", "source": "def f(:"}]
    cells = _extract.code_cells(nb)
    assert [(c.pos, c.label) for c in cells] == [(1, "In [1]"), (3, "In [2]"), (4, "In [3]"), (5, "In [4]")]
    assert cells[1].tree is not None and cells[1].source.startswith("pass\n")
    assert cells[2].tree is None and "magic" in cells[2].error
    assert cells[3].tree is None and "SyntaxError" in cells[3].error


def test_only_definitions_are_loaded_never_top_level_code():
    p = _plan(["import builtins\nbuiltins.all = lambda *a: True\nprint('side effect')",
               "SIGN = 1\n" + CUBE, "Cube.forward = None  # a statement, not a definition"], {"Cube"})
    loaded = [(c.label, c.tree.body[i].__class__.__name__) for c, i in p.load]
    assert loaded == [("In [2]", "Assign"), ("In [2]", "ImportFrom"), ("In [2]", "ClassDef")]
    assert p.data == [] and p.unavailable == {} and p.flags == []


def test_values_come_from_the_kernel_and_definitions_from_the_source():
    p = _plan(["t = 2.0\ngrad_at_two = float(t) * 6", "def helper(x):\n    return x * SCALE"],
              {"grad_at_two", "helper"})
    assert sorted(p.data) == ["SCALE", "grad_at_two"] and p.unbound == {"SCALE"}
    assert [c.tree.body[i].name for c, i in p.load] == ["helper"]
    # a later conditional re-binding that did not run: the kernel says it still holds the function
    p = _plan(["def f():\n    return 1", "if False:\n    f = None"], {"f"})
    assert p.data == ["f"]
    p = _plan(["def f():\n    return 1", "if False:\n    f = None"], {"f"}, prefer_definitions={"f"})
    assert p.data == [] and [c.tree.body[i].name for c, i in p.load] == ["f"]
    # the kernel does not hold it: the cell stopped before the definition
    p = _plan(["raise RuntimeError()\ndef f():\n    return 1"], {"f"}, absent={"f"})
    assert "stopped with an error" in p.unavailable["f"]


def test_changing_a_definition_later_is_explained():
    p = _plan(["SIGN = 1\n" + CUBE, "Cube.backward = staticmethod(lambda ctx, g: g)\nsetattr(Cube, 'k', 2)"], {"Cube"})
    assert p.notes == ["In [2] changes `Cube` after its definition (`Cube.backward = staticmethod(lambda ctx, g: g)`): "
                       "the grader uses `Cube` as its own statement defines it",
                       "In [2] changes `Cube` after its definition (`setattr(Cube, 'k', 2)`): the grader uses `Cube` "
                       "as its own statement defines it"]


@pytest.mark.parametrize("src, why", [
    ("def deco(f):\n    return f\n@deco\ndef f():\n    pass", "decorator"),
    ("def f(x=print('hi')):\n    pass", "default value"),
    ("class M(type):\n    pass\nclass f(metaclass=M):\n    pass", "class keyword"),
    ("class f:\n    x = print('hi')", "computed"),
    ("class f:\n    def __init_subclass__(cls):\n        pass", "__init_subclass__"),
    ("import os as f", "the grader loads only"),
    ("from subprocess import run as f", "the grader loads only"),
])
def test_definitions_that_would_run_code_when_loaded_are_refused(src, why):
    p = _plan([src], {"f"})
    assert p.load == [] or all(c.tree.body[i].__class__.__name__ != "FunctionDef" or c.tree.body[i].name != "f"
                               for c, i in p.load)
    assert why in p.unavailable["f"], p.unavailable


def test_accepted_definitions():
    src = ('import numpy as np\nfrom minigrad.autograd import Function, once_differentiable\nSLOPE = -0.5 * 2\n'
           'alias = np.float64\nsquare = lambda v, k=2: v ** k\n'
           'class F(Function):\n    """doc"""\n    k: float = 0.1\n    @staticmethod\n    @once_differentiable\n'
           '    def forward(ctx, input: "Tensor", n=SLOPE) -> "Tensor":\n        return input * n\n'
           '    @property\n    def p(self):\n        return 1\n    @p.setter\n    def p(self, v):\n        pass\n')
    p = _plan([src], {"F", "alias", "square"})
    assert p.unavailable == {} and p.flags == [] and p.data == []
    assert len(p.load) == 6


def test_unpacking_a_literal_in_a_class_body_is_loaded_and_anything_else_refused():
    ok = ("from minigrad.autograd import Function\nclass Clamp(Function):\n    LOW, HIGH = 0.0, 1.0\n"
          "    (A, B), C = (1, 2), 3\n")
    p = _plan([ok], {"Clamp"})
    assert p.unavailable == {} and [getattr(c.tree.body[i], "name", None) for c, i in p.load][-1] == "Clamp"
    for body, why in (("LOW, HIGH = BOUNDS", "something other than a name"),  # iterating it could run code
                      ("LOW, HIGH = (0.0, print('hi'))", "something other than a name"),
                      ("x.y, HIGH = 0.0, 1.0", "something other than a name"),
                      ("__eq__, HIGH = 0.0, 1.0", None)):
        p = _plan([f"BOUNDS = (0.0, 1.0)\nclass Clamp:\n    {body}\n"], {"Clamp"})
        if why is None:  # loadable, but a comparison hook: flagged as tampering
            assert any("defines `__eq__`" in flag for flag in p.flags), p.flags
        else:
            assert why in p.unavailable["Clamp"], p.unavailable


# ------------------------------------------------------------------------------------ screening
@pytest.mark.parametrize("body, what", [
    ("import sys\n        return sys._getframe(1)", "_getframe"),
    ("return (lambda: 0).__globals__", "__globals__"),
    ("import gc\n        return gc", "imports `gc`"),
    ("return getattr(x, name)", "computed or special attribute"),
    ("return getattr(x, '__class__')", "computed or special attribute"),
    ("return eval('1')", "`eval`"),
    ("np.allclose = lambda *a, **k: True", "changes the library `np.allclose`"),
    ("return '{0.__globals__}'.format(x)", "__globals__"),
    ("return np.load('f', allow_pickle=True)", "allow_pickle"),
    ("return x.ctypes", "ctypes"),
])
def test_screen_flags_code_that_reaches_the_interpreter(body, what):
    src = f"import numpy as np\nname = 'n'\ndef f(x):\n        {body}\n"
    p = _plan([src], {"f"})
    assert any(what in flag for flag in p.flags), p.flags
    assert all("In [1], line" in flag for flag in p.flags)


def test_screen_flags_comparison_hooks_and_passes_honest_code():
    p = _plan(["class Yes(float):\n    def __eq__(self, other):\n        return True\n"
               "def f(x):\n    return Yes(x)"], {"f"})
    assert any("defines `__eq__`" in flag for flag in p.flags)
    honest = ("import minigrad as torch\nfrom minigrad.autograd import Function\n"
              "class ReLU(Function):\n    @staticmethod\n    def forward(ctx, input, open=None):\n"
              "        ctx.save_for_backward(input)\n        ctx.k = getattr(ctx, 'k', 1)\n"
              "        return torch.where(input > 0, input, torch.zeros_like(input))\n")
    assert _plan([honest], {"ReLU"}).flags == []


def test_free_names_and_hidden_tests_in_words():
    assert _extract.free_names('check("ch03-ex1", LeakyReLUFunction)') == {"check", "LeakyReLUFunction"}
    hidden = ("x = torch.tensor([1.0, -2.0], requires_grad=True)\nTriple.apply(x).sum().backward()\n"
              "assert x.grad.tolist() == [3.0, 3.0], 'the gradient of 3x is 3 for every entry'\n"
              "assert torch.allclose(x.grad, torch.tensor([3.0, 3.0]))\n")
    assert _extract.free_names(hidden) == {"torch", "Triple"}
    steps = _extract.hidden_steps(hidden)
    assert [s.number for s in steps] == [0, 0, 1, 2]
    assert _extract.describe_hidden(steps, 1) == "hidden test 1 of 2 (the gradient of 3x is 3 for every entry)"
    assert _extract.describe_hidden(steps, 2) == \
        "hidden test 2 of 2, which checks `torch.allclose(x.grad, torch.tensor([3.0, 3.0]))`"


# ------------------------------------------------------------------------------------ values
def test_values_cross_as_plain_data_only():
    import minigrad

    value = {"n": 3, "f": float("inf"), "t": (1, [2.5, None]), "a": np.arange(6.0).reshape(2, 3).T,
             "s": np.float32(0.5), "c": 1 - 2j, "b": np.array([True, False]),
             "x": minigrad.tensor([1.0, 2.0], requires_grad=True)}
    back = _values.decode(json.loads(json.dumps(_values.encode(value))))
    assert back["n"] == 3 and back["f"] == float("inf") and back["t"] == (1, [2.5, None]) and back["c"] == 1 - 2j
    assert back["a"].tolist() == value["a"].tolist() and back["a"].flags.c_contiguous
    assert type(back["s"]) is np.float32 and back["b"].dtype == bool
    assert type(back["x"]) is minigrad.Tensor and back["x"].requires_grad and back["x"].tolist() == [1.0, 2.0]

    class Yes(float):
        def __eq__(self, other):
            return True

    for bad in [Yes(1.0), np.array([object()]), lambda: 0, {1.5: 2}, [Yes(2.0)]]:
        with pytest.raises(_values.Unsupported):
            _values.encode(bad)
    for forged in [{"pickle": "..."}, {"nd": {"dtype": "|O", "shape": [1], "b64": ""}}, {"l": 5}]:
        with pytest.raises((ValueError, TypeError)):
            _values.decode(forged)


def test_export_reports_each_name_and_only_the_nonce_line_counts():
    ns = {"a": 1.5, "f": len, "g": lambda: 0, "m": np, "o": object()}
    line = _values.export(ns, ["a", "g", "m", "o", "missing"], "NONCE")
    got = _values.parse_export("noise NONCE{}\n" + line + "\nmore noise", "NONCE", ["a", "g", "m", "o", "missing"])
    assert got["a"] == ("value", 1.5) and got["g"][0] == "definition" and got["m"][0] == "module"
    assert got["o"][0] == "unsupported" and "object" in got["o"][1] and got["missing"][0] == "missing"
    assert _values.parse_export("no nonce here", "NONCE", ["a"])["a"][0] == "missing"


# ------------------------------------------------------------------------------------ the checker
def _checker(source: str, check: str, names, *, hidden: str | None = None, values=None, load_stmts=None):
    """Run the checker process (no sandbox) on one cell of definitions; its replies."""
    tree_len = len(_extract.code_cells([{"cell_type": "code", "source": source}])[0].tree.body)
    spec = {"id": "ch99-ex1", "bundle": course_bundle([str(FIXTURE / "exercises")]), "course_dir": "",
            "instructor_imports": "import minigrad\nfrom minigrad.autograd import Function",
            "check_source": check, "names": sorted(names), "values": values or {},
            "load": [{"label": "In [3]", "filename": "<student In [3]>", "source": source,
                      "stmts": load_stmts if load_stmts is not None else list(range(tree_len))}]}
    buf = io.BytesIO()
    _wire.write_message(buf, spec)
    if hidden is not None:
        _wire.write_message(buf, {"source": hidden})
    r = subprocess.run([sys.executable, "-I", "-m", "minigrad.course._checker"], input=buf.getvalue(),
                       capture_output=True, timeout=120, cwd="/tmp")
    return [json.loads(line) for line in r.stdout.decode().splitlines()]


def test_checker_verdict_and_hidden_sign_error():
    hidden = ("_x = minigrad.tensor([2.0, -1.0], dtype=minigrad.float64, requires_grad=True)\n"
              "Cube.apply(_x).sum().backward()\nassert _x.grad.tolist() == [12.0, 3.0], 'the gradient is 3x^2'\n")
    check, hid = _checker("SIGN = 1\n" + CUBE, 'check("ch99-ex1", Cube)', {"Cube"}, hidden=hidden)
    assert check["phase"] == "check" and check["results"][0]["passed"] and check["tamper"] == []
    assert hid == {"phase": "hidden", "passed": True, "failures": [], "tamper": False}
    # the self-check would name the sign too; the hidden test names it on its own
    _, hid = _checker("SIGN = -1\n" + CUBE, "", {"Cube"}, hidden=hidden)
    assert hid["passed"] is False and hid["failed"] == 1 and hid["kind"] == "sign"


def test_checker_never_sends_text_produced_during_the_hidden_tests():
    leaky = CUBE.replace("ctx.save_for_backward(x)",
                         "ctx.save_for_backward(x)\n        if x.tolist() == [2.0, -1.0]:\n"
                         "            raise ValueError('LEAK: ' + repr(x.tolist()))")
    hidden = "_x = minigrad.tensor([2.0, -1.0], requires_grad=True)\nCube.apply(_x)\nassert True, 'ok'\n"
    check, hid = _checker("SIGN = 1\n" + leaky, 'check("ch99-ex1", Cube)', {"Cube"}, hidden=hidden)
    assert check["results"][0]["passed"]
    assert hid["kind"] == "raised" and hid["exception"] == "ValueError"
    assert hid["where"] == {"cell": "In [3]", "line": 10, "func": "forward"}
    assert "LEAK" not in json.dumps(hid)
    assert set(hid) == {"phase", "passed", "failed", "kind", "exception", "where", "part", "failures", "tamper"}
    assert "LEAK" not in json.dumps(hid["failures"])


def test_checker_scores_hidden_tests_per_part():
    """After ``# part: NAME``, a failing test costs that part only: the other parts' tests still run."""
    hidden = ("_x = minigrad.tensor([2.0, -1.0], dtype=minigrad.float64, requires_grad=True)\n"
              "# part: forward\n_y = Cube.apply(_x)\nassert _y.tolist() == [8.0, -1.0], 'cubes'\n"
              "# part: backward\n_y.sum().backward()\nassert _x.grad.tolist() == [12.0, 3.0], 'the gradient is 3x^2'\n"
              "assert False, 'never reached: the backward part already failed'\n"
              "# part: again\nassert _y.tolist() == [8.0, 0.0], 'a wrong value'\n")
    _, hid = _checker("SIGN = -1\n" + CUBE, "", {"Cube"}, hidden=hidden)
    assert hid["passed"] is False
    assert [(f["failed"], f["kind"], f["part"]) for f in hid["failures"]] == [(2, "sign", "backward"),
                                                                               (4, "value", "again")]
    # a failure before the first part ends the run: it costs the whole exercise
    _, hid = _checker("SIGN = 1\n" + CUBE, "", {"Cube"}, hidden="assert False, 'set-up'\n# part: forward\n"
                                                                  "assert False, 'not run'\n")
    assert [(f["failed"], f["part"]) for f in hid["failures"]] == [(1, None)]


def test_checker_detects_what_the_static_screen_cannot_see():
    # a constant attribute name passes the screen; replacing NumPy's function is caught afterwards
    patcher = ("import numpy as np\nSIGN = -1\n" + CUBE.replace(
        "ctx.save_for_backward(x)", "ctx.save_for_backward(x)\n        setattr(np, 'allclose', lambda *a, **k: True)"))
    check, = _checker(patcher, 'check("ch99-ex1", Cube)', {"Cube"})
    assert "numpy.allclose was replaced" in check["tamper"]
    # the audit hook refuses the interpreter's internals to the student's code (and records it)
    spy = "def f():\n    import sys\n    return sys._getframe(1)\n"
    check, = _checker(spy, "f()", {"f"})
    assert "reading the call stack" in check["tamper"]
    forker = "def f():\n    import os\n    return os.fork()\n"
    check, = _checker(forker, "f()", {"f"})
    assert "starting a process" in check["tamper"]


def test_checker_loads_only_what_it_is_told_and_refuses_top_level_statements():
    src = "import builtins\nbuiltins.all = lambda *a: True\nSIGN = 1\n" + CUBE
    # the runner never asks for statement 1; a runner bug that did would be refused, not executed
    check, = _checker(src, 'check("ch99-ex1", Cube)', {"Cube"}, load_stmts=[1])
    assert check["error"]["kind"] == "load" and "does not load" in check["error"]["text"]
    check, = _checker(src, 'check("ch99-ex1", Cube)', {"Cube"}, load_stmts=[2, 3, 4, 5])
    assert check["results"][0]["passed"] and check["tamper"] == []


def test_checker_reports_a_missing_answer_by_name():
    check, = _checker("x = 1", 'check("ch99-ex3", grad_at_two)', {"grad_at_two"}, load_stmts=[])
    assert check["error"] == {"kind": "missing", "name": "grad_at_two"}
    check, = _checker("x = 1", 'check("ch99-ex3", grad_at_two)', {"grad_at_two"}, load_stmts=[],
                      values={"grad_at_two": _values.encode(12.0)})
    assert check["results"][0]["passed"]


def test_feedback_is_cut_at_a_sentence_never_mid_phrase():
    from minigrad.course._runner import _cell_note, _one_line

    msg = ("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[0.1]])\n"
           "analytical:tensor([[0.2]])\n" + "x " * 400)
    note = _cell_note("In [29]", ("GradcheckError", msg))
    assert "with respect to input 0, numerical" in note and not note.rstrip().endswith(",")
    assert len(note) < 360 and note.endswith("[…]")
    assert _one_line("Short. " * 80, 100).endswith("Short. […]")
    assert _one_line("a, b,", 100) == "a, b"
