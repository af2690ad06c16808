"""The student edition reads well in plain Jupyter: no MyST syntax is left in its Markdown.

JupyterLab, Notebook, VS Code and Colab render Markdown cells as CommonMark. A MyST directive
(```{exercise} ...) shows there as a block of literal text, with its ``:label:`` line; a role
({ref}`x`) as "{ref}" followed by code. The release writes plain Markdown instead (see
``plain_markdown`` in minigrad/course/notebooks.py); these tests render every released notebook
with nbconvert's HTML exporter, as a learner's Jupyter would, and read what comes out.
"""
import html as html_mod
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

from minigrad.course.notebooks import parse_exercises, plain_markdown  # noqa: E402
from minigrad.course.numbering import display_name  # noqa: E402
from minigrad.course.release import release  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# what MyST syntax looks like once CommonMark has rendered it (as text, or in a code block's class)
RAW_MYST = [
    (re.compile(r"\{[a-z][\w-]*(:[\w-]+)?\}(?=`|<code)"), "a role like {ref}`x`"),
    (re.compile(r"\{(exercise|solution[\w-]*|admonition|note|tip|hint|warning|important|caution|danger|seealso|"
                r"dropdown|figure|image|math|code-cell|code-block|ref|numref|doc|term|eq|glossary|toctree)\}"),
     "a MyST directive or role name"),
    (re.compile(r"(^|\n|>)\s*:(label|class|name|width|align|alt):"), "a directive option like :label:"),
    (re.compile(r"(```|:::)\s*\{"), "a directive fence"),
    (re.compile(r"language-\{"), "a directive rendered as a code block"),
    (re.compile(r"^\s*\([\w-]+\)=\s*$", re.M), "a MyST target (label)="),
]


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    res = release(out, ROOT, site=False, log=lambda *a: None)
    paths = sorted(Path(res["notebooks_dir"]).glob("*.ipynb"))
    assert len(paths) >= 10, paths  # every chapter of the book
    return paths


def _markdown_html(nb) -> str:
    """The notebook's Markdown cells as nbconvert's HTML exporter renders them (code cells left out:
    Python's own braces, in f-strings and dicts, are not MyST)."""
    only_md = nbformat.v4.new_notebook(cells=[c for c in nb.cells if c.cell_type == "markdown"],
                                       metadata=nb.metadata)
    body, _ = nbconvert.HTMLExporter(template_name="basic").from_notebook_node(only_md)
    return body


def _without_math(text: str) -> str:
    """The text without its $...$ / $$...$$ math (LaTeX has braces of its own: \\frac{d}{dx})."""
    return re.sub(r"\$[^$]*\$", "$MATH$", re.sub(r"\$\$.*?\$\$", "$$MATH$$", text, flags=re.S))


def test_no_myst_syntax_is_left_in_any_released_notebook(released):
    problems = []
    for path in released:
        nb = nbformat.read(path, as_version=4)
        rendered = _without_math(html_mod.unescape(_markdown_html(nb)))
        for pattern, what in RAW_MYST:
            for m in pattern.finditer(rendered):
                context = rendered[max(0, m.start() - 60): m.end() + 60].replace("\n", " ")
                problems.append(f"{path.name}: {what}: ...{context}...")
    assert not problems, "raw MyST in the student edition:\n" + "\n".join(problems[:20])


def test_every_exercise_is_a_heading_with_its_number_and_title(released):
    for path in released:
        instructor = nbformat.read(ROOT / "book" / path.name, as_version=4)
        graded = parse_exercises(instructor)
        if not graded:
            continue
        rendered = html_mod.unescape(_markdown_html(nbformat.read(path, as_version=4)))
        headings = re.findall(r"<h3[^>]*>(.*?)</h3>", rendered, re.S)
        headings = [re.sub(r"<[^>]+>", "", h).replace("¶", "").strip() for h in headings]
        for ex in graded:
            want = f"{display_name(ex.id)} ({ex.title})" if ex.title else display_name(ex.id)
            assert want in headings, (path.name, want, headings)


def test_math_stays_dollar_math_and_the_statement_is_not_code(released):
    nb = nbformat.read(next(p for p in released if p.name == "03_relu.ipynb"), as_version=4)
    rendered = _markdown_html(nb)
    # the statement of Exercise 3.1 is prose (a <p>), its math is $...$ for MathJax, not <pre> text
    para = re.search(r"<p>Leaky ReLU lets a little gradient through.*?</p>", rendered, re.S)
    assert para, "the statement of Exercise 3.1 is not a paragraph"
    assert r"$\operatorname{LeakyReLU}(x) = x$" in para.group(0)
    assert "<pre" not in rendered.split("Leaky ReLU lets", 1)[1].split("</p>", 1)[0]


@pytest.mark.parametrize("src, want", [
    ("```{note}\nRead this.\n```", "> **Note**\n>\n> Read this."),
    (":::{admonition} Careful\n:class: warning\nSlow.\n:::", "> **Careful**\n>\n> Slow."),
    ("See {ref}`the kink <glossary-kink>` and {math}`x^2`.", "See the kink and $x^2$."),
    ("(my-target)=\n# Title", "# Title"),
    ("```{exercise} Cube\n:label: ch99-ex2\nWrite it.\n```", "### Exercise 99.2 (Cube)\n\nWrite it."),
    ("```python\n{x: 1}\n```", "```python\n{x: 1}\n```"),               # code blocks are kept
    ("Use `{name}` in a format string.", "Use `{name}` in a format string."),  # not a role
])
def test_plain_markdown_cases(src, want):
    assert plain_markdown(src) == want
