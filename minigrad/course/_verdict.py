"""An exercise's verdict and feedback, from the check's and the hidden tests' replies.

Shared by the judge (``_judge.py``, outside the sandbox: the checks run there on proxies of the
student's objects) and by the runner's in-sandbox checker (for an exercise whose check cannot cross
the bridge, named in ``_judge.IN_SANDBOX``; none is). Every line of feedback is written here, in words
the grader controls: what the student's code printed never reaches it, and a failed hidden test
is named by its number and the instructor's own message or condition.
"""
from __future__ import annotations

import builtins
from typing import Callable

from . import _extract
from ._i18n import N_, _

_STUB = N_("replace the `raise NotImplementedError()` stub with your solution")  # shown as _(_STUB)


def _where_text(where, labels: set, functions: set) -> str:
    """`in forward(), line 3 of In [7]` from a checker's report, if it names the student's own code."""
    if not isinstance(where, dict) or where.get("cell") not in labels:
        return ""
    line = where.get("line")
    func = where.get("func")
    at = (_("line {line} of {cell}").format(line=int(line), cell=where["cell"])
          if isinstance(line, int) and 0 < line < 100_000 else where["cell"])
    if isinstance(func, str) and func in functions and func != "<module>":
        return _(" in {function}(), {at}").format(function=func, at=at)
    return _(" at {at}").format(at=at)


def check_parts(results: list) -> list[dict]:
    """The parts the check scored (partial credit), as plain data of known types."""
    out = []
    for r in results:
        for p in r.get("parts") or []:
            if not isinstance(p, dict):
                continue
            try:
                pts, most = float(p.get("points", 0)), float(p.get("max_points", 0))
            except (TypeError, ValueError):
                continue
            out.append({"name": str(p.get("name", ""))[:100], "passed": bool(p.get("passed")),
                        "points": max(0.0, min(pts, most)), "max_points": max(0.0, most),
                        "message": str(p.get("message", ""))[:500]})
    return out


def hidden_failures(hidden: dict | None, hidden_ran: bool) -> list[dict]:
    """The hidden tests' failures from the checker's reply (one without a part when it died)."""
    if not hidden_ran or (hidden or {}).get("passed"):
        return []
    got = [f for f in (hidden or {}).get("failures") or [] if isinstance(f, dict)]
    return got or [{k: v for k, v in (hidden or {}).items() if k != "part"}]


def exercise_verdict(check: dict | None, hidden: dict | None, hidden_ran: bool, parts=None) -> dict:
    """The outcome (passed | partial | failed) and the parts, from the checker's replies.

    ``parts`` (``check_parts``) keep their points unless a hidden test of that part failed; a
    failure anywhere else (the check's error, a hidden test of the whole exercise) fails all of
    it. ``partial``: some parts earned points. The points are decided by the grader.
    """
    parts = [dict(p) for p in parts or []]
    names = {p["name"] for p in parts}
    failures = hidden_failures(hidden, hidden_ran)
    results = (check or {}).get("results") or []
    whole = check is None or bool(check.get("error")) or any(f.get("part") not in names for f in failures)
    for f in failures:
        for p in parts:
            if p["name"] == f.get("part"):
                p["passed"], p["points"] = False, 0.0
    if whole:
        for p in parts:
            p["passed"], p["points"] = False, 0.0
        return {"outcome": "failed", "parts": parts}
    if all(r.get("passed") for r in results) and not failures:
        return {"outcome": "passed", "parts": parts}
    if parts and any(p["points"] > 0 for p in parts):
        return {"outcome": "partial", "parts": parts}
    return {"outcome": "failed", "parts": parts}


class Judgement:
    """One exercise's outcome, parts and feedback from the two replies.

    ``labels`` and ``functions``: the notebook's cell labels (``In [7]``) and function names, so
    that a reported line is named only when it is the student's own; ``unavailable``: why a name
    could not be handed to the check; ``notes``: what went wrong in the exercise's cells;
    ``stub_cells``: cells that still raise NotImplementedError.
    """

    def __init__(self, ex: dict, *, labels, functions, unavailable: dict, notes: list, stub_cells: list):
        self.ex, self.labels, self.functions = ex, set(labels), set(functions)
        self.unavailable, self.notes, self.stub_cells = dict(unavailable), list(notes), list(stub_cells)

    def decide(self, run_check: Callable[[], "dict | None"], run_hidden: Callable[[str], "dict | None"],
               timed_out: Callable[[], bool]) -> dict:
        """The result's fields (feedback, outcome, flagged, check, parts, hidden) after running what is needed."""
        ex = self.ex
        check = run_check()
        if check is None or check.get("phase") != "check":
            why = (_("time limit exceeded while checking this exercise") if timed_out() else
                   _("the check did not finish (the code it ran crashed the checker, or used all its memory)"))
            return {"feedback": "✗ " + why}
        tamper = [str(t)[:200] for t in (check.get("tamper") or []) if isinstance(t, str)]
        results = [r for r in (check.get("results") or []) if isinstance(r, dict)]
        if tamper:
            return {"feedback": _("tampering detected while the check ran: {what}.").format(what="; ".join(tamper[:5])),
                    "flagged": "tampering: " + "; ".join(tamper[:3])}
        hidden_src = ex.get("hidden_source", "")
        passed_check = not check.get("error") and (all(r.get("passed") for r in results) if
                                                   ex.get("check_source") else True)
        if ex.get("check_source") and not results and not check.get("error"):
            passed_check = False
        parts = check_parts(results)
        # partial credit: the hidden tests also run when some parts passed (they may cost those parts)
        some_parts = not check.get("error") and any(p["passed"] for p in parts)
        hidden = None
        if hidden_src and (passed_check or some_parts):
            hidden = run_hidden(hidden_src)
            if hidden is None or hidden.get("phase") != "hidden":
                hidden = {"passed": False, "kind": "died"}
            if hidden.get("tamper"):
                return {"feedback": _("tampering detected while the hidden tests ran: the code changed the checker."),
                        "flagged": "tampering: during the hidden tests", "check": results}
        verdict = exercise_verdict({"results": results, "error": check.get("error")}, hidden, hidden is not None,
                                   parts)
        lines = self.feedback(ex, results, check.get("error"), hidden, self.unavailable, self.notes,
                              self.stub_cells, parts={p["name"] for p in parts})
        for f in hidden_failures(hidden, hidden is not None):  # each part says why its hidden tests failed
            for p in verdict["parts"]:
                if p["name"] == f.get("part"):
                    p["message"] = "; ".join(filter(None, [p["message"], self.hidden_text(ex, f, "")[2:]]))
        return {"feedback": "\n".join(lines), "outcome": verdict["outcome"], "check": results,
                "parts": verdict["parts"], "hidden": None if hidden is None else bool(hidden.get("passed"))}

    def hidden_text(self, ex, failure: dict, head: str, parts=frozenset()) -> str:
        """One failed hidden test in words: which test (the instructor's message or condition) and how."""
        try:
            steps = _extract.hidden_steps(ex.get("hidden_source", ""))
        except SyntaxError:
            steps = []
        number = failure.get("failed")
        number = number if isinstance(number, int) and 0 < number <= 1000 else 0
        what = _extract.describe_hidden(steps, number) if number else _("the hidden tests")
        kind = failure.get("kind")
        where = _where_text(failure.get("where"), self.labels, self.functions)
        exc = failure.get("exception") if failure.get("exception") in dir(builtins) else _("an exception")
        detail = {"value": _("failed"),
                  "sign": _("failed: a sign error (your result is exactly minus the expected one)"),
                  "stub": _("failed: your code still raises NotImplementedError{where} ({stub})").format(
                      where=where, stub=_(_STUB)),
                  "raised": _("failed: your code raised {exception}{where}").format(exception=exc, where=where),
                  "died": _("did not finish (your code crashed the checker, ran out of time or of memory)"),
                  }.get(kind, _("failed"))
        part = failure.get("part")
        part = f"{part}: " if part in parts else ""
        return _("✗ {part}{head}{what} {detail}.").format(part=part, head=head, what=what, detail=detail)

    def feedback(self, ex, results, error, hidden, unavailable, notes, stub_cells, parts=frozenset()) -> list[str]:
        """One line per problem, in words this process controls."""
        lines = []
        if error:
            kind = error.get("kind")
            if kind == "missing":
                name = str(error.get("name", ""))
                if stub_cells:
                    lines.append(_("✗ not attempted yet: {cell} still raises NotImplementedError ({stub}).").format(
                        cell=stub_cells[-1], stub=_(_STUB)))
                    notes = []
                else:
                    why = unavailable.get(name, _("it is not defined when this exercise is graded"))
                    lines.append(_("✗ `{name}` is not available to the check: {why}.").format(name=name, why=why))
            elif kind == "stub":
                lines.append(_("✗ not attempted yet: your code still raises NotImplementedError{where} ({stub}).")
                             .format(where=_where_text(error.get("where"), self.labels, self.functions),
                                     stub=_(_STUB)))
                notes = [n for n in notes if "NotImplementedError" not in n]
            elif kind == "load":
                lines.append(_("✗ the grader could not load your definitions: {error}").format(
                    error=str(error.get("text", ""))[:600]))
            else:
                lines.append(_("✗ the check cell raised {error}{where}").format(
                    error=str(error.get("text", ""))[:600],
                    where=_where_text(error.get("where"), self.labels, self.functions)))
        failed_check = bool(error) or any(not r.get("passed") for r in results)
        if not error:
            for r in results:
                if not r.get("passed"):
                    msg = str(r.get("message", ""))
                    if "NotImplementedError" in msg:
                        notes = [n for n in notes if "NotImplementedError" not in n]
                    lines.append(msg[:3000])
        failures = hidden_failures(hidden, hidden is not None)
        if failed_check:  # (hidden tests ran only if some parts passed: they may cost those parts)
            lines += [self.hidden_text(ex, f, "", parts) for f in failures]
            lines += [n for n in notes if n not in "\n".join(lines)][-2:]
            return lines
        if failures:
            head = _("the self-check passes, but ") if results else ""
            lines += [self.hidden_text(ex, f, head, parts) for f in failures]
            return lines
        lines += [str(r.get("message", ""))[:3000] for r in results]
        if hidden is not None:
            lines.append(_("hidden tests passed."))
        return lines
