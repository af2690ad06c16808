"""The checker: ``python -I -m minigrad.course._checker``, one fresh process per exercise.

It computes an exercise's verdict away from the notebook's kernel: no IPython, no input
transformers or event hooks, none of the notebook's top-level code. The runner sends it, through
stdin, the check sources (the course package and the exercise modules, as text), the instructor's
imports and check cell, the student's *definitions* chosen by ``_extract.plan`` (``def``/``class``
statements and the like, which run no student code when loaded) and the student's *values* as
plain data. Then:

1. the check phase: the instructor's check cell runs with a fresh ``check``; the reply carries
   ``CheckResult.as_dict()`` for each call (text from the student's code may appear: nothing
   secret is in this process yet);
2. the hidden phase, only if the runner asks: the hidden tests arrive through stdin now, run one
   statement at a time, and the reply names the failing test by number with a fixed vocabulary
   (``value``, ``sign``, ``raised``, ``stub``): no text produced while the hidden tests ran is sent.
   Tests after a ``# part: NAME`` line are scored per part (partial credit): a failure there stops
   only that part's tests, and the reply lists one failure per part.

Tampering is watched three ways, each giving 0 and a flag: an audit hook installed first that
refuses (and records) frame, gc, ctypes, process, socket and tracing access from the student's
code; a comparison of every function of every loaded module, the builtins and the interpreter's
hooks before and after; and (by the runner) a screen of the loaded code.
"""
from __future__ import annotations

import ast
import builtins
import os
import sys
import types

from . import _extract, _values, _wire

STUDENT_PREFIX = "<student "
# refused whoever asks, once the student's code is loaded
_ALWAYS = {"sys.addaudithook": "installing an audit hook", "sys.settrace": "a trace hook",
           "sys.setprofile": "a profile hook", "sys._current_frames": "listing the threads' frames",
           "os.fork": "starting a process", "os.forkpty": "starting a process", "os.system": "starting a process",
           "os.exec": "starting a process", "os.posix_spawn": "starting a process", "os.spawn": "starting a process",
           "subprocess.Popen": "starting a process", "os.kill": "sending a signal", "os.killpg": "sending a signal",
           "signal.pthread_kill": "sending a signal", "builtins.input": "reading input",
           "_thread.start_new_thread": "starting a thread"}
# refused when the student's code asks
_FROM_STUDENT = {"sys._getframe": "reading the call stack", "object.__getattr__": "reading frames or code",
                 "gc.get_objects": "listing the interpreter's objects", "gc.get_referrers": "listing referrers",
                 "gc.get_referents": "listing referents", "code.__new__": "creating code objects",
                 "exec": "running generated code", "compile": "compiling code",
                 "object.__setattr__": "changing a class or a function's code",
                 "object.__delattr__": "deleting a class attribute", "open": "opening files"}


def _install_guard():
    """The audit hook (first thing: it cannot be removed) and its list of refusals."""
    findings: list = []
    state = {"armed": False, "busy": False}
    getframe = sys._getframe

    def deny(what):
        findings.append(what)
        raise RuntimeError(f"the grader does not allow {what} while checking")

    def hook(event, args):
        if not state["armed"] or state["busy"]:
            return
        if event in _ALWAYS or event.startswith(("ctypes.", "socket.")):
            deny(_ALWAYS.get(event, "native code (ctypes)" if event.startswith("ctypes.") else "network access"))
        what = _FROM_STUDENT.get(event)
        if what is None:
            return
        state["busy"] = True
        try:
            frame = getframe(1)
            student = frame.f_code.co_filename.startswith(STUDENT_PREFIX)
            if event == "object.__setattr__" and student:
                obj, name = args[0], args[1]
                student = name == "__code__" or getattr(obj, "__module__", None) != "__main__"
        finally:
            state["busy"] = False
        if student:
            deny(what)

    sys.addaudithook(hook)
    return state, findings


_GUARD, _FINDINGS = _install_guard()


# ------------------------------------------------------------------------------ integrity snapshot
def _snapshot() -> dict:
    """Identity of every function, class and module bound in every loaded module, and the interpreter's hooks."""
    import gc
    import signal

    mods = {}
    for name, mod in list(sys.modules.items()):
        d = getattr(mod, "__dict__", None)
        if not isinstance(mod, types.ModuleType) or not isinstance(d, dict):
            continue
        mods[name] = {k: id(v) for k, v in list(d.items())
                      if callable(v) or isinstance(v, (type, types.ModuleType))}
    classes = {}
    for name, mod in list(sys.modules.items()):
        if not isinstance(mod, types.ModuleType) or not name.startswith(("minigrad", "numpy")):
            continue
        for k, v in list(vars(mod).items()):
            if isinstance(v, type) and v.__module__ == name:
                classes[f"{name}.{k}"] = {a: id(x) for a, x in list(vars(v).items())}
    hooks = {"sys.gettrace": id(sys.gettrace()), "sys.getprofile": id(sys.getprofile()),
             "sys.excepthook": id(sys.excepthook), "sys.displayhook": id(sys.displayhook),
             "sys.unraisablehook": id(sys.unraisablehook), "sys.breakpointhook": id(sys.breakpointhook),
             "sys.meta_path": tuple(map(id, sys.meta_path)), "sys.path_hooks": tuple(map(id, sys.path_hooks)),
             "gc.callbacks": tuple(map(id, gc.callbacks)), "threads": len(sys._current_frames())}
    for sig in signal.valid_signals():
        try:
            hooks[f"signal {sig}"] = id(signal.getsignal(sig))
        except (ValueError, OSError):
            pass
    modules = {name: id(mod) for name, mod in sys.modules.items()}
    return {"mods": mods, "classes": classes, "hooks": hooks, "modules": modules}


def _changes(before: dict) -> list[str]:
    """What the student's code replaced since ``before`` (names only)."""
    state = _GUARD["armed"]
    _GUARD["armed"] = False  # our own reads (sys._current_frames) are not the student's
    try:
        after = _snapshot()
    finally:
        _GUARD["armed"] = state
    out = []
    for name, attrs in before["mods"].items():
        now = after["mods"].get(name, {})
        for k, ident in attrs.items():
            if now.get(k, ident) != ident or k not in now:
                out.append(f"{name}.{k}")
    for name, attrs in before["classes"].items():
        now = after["classes"].get(name, {})
        for k, ident in attrs.items():
            if now.get(k) != ident:
                out.append(f"{name}.{k}")
    for k, ident in before["hooks"].items():
        if after["hooks"].get(k) != ident:
            out.append(k)
    for name, ident in before["modules"].items():
        if after["modules"].get(name, ident) != ident:
            out.append(f"sys.modules[{name!r}]")
    return sorted(set(out))


# ------------------------------------------------------------------------------------- loading
def _install_bundle(bundle, course_dir: str) -> None:
    """A copy of minigrad.course and the exercise modules, built from the source text received."""
    from . import _remote, _seed, _structure  # noqa: F401  (the checks import them: kept, not replaced)

    replaced = ("minigrad.course", "minigrad.course.diagnose", "minigrad.course.exercises")
    for name in [k for k in sys.modules if k in replaced or k.startswith("minigrad.course.exercises.")]:
        del sys.modules[name]
    for name, (src, is_pkg) in bundle:
        mod = types.ModuleType(name)
        mod.__file__ = f"{course_dir}/{name.replace('.', '/')}{'/__init__' if is_pkg else ''}.py (grader copy)"
        if is_pkg:
            mod.__path__ = []
        mod.__package__ = name if is_pkg else name.rpartition(".")[0]
        sys.modules[name] = mod
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)


def _load_definitions(ns: dict, load: list) -> str | None:
    """Execute the chosen statements (re-vetted) in the student's namespace; the error text, if any."""
    for item in load:
        tree = ast.parse(item["source"], filename=item["filename"])
        for i in item["stmts"]:
            stmt = tree.body[i]
            why = _extract.vet(stmt)
            if why:
                return f"{item['label']}: the grader does not load {why}"
            stmt = _extract.prepare(stmt)
            code = compile(ast.Module(body=[stmt], type_ignores=[]), item["filename"], "exec")
            try:
                exec(code, ns)
            except Exception as e:
                return f"{item['label']}, line {stmt.lineno}: {type(e).__name__}: {e}"
    return None


def _where(tb) -> dict | None:
    """The student's line where an exception was raised: cell label, line, function name."""
    import traceback

    frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith(STUDENT_PREFIX)]
    if not frames:
        return None
    f = frames[-1]
    return {"cell": f.filename[len(STUDENT_PREFIX):-1], "line": int(f.lineno or 0), "func": f.name}


def _builtin_name(exc: BaseException) -> str:
    t = type(exc)
    return t.__name__ if t.__module__ == "builtins" else "an exception"


# --------------------------------------------------------------------------------- hidden tests
def _as_array(x):
    import numpy as np

    from minigrad._tensor import Tensor

    if type(x) is Tensor:
        return np.asarray(x._data, dtype=float)
    if type(x) is np.ndarray:
        return x.astype(float)
    if type(x) in (list, tuple, int, float) or isinstance(x, np.generic):
        return np.asarray(x, dtype=float)
    return None


def _negated(a, b) -> bool:
    """True when ``a`` is exactly minus ``b`` (a sign error), with ``b`` not all zeros."""
    import numpy as np

    try:
        x, y = _as_array(a), _as_array(b)
        if x is None or y is None or x.shape != y.shape or not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
            return False
        return bool(np.any(y != 0) and np.allclose(x, -y, rtol=1e-6, atol=1e-9) and not np.allclose(x, y))
    except Exception:
        return False


_CLOSE = {"allclose", "isclose", "array_equal", "equal", "assert_allclose"}


def _evaluate(expr, ns) -> tuple[bool, str]:
    """(passed, kind) for one assert condition; ``and`` is split so that the failing part is found."""
    def ev(node):
        return eval(compile(ast.Expression(body=node), "<hidden tests>", "eval"), ns)

    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
        for part in expr.values:
            ok, kind = _evaluate(part, ns)
            if not ok:
                return ok, kind
        return True, ""
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], ast.Eq):
        a, b = ev(expr.left), ev(expr.comparators[0])
        if bool(a == b):
            return True, ""
        return False, "sign" if _negated(a, b) else "value"
    if isinstance(expr, ast.Call) and len(expr.args) >= 2 and not any(isinstance(a, ast.Starred) for a in expr.args):
        fname = expr.func.attr if isinstance(expr.func, ast.Attribute) else getattr(expr.func, "id", "")
        if fname in _CLOSE:
            f = ev(expr.func)
            args = [ev(a) for a in expr.args]
            kw = {k.arg: ev(k.value) for k in expr.keywords if k.arg}
            if bool(f(*args, **kw)):
                return True, ""
            return False, "sign" if _negated(args[0], args[1]) else "value"
    return bool(ev(expr)), "value"


def _run_step(step, ns, number: int) -> dict | None:
    """One hidden-test statement; its failure (number, kind, part), or None when it passes."""
    try:
        if step.number == 0:
            exec(compile(ast.Module(body=[step.node], type_ignores=[]), "<hidden tests>", "exec"), ns)
            return None
        ok, kind = _evaluate(step.node.test, ns)
        return None if ok else {"failed": step.number, "kind": kind, "part": step.part}
    except NotImplementedError as e:
        return {"failed": number, "kind": "stub", "where": _where(e.__traceback__), "part": step.part}
    except Exception as e:  # the student's code raised (or a RecursionError, MemoryError ...)
        return {"failed": number, "kind": "raised", "exception": _builtin_name(e),
                "where": _where(e.__traceback__), "part": step.part}


def run_hidden(source: str, ns: dict) -> dict:
    """Run the hidden tests; the failing tests' numbers and kinds, in a fixed vocabulary.

    A failure outside any part ends the run (it costs the whole exercise); a failure in a part
    (``# part: NAME``) skips that part's remaining tests and goes on with the other parts. The
    reply: ``passed``, ``failures`` (one per part at most), and the first failure's fields.
    """
    steps = _extract.hidden_steps(source)
    failures, failed_parts = [], set()
    for i, step in enumerate(steps):
        if step.part is not None and step.part in failed_parts:
            continue
        # the test a failing set-up statement belongs to: the next assert of the same part
        number = step.number or next((s.number for s in steps[i:] if s.number and s.part == step.part), 0)
        failure = _run_step(step, ns, number)
        if failure is None:
            continue
        failures.append(failure)
        if step.part is None:
            break
        failed_parts.add(step.part)
    if not failures:
        return {"passed": True, "failures": []}
    return {"passed": False, **failures[0], "failures": failures}


# ----------------------------------------------------------------------------------------- main
def _namespace(student_ns: dict, names, inst_ns: dict) -> dict:
    ns = {"__builtins__": builtins, "__name__": "__main__"}
    for n in names:
        if n in student_ns:
            ns[n] = student_ns[n]
    ns.update({k: v for k, v in inst_ns.items() if not k.startswith("__")})
    return ns


def main() -> None:
    out = _wire.private_stdout()
    sys.stdout = sys.stderr = open(os.devnull, "w")
    stdin = sys.stdin.buffer
    spec = _wire.read_message(stdin)
    if spec is None:
        os._exit(0)
    import resource

    import numpy  # noqa: F401  (loaded before the snapshot: the student cannot swap it in first)

    import minigrad  # noqa: F401

    _install_bundle(spec["bundle"], spec.get("course_dir", ""))
    course = sys.modules["minigrad.course"]
    inst_ns: dict = {"__builtins__": builtins}
    exec(compile(spec.get("instructor_imports", ""), "<instructor imports>", "exec"), inst_ns)
    student_ns: dict = {"__builtins__": builtins, "__name__": "__main__"}
    values = {}
    for name, enc in spec.get("values", {}).items():
        try:
            values[name] = _values.decode(enc)
        except (ValueError, TypeError, KeyError):
            pass
    student_ns.update(values)
    try:  # no new processes or threads from here on (the bwrap sandbox's own count is 2)
        resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
    except (ValueError, OSError):
        pass
    before = _snapshot()
    _GUARD["armed"] = True
    load_error = _load_definitions(student_ns, spec.get("load", []))
    student_ns.update(values)  # the kernel's values win over earlier definitions of the same name

    results: list = []

    def fresh_check(exercise_id, answer=None, **kw):
        r = course.run_check(exercise_id, answer, **kw)
        results.append(r)
        return r

    names = spec.get("names", [])
    error = None
    if load_error:
        error = {"kind": "load", "text": load_error[:1500]}
    elif spec.get("check_source"):
        ns = _namespace(student_ns, names, inst_ns)
        ns["check"] = fresh_check
        try:
            exec(compile(spec["check_source"], "<check>", "exec"), ns)
        except NameError as e:
            error = {"kind": "missing", "name": str(getattr(e, "name", "") or "")}
        except NotImplementedError as e:
            error = {"kind": "stub", "where": _where(e.__traceback__)}
        except Exception as e:
            error = {"kind": "raised", "text": f"{type(e).__name__}: {e}"[:1500], "where": _where(e.__traceback__)}
    tamper = list(dict.fromkeys(_FINDINGS)) + [f"{name} was replaced" for name in _changes(before)]
    _wire.reply(out, {"phase": "check", "results": [r.as_dict() for r in results
                                                     if r.exercise_id == spec["id"]] or
                      [r.as_dict() for r in results], "error": error, "tamper": tamper[:20]})
    hidden = _wire.read_message(stdin)
    if hidden is None:
        os._exit(0)
    seen = len(_FINDINGS)
    ns = _namespace(student_ns, names, inst_ns)
    try:
        verdict = run_hidden(hidden.get("source", ""), ns)
    except SyntaxError:
        verdict = {"passed": False, "failed": 0, "kind": "broken"}
    verdict["tamper"] = len(_FINDINGS) > seen or bool(_changes(before))
    verdict["phase"] = "hidden"
    _wire.reply(out, verdict)
    os._exit(0)


if __name__ == "__main__":
    main()
