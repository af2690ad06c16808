"""``report.html``: the instructor's report of a grading run, one self-contained file next to the gradebook.

It opens offline in any browser (no script, no external style sheet or font; the figures are PNGs
embedded as ``data:`` URIs) and shows, in this order:

- the rows to review first: flagged rows and rows the grader could not grade ("not graded");
- the score distribution (each student's total), as a figure and in words;
- per exercise: the pass rate (full points), the mean points, and the five most common feedback
  messages of the students who lost points, with how many students got each (``problems``: one
  message per problem, its wrapped lines joined). Messages that differ only in numbers (cell
  numbers ``In [7]``, values) are counted as one, so the common mistake shows;
- the time each notebook took to grade (the rows' ``seconds``).

``grade`` and ``merge`` write it (``grade.write_figures``); ``write(path, rows, run)`` is the API.
"""
from __future__ import annotations

import base64
import html
import io
import re
import statistics
from collections import Counter
from pathlib import Path

from . import gradebook

TOP_MESSAGES = 5
MESSAGE_CAP = 400          # characters of a message shown
SLOWEST = 10               # notebooks listed by time
REVIEW_CAP = 300           # rows listed under "review first" (the rest: grades.csv)
_CELL = re.compile(r"\bIn \[\s*\d*\s*\]")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


_HEADER = re.compile(r"^\S+ Exercise [\w.]+ \(.*\): [\d.]+/[\d.]+ points?$")  # "✗ Exercise 3.2 (ReLU): 0/3 points"
_PASSED = ("✓", "hidden tests passed")


def problems(feedback: str) -> list[str]:
    """The problems a feedback text names, one text each.

    A problem starts at a line that is not indented; its indented lines continue it (the checker wraps
    its text), and lines indented deeper (the entries where values differ) are details, left out.
    An exercise's header line ("✗ Exercise 3.2 (...): 0/3 points") stands for its diagnosis below it.
    What passed is not a problem."""
    blocks: list[list[str]] = []
    for line in str(feedback or "").splitlines():
        if not line.strip():
            continue
        if line[:1].isspace() and blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    out = []
    for head, *body in blocks:
        head = head.strip()
        if head.startswith(_PASSED):
            continue
        text = [] if _HEADER.match(head) and body else [head]
        if body:
            base = len(body[0]) - len(body[0].lstrip())
            for line in body:
                if len(line) - len(line.lstrip()) > base:
                    break
                text.append(line.strip())
        out.append(" ".join(text))
    return out


def normalise(message: str) -> str:
    """The key that groups one mistake: cell numbers and numbers replaced, spaces collapsed."""
    text = _CELL.sub("In [#]", message)
    text = _NUMBER.sub("#", text)
    return " ".join(text.split())


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


# ------------------------------------------------------------------------------------ the numbers
def exercise_stats(rows: list[dict]) -> list[dict]:
    """Per exercise (in the gradebook's order): graded students, pass rate, mean points, top messages."""
    out = []
    for ex in dict.fromkeys(r["exercise"] for r in rows):
        mine = [r for r in rows if r["exercise"] == ex]
        graded = [r for r in mine if not r.get("not_graded")]
        maxp = max(float(r["max_points"]) for r in mine)
        passed = sum(1 for r in graded if float(r["points"]) >= float(r["max_points"]) > 0)
        groups: dict[str, dict] = {}
        for r in graded:
            if float(r["points"]) >= float(r["max_points"]):
                continue  # the messages of students who lost points
            keys = {}
            for line in problems(r.get("feedback") or ""):
                keys.setdefault(normalise(line), line)
            for key, line in keys.items():
                g = groups.setdefault(key, {"students": set(), "examples": Counter()})
                g["students"].add(r["student"])
                g["examples"][line] += 1
        top = sorted(groups.items(), key=lambda kv: (-len(kv[1]["students"]), kv[0]))[:TOP_MESSAGES]
        out.append({
            "exercise": ex, "notebook": mine[0]["notebook"], "max_points": maxp, "graded": len(graded),
            "not_graded": len(mine) - len(graded), "passed": passed,
            "pass_rate": passed / len(graded) if graded else None,
            "mean": statistics.fmean(float(r["points"]) for r in graded) if graded else None,
            "messages": [{"text": g["examples"].most_common(1)[0][0], "students": len(g["students"]),
                          "variants": len(g["examples"])} for _, g in top],
        })
    return out


def student_totals(rows: list[dict]) -> tuple[dict, float, list]:
    """(student -> total points, the assignment's max points, students left out: a row not graded)."""
    tot = gradebook.totals(rows)
    incomplete = sorted({r["student"] for r in rows if r.get("not_graded")})
    maxp = max((m for _, m in tot.values()), default=0.0)
    return {s: p for s, (p, _) in tot.items() if s not in incomplete}, maxp, incomplete


def notebook_times(rows: list[dict]) -> list[tuple[str, str, float]]:
    """(student, notebook, seconds) of every notebook that was run, slowest first."""
    seen: dict = {}
    for r in rows:
        if isinstance(r.get("seconds"), (int, float)):
            seen.setdefault((r["student"], r["notebook"]), float(r["seconds"]))
    return sorted(((s, nb, t) for (s, nb), t in seen.items()), key=lambda x: (-x[2], x[0], x[1]))


def _bins(maxp: float) -> list[float]:
    if float(maxp).is_integer() and 0 < maxp <= 40:
        return [k - 0.5 for k in range(int(maxp) + 2)]
    top = maxp if maxp > 0 else 1.0
    return [top * k / 10 for k in range(11)]


def _counts(values: list[float], edges: list[float]) -> list[int]:
    counts = [0] * (len(edges) - 1)
    for v in values:
        for k in range(len(counts)):
            last = k == len(counts) - 1
            if edges[k] <= v < edges[k + 1] or (last and v == edges[-1]):
                counts[k] += 1
                break
    return counts


# ----------------------------------------------------------------------------------- the figures
def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def score_figure(totals: dict, maxp: float) -> tuple[str, str]:
    """(data URI, alt text) of the distribution of the students' totals."""
    from matplotlib.ticker import MaxNLocator

    plt = _plt()
    values = list(totals.values())
    edges = _bins(maxp)
    counts = _counts(values, edges)
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.hist(values, bins=edges, color="#2f5d9e", edgecolor="white")
    ax.set_xlabel(f"total points (out of {maxp:g})")
    ax.set_ylabel("students")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if float(maxp).is_integer() and maxp <= 40:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(edges[0], edges[-1])
    ax.set_title("Score distribution")
    fig.tight_layout()
    uri = _png(fig)
    plt.close(fig)
    if float(maxp).is_integer() and maxp <= 40:
        parts = [f"{_plural(c, 'student')} scored {k}" for k, c in enumerate(counts) if c]
    else:
        parts = [f"{_plural(c, 'student')} scored {_fmt(edges[k])} to {_fmt(edges[k + 1])}"
                 for k, c in enumerate(counts) if c]
    alt = (f"Histogram of the total points of {_plural(len(values), 'student')}, out of {maxp:g}: "
           + ("; ".join(parts) if parts else "no student was graded") + ".")
    return uri, alt


def time_figure(times: list) -> tuple[str, str]:
    from matplotlib.ticker import MaxNLocator

    plt = _plt()
    secs = [t for _, _, t in times]
    top = max(secs) if secs else 1.0
    width = max(1, int(round(top / 10 + 0.5)))
    edges = [float(width * k) for k in range(int(top // width) + 2)]
    counts = _counts(secs, edges)
    fig, ax = plt.subplots(figsize=(8, 3.0))
    ax.hist(secs, bins=edges, color="#6b4c9a", edgecolor="white")
    ax.set_xlabel("seconds to grade one notebook")
    ax.set_ylabel("notebooks")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Time per notebook")
    fig.tight_layout()
    uri = _png(fig)
    plt.close(fig)
    parts = [f"{_plural(c, 'notebook')} took {edges[k]:g} to {edges[k + 1]:g} s" for k, c in enumerate(counts) if c]
    slow = times[0] if times else None
    alt = (f"Histogram of the grading time of {_plural(len(secs), 'notebook')}: " + "; ".join(parts)
           + (f". The slowest, {slow[0]}'s {slow[1]}, took {slow[2]:g} s." if slow else "."))
    return uri, alt


# --------------------------------------------------------------------------------------- the page
CSS = """
:root { color-scheme: light; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1b1b1b;
       background: #fff; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.7rem; margin: 0.5rem 0; } h2 { font-size: 1.35rem; margin-top: 2rem; }
h3 { font-size: 1.1rem; margin-top: 1.5rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1rem; table-layout: auto; }
th, td { border: 1px solid #b8b8b8; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #eef1f6; }
td.num, th.num { text-align: right; white-space: nowrap; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
figure { margin: 1rem 0; } img { max-width: 100%; height: auto; }
figcaption { font-size: 0.95rem; color: #333; }
.flag { color: #8a1c1c; font-weight: 600; }
.warn { border-left: 4px solid #8a1c1c; background: #fbeeee; padding: 0.5rem 0.75rem; }
.message { overflow-wrap: anywhere; }
.feedback { white-space: pre-wrap; font-family: "DejaVu Sans Mono", monospace; font-size: 0.85rem; }
p.meta { color: #333; }
"""


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _table(caption: str, header: list, body: list, num=()) -> str:
    head = "".join(f'<th scope="col"{" class=num" if k in num else ""}>{_e(h)}</th>' for k, h in enumerate(header))
    lines = []
    for row in body:
        cells = []
        for k, v in enumerate(row):
            cls = ' class="num"' if k in num else ""
            cells.append(f"<td{cls}>{v}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<table><caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(lines)}</tbody></table>")


def render(rows: list[dict], run: dict | None = None) -> str:
    run = run or {}
    students = list(dict.fromkeys(r["student"] for r in rows))
    totals, maxp, incomplete = student_totals(rows)
    stats = exercise_stats(rows)
    times = notebook_times(rows)
    body: list[str] = ["<h1>Grading report</h1>"]
    notebooks = list(dict.fromkeys(r["notebook"] for r in rows))
    body.append(f'<p class="meta">{_plural(len(students), "student")}, {_plural(len(stats), "exercise")} in '
                f'{_plural(len(notebooks), "notebook")} ({_e(", ".join(notebooks)) or "none"}), out of '
                f'{maxp:g} points. Sandbox: {_e(run.get("sandbox", "not recorded"))}.</p>')
    for w in run.get("warnings") or []:
        body.append(f'<p class="warn"><strong>Warning:</strong> {_e(w)}</p>')

    # ---- review first
    body.append('<h2 id="review">Review first: flagged and not graded</h2>')
    review = [r for r in rows if r.get("flagged") or r.get("not_graded")]
    if review:
        body.append(f"<p>{_plural(len(review), 'row')}. A flagged row got 0 for tampering or a refused file: "
                    "read the cell it names. A row not graded failed for the grader's reason, not the "
                    "student's: those students are left out of the LMS files until graded again.</p>")
        first = sorted(review, key=lambda r: (not r.get("not_graded"), r["student"], r["exercise"]))[:REVIEW_CAP]
        body.append(_table("Rows to review", ["student", "notebook", "exercise", "why", "feedback"], [
            [_e(r["student"]), _e(r["notebook"]), _e(r["exercise"]),
             (f'<span class="flag">flagged: {_e(r["flagged"])}</span>' if r.get("flagged") else "")
             + (f'<span class="flag">not graded: {_e(r["not_graded"])}</span>' if r.get("not_graded") else ""),
             f'<span class="feedback">{_e(str(r.get("feedback", ""))[:MESSAGE_CAP])}</span>']
            for r in first]))
        if len(review) > REVIEW_CAP:
            body.append(f"<p>{len(review) - REVIEW_CAP} more rows to review: grades.csv has them all (the "
                        "flagged column, and feedback starting with \"not graded:\").</p>")
    else:
        body.append("<p>No row was flagged and every notebook was graded.</p>")

    # ---- scores
    body.append('<h2 id="scores">Score distribution</h2>')
    if totals:
        uri, alt = score_figure(totals, maxp)
        vals = sorted(totals.values())
        body.append(f'<figure><img src="{uri}" alt="{_e(alt)}" width="800" height="320">'
                    f"<figcaption>{_e(alt)}</figcaption></figure>")
        body.append(f"<p>Mean {statistics.fmean(vals):.2f}, median {statistics.median(vals):g}, lowest "
                    f"{vals[0]:g}, highest {vals[-1]:g} of {maxp:g} points"
                    + (f"; {_plural(len(incomplete), 'student')} with rows not graded left out "
                       f"({_e(', '.join(incomplete[:10]))})" if incomplete else "") + ".</p>")
    else:
        body.append("<p>No student was graded.</p>")

    # ---- exercises
    body.append('<h2 id="exercises">Exercises</h2>')
    body.append(_table("Pass rate (full points) and mean points per exercise",
                       ["exercise", "notebook", "points", "students graded", "full points", "pass rate", "mean points"],
                       [[_e(s["exercise"]), _e(s["notebook"]), f"{s['max_points']:g}", str(s["graded"]),
                         str(s["passed"]), "–" if s["pass_rate"] is None else f"{100 * s['pass_rate']:.0f}%",
                         "–" if s["mean"] is None else f"{s['mean']:.2f}"] for s in stats], num=(2, 3, 4, 5, 6)))
    for s in stats:
        body.append(f'<h3 id="ex-{_e(s["exercise"])}">{_e(s["exercise"])}: the most common feedback</h3>')
        if not s["messages"]:
            body.append("<p>No student lost points on this exercise.</p>")
            continue
        body.append(_table(f"{s['exercise']}: the {len(s['messages'])} most common messages to students who lost "
                           "points (messages that differ only in numbers counted together)",
                           ["message", "students"],
                           [[f'<span class="message">{_e(m["text"][:MESSAGE_CAP])}</span>'
                             + (f" <em>(and {m['variants'] - 1} variant{'s' if m['variants'] > 2 else ''} "
                                "differing in numbers)</em>" if m["variants"] > 1 else ""),
                             str(m["students"])] for m in s["messages"]], num=(1,)))

    # ---- time
    body.append('<h2 id="time">Time per notebook</h2>')
    if times:
        uri, alt = time_figure(times)
        secs = [t for _, _, t in times]
        body.append(f'<figure><img src="{uri}" alt="{_e(alt)}" width="800" height="300">'
                    f"<figcaption>{_e(alt)}</figcaption></figure>")
        body.append(f"<p>{_plural(len(secs), 'notebook')}: mean {statistics.fmean(secs):.1f} s, median "
                    f"{statistics.median(secs):.1f} s, total {sum(secs):.0f} s of grading.</p>")
        body.append(_table(f"The {min(SLOWEST, len(times))} slowest notebooks", ["student", "notebook", "seconds"],
                           [[_e(s), _e(nb), f"{t:.1f}"] for s, nb, t in times[:SLOWEST]], num=(2,)))
    else:
        body.append("<p>No notebook was run.</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>Grading report</title>\n<style>" + CSS + "</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


def write(path, rows: list[dict], run: dict | None = None) -> None:
    """Write report.html (atomically)."""
    path = Path(path)
    gradebook.atomic_write(path, render(rows, run))
