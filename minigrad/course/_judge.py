"""The judge: ``python -m minigrad.course._judge RUNNER_OUT RUNNER_IN``, one per graded notebook.

It runs outside the sandbox, started by the grader, and is where every verdict is computed. The
runner (``_runner.py``, in the sandbox) runs the notebook; at each exercise it starts a worker
(``_worker.py``, in a nested sandbox) that loads the student's definitions, and then only relays
frames between the worker and this process. Here the instructor's check cell and the hidden tests
run on *proxies* of the student's objects (``_bridge.py``): every use of a proxy is a request
that the worker answers with plain observations (values, gradients, shapes, exception types).
Comparisons, tolerances, gradcheck's numerical Jacobians and the feedback (``_verdict.py``) are
computed here, by code the student's code never runs beside.

So the check sources, the hidden tests and the reference solutions never enter the sandbox: this
process holds them. A forged reply can at most equal what a correct solution answers on the
inputs the judge chose; a malformed or stray frame makes the channel fail, which gives 0 and a
flag, never a pass.

Checks that hand the student's function whole graphs (or minigrad.nn modules) run with the
worker's own minigrad (``REMOTE_LIBRARY``: the tensors and modules stay there, as handles); a class
statement of a check or a hidden test whose base is one of the student's classes makes that class
in the worker, with the statement's methods called back here; requirements about how the code is
written are read from the loaded statements' source (``_structure``: a function's by the name this
process looked it up by), never from an observation. Every built-in exercise is judged here
(``IN_SANDBOX`` is empty; the in-sandbox checker remains for an exercise named there). The inputs
come from the run's seed (``_seed``): a table of answers to the public seeds' inputs does not help.

Input (stdin): one framed message ``{exercises, bundle, course_dir, timeout, payload}`` followed by
``payload`` bytes, the runner's own input, which is passed on unread. Output (a private stdout):
the runner's events as JSON lines, with each bridged exercise's ``exercise`` event written here.
"""
from __future__ import annotations

import os
import sys
import time

from . import _wire

# exercise id -> why its check must run next to the student's code (checked in the sandbox, by the
# runner's in-sandbox checker, _checker). Empty: every built-in exercise is judged here. Graphs stay in
# the worker (REMOTE_LIBRARY), subclasses of the student's classes are made there with the check's
# methods as callbacks, forward-mode tangents and vmap's batch dimensions cross the bridge, and
# structure is read from the source (_structure). The path stays for an exercise whose check cannot
# work on proxies: name it here with the reason.
IN_SANDBOX: dict[str, str] = {}
# exercises whose check and hidden tests hand the student's function graphs or modules: their tensors
# (and minigrad.nn modules) are made by the worker's own minigrad (the instructor's `import minigrad as
# torch` is bound to it). ch11-ex3: the blocks are the worker's nn modules, so that checkpoint's
# recomputation (which stops a block by an exception) runs in the student's process, with no callback.
REMOTE_LIBRARY = frozenset({"ch01-ex3", "ch11-ex3"})
REQUEST_TIMEOUT = 60.0     # seconds the worker may take to answer one request
EXERCISE_BUDGET = 180.0    # seconds for one exercise's check and hidden tests, callbacks included


class ChannelClosed(Exception):
    """The runner reported the worker's channel as closed, broken or out of time."""


def _relay_guard(transport):
    """``send`` that turns the runner's relay notices into a failure, and sends nothing after one."""
    from ._bridge_wire import ProtocolError

    state = {"relay": None}
    inner = transport.send

    def send(request: dict) -> dict:
        if state["relay"] is not None:
            raise ProtocolError(f"the worker's channel is {state['relay']}")
        reply = inner(request)
        if type(reply) is dict and set(reply) <= {"relay", "why"} and "relay" in reply:
            state["relay"] = str(reply["relay"])[:20]
            raise ProtocolError(f"the worker's channel is {state['relay']}")
        return reply

    return send, state


def judge_exercise(transport, event: dict, ex: dict) -> dict:
    """The ``exercise`` event of one bridged exercise: its check and hidden tests run here on proxies."""
    from ._bridge import Bridge, ExerciseJudge
    from ._verdict import Judgement

    transport.io.timeout = REQUEST_TIMEOUT
    transport.deadline = time.monotonic() + EXERCISE_BUDGET
    send, state = _relay_guard(transport)
    bridge = Bridge(send)
    transport.on_request = bridge.handle
    judge = ExerciseJudge(bridge, [str(n) for n in event.get("needed", [])], str(event.get("imports", "")))
    from . import _seed, _structure

    _structure.set_sources(event.get("load") if isinstance(event.get("load"), list) else [])
    # the answers by the names this process looked them up by (a source is read by that name)
    _structure.set_answers([(v, k) for k, v in judge.student_ns.items()])
    _seed.set_run_seed(RUN_SEED["seed"])
    if ex["id"] in REMOTE_LIBRARY and not judge.load_error:
        _remote_libraries(bridge, judge.inst_ns)
    answers = set(ex.get("answers", []))
    for name, value in list(judge.student_ns.items()):
        if name not in answers:  # a library object the notebook named (gradcheck = torch.autograd.gradcheck)
            own = _library_object(bridge, value)
            if own is not None:
                judge.student_ns[name] = own

    def worker_findings() -> list[str]:
        """What the worker's guard saw the student's code try (a convenience for the instructor: a
        worker taken over can hide it, but cannot make a wrong answer right)."""
        if state["relay"] is not None or bridge.broken is not None:
            return []
        try:
            found = bridge.lookup("__tamper__")
        except Exception:  # noqa: BLE001 - an unreadable answer is the channel's problem, judged below
            return []
        return [str(f)[:200] for f in found[:20]] if isinstance(found, list) else []

    def lost() -> bool:  # the worker died or went silent: the check did not finish (the student's code)
        return state["relay"] in ("closed", "timeout") or time.monotonic() > transport.deadline

    def run_check():
        _seed.seed_globals()
        reply = judge.check(ex.get("check_source", ""), ex["id"])
        if lost():
            return None
        reply["tamper"] = [t for t in reply["tamper"] if state["relay"] is None or state["relay"] == "broken"]
        reply["tamper"] += worker_findings()
        return reply

    def run_hidden(source: str):
        _seed.seed_globals()
        reply = judge.hidden(source)
        if lost():
            return None
        reply["tamper"] = bool(reply["tamper"] or worker_findings())
        return reply

    verdict = Judgement(ex, labels=_strings(event.get("labels")), functions=_strings(event.get("functions")),
                        unavailable={str(k): str(v) for k, v in (event.get("unavailable") or {}).items()},
                        notes=_strings(event.get("notes")), stub_cells=_strings(event.get("stub_cells")))
    res = verdict.decide(run_check, run_hidden, timed_out=lambda: time.monotonic() > transport.deadline)
    return {"event": "exercise", "id": ex["id"], "outcome": res.get("outcome", "failed"),
            "feedback": str(res.get("feedback", ""))[:4000], "flagged": str(res.get("flagged", ""))[:500],
            "check": res.get("check") or [], **{k: res[k] for k in ("parts", "hidden") if k in res}}


LIBRARIES = ("minigrad", "numpy", "math")
RUN_SEED: dict = {"seed": None}  # the grading run's seed (grade chooses it, grades.json records it)


def _remote_libraries(bridge, inst_ns: dict) -> None:
    """The instructor's minigrad imports bound to the worker's minigrad, whose tensors stay there."""
    import types

    from ._bridge import MODULE, TENSOR_HANDLES

    bridge.lookup(TENSOR_HANDLES)
    for name, value in list(inst_ns.items()):
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "minigrad" \
                and not value.__name__.startswith("minigrad.course"):
            inst_ns[name] = bridge.lookup(MODULE + value.__name__)


def _library_object(bridge, value):
    """The judge's own copy of a library function, class or module that the student's notebook bound
    to a name (``gradcheck = torch.autograd.gradcheck``), or None.

    Used only for names that are not the exercise's answers: a worker that lies here can only make
    the judge use a trusted library object where the notebook's helper name was; the answer itself
    is always the student's code.
    """
    import importlib

    from minigrad.autograd.function import Function

    from ._bridge import RemoteObject

    rid = value._rid if type(value) is RemoteObject else value.__dict__.get("_rid") if isinstance(value, type) and \
        issubclass(value, Function) else None
    if rid is None:
        return None
    try:
        module, qual = bridge.getattr(rid, "__module__"), bridge.getattr(rid, "__qualname__")
    except Exception:  # noqa: BLE001 - a module has no __qualname__: try its name
        module, qual = None, None
    if not isinstance(module, str) or not isinstance(qual, str):
        try:
            name = bridge.getattr(rid, "__name__")
        except Exception:  # noqa: BLE001
            return None
        module, qual = (name, "") if isinstance(name, str) else (None, None)
    if not module or module.split(".")[0] not in LIBRARIES or module.startswith("minigrad.course") or "<" in qual:
        return None
    try:
        obj = importlib.import_module(module)
        for part in filter(None, qual.split(".")):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError):
        return None
    return obj


def _strings(items) -> list[str]:
    return [str(i)[:1000] for i in (items or [])][:1000]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    runner_out, runner_in = int(argv[0]), int(argv[1])
    out = _wire.private_stdout()
    sys.stdout = open(os.devnull, "w")

    def emit(obj) -> None:
        _wire.reply(out, obj)

    try:
        spec = _wire.read_message(sys.stdin.buffer)
        payload = sys.stdin.buffer.read(int(spec["payload"]))
        os.environ["MINIGRAD_COURSE_LANG"] = spec.get("language") or "en"  # the submission's language (_i18n)
        from . import _bridge, _checker, _remote, _seed, _structure, _verdict  # noqa: F401  (before the bundle replaces minigrad.course)
        from ._bridge_wire import PipeTransport

        _checker._install_bundle(spec["bundle"], spec.get("course_dir", ""))  # the same checks as a self-check
        import minigrad

        minigrad.course = sys.modules["minigrad.course"]  # `import minigrad.course as c` finds the copy too
        RUN_SEED["seed"] = spec.get("seed")
        exercises = {e["id"]: e for e in spec["exercises"]}
        with os.fdopen(os.dup(runner_in), "wb") as f:
            f.write(payload)
        transport = PipeTransport(runner_out, runner_in, None)
        while True:
            msg = transport.io.read()
            if msg is None:
                emit({"event": "runner-error", "error": "the grading sandbox stopped unexpectedly"})
                break
            if type(msg) is not dict:
                continue
            kind = msg.get("event")
            if kind == "bridge" and msg.get("id") in exercises:
                transport.io.timeout = None
                try:
                    emit(judge_exercise(transport, msg, exercises[msg["id"]]))
                finally:
                    transport.io.timeout = None
                    transport.deadline = None
                    transport.io.write({"relay": "end"})
            elif kind in ("exercise", "runner-error", "phases", "done"):
                emit(msg)
                if kind == "done":
                    break
    except BaseException as e:  # report, never crash silently
        import traceback

        emit({"event": "runner-error", "error": f"the judge failed: {type(e).__name__}: {e}"[:500],
              "trace": traceback.format_exc()[-2000:]})
    try:
        emit({"event": "judge-done"})
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
