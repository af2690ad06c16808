"""Grade ONE submitted notebook (run by ``minigrad-course grade`` in its own subprocess).

Protocol: the parent writes a JSON spec on stdin and reads JSON lines from this process's
stdout (one ``{"event": "exercise", ...}`` per graded exercise, then ``{"event": "done"}``).
Before anything else, file descriptors 1 and 2 are pointed at /dev/null so that the kernel (which
inherits them) cannot write into the protocol; the protocol uses a private duplicate of stdout.

The kernel runs ``minigrad.course._kernel`` (limits + audit hook) with cwd = HOME = the working
copy. The notebook's cells run one by one; after each exercise's anchor cell (its check cell, else
its stub cell, else the end) the runner executes, with ``store_history=False``, a grading cell
generated here: it runs the instructor's hidden tests and the instructor's check-cell source
against a *fresh* copy of ``minigrad.course`` built from source text carried inside the cell
(the student's ``check``, and any patched ``minigrad.course`` in ``sys.modules``, are not used),
detects common tampering, and prints one result line prefixed by a random nonce.
"""
from __future__ import annotations

import json
import os
import secrets
import sys
import time
import traceback

OUTPUT_CAP = 200_000  # characters of output kept per cell


def _protocol_stream():
    fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.stdout = open(os.devnull, "w")
    sys.stderr = open(os.devnull, "w")
    return os.fdopen(fd, "w", buffering=1)


GRADE_TEMPLATE = r'''
def _mgc_grade_cell(_mgc_nonce, _mgc_bundle, _mgc_spec):
    import sys, types, json, builtins
    import IPython
    user_ns = IPython.get_ipython().user_ns
    course_dir = _mgc_spec["course_dir"]
    problems = []
    # ---- tampering: a redefined check, patched course/engine/numpy functions, a replaced stdout
    def _foreign(f, roots):
        code = getattr(f, "__code__", None)
        if code is None:
            return False
        fn = code.co_filename
        if any(fn.startswith(r) for r in roots):
            return False
        if fn.startswith("<") and not fn.startswith("<ipython") and getattr(f, "__module__", None) != "__main__" \
                and getattr(f, "__globals__", None) is not user_ns:
            return False  # generated code (dataclass __init__, namedtuple __new__, ...)
        return True
    user_check = user_ns.get("check")
    if user_check is not None and _foreign(user_check, [course_dir]):
        problems.append("`check` was redefined in the notebook")
    trusted = _mgc_spec["trusted_roots"]
    roots = {"minigrad": trusted, "numpy": trusted}
    for name, mod in list(sys.modules.items()):
        top = name.split(".")[0]
        if top not in roots or mod is None or (top == "numpy" and name.count(".") > 1):
            continue
        for attr, val in list(vars(mod).items()):
            if isinstance(val, types.FunctionType) and _foreign(val, roots[top]) and not attr.startswith("__"):
                problems.append(f"{name}.{attr} was replaced")
            elif isinstance(val, type) and val.__module__ == name:
                for a2, v2 in list(vars(val).items()):
                    f2 = getattr(v2, "__func__", v2)
                    if isinstance(f2, types.FunctionType) and _foreign(f2, roots[top]):
                        problems.append(f"{name}.{attr}.{a2} was replaced")
    for bname in ("print", "isinstance", "len", "abs", "all", "any", "sum", "getattr", "hasattr", "type",
                  "float", "repr", "str", "exec", "compile", "__import__", "open", "max", "min", "zip"):
        if isinstance(getattr(builtins, bname, None), types.FunctionType):
            problems.append(f"builtins.{bname} was replaced")
    out = sys.stdout
    _w = getattr(out, "write", None)
    if type(out).__module__ != "ipykernel.iostream" or _foreign(getattr(_w, "__func__", _w), trusted):
        problems.append("sys.stdout was replaced")
    if problems:
        return {"passed": False, "tamper": True,
                "feedback": "tampering detected: " + "; ".join(sorted(set(problems))[:5])}
    # ---- a fresh copy of minigrad.course from the grader's source text
    saved = {k: v for k, v in sys.modules.items() if k == "minigrad.course" or k.startswith("minigrad.course.")}
    for k in saved:
        del sys.modules[k]
    try:
        for name, (src, is_pkg) in _mgc_bundle:
            mod = types.ModuleType(name)
            mod.__file__ = course_dir + "/" + name.replace(".", "/") + (".__init__" if is_pkg else "") + " (grader copy)"
            if is_pkg:
                mod.__path__ = []
            mod.__package__ = name if is_pkg else name.rpartition(".")[0]
            sys.modules[name] = mod
            exec(compile(src, mod.__file__, "exec"), mod.__dict__)
        course = sys.modules["minigrad.course"]
        # ---- hidden tests, in a copy of the student's namespace (sections per part: partial credit)
        hidden = _mgc_spec.get("hidden")
        hidden_failures = []
        if hidden:
            ns = dict(user_ns)
            for where, code in course.hidden_sections(hidden):
                try:
                    exec(compile(code, "<hidden tests>", "exec"), ns)
                except AssertionError as e:
                    hidden_failures.append((where, "a hidden test failed" + (f": {e}" if str(e) else "")))
                except NotImplementedError:
                    hidden_failures.append((where, "a hidden test failed: the solution is still the "
                                                   "NotImplementedError stub"))
                except BaseException as e:
                    hidden_failures.append((where, f"a hidden test raised {type(e).__name__}: {e}"))
        hidden_error = "\n".join(dict.fromkeys(m for _, m in hidden_failures)) or None
        # ---- the instructor's check cell, with the fresh check
        results = []
        def fresh_check(eid, answer=None, **kw):
            r = course.run_check(eid, answer, **kw)
            results.append(r)
            return r
        check_src = _mgc_spec.get("check_source")
        check_error = None
        if check_src:
            ns = dict(user_ns)
            ns["check"] = fresh_check
            try:
                exec(compile(check_src, "<check>", "exec"), ns)
            except NameError as e:
                check_error = (f"{e}: the exercise's answer is not defined (did the solution cell run "
                               "without errors, and keep the names from the task?)")
            except BaseException as e:
                check_error = f"the check raised {type(e).__name__}: {e}"
        mine = [r for r in results if r.exercise_id == _mgc_spec["id"]] or results
        # partial credit: the share of the points earned (parts scored separately, hidden tests per part)
        verdict = course.grade_verdict(mine, hidden_failures, has_check=bool(check_src))
        passed, fraction, parts = verdict["passed"], verdict["fraction"], verdict["parts"]
        feedback = "\n".join(r.message for r in mine)
        if check_error:
            passed, fraction, feedback = False, 0.0, (feedback + "\n" if feedback else "") + check_error
        if hidden_error:
            feedback = (feedback + "\n" if feedback else "") + hidden_error
        elif hidden and passed:
            feedback += "\nhidden tests passed."
        return {"passed": bool(passed), "tamper": False, "feedback": feedback.strip(), "fraction": fraction,
                "parts": parts}
    finally:
        for k in [k for k in sys.modules if k == "minigrad.course" or k.startswith("minigrad.course.")]:
            del sys.modules[k]
        sys.modules.update(saved)

try:
    print(@@NONCE@@ + __import__("json").dumps(_mgc_grade_cell(@@NONCE@@, @@BUNDLE@@, @@SPEC@@)))
except BaseException as _mgc_e:
    print(@@NONCE@@ + __import__("json").dumps({"passed": False, "tamper": False,
                                           "feedback": f"grading failed: {type(_mgc_e).__name__}: {_mgc_e}"}))
    del _mgc_e
finally:
    del _mgc_grade_cell
'''


def grade_cell_source(nonce: str, bundle: list, spec: dict) -> str:
    import re

    values = {"NONCE": repr(nonce), "BUNDLE": repr(bundle), "SPEC": repr(spec)}
    # one pass, so that text inside the inserted values is never substituted again
    return re.sub(r"@@(NONCE|BUNDLE|SPEC)@@", lambda m: values[m.group(1)], GRADE_TEMPLATE)


_CHECK_CALL = None


def _src(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else str(s)


def _load_notebook(path: str) -> list[dict]:
    """The cells of a notebook file, read as plain JSON (no nbformat: it is slow to import)."""
    with open(path, "rb") as f:
        raw = f.read(50 * 2**20 + 1)
    if len(raw) > 50 * 2**20:
        raise ValueError("larger than 50 MB")
    nb = json.loads(raw.decode("utf-8"))
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or nb.get("nbformat") != 4:
        raise ValueError("not an nbformat-4 notebook (no 'cells' list)")
    cells = []
    for c in nb["cells"]:
        if not isinstance(c, dict) or c.get("cell_type") not in ("code", "markdown", "raw"):
            raise ValueError("malformed cell")
        meta = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
        cells.append({"cell_type": c["cell_type"], "source": _src(c), "metadata": meta})
    return cells


def _anchor_positions(cells, exercises) -> dict[int, list]:
    """Cell index after which each exercise is graded (-1: at the end)."""
    import re

    call = re.compile(r"""check\(\s*['"]([^'"]+)['"]""")
    pos: dict[int, list] = {}
    for ex in exercises:
        found = None
        for role in ("check", "stub"):
            for i, cell in enumerate(cells):
                if cell["cell_type"] != "code":
                    continue
                meta = cell["metadata"].get("minigrad_course", {})
                meta = meta if isinstance(meta, dict) else {}
                m = call.search(cell["source"]) if role == "check" else None
                if (meta.get("exercise") == ex["id"] and meta.get("role") == role) or (m and m.group(1) == ex["id"]):
                    found = i
            if found is not None:
                break
        pos.setdefault(-1 if found is None else found, []).append(ex)
    return pos


def _with_proc_denied(policy: dict) -> dict:
    """Deny reading this runner's (and the grader's) /proc entries: their memory holds the hidden tests."""
    procs = [f"/proc/{os.getpid()}", f"/proc/{os.getppid()}"]
    return {**policy, "deny_read": list(policy.get("deny_read", [])) + procs}


class Kernel:
    """A sandboxed kernel and a blocking client: run code, collect its output, survive its death."""

    def __init__(self, env: dict, cwd: str):
        from jupyter_client.manager import KernelManager

        class SandboxKernelManager(KernelManager):
            def format_kernel_cmd(self, extra_arguments=None):
                return [sys.executable, "-m", "minigrad.course._kernel", "-f", self.connection_file]

        self.env, self.cwd, self._cls = env, cwd, SandboxKernelManager
        self.km = self.kc = None

    def start(self) -> None:
        self.km = self._cls(kernel_name="python3")
        self.km.start_kernel(env=dict(self.env), cwd=self.cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def stop(self) -> None:
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km is not None:
                self.km.shutdown_kernel(now=True)
        except Exception:
            pass
        self.km = self.kc = None

    def alive(self) -> bool:
        return self.km is not None and self.km.is_alive()

    def run(self, code: str, *, timeout: float, store_history: bool = True) -> dict:
        """{"status": ok|error|timeout|dead, "text": captured stdout/stderr/results, "error": (ename, evalue),
        "truncated": bool}"""
        from queue import Empty

        res = {"status": "ok", "text": "", "error": None, "truncated": False}
        msg_id = self.kc.execute(code, store_history=store_history, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + timeout
        parts, size = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                res["status"] = "timeout"
                break
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 1.0))
            except Empty:
                if not self.alive():
                    res["status"] = "dead"
                    break
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            text = ""
            if kind == "stream":
                text = content.get("text", "")
            elif kind in ("execute_result", "display_data"):
                text = str(content.get("data", {}).get("text/plain", ""))[:OUTPUT_CAP] + "\n"
            elif kind == "error":
                res["status"] = "error"
                res["error"] = (str(content.get("ename", ""))[:200], str(content.get("evalue", ""))[:1000])
            elif kind == "status" and content.get("execution_state") == "idle":
                break
            if text:
                if size + len(text) > OUTPUT_CAP:
                    res["truncated"] = True
                    text = text[: max(0, OUTPUT_CAP - size)]
                size += len(text)
                parts.append(text)
        res["text"] = "".join(parts)
        if res["status"] == "timeout":
            try:  # stop the cell (KeyboardInterrupt); the notebook's time budget is spent anyway
                self.km.interrupt_kernel()
            except Exception:
                pass
        return res


def run(spec: dict, emit) -> None:
    exercises = spec["exercises"]
    graded: set = set()

    def result(ex, points, feedback, **extra):
        if ex["id"] in graded:
            return
        graded.add(ex["id"])
        emit({"event": "exercise", "id": ex["id"], "points": points, "max_points": ex["max_points"],
              "feedback": feedback[:4000], **extra})

    def fail_rest(reason):
        for ex in exercises:
            result(ex, 0.0, reason)

    try:
        cells = _load_notebook(spec["notebook"])
    except Exception as e:
        fail_rest(f"not a valid notebook ({type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''})")
        return

    workdir = spec["workdir"]
    kernel_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": workdir, "TMPDIR": os.path.join(workdir, ".tmp"),
        "MPLCONFIGDIR": os.path.join(workdir, ".mpl"), "IPYTHONDIR": os.path.join(workdir, ".ipython"),
        "JUPYTER_RUNTIME_DIR": spec["runtime_dir"], "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg",
        "MGC_SANDBOX": json.dumps(_with_proc_denied(spec["sandbox"])), "LANG": "C.UTF-8",
    }
    for k in ("VIRTUAL_ENV", "PYTHONPATH"):
        if k in os.environ:
            kernel_env[k] = os.environ[k]
    os.makedirs(kernel_env["TMPDIR"], exist_ok=True)

    positions = _anchor_positions(cells, exercises)
    deadline = time.monotonic() + spec["timeout"]
    nonce = secrets.token_hex(16)
    notes: list[str] = []      # what went wrong in the student's cells (added to failing feedback)
    killers: set = set()       # cells that killed the kernel: skipped when replaying
    since = [0]                # notes[since[0]:] belong to the exercise being graded
    kernel = Kernel(kernel_env, workdir)

    def left() -> float:
        return deadline - time.monotonic()

    def run_student_cell(i) -> str:
        r = kernel.run(cells[i]["source"], timeout=max(0.5, left()))
        if r["truncated"]:
            notes.append(f"cell {i + 1} of the notebook printed more than {OUTPUT_CAP} characters: the rest was discarded")
        if r["status"] == "error":
            notes.append(f"cell {i + 1} of the notebook raised {r['error'][0]}: {r['error'][1][:300]}")
        return r["status"]

    def grade_exercise(ex) -> str:
        if left() <= 0:
            result(ex, 0.0, f"time limit exceeded ({spec['timeout']:g} s for the notebook) before this exercise "
                            "was graded")
            return "timeout"
        src = grade_cell_source(nonce, spec["bundle"], {**ex["cell_spec"], "id": ex["id"]})
        r = kernel.run(src, timeout=max(0.5, left()), store_history=False)
        if r["status"] in ("timeout", "dead"):
            result(ex, 0.0, "time limit exceeded while grading this exercise" if r["status"] == "timeout"
                   else "the kernel died while grading this exercise (os._exit, a crash, or the memory limit)")
            return r["status"]
        payload = None
        for line in r["text"].splitlines():
            if line.startswith(nonce):
                try:
                    payload = json.loads(line[len(nonce):])
                except ValueError:
                    pass
        if payload is None:
            result(ex, 0.0, "the grading cell produced no result (the notebook interfered with it)")
            return "ok"
        fb = str(payload.get("feedback", ""))
        recent = notes[since[0]:]  # what went wrong in the cells since the previous exercise
        since[0] = len(notes)
        if not payload.get("passed") and recent:
            fb += "\n" + "\n".join(list(dict.fromkeys(recent))[-3:])
        frac = 1.0 if payload.get("passed") else 0.0
        if not payload.get("tamper") and isinstance(payload.get("fraction"), (int, float)):
            frac = min(1.0, max(0.0, float(payload["fraction"])))
        parts = payload.get("parts") if isinstance(payload.get("parts"), list) else []
        result(ex, float(ex["max_points"]) * frac, fb.strip(), tamper=bool(payload.get("tamper")), parts=parts)
        return "ok"

    restarts = 0
    try:
        kernel.start()
        i = 0
        while i < len(cells):
            status = "ok"
            if cells[i]["cell_type"] == "code" and cells[i]["source"].strip() and i not in killers:
                status = run_student_cell(i)
            if status == "dead":
                killers.add(i)
                notes.append(f"cell {i + 1} of the notebook killed the kernel (os._exit, a crash, or the memory limit): "
                             "it was skipped and the cells before it were run again")
                restarts += 1
                kernel.stop()
                if restarts > 3 or left() <= 0:
                    break
                kernel.start()
                for j in range(i):  # replay, without grading, the cells before the one that killed it
                    if cells[j]["cell_type"] == "code" and j not in killers and cells[j]["source"].strip():
                        if kernel.run(cells[j]["source"], timeout=max(0.5, left()))["status"] in ("dead", "timeout"):
                            killers.add(j)
                            break
                for ex in positions.get(i, []):
                    grade_exercise(ex)
                i += 1
                continue
            if status == "timeout":
                break
            for ex in positions.get(i, []):
                if grade_exercise(ex) == "dead":
                    break
            if not kernel.alive():
                break
            i += 1
        else:
            for ex in positions.get(-1, []):
                grade_exercise(ex)
    except Exception as e:
        fail_rest(f"grading error: {type(e).__name__}: {str(e)[:300]}")
    finally:
        kernel.stop()
    if left() <= 0:
        fail_rest(f"time limit exceeded ({spec['timeout']:g} s for the notebook): a cell ran too long "
                  "(an infinite loop?)")
    fail_rest("not graded: " + ("; ".join(list(dict.fromkeys(notes))[-2:]) or "the notebook stopped early"))


def main() -> None:
    proto = _protocol_stream()

    def emit(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        spec = json.loads(sys.stdin.read())
        run(spec, emit)
    except BaseException as e:  # report, never crash silently
        emit({"event": "runner-error", "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]})
    emit({"event": "done"})


if __name__ == "__main__":
    main()
