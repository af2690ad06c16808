"""Headless-Chromium check of the built website (tests/browser/check_book.py).

Builds nothing: it checks _build/html as left by `bash scripts/build_book.sh`
(scripts/test.sh builds first). Skips, saying why, when the site was not built
successfully, or when chromium or Playwright is missing -- unless
REQUIRE_BROWSER_CHECK=1 (set by .ci/run), which turns every skip into a failure.
The small tests below check the check's own rules and need no browser.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
SCRIPT = ROOT / "tests" / "browser" / "check_book.py"
REQUIRED = os.environ.get("REQUIRE_BROWSER_CHECK") == "1"
sys.path.insert(0, str(SCRIPT.parent))
import check_book  # noqa: E402


def _unavailable() -> str | None:
    if not (HTML / "index.html").is_file():
        return "the book is not built (_build/html); run: bash scripts/build_book.sh"
    if not (HTML / ".build-ok").is_file():
        return "the last book build did not succeed (no _build/html/.build-ok); run: bash scripts/build_book.sh"
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if not chromium:
        return "chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright's Python package is missing; run: bash scripts/setup.sh"
    if not check_book.AXE.is_file():
        return "axe-core is missing (node_modules/axe-core); run: bash scripts/setup.sh"
    return None


def test_built_site_in_headless_chromium():
    reason = _unavailable()
    if reason:
        if REQUIRED:
            pytest.fail(f"browser check required (REQUIRE_BROWSER_CHECK=1) but {reason}")
        pytest.skip(reason)
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"browser check failed:\n{r.stdout}\n{r.stderr}"


def test_chinese_edition_in_headless_chromium():
    """The same check on every page of the Chinese edition (_build/html/zh/, zh/_toc.yml)."""
    reason = _unavailable()
    if not reason and not (HTML / "zh" / "index.html").is_file():
        reason = "the Chinese edition is not built (_build/html/zh); run: bash scripts/build_book.sh"
    if not reason:
        reason = check_book.cjk_font_problem()
    if reason:
        if REQUIRED:
            pytest.fail(f"browser check required (REQUIRE_BROWSER_CHECK=1) but {reason}")
        pytest.skip(reason)
    r = subprocess.run([sys.executable, str(SCRIPT), "--edition", "zh"], capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 0, f"browser check of the Chinese edition failed:\n{r.stdout}\n{r.stderr}"


def test_editions_of_the_check():
    assert check_book.EDITIONS["zh"][0] == "zh/" and check_book.EDITIONS["zh"][3] == "zh-CN"
    assert check_book.EDITIONS["zh"][1].is_file() and check_book.EDITIONS["zh"][2].is_file()


# ------------------------------------------------------------------ the check's own rules
def test_alt_text_rules():
    for useless in [None, "", "  ", "figure", "Figure 3", "plot", "an image", "graph",
                    "../_images/24b33c785ca1.png", "<Figure size 640x480 with 1 Axes>", "output"]:
        assert check_book.alt_problem(useless), useless
    for useful in ["ReLU (blue) and its slope from backward (red dashed), 0 then 1",
                   "Backward graph of loss: 3 nodes, numbered in the order backward() runs them."]:
        assert check_book.alt_problem(useful) is None, useful


def test_accessibility_rules_are_wcag21_a_and_aa():
    assert set(check_book.AXE_TAGS) == {"wcag2a", "wcag2aa", "wcag21a", "wcag21aa"}
    assert set(check_book.AXE_FAIL) == {"serious", "critical"}


def test_marker_rule_finds_marker_lines_not_prose():
    find = check_book.NBGRADER_MARKER.search
    assert find("x = 1\n    ### BEGIN SOLUTION\n    y = 2")
    assert find("### END SOLUTION")
    assert not find("the code between `### BEGIN SOLUTION` and `### END SOLUTION` is cut")
