"""report.html (minigrad/course/report.py): its numbers, that it is one offline file, and the page in
headless Chromium: axe-core (WCAG 2.1 A/AA, no serious or critical finding), no console error,
nothing wider than a 1280 px viewport, every figure with an alt text that describes it.

The browser part skips, saying why, without chromium, Playwright or axe-core, unless
REQUIRE_BROWSER_CHECK=1 (set by .ci/run).
"""
import html
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from minigrad.course import report

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import check_book  # noqa: E402

REQUIRED = os.environ.get("REQUIRE_BROWSER_CHECK") == "1"
SHOTS = os.environ.get("MINIGRAD_REPORT_SCREENSHOT")  # a path: where to keep the screenshot


def _row(student, exercise, points, max_points, feedback, **extra):
    return {"student": student, "notebook": "99_fixture.ipynb", "exercise": exercise, "points": float(points),
            "max_points": float(max_points), "parts": [], "flagged": "", "feedback": feedback, **extra}


def _class() -> list[dict]:
    rows = []
    for k in range(9):
        s = f"student{k}"
        ok1 = k % 3 != 0
        wrong = f"✗ In [{3 + k}] raised RuntimeError: shapes ({k},) and (3,) differ\n✗ hidden test 1 of 2 failed"
        rows.append(_row(s, "ch99-ex1", 2 if ok1 else 0, 2, "✓ all good" if ok1 else wrong, seconds=4.0 + k))
        ok2 = k < 2
        rows.append(_row(s, "ch99-ex2", 3 if ok2 else 0, 3, "✓ passed" if ok2 else (
            "✗ not attempted yet: In [7] still raises NotImplementedError" if k % 2 else
            "✗ backward has the wrong sign"), seconds=4.0 + k))
    rows.append(_row("zoe", "ch99-ex1", 0, 2, "✗ uses ._getframe", flagged="uses ._getframe (In [5], line 3)",
                     seconds=30.5))
    rows.append(_row("zoe", "ch99-ex2", 0, 3, "not graded: the kernel could not start",
                     not_graded="the kernel could not start", seconds=30.5))
    return rows


def test_messages_differing_only_in_numbers_group_together():
    assert report.normalise("✗ In [7] raised RuntimeError: shape (3,)") == \
        report.normalise("✗  In [12] raised RuntimeError: shape (4,)")
    assert report.normalise("got 11.0, expected 2") == report.normalise("got -3.5e-06, expected 4")
    assert report.normalise("wrong sign") != report.normalise("wrong shape")


def test_one_message_per_problem_as_the_checker_writes_them():
    fb = ("✗ Exercise 99.2 (Leaky ReLU with a slope argument): 0/3 points\n"
          "  The gradient for x uses a mask on the wrong side of the kink at x = 0:\n"
          "  where x > 0 you use the slope that belongs to x < 0.\n"
          "    where they differ (first entries):\n"
          "      at [0, 0]: x=0.5478, expected -1.275, got -0.1275\n"
          "hidden test 2 of 3, which checks `y.shape == (3,)`\n"
          "✗ In [5] raised RuntimeError: student bug")
    assert report.problems(fb) == [
        "The gradient for x uses a mask on the wrong side of the kink at x = 0: where x > 0 you use the slope "
        "that belongs to x < 0.", "hidden test 2 of 3, which checks `y.shape == (3,)`",
        "✗ In [5] raised RuntimeError: student bug"]
    assert report.problems("✓ Exercise 99.3 (A derivative): 1/1 points\n  right: 12 at x = 2.\n"
                           "hidden tests passed.") == []
    header = "✗ Exercise 99.3 (A derivative): 0/1 points"
    assert report.problems(header) == [header]


def test_exercise_stats_count_students_and_rank_messages():
    stats = {s["exercise"]: s for s in report.exercise_stats(_class())}
    ex1, ex2 = stats["ch99-ex1"], stats["ch99-ex2"]
    # ex1: students 0, 3, 6 failed, zoe was flagged (10 graded, 6 full points)
    assert (ex1["graded"], ex1["passed"], round(ex1["pass_rate"], 2), ex1["mean"]) == (10, 6, 0.6, 1.2)
    assert ex1["messages"][0]["students"] == 3 and "raised RuntimeError" in ex1["messages"][0]["text"]
    assert ex1["messages"][0]["variants"] == 3          # cells 3, 6 and 9: one mistake
    assert [m["students"] for m in ex1["messages"]] == [3, 3, 1]
    # ex2: zoe not graded (left out of the rates); of 9, two passed; 4 odd and 3 even students failed
    assert (ex2["graded"], ex2["not_graded"], ex2["passed"]) == (9, 1, 2)
    assert [(m["students"], m["text"][:12]) for m in ex2["messages"]] == [(4, "✗ backward h"), (3, "✗ not attemp")]
    assert len(report.exercise_stats([_row(f"s{k}", "e", 0, 1, f"✗ problem number {k}\n✗ other {k} thing {k}"
                                           if k % 2 else f"✗ only mistake {k}") for k in range(20)])[0]["messages"]) \
        == 3
    many = [_row(f"s{k}", "e", 0, 1, f"✗ mistake {'abcdefgh'[k % 8]}") for k in range(16)]
    assert len(report.exercise_stats(many)[0]["messages"]) == report.TOP_MESSAGES == 5


def test_the_page_is_one_offline_file_with_review_rows_first():
    page = report.render(_class(), {"sandbox": "bubblewrap (test)", "warnings": []})
    assert "<script" not in page and "<link" not in page
    assert not re.search(r"""(?:src|href)=["'](?!data:|#)""", page), "a reference outside the file"
    assert not re.search(r"url\((?!data:)", page)
    assert page.count('src="data:image/png;base64,') == 2
    order = [page.index(f'id="{k}"') for k in ("review", "scores", "exercises", "time")]
    assert order == sorted(order)
    review = page[page.index('id="review"'):page.index('id="scores"')]
    assert review.index("not graded: the kernel could not start") < review.index("flagged: uses ._getframe")
    alts = [html.unescape(a) for a in re.findall(r'alt="([^"]*)"', page)]
    assert len(alts) == 2 and all(check_book.alt_problem(a) is None for a in alts), alts
    # the score distribution in words: zoe (a row not graded) is left out; 9 students
    assert alts[0] == ("Histogram of the total points of 9 students, out of 5: 2 students scored 0; "
                       "5 students scored 2; 1 student scored 3; 1 student scored 5.")
    assert "The slowest, zoe's 99_fixture.ipynb, took 30.5 s" in alts[1]


def test_integer_axes_where_students_are_counted(monkeypatch):
    import matplotlib.figure

    seen = []
    real = matplotlib.figure.Figure.savefig

    def spy(fig, *a, **k):
        for ax in fig.axes:
            seen.append((ax.get_ylabel(), list(ax.get_yticks())))
        return real(fig, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    report.render([_row("a", "e", 1, 1, "✓"), _row("b", "e", 0, 1, "✗ x")] * 1)
    assert [label for label, _ in seen] == ["students"]  # no timing figure without seconds
    assert all(float(t).is_integer() for t in seen[0][1]), seen


def _unavailable() -> str | None:
    if not (shutil.which("chromium") or Path("/usr/bin/chromium").exists()):
        return "chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright's Python package is missing; run: bash scripts/setup.sh"
    if not check_book.AXE.is_file():
        return "axe-core is missing (node_modules/axe-core); run: bash scripts/setup.sh"
    return None


JS_WIDE = """(width) => Array.from(document.querySelectorAll('body *')).filter(e => {
    const r = e.getBoundingClientRect(); return r.width > 0 && (r.right > width + 1 || r.left < -1);
}).map(e => e.tagName.toLowerCase() + ': ' + (e.textContent || '').trim().slice(0, 60))"""


def check_in_browser(path: Path, screenshot: Path | None = None) -> list[str]:
    """Problems of report.html in headless Chromium at 1280 px (none: an empty list)."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=check_book.CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": check_book.WIDTH, "height": 900})
        page.set_default_timeout(check_book.TIMEOUT_MS)

        def route(r):  # one file: anything but itself and data: URIs is a problem
            if r.request.url.startswith(("data:", path.as_uri())):
                r.continue_()
            else:
                problems.append(f"request outside the file: {r.request.url}")
                r.abort()

        page.route("**/*", route)
        page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text[:200]}"))
        page.on("pageerror", lambda e: problems.append(f"JavaScript error: {e}"))
        page.goto(path.as_uri(), wait_until="load")
        broken = page.evaluate("() => Array.from(document.images).filter(i => !(i.complete && i.naturalWidth))"
                               ".length")
        if broken:
            problems.append(f"{broken} image(s) did not load")
        for alt in page.evaluate("() => Array.from(document.images).map(i => i.getAttribute('alt'))"):
            why = check_book.alt_problem(alt)
            if why:
                problems.append(f"an image {why}")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        if width > check_book.WIDTH:
            problems.append(f"the page is {width} px wide, wider than the {check_book.WIDTH} px viewport")
        problems += [f"wider than the viewport: {w}" for w in page.evaluate(JS_WIDE, check_book.WIDTH)[:5]]
        page.add_script_tag(content=check_book.AXE.read_text())
        for v in page.evaluate(check_book.JS_AXE, [check_book.AXE_TAGS, check_book.AXE_EXTRA_RULES, []]):
            if v["impact"] in check_book.AXE_FAIL:
                problems.append(f"axe {v['impact']} {v['id']}: {v['help']} (e.g. {v['nodes'][0]['target']})")
        if screenshot is not None:
            page.screenshot(path=str(screenshot), full_page=True)
        browser.close()
    return problems


def test_report_in_headless_chromium(tmp_path):
    reason = _unavailable()
    if reason:
        if REQUIRED:
            pytest.fail(f"browser check required (REQUIRE_BROWSER_CHECK=1) but {reason}")
        pytest.skip(reason)
    rows = _class()
    rows.append(_row("a-student-with-a-very-long-folder-name-" + "x" * 120, "ch99-ex1", 0, 2,
                     "✗ " + "a_very_long_unbroken_identifier_" * 12, seconds=3.0))
    path = tmp_path / "report.html"
    report.write(path, rows, {"sandbox": "bubblewrap (test)", "warnings": ["graded WITHOUT the sandbox (test)"]})
    shot = Path(SHOTS) if SHOTS else tmp_path / "report.png"
    assert check_in_browser(path, shot) == []
    assert shot.read_bytes()[:4] == b"\x89PNG"


def test_a_class_where_nothing_was_graded_lists_a_bounded_review():
    rows = [_row(f"s{k:04d}", "ch99-ex1", 0, 2, "not graded: no kernel", not_graded="no kernel")
            for k in range(report.REVIEW_CAP + 25)]
    page = report.render(rows, {})
    assert page.count("<tr><td>s0") == report.REVIEW_CAP
    assert "25 more rows to review: grades.csv has them all" in page
    assert "No student was graded." in page and "No notebook was run." in page
