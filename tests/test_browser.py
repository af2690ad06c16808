"""Headless-Chromium check of the built website (tests/browser/check_book.py).

Builds nothing: it checks _build/html as left by `bash scripts/build_book.sh`
(scripts/test.sh builds first). Skips, saying why, when the site was not built
successfully, or when chromium or Playwright is missing -- unless
REQUIRE_BROWSER_CHECK=1 (set by .ci/run), which turns every skip into a failure.
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
    return None


def test_built_site_in_headless_chromium():
    reason = _unavailable()
    if reason:
        if REQUIRED:
            pytest.fail(f"browser check required (REQUIRE_BROWSER_CHECK=1) but {reason}")
        pytest.skip(reason)
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"browser check failed:\n{r.stdout}\n{r.stderr}"
