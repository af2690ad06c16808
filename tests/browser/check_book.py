#!/usr/bin/env python
"""Browser check of the built website (_build/html), offline, in headless Chromium.

    .venv/bin/python tests/browser/check_book.py [--html _build/html] [--chromium /usr/bin/chromium]

Serves the built site on 127.0.0.1 (a free port) and opens every page of
_toc.yml with Playwright driving Debian's chromium. For each page it checks:

  - the <title> names the book and the page has one non-empty <h1>;
  - every <img> loaded (naturalWidth > 0);
  - math is typeset (mjx-container present, no raw \\( or \\[ left in the text);
  - exercise boxes are present and each solution is hidden until its toggle is
    clicked, then visible (only on pages that have solutions);
  - widgets are rendered (one rendered widget per widget-view output, non-empty);
  - no request for the site's own files failed or returned >= 400, and no
    request left 127.0.0.1 (the site must work offline);
  - every internal <a href> points to an existing file (and anchor).

A screenshot of every page goes to _build/screenshots/<page>.png (and
<page>--solutions-open.png after the click). Exits 1 listing every problem,
each naming its page.
"""
from __future__ import annotations

import argparse
import functools
import html.parser
import http.server
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
]
TIMEOUT_MS = 20_000


# --------------------------------------------------------------------------- server
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output readable
        pass


def serve(directory: Path):
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


# --------------------------------------------------------------------------- pages
def toc_pages(root: Path) -> list[str]:
    """The site-relative .html path of every _toc.yml entry, in order."""
    sys.path.insert(0, str(root / "scripts"))
    from check_toc import toc_entries

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    out = []
    for entry in toc_entries(toc):
        entry = re.sub(r"\.(ipynb|md)$", "", entry)
        out.append(f"{entry}.html")
    return out


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(errors="replace"))
    return p


def check_links(site: Path, page: str) -> list[str]:
    """Internal links of one built page that point to a missing file or anchor."""
    errors = []
    base = "http://site/" + page
    for href in _parse(site / page).hrefs:
        url = urlsplit(urljoin(base, href))
        if url.scheme not in ("http", "https") or url.netloc != "site":
            continue  # external, mailto:, javascript:
        target = site / unquote(url.path.lstrip("/"))
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            errors.append(f"{page}: link '{href}' points to a missing file ({target.relative_to(site)})")
            continue
        frag = unquote(url.fragment)
        if frag and target.suffix == ".html" and frag not in _parse(target).ids:
            errors.append(f"{page}: link '{href}' points to a missing anchor #{frag} in {target.relative_to(site)}")
    return errors


# --------------------------------------------------------------------------- browser
JS_IMAGES = """() => Array.from(document.images)
    .filter(i => !i.complete || i.naturalWidth === 0)
    .map(i => i.getAttribute('src'))"""

JS_RAW_MATH = r"""() => {
    const main = document.querySelector('main') || document.body;
    const c = main.cloneNode(true);
    c.querySelectorAll('pre, code, script, style, mjx-container, .MathJax').forEach(e => e.remove());
    const t = c.textContent;
    const m = t.match(/\\\(|\\\[|\$\$/);
    return m ? t.slice(Math.max(0, m.index - 40), m.index + 40).replace(/\s+/g, ' ') : null;
}"""


def _visible_text(locator) -> str:
    return locator.evaluate("e => e.innerText || ''").strip()


def check_page(page, base_url: str, name: str, book_title: str, shots: Path) -> list[str]:
    errors: list[str] = []
    err = errors.append
    page.goto(base_url + name, wait_until="load", timeout=TIMEOUT_MS)
    page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)

    # Title and heading.
    title = page.title()
    if book_title not in title:
        err(f"{name}: <title> is {title!r}, expected it to contain {book_title!r}")
    h1 = page.locator("main h1:visible")
    if h1.count() != 1:
        err(f"{name}: expected exactly one visible <h1> in <main>, found {h1.count()}")
    elif not _visible_text(h1).strip("#¶ \n"):
        err(f"{name}: the <h1> is empty")

    # Math.
    n_math = page.locator("main .math").count()
    if n_math:
        try:
            page.wait_for_function(
                "n => document.querySelectorAll('main mjx-container').length >= n", arg=n_math,
                timeout=TIMEOUT_MS)
        except Exception:
            got = page.locator("main mjx-container").count()
            err(f"{name}: math not typeset: {n_math} math element(s), {got} mjx-container(s) "
                "(is _static/mathjax/ served? run scripts/vendor_assets.sh)")
        raw = page.evaluate(JS_RAW_MATH)
        if raw:
            err(f"{name}: raw (untypeset) math in the page text: ...{raw}...")

    # Widgets: one rendered widget per widget-view output.
    n_views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
    if n_views:
        sel = "main .jupyter-widgets:not(.jupyter-widgets .jupyter-widgets), main .widget-slider"
        try:
            page.wait_for_function(
                "n => document.querySelectorAll('main .jupyter-widgets').length >= n", arg=n_views,
                timeout=TIMEOUT_MS)
            page.wait_for_timeout(300)
        except Exception:
            err(f"{name}: {n_views} widget output(s) but the widgets did not render "
                "(is _static/widgets/embed-amd.js served? run scripts/vendor_assets.sh)")
        else:
            empty = page.evaluate(
                """() => Array.from(document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]'))
                   .filter(s => !(s.parentElement && s.parentElement.innerText.trim())).length""")
            if empty:
                err(f"{name}: {empty} widget output(s) rendered empty")
        del sel

    # Images (after math/widgets settled).
    page.wait_for_timeout(200)
    for src in page.evaluate(JS_IMAGES):
        err(f"{name}: image did not load: {src}")

    page.screenshot(path=str(shots / (name.replace("/", "__").removesuffix(".html") + ".png")), full_page=True)

    # Exercises and solutions.
    solutions = page.locator("main div.solution")
    n_sol = solutions.count()
    exercises = page.locator("main div.exercise")
    if n_sol and exercises.count() == 0:
        err(f"{name}: {n_sol} solution(s) but no exercise box")
    for i in range(n_sol):
        sol = solutions.nth(i)
        label = sol.get_attribute("id") or f"solution {i + 1}"
        body = sol.locator(":scope > :not(.admonition-title)")
        if body.count() == 0:
            err(f"{name}: {label} has no content")
            continue
        if any(body.nth(j).is_visible() for j in range(body.count())):
            err(f"{name}: {label} is visible before it is clicked (solutions must be collapsed)")
            continue
        # The toggle button itself: an exercise's title inside the solution header is a link,
        # and clicking it does not open the dropdown.
        toggle = sol.locator(".toggle-button").first
        toggle.scroll_into_view_if_needed()
        toggle.click()
        try:
            body.first.wait_for(state="visible", timeout=5_000)
        except Exception:
            err(f"{name}: {label} is still hidden after clicking its toggle")
    if n_sol:
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots / (name.replace("/", "__").removesuffix(".html") + "--solutions-open.png")),
                        full_page=True)
    return errors


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--screenshots", type=Path, default=ROOT / "_build" / "screenshots")
    args = ap.parse_args(argv)
    site = args.html.resolve()
    if not (site / "index.html").is_file():
        print(f"check_book: {site}/index.html not found; build the book first (bash scripts/build_book.sh)",
              file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    book_title = yaml.safe_load((ROOT / "_config.yml").read_text())["title"]
    pages = toc_pages(ROOT)
    shots = args.screenshots
    shots.mkdir(parents=True, exist_ok=True)
    for old in shots.glob("*.png"):  # no stale screenshots of removed pages
        old.unlink()
    errors: list[str] = []
    for p in pages:
        if not (site / p).is_file():
            errors.append(f"{p}: listed in _toc.yml but not built")
    pages = [p for p in pages if (site / p).is_file()]
    for p in ["index.html", *pages]:
        errors += check_links(site, p)

    httpd, base_url = serve(site)
    try:
        with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
            ctx = pw.chromium.launch_persistent_context(
                profile, executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 900})
            current = {"name": "?"}
            net_errors: list[str] = []

            def on_route(route):
                host = urlsplit(route.request.url).hostname
                if host in ("127.0.0.1", None) or route.request.url.startswith(("data:", "blob:", "about:")):
                    route.continue_()
                else:
                    net_errors.append(f"{current['name']}: request to the internet (the site must be "
                                      f"offline): {route.request.url}")
                    route.abort()

            def on_response(resp):
                if resp.status >= 400 and resp.url.startswith(base_url):
                    net_errors.append(f"{current['name']}: HTTP {resp.status} for {resp.url[len(base_url) - 1:]}")

            def on_failed(req):
                if req.url.startswith(base_url):
                    net_errors.append(f"{current['name']}: request failed ({req.failure}) for "
                                      f"{req.url[len(base_url) - 1:]}")

            ctx.route("**/*", on_route)
            page = ctx.new_page()
            page.on("response", on_response)
            page.on("requestfailed", on_failed)
            console_errors: list[str] = []
            page.on("pageerror", lambda exc: console_errors.append(f"{current['name']}: JavaScript error: {exc}"))

            # The root redirects to the first page.
            current["name"] = "index.html"
            page.goto(base_url, wait_until="load", timeout=TIMEOUT_MS)
            page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
            if not page.url.endswith(pages[0] if pages else ""):
                errors.append(f"index.html: redirects to {page.url}, expected {pages[0]}")

            for name in pages:
                current["name"] = name
                try:
                    page_errors = check_page(page, base_url, name, book_title, shots)
                except Exception as e:  # a timeout etc.: report it for this page, go on
                    page_errors = [f"{name}: {type(e).__name__}: {str(e).splitlines()[0]}"]
                print(f"{'ok  ' if not page_errors else 'FAIL'} {name}", flush=True)
                errors += page_errors
            ctx.close()
            errors += net_errors + console_errors
    finally:
        httpd.shutdown()

    if errors:
        print(f"\nbrowser check: {len(errors)} problem(s):", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print(f"browser check: {len(pages)} page(s) ok; screenshots in {shots}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
