#!/usr/bin/env python
"""Browser check of the built website (_build/html), offline, in headless Chromium at 1280 px.

    .venv/bin/python tests/browser/check_book.py [--html _build/html] [--toc _toc.yml]
                                                 [--pages book/03_relu.html ...] [--chromium /usr/bin/chromium]
                                                 [--edition zh]

Serves the built site on 127.0.0.1 (a free port) and opens every page of _toc.yml (new
chapters are covered as soon as they are listed there) with Playwright driving Debian's
chromium. On each page it checks what a reader gets:

  - the <title> names the book; one non-empty <h1>; one search box; landmarks (one <main>,
    a <nav>) and a skip link that is the first thing the Tab key reaches and that moves to the content;
  - every image loaded and has a text alternative that says something (not "figure");
  - math is typeset, with MathML that screen readers read (MathJax's assistive MathML);
  - widgets are rendered, and their sliders move with the keyboard; animations step with the
    keyboard and say in words which frame they show;
  - exercise boxes are present; each solution is hidden until its toggle (named after the
    solution's header) is focused and Enter pressed, then visible; nbgrader's
    "### BEGIN SOLUTION" markers and this machine's paths appear nowhere;
  - no code or output block is wider than the text column (outputs wrap; a code line that
    is too long must be shortened), with solutions and hidden code cells closed and open;
  - axe-core (vendored from npm) finds no serious or critical violation of WCAG 2.1 A/AA,
    with solutions closed and open; moderate ones are listed but do not fail;
  - nothing is logged as a console error or raised as a JavaScript error; no request for the
    site's own files fails; no request leaves 127.0.0.1 (the site works offline);
  - every internal <a href> points to an existing file (and anchor);
  - no figure text renders under 9 CSS px: each matplotlib figure of the build carries, in its
    PNG, its smallest font size and dpi (minigrad/course/figure_text.py, written by the build's
    kernels); with the width the page shows the PNG at, that gives its smallest text in CSS px;
  - the primary sidebar shows every entry at 1280 x 900 (its last one, the instructor guide, is
    on screen without scrolling);
  - <html lang> is the edition's ("en"; "zh-CN" for the Chinese edition), and the top bar has one
    link to the page in the other language (an existing page: the links check covers it).

``--edition zh`` checks the Chinese edition (zh/_toc.yml, under _build/html/zh/, screenshots in
_build/screenshots/zh/), with the English site served next to it (the language links cross),
first makes sure a CJK font is installed (fc-list :lang=zh), else the screenshots show tofu, and
last that its search finds 梯度 and 反向传播 (the index is split into words by jieba).

Screenshots go to _build/screenshots/<page>.png (as loaded, scrolled to the top, nothing
focused) and <page>--solutions-open.png (every solution and hidden code cell opened).
Exits 1 listing every problem, each naming its page.
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
import time
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))
from machine_paths import LEFTOVER as MACHINE_PATH  # noqa: E402


def _load_by_path(name: str, path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


figure_text = _load_by_path("figure_text", ROOT / "minigrad" / "course" / "figure_text.py")  # no minigrad import

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
]
TIMEOUT_MS = 60_000
WIDTH = 1280
# edition -> (folder of the site under _build/html, its toc, its _config.yml, <html lang>)
EDITIONS = {"en": ("", ROOT / "_toc.yml", ROOT / "_config.yml", "en"),
            "zh": ("zh/", ROOT / "zh" / "_toc.yml", ROOT / "zh" / "_config.yml", "zh-CN")}


# words the edition's search must find (Sphinx's Chinese splitter is jieba, with the course's terms
# as its user dictionary, i18n/zh-search-words.txt, so that a whole term such as 反向传播 is a word)
SEARCH_WORDS = {"zh": ("梯度", "反向传播")}


def cjk_font_problem() -> str | None:
    """None if fontconfig knows a font with Chinese glyphs (the Chinese pages need one)."""
    import subprocess
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"fc-list failed ({e}): cannot tell whether a CJK font is installed"
    if not out.strip():
        return "no CJK font is installed: the Chinese pages would show tofu (apt-get install fonts-noto-cjk)"
    return None

# ---- accessibility: the rules checked, in ONE place ------------------------------------
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]      # WCAG 2.1, levels A and AA
AXE_EXTRA_RULES = ["region", "landmark-one-main", "page-has-heading-one", "bypass"]  # landmarks, skip link
AXE_FAIL = ("critical", "serious")                           # these fail the check
AXE_REPORT = ("moderate",)                                   # these are listed
# Alt text that says nothing about the picture.
GENERIC_ALT = re.compile(
    r"^\s*(?:an? |the )?(?:figure|fig\.?|image|img|picture|graphic|plot|chart|graph|diagram|png|"
    r"animation|output|untitled|<[^>]*>|matplotlib[\w ]*|\d+)\s*\d*\s*\.?\s*$", re.I)
MIN_ALT_WORDS = 4
# Pictures of the course (notebook outputs, animations, figures): their alt text must describe
# them. The theme's own images (logos in menus) only need a non-empty one (axe checks that).
CONTENT_IMAGES = "main .cell_output img, main .animation img, main figure img, main article img.output"
# What "open everything" reveals: solutions and code cells hidden behind "Show code cell source".
OPENED = ["main div.solution", "main details.hide"]


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
def toc_pages(toc_file: Path) -> list[str]:
    """The site-relative .html path of every entry of a _toc.yml, in order."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from check_toc import toc_entries

    toc = yaml.safe_load(toc_file.read_text())
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


def alt_problem(alt: str | None) -> str | None:
    """Why an image's alt text does not describe it (None: it does)."""
    if alt is None or not alt.strip():
        return "has no alt text"
    if GENERIC_ALT.match(alt) or len(alt.split()) < MIN_ALT_WORDS:
        return f"has an alt text that says nothing about it ({alt!r})"
    return None


# --------------------------------------------------------------------------- in the page
JS_IMAGES = """(content) => Array.from(document.querySelectorAll('main img'))
    .map(i => ({src: (i.getAttribute('src') || '').slice(0, 80), ok: i.complete && i.naturalWidth > 0,
                alt: i.getAttribute('alt'), content: i.matches(content),
                hidden: i.getAttribute('aria-hidden') === 'true' || i.getAttribute('role') === 'presentation'}))"""

# Figures as the page shows them: natural and rendered widths (0: hidden, measured when opened).
JS_FIGURES = """(content) => Array.from(document.querySelectorAll(content))
    .filter(i => i.complete && i.naturalWidth > 0)
    .map(i => ({src: i.currentSrc || i.src, natural: i.naturalWidth,
                shown: i.checkVisibility() ? i.getBoundingClientRect().width : 0}))"""

# The primary sidebar at the viewport's height: is its last entry on screen?
JS_SIDEBAR = """() => {
    const links = Array.from(document.querySelectorAll('.bd-sidebar-primary nav.bd-links a'));
    if (!links.length) return null;
    const last = links[links.length - 1], r = last.getBoundingClientRect();
    return {text: last.textContent.trim().slice(0, 60), bottom: r.bottom, height: window.innerHeight,
            shown: last.checkVisibility()};
}"""

JS_RAW_MATH = r"""() => {
    const main = document.querySelector('main') || document.body;
    const c = main.cloneNode(true);
    c.querySelectorAll('pre, code, script, style, mjx-container, .MathJax').forEach(e => e.remove());
    const t = c.textContent;
    const m = t.match(/\\\(|\\\[|\$\$/);
    return m ? t.slice(Math.max(0, m.index - 40), m.index + 40).replace(/\s+/g, ' ') : null;
}"""

# Math a screen reader can read: MathJax's assistive MathML next to each rendering.
JS_MATH_A11Y = """() => Array.from(document.querySelectorAll('main mjx-container'))
    .filter(c => !c.querySelector('mjx-assistive-mml math'))
    .map(c => (c.textContent || '').slice(0, 40))"""

# Blocks wider than their column: a block that scrolls sideways (its end hidden) or that
# sticks out of the article. Hidden blocks (closed solutions) are measured when opened.
JS_OVERFLOW = """() => {
    const article = document.querySelector('main article') || document.querySelector('main');
    const right = article.getBoundingClientRect().right;
    const out = [];
    document.querySelectorAll('main pre, main table, main mjx-container[display="true"], main .jupyter-widgets, main .animation, main img').forEach(el => {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0 || !el.checkVisibility()) return;  // closed: measured when opened
        const scrolls = el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0;
        const sticksOut = r.right > right + 1;
        if (!scrolls && !sticksOut) return;
        const kind = el.closest('.cell_input') ? 'code' : el.closest('.cell_output') ? 'output'
                   : el.tagName === 'PRE' ? 'code' : el.tagName.toLowerCase();
        const lines = (el.innerText || el.getAttribute('alt') || '').split('\\n');
        const longest = lines.reduce((a, b) => b.length > a.length ? b : a, '');
        out.push({kind, first: lines[0].trim().slice(0, 50), text: longest.trim().slice(0, 90),
                  by: Math.round(Math.max(el.scrollWidth - el.clientWidth, r.right - right))});
    });
    return out;
}"""

JS_FOCUSED = """() => {
    const e = document.activeElement;
    if (!e || e === document.body) return null;
    const cs = getComputedStyle(e), r = e.getBoundingClientRect();
    const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none';
    return {tag: e.tagName.toLowerCase(), text: (e.getAttribute('aria-label') || e.innerText || '').trim().slice(0, 40),
            ring, math: !!e.closest('mjx-container'),
            visible: r.width > 0 && r.height > 0 && e.checkVisibility({opacityProperty: true, visibilityProperty: true})};
}"""
MAX_TAB_STOPS = 400

JS_MAIN_TEXT = "() => (document.querySelector('main') || document.body).textContent"
JS_CELL_CODE = "() => Array.from(document.querySelectorAll('main .cell_input pre')).map(p => p.textContent).join('\\n')"
NBGRADER_MARKER = re.compile(r"^[ \t]*### (?:BEGIN|END) (?:SOLUTION|HIDDEN TESTS)[ \t]*$", re.M)

JS_LANDMARKS = """() => ({
    main: document.querySelectorAll('main, [role=main]').length,
    nav: document.querySelectorAll('nav, [role=navigation]').length,
    skip: (document.querySelector('a[href="#main-content"]') || {}).textContent || null,
    target: !!document.getElementById('main-content')})"""

JS_AXE = """async ([tags, extra, only]) => {
    const rules = {};
    extra.forEach(r => rules[r] = {enabled: true});
    const context = only.length ? {include: only.filter(s => document.querySelector(s)).map(s => [s])} : document;
    if (only.length && !context.include.length) return [];
    const res = await axe.run(context, {runOnly: {type: 'tag', values: tags}, rules,
                                        resultTypes: ['violations']});
    return res.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 300)}))}));
}"""


def _visible_text(locator) -> str:
    return locator.evaluate("e => e.innerText || ''").strip()


def _settle(page) -> None:
    """Scrolled to the top with nothing focused: the page as a reader first sees it."""
    page.evaluate("() => { window.scrollTo(0, 0); if (document.activeElement) document.activeElement.blur(); }")
    page.wait_for_timeout(150)


class PageCheck:
    """All checks of one page; problems collected in ``errors``, moderate findings in ``notes``."""

    def __init__(self, page, base_url: str, name: str, book_title: str, shots: Path, axe_source: str,
                 site: Path | None = None, lang: str = "en", expect_switch: bool = False):
        self.page, self.base_url, self.name = page, base_url, name
        self.lang, self.expect_switch = lang, expect_switch
        self.book_title, self.shots, self.axe_source = book_title, shots, axe_source
        self.site = site
        self.errors: list[str] = []
        self.notes: list[str] = []
        self.overflow: dict = {}
        self.figures_seen: set = set()
        self.figures_unmarked: int = 0

    def err(self, msg: str) -> None:
        self.errors.append(f"{self.name}: {msg}")

    def shot(self, suffix: str = "") -> None:
        _settle(self.page)
        path = self.shots / (self.name.replace("/", "__").removesuffix(".html") + suffix + ".png")
        self.page.screenshot(path=str(path), full_page=True)

    # ------------------------------------------------------------------ the checks
    def run(self) -> None:
        page = self.page
        page.goto(self.base_url + self.name, wait_until="load", timeout=2 * TIMEOUT_MS)
        try:  # on a busy machine the page may take long to go quiet; the checks below wait
            page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)  # for what they need
        except Exception:
            pass
        self.title_and_landmarks()
        self.math()
        self.widgets()
        page.wait_for_timeout(200)
        self.images()
        self.figure_text()
        self.sidebar()
        self.text()
        self.measure_overflow()
        self.shot()
        self.axe("solutions closed")
        self.keyboard()
        opened = self.open_everything()
        if opened:
            self.figure_text()  # the figures of solutions and hidden cells, now shown
            self.measure_overflow()
            self.axe("solutions open", only=OPENED)  # the rest was checked closed
            self.shot("--solutions-open")
        for (kind, first, text), by in self.overflow.items():
            if kind == "code":
                self.err(f"a code line is {by} px wider than the text column (shorten it): {text!r} "
                         f"in the cell that starts {first!r}")
            else:
                self.err(f"a {kind} block is {by} px wider than the text column: {text!r}")

    def title_and_landmarks(self) -> None:
        page = self.page
        title = page.title()
        if self.book_title not in title:
            self.err(f"<title> is {title!r}, expected it to contain {self.book_title!r}")
        h1 = page.locator("main h1:visible")
        if h1.count() != 1:
            self.err(f"expected exactly one visible <h1> in <main>, found {h1.count()}")
        elif not _visible_text(h1).strip("#¶ \n"):
            self.err("the <h1> is empty")
        n_search = page.locator(".search-button-field:visible, form.bd-search:visible").count()
        if n_search != 1:
            self.err(f"{n_search} search boxes are visible (want one)")
        marks = page.evaluate(JS_LANDMARKS)
        if marks["main"] != 1 or marks["nav"] < 1:
            self.err(f"landmarks: {marks['main']} <main> (want 1), {marks['nav']} <nav> (want at least 1)")
        if not marks["skip"] or not marks["target"]:
            self.err("no working skip link to #main-content")
        lang = page.evaluate("() => document.documentElement.lang")
        if lang != self.lang:
            self.err(f"<html lang={lang!r}>, expected {self.lang!r}")
        switch = page.locator("a.course-language-switch:visible")
        if switch.count() != (1 if self.expect_switch else switch.count()):
            self.err(f"{switch.count()} visible links to the other language's page in the top bar (want 1)")
        elif switch.count():
            box, bar = switch.bounding_box(), page.locator(".bd-header-article").bounding_box()
            if box and bar and (box["y"] < bar["y"] - 0.5 or box["y"] + box["height"] > bar["y"] + bar["height"] + 0.5):
                self.err(f"the language link is clipped: it sits at y {box['y']:.0f}-{box['y'] + box['height']:.0f} "
                         f"px, outside the top bar ({bar['y']:.0f}-{bar['y'] + bar['height']:.0f} px)")

    def math(self) -> None:
        page = self.page
        n_math = page.locator("main .math").count()
        if not n_math:
            return
        try:
            page.wait_for_function(
                "n => document.querySelectorAll('main mjx-container').length >= n", arg=n_math,
                timeout=TIMEOUT_MS)
        except Exception:
            got = page.locator("main mjx-container").count()
            self.err(f"math not typeset: {n_math} math element(s), {got} mjx-container(s) "
                     "(is _static/mathjax/ served? run scripts/vendor_assets.sh)")
            return
        raw = page.evaluate(JS_RAW_MATH)
        if raw:
            self.err(f"raw (untypeset) math in the page text: ...{raw}...")
        try:  # the assistive MathML is added just after the rendering
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('main mjx-container'))"
                ".every(c => c.querySelector('mjx-assistive-mml math'))", timeout=5_000)
        except Exception:
            missing = page.evaluate(JS_MATH_A11Y)
            self.err(f"{len(missing)} formula(s) without MathML for screen readers "
                     f"(MathJax's assistive-mml), e.g. {missing[:2]}")

    def widgets(self) -> None:
        page = self.page
        n_views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
        if not n_views:
            return
        try:
            page.wait_for_function(
                "n => document.querySelectorAll('main .jupyter-widgets').length >= n", arg=n_views,
                timeout=TIMEOUT_MS)
            page.wait_for_timeout(300)
        except Exception:
            self.err(f"{n_views} widget output(s) but the widgets did not render "
                     "(is _static/widgets/embed-amd.js served? run scripts/vendor_assets.sh)")
            return
        empty = page.evaluate(
            """() => Array.from(document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]'))
               .filter(s => !(s.parentElement && s.parentElement.innerText.trim())).length""")
        if empty:
            self.err(f"{empty} widget output(s) rendered empty")

    def images(self) -> None:
        for img in self.page.evaluate(JS_IMAGES, CONTENT_IMAGES):
            if not img["ok"]:
                self.err(f"image did not load: {img['src']}")
            if img["hidden"]:
                continue
            problem = alt_problem(img["alt"]) if img["content"] else (None if img["alt"] else "has no alt text")
            if problem:
                self.err(f"an image {problem}: {img['src']}")

    def _png(self, src: str) -> bytes | None:
        if src.startswith("data:image/png;base64,"):
            import base64
            return base64.b64decode(src.split(",", 1)[1])
        if self.site is None or not src.startswith(self.base_url):
            return None
        path = self.site / unquote(urlsplit(src).path.lstrip("/"))
        return path.read_bytes() if path.is_file() and path.suffix == ".png" else None

    def figure_text(self) -> None:
        """No figure text under figure_text.MIN_CSS_PX, from each PNG's own font size and dpi."""
        for fig in self.page.evaluate(JS_FIGURES, CONTENT_IMAGES):
            key = fig["src"][:200]
            if not fig["shown"] or key in self.figures_seen:
                continue
            self.figures_seen.add(key)
            data = self._png(fig["src"])
            if data is None:
                continue  # not a PNG of the site (an SVG graph, a GIF): nothing to read
            px = figure_text.rendered_text_px(figure_text.png_text(data), fig["natural"], fig["shown"])
            if px is None:
                self.figures_unmarked += 1  # not a matplotlib figure of the build (no font sizes)
                continue
            if px < figure_text.MIN_CSS_PX - 1e-6:
                short = fig["src"].rsplit("/", 1)[-1][:60]
                self.err(f"a figure's smallest text renders at {px:.1f} CSS px (under "
                         f"{figure_text.MIN_CSS_PX:g}): {short}, shown {fig['shown']:.0f} px wide of "
                         f"{fig['natural']} (raise its font sizes, or make the figure narrower)")

    def sidebar(self) -> None:
        _settle(self.page)
        side = self.page.evaluate(JS_SIDEBAR)
        if side is None:
            return
        if not side["shown"] or side["bottom"] > side["height"] + 0.5:
            self.err(f"the sidebar's last entry ({side['text']!r}) is below the fold at {WIDTH} x "
                     f"{side['height']} (its bottom at {side['bottom']:.0f} px)")

    def text(self) -> None:
        code = self.page.evaluate(JS_CELL_CODE)  # includes closed solutions
        m = NBGRADER_MARKER.search(code)
        if m:
            self.err(f"a code cell shows nbgrader's marker {m.group(0).strip()!r} (hidden by _ext/solution_markers.py)")
        text = self.page.evaluate(JS_MAIN_TEXT)
        m = MACHINE_PATH.search(text)
        if m:
            self.err(f"the page shows a path of the build machine: ...{text[max(0, m.start() - 40):m.end() + 40]!r}...")

    def measure_overflow(self) -> None:
        for block in self.page.evaluate(JS_OVERFLOW):
            key = (block["kind"], block["first"], block["text"])
            self.overflow[key] = max(self.overflow.get(key, 0), block["by"])

    def axe(self, state: str, only: list[str] | None = None) -> None:
        """Run axe-core on the page (or only on the elements matching the selectors ``only``)."""
        page = self.page
        if not page.evaluate("() => typeof window.axe !== 'undefined'"):
            page.add_script_tag(content=self.axe_source)
        for v in page.evaluate(JS_AXE, [AXE_TAGS, AXE_EXTRA_RULES, only or []]):
            example = v["nodes"][0]
            html = " ".join(example["html"].split())[:140]
            line = (f"axe {v['impact']} [{state}] {v['id']}: {v['help']} ({len(v['nodes'])} element(s), "
                    f"e.g. {example['target']}: {html})")
            if v["impact"] in AXE_FAIL:
                self.err(line)
            elif v["impact"] in AXE_REPORT:
                self.notes.append(f"{self.name}: {line}")

    def keyboard(self) -> None:
        """The skip link, widget sliders and animations, used with the keyboard alone."""
        page = self.page
        _settle(page)
        page.keyboard.press("Tab")
        first = page.evaluate("() => [document.activeElement.getAttribute('href'), "
                              "document.activeElement.getBoundingClientRect().height > 0]")
        if first != ["#main-content", True]:
            self.err(f"the first Tab does not reach a visible skip link (it reaches {first[0]!r})")
        else:
            page.keyboard.press("Enter")
            page.wait_for_timeout(100)
            landed = page.evaluate("() => [location.hash, Math.round(document.getElementById('main-content')"
                                   ".getBoundingClientRect().top)]")
            if landed[0] != "#main-content" or abs(landed[1]) > 5:
                self.err(f"the skip link does not move to the content (hash {landed[0]!r}, content at {landed[1]} px)")
        self.tab_walk()
        # widget sliders: named (axe checks that) and moved by the arrow keys
        handles = page.locator("main .noUi-handle")
        for i in range(handles.count()):
            handle = handles.nth(i)
            before = handle.get_attribute("aria-valuenow")
            handle.focus()
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowLeft" if before == handle.get_attribute("aria-valuemax") else "ArrowRight")
            page.wait_for_timeout(50)
            if handle.get_attribute("aria-valuenow") == before:
                self.err(f"widget slider {i + 1} does not move with the arrow keys")
        # animations: the frame slider steps with the arrow keys and says which frame it shows
        for i in range(page.locator("main .animation").count()):
            anim = page.locator("main .animation").nth(i)
            slider = anim.locator("input[type=range]")
            img = anim.locator("img").first
            src = img.get_attribute("src")
            slider.focus()
            page.keyboard.press("Home")
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(100)
            if img.get_attribute("src") == src and slider.input_value() != "1":
                self.err(f"animation {i + 1}: the arrow keys do not step its frames")
            if not slider.get_attribute("aria-valuetext"):
                self.err(f"animation {i + 1}: its frames are not described in words (animation_html(..., frame_text=[...]))")
            for button in anim.locator("button").all():
                if not (button.get_attribute("aria-label") or "").strip():
                    self.err(f"animation {i + 1}: a button has no label")
        _settle(page)

    def tab_walk(self) -> None:
        """Tab through the whole page: every stop shows where the focus is, and only controls
        and links are stops (not each formula: a page has hundreds)."""
        page = self.page
        _settle(page)
        no_ring, hidden, math, first = [], [], 0, None
        for _ in range(MAX_TAB_STOPS):
            page.keyboard.press("Tab")
            stop = page.evaluate(JS_FOCUSED)
            if stop is None or stop == first:
                break
            first = first or stop
            math += stop["math"]
            if not stop["visible"]:
                hidden.append(stop)
            elif not stop["ring"]:
                no_ring.append(stop)
        else:
            self.err(f"more than {MAX_TAB_STOPS} Tab stops: a keyboard user cannot get through the page")
        if math:
            self.err(f"{math} formula(s) are Tab stops (MathJax menu setting inTabOrder)")
        for what, stops in (("shows no focus indicator", no_ring), ("is focusable but not visible", hidden)):
            if stops:
                named = sorted({f"<{s['tag']}> {s['text']!r}" for s in stops})
                self.err(f"{len(stops)} Tab stop(s) {what}: {', '.join(named[:6])}")
        _settle(page)

    def open_everything(self) -> bool:
        """Open every solution (checking that it was hidden) and every hidden code cell."""
        page = self.page
        solutions = page.locator("main div.solution")
        n_sol = solutions.count()
        if n_sol and page.locator("main div.exercise").count() == 0:
            self.err(f"{n_sol} solution(s) but no exercise box")
        for i in range(n_sol):
            sol = solutions.nth(i)
            label = sol.get_attribute("id") or f"solution {i + 1}"
            body = sol.locator(":scope > :not(.admonition-title)")
            if body.count() == 0:
                self.err(f"{label} has no content")
                continue
            if any(body.nth(j).is_visible() for j in range(body.count())):
                self.err(f"{label} is visible before it is clicked (solutions must be collapsed)")
                continue
            # The toggle button, used with the keyboard: focused, named after its header
            # (_theme/course.js), opened with Enter.
            toggle = sol.locator(".toggle-button").first
            header = " ".join(sol.locator(".admonition-title").first.inner_text().split())
            if (toggle.get_attribute("aria-label") or "") != header:
                self.err(f"{label}: its toggle is named {toggle.get_attribute('aria-label')!r}, not after "
                         f"its header {header!r}")
            toggle.scroll_into_view_if_needed()
            toggle.focus()
            page.keyboard.press("Enter")
            try:
                body.first.wait_for(state="visible", timeout=5_000)
            except Exception:
                self.err(f"{label} is still hidden after Enter on its toggle")
            if toggle.get_attribute("aria-expanded") != "true":
                self.err(f"{label}: its toggle does not say it is open (aria-expanded)")
        hidden_code = page.locator("main details.hide:not([open]) > summary")
        n_hidden = hidden_code.count()
        for i in range(n_hidden):
            hidden_code.first.click()
        if n_sol or n_hidden:
            page.wait_for_timeout(400)
        return bool(n_sol or n_hidden)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--screenshots", type=Path, default=ROOT / "_build" / "screenshots")
    ap.add_argument("--toc", type=Path, default=ROOT / "_toc.yml",
                    help="the table of contents the site was built from (e.g. release/book/_toc.yml)")
    ap.add_argument("--pages", nargs="*", help="check only these pages (default: every page of the toc)")
    ap.add_argument("--edition", choices=sorted(EDITIONS), default="en",
                    help="zh: the Chinese edition under HTML/zh/ (its toc and title)")
    args = ap.parse_args(argv)
    prefix, edition_toc, edition_config, lang = EDITIONS[args.edition]
    if args.edition != "en":
        if args.toc == ROOT / "_toc.yml":
            args.toc = edition_toc
        args.screenshots = args.screenshots / args.edition
        problem = cjk_font_problem()
        if problem:
            print(f"check_book: {problem}", file=sys.stderr)
            return 1
    t0 = time.monotonic()
    site = args.html.resolve()
    if not (site / "index.html").is_file():
        print(f"check_book: {site}/index.html not found; build the book first (bash scripts/build_book.sh)",
              file=sys.stderr)
        return 2
    if not AXE.is_file():
        print(f"check_book: {AXE.relative_to(ROOT)} not found; run 'npm ci' (bash scripts/setup.sh)", file=sys.stderr)
        return 2
    axe_source = AXE.read_text()
    from playwright.sync_api import sync_playwright

    book_title = yaml.safe_load(edition_config.read_text(encoding="utf-8"))["title"]
    pages = [prefix + p for p in toc_pages(args.toc)]
    shots = args.screenshots
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    notes: list[str] = []
    for p in pages:
        if not (site / p).is_file():
            errors.append(f"{p}: listed in _toc.yml but not built")
    pages = [p for p in pages if (site / p).is_file()]
    if args.pages:
        pages = [p for p in pages if p in args.pages]
    else:
        for old in shots.glob("*.png"):  # no stale screenshots of removed pages
            old.unlink()
        for p in [prefix + "index.html", *pages]:
            errors += check_links(site, p)

    httpd, base_url = serve(site)
    try:
        with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
            ctx = pw.chromium.launch_persistent_context(
                profile, executable_path=args.chromium, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": WIDTH, "height": 900})
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

            def on_console(msg):
                if msg.type == "error":
                    console_errors.append(f"{current['name']}: console error: {msg.text[:300]}")

            ctx.route("**/*", on_route)
            page = ctx.new_page()
            page.set_default_timeout(TIMEOUT_MS)  # a full-page screenshot on a busy machine takes > 30 s
            page.on("response", on_response)
            page.on("requestfailed", on_failed)
            console_errors: list[str] = []
            page.on("pageerror", lambda exc: console_errors.append(f"{current['name']}: JavaScript error: {exc}"))
            page.on("console", on_console)

            if not args.pages:  # the root redirects to the first page
                current["name"] = prefix + "index.html"
                page.goto(base_url + prefix, wait_until="load", timeout=TIMEOUT_MS)
                try:  # a meta refresh fires after "load": on a busy machine, some time after it
                    page.wait_for_url("**/" + (pages[0] if pages else ""), timeout=TIMEOUT_MS)
                    page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
                except Exception:
                    pass  # reported just below, with the URL reached
                if not page.url.endswith(pages[0] if pages else ""):
                    errors.append(f"{prefix}index.html: redirects to {page.url}, expected {pages[0]}")

            for name in pages:
                current["name"] = name
                t_page = time.monotonic()
                check = PageCheck(page, base_url, name, book_title, shots, axe_source, site=site, lang=lang,
                                  expect_switch=args.edition != "en" or (site / "zh" / "index.html").is_file())
                try:
                    check.run()
                except Exception as e:  # a timeout etc.: report it for this page, go on
                    check.errors.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0]}")
                print(f"{'ok  ' if not check.errors else 'FAIL'} {name} ({time.monotonic() - t_page:.1f} s)",
                      flush=True)
                errors += check.errors
                notes += check.notes
                if check.figures_unmarked:
                    notes.append(f"{name}: {check.figures_unmarked} PNG figure(s) without font sizes "
                                 "(not drawn by the build's matplotlib): text size not measured")
            if args.edition in SEARCH_WORDS and not args.pages:  # the edition's own word splitter (jieba)
                for word in SEARCH_WORDS[args.edition]:
                    current["name"] = f"{prefix}search.html?q={word}"
                    page.goto(f"{base_url}{prefix}search.html?q={word}", wait_until="load", timeout=TIMEOUT_MS)
                    try:
                        page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0",
                                               timeout=TIMEOUT_MS)
                    except Exception:
                        errors.append(f"{prefix}search.html: searching {word!r} finds no page (is jieba installed "
                                      "for the Chinese search index?)")
                    else:
                        # The search goes on fetching each result page for its summary: let those finish,
                        # or leaving the page aborts them (seen in CI: "request failed (net::ERR_ABORTED)").
                        page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
                        print(f"ok   search {word!r}: {page.locator('#search-results li').count()} page(s)",
                              flush=True)
            ctx.close()
            errors += net_errors + console_errors
    finally:
        httpd.shutdown()

    if notes:
        print(f"\naxe-core, moderate findings ({len(notes)}; listed, not failing):")
        for n in notes:
            print("  " + n)
    elapsed = time.monotonic() - t0
    if errors:
        print(f"\nbrowser check: {len(errors)} problem(s) ({elapsed:.0f} s):", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print(f"browser check: {len(pages)} page(s) ok in {elapsed:.0f} s; screenshots in {shots}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
