"""The two rendering rules of `i18n.py lint` (scripts/i18n.py, rendering_problems).

Chinese text can have the English structure and still render wrong: an emphasis delimiter next to
full-width punctuation that CommonMark refuses (the reader sees literal asterisks), and a line break
between two Chinese characters (the reader sees a space). The rules are checked on examples, against
markdown-it (the parser MyST uses) where it can answer, and on the committed translations.
"""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import i18n  # noqa: E402

BROKEN_EMPHASIS = [
    "把它**当作网站阅读。**每个章节都能运行。",      # closing ** after 。, a character next
    "文字**（注）**之后",                             # opening ** before （ after a character
    "用**`x`**做",                                    # the backtick is punctuation too
    "这是*强调。*然后",
]
GOOD_EMPHASIS = [
    "把它**当作网站阅读**。每个章节都能运行。",
    "把它**当作网站阅读。** 每个章节",
    "用 **`x`** 做",
    "这是**粗体**，然后*斜体*。",
    "- 列表项 *强调*。\n- 第二项",
    "乘积 a * b * c 与 2*3，以及 $x*y$ 和 `a*b`",
]


@pytest.mark.parametrize("text", BROKEN_EMPHASIS)
def test_emphasis_that_cannot_close_or_open_is_named(text):
    problems = i18n.rendering_problems(text)
    assert problems and all("cannot" in p for p in problems), problems


@pytest.mark.parametrize("text", GOOD_EMPHASIS)
def test_emphasis_that_renders_is_not_flagged(text):
    assert i18n.rendering_problems(text) == []


@pytest.mark.parametrize("text,broken", [(t, True) for t in BROKEN_EMPHASIS] + [(t, False) for t in GOOD_EMPHASIS])
def test_the_emphasis_rule_agrees_with_markdown_it(text, broken):
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").render(text)
    prose = re.sub(r"<code>.*?</code>", "", html)
    prose = prose.replace("$x*y$", "").replace("a * b * c", "").replace("2*3", "")
    assert ("*" in prose) == broken, html


def test_a_line_break_between_chinese_characters_is_named():
    text = "反向传播逐个节点地释放保存的张量，\n所以第二次调用会失败。"
    (problem,) = i18n.rendering_problems(text)
    assert problem.startswith("line break between Chinese characters")
    assert i18n.rendering_problems(text.replace("\n", "")) == []


@pytest.mark.parametrize("text", [
    "中文后面是 `code`\n中文",                    # code then a break: the space is wanted
    "一段中文。\n\n另一段中文。",                  # two paragraphs
    "一项：\n- 列表中的中文\n- 下一项",             # a list starts
    "表格前的中文\n| 列 | 列 |",                   # a table row
    "```text\n中文\n中文\n```",                    # a code block
])
def test_line_breaks_that_are_not_inside_chinese_prose_are_not_flagged(text):
    assert i18n.rendering_problems(text) == []


def test_line_breaks_next_to_emphasis_and_links_are_named():
    assert i18n.rendering_problems("它是**和**\n（见第 1 章）")
    assert i18n.rendering_problems("在[梯度模式](#glossary-grad-mode)\n开启的情况下")


def test_lint_reports_rendering_problems_of_a_translation(tmp_path, monkeypatch):
    book, i18n_dir = tmp_path / "book", tmp_path / "i18n"
    book.mkdir()
    (book / "page.md").write_text("# Title\n\nRead it **as a website.** Each chapter runs.\n", encoding="utf-8")
    monkeypatch.setattr(i18n, "BOOK", book)
    monkeypatch.setattr(i18n, "I18N", i18n_dir)
    page = i18n.page_path("page")
    (unit,) = i18n.english_units(page)
    (i18n_dir / "zh").mkdir(parents=True)
    (i18n_dir / "zh" / "page.md").write_text(
        f"<!-- unit {unit.id} en:{unit.hash} -->\n# 标题\n\n把它**当作网站阅读。**每个章节都能\n运行。\n", encoding="utf-8")
    found = i18n.lint("zh", page)
    assert [uid for uid, _ in found] == [unit.id, unit.id]
    assert any("cannot close" in d for _, d in found) and any("line break" in d for _, d in found)


def test_the_committed_translations_render_as_written():
    found = [f"{page.stem} unit {t.id}: {p}"
             for page in i18n.pages()
             for t in i18n.read_translations(i18n.translation_file("zh", page)) if not t.todo
             for p in i18n.rendering_problems(t.text)]
    assert not found, "\n".join(found)
