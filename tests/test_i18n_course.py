"""The exercises' feedback in Chinese: gettext catalogue, the language a check() picks, the Chinese
student edition (release --language zh) and the grader's feedback in the submission's language."""
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import i18n  # noqa: E402

import minigrad as torch  # noqa: E402
from minigrad.autograd import Function  # noqa: E402
from minigrad.course import _i18n, run_check  # noqa: E402


class LeakyReLUFunction(Function):
    @staticmethod
    def forward(ctx, input, negative_slope=0.01):
        ctx.save_for_backward(input)
        ctx.negative_slope = negative_slope
        return torch.where(input > 0, input, input * negative_slope)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return torch.where(input > 0, grad_output, grad_output * ctx.negative_slope), None


class WrongSign(LeakyReLUFunction):
    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return -torch.where(input > 0, grad_output, grad_output * ctx.negative_slope), None


@pytest.fixture(autouse=True)
def _no_language_from_outside(monkeypatch):
    monkeypatch.delenv(_i18n.ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)


def test_catalogue_is_complete_and_compiled():
    problems = i18n.messages("zh", check=True)
    assert not problems, "\n".join(problems)


def test_every_message_keeps_its_placeholders():
    import string
    fields = lambda s: {f for _, f, _, _ in string.Formatter().parse(s) if f}  # noqa: E731
    bad = [(k, v) for k, v in i18n.read_po(i18n.po_path("zh")).items() if k and fields(k) != fields(v)]
    assert not bad, bad


def test_check_feedback_in_english_and_in_chinese():
    en = run_check("ch03-ex1", LeakyReLUFunction).message
    assert en.startswith("✓ Exercise 3.1 (Leaky ReLU): 2/2 points\n  LeakyReLUFunction is correct.")
    with _i18n.using("zh"):
        zh = run_check("ch03-ex1", LeakyReLUFunction).message
        wrong = run_check("ch03-ex1", WrongSign).message
    assert zh.startswith("✓ 练习 3.1（Leaky ReLU）：2/2 分\n  LeakyReLUFunction 正确。")
    assert "默认斜率为 0.01" in zh
    assert wrong.startswith("✗ 练习 3.1（Leaky ReLU）：0/2 分") and "符号错了" in wrong
    assert run_check("ch03-ex1", LeakyReLUFunction).message == en      # back to English after the block


def test_language_comes_from_the_env_then_the_kernels_notebook(tmp_path, monkeypatch):
    assert _i18n.current_language() == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")                            # the machine's locale: not used
    assert _i18n.current_language() == "en"
    nb = tmp_path / "03_relu.ipynb"
    nb.write_text(json.dumps({"cells": [], "metadata": {"i18n": {"language": "zh"}}}))
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))                      # Jupyter: the kernel's notebook
    assert _i18n.current_language() == "zh"
    monkeypatch.chdir(tmp_path)                                          # relative to the server's root,
    monkeypatch.setenv("JPY_SESSION_NAME", "course/zh/03_relu.ipynb")    # the kernel in the notebook's folder
    assert _i18n.current_language() == "zh"
    monkeypatch.setenv(_i18n.ENV, "en")                                  # the grader's variable wins
    assert _i18n.current_language() == "en"
    with _i18n.using("zh-CN"):
        assert _i18n.current_language() == "zh"
    assert _i18n.submission_language(nb.read_bytes()) == "zh"
    assert _i18n.submission_language(b"not json") == "en"


def test_the_wheel_carries_the_catalogue():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "locale/*/LC_MESSAGES/*.mo" in data["minigrad.course"]
    assert _i18n.available() == {"en": True, "zh": True}


def test_grader_bundle_carries_the_catalogue():
    from minigrad.course.grade import course_bundle
    names = [n for n, _ in course_bundle()]
    assert names.index("minigrad.course._i18n") < names.index("minigrad.course")
    src = dict(course_bundle())["minigrad.course._i18n"][0]
    ns: dict = {"__file__": "/nowhere/_i18n.py", "__name__": "bundled_i18n"}
    exec(compile(src, "bundled", "exec"), ns)
    assert ns["EMBEDDED"]["zh"]["Exercise {number}"] == "练习 {number}"


def test_chinese_student_edition_of_chapter_3_grades_with_chinese_feedback(tmp_path):
    import nbformat

    from minigrad.course.grade import grade
    from minigrad.course.notebooks import fill_solutions
    from minigrad.course.release import release

    out = tmp_path / "release"
    release(out, ROOT, chapters=[3], site=False, language="zh", log=lambda *a: None)
    student = nbformat.read(out / "notebooks" / "03_relu.ipynb", as_version=4)
    assert student.metadata["i18n"] == {"language": "zh"}
    assert student.cells[0].source.startswith("# 3. 用自定义")
    instructor = nbformat.read(ROOT / "zh" / "book" / "03_relu.ipynb", as_version=4)
    subs = tmp_path / "subs"
    for who, nb in {"right": fill_solutions(student, instructor), "stub": student}.items():
        (subs / who).mkdir(parents=True)
        nbformat.write(nb, subs / who / "03_relu.ipynb")
    rows = grade(subs, tmp_path / "out", source=ROOT, assignment=out / "assignment.json", timeout=600, jobs=2,
                 sandbox=shutil.which("bwrap") is not None, log=lambda *a: None)
    by = {(r["student"], r["exercise"]): r for r in rows}
    for ex, title in [("ch03-ex1", "练习 3.1"), ("ch03-ex2", "练习 3.2"), ("ch03-ex3", "练习 3.3")]:
        right, stub = by[("right", ex)], by[("stub", ex)]
        assert right["points"] == right["max_points"] > 0, right["feedback"]
        assert title in right["feedback"] and "分" in right["feedback"], right["feedback"]
        assert stub["points"] == 0, stub["feedback"]
        assert "NotImplementedError" in stub["feedback"] and "你的代码" in stub["feedback"], stub["feedback"]


def test_no_module_that_translates_also_assigns_underscore():
    """``for _ in range(3)`` in a function that calls ``_("...")`` would shadow gettext there."""
    import ast
    bad = []
    for f in sorted((ROOT / "minigrad" / "course").rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            own = [n for n in ast.walk(fn)]
            calls = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_" for n in own)
            stores = [n.lineno for n in own if isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store)]
            if calls and stores:
                bad.append(f"{f.relative_to(ROOT)}:{stores[0]} ({fn.name})")
    assert not bad, bad


def test_chinese_student_website(tmp_path):
    """release --language zh builds the student site from zh/ with the English _ext/_theme/_assets."""
    from minigrad.course.release import _jupyter_book, release
    if _jupyter_book() is None:
        pytest.skip("jupyter-book is not installed")
    release(tmp_path / "rel", ROOT, chapters=[3], language="zh", log=lambda *a: None)
    page = (tmp_path / "rel" / "site" / "book" / "03_relu.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in page and "（学生版）" in page and "用自定义" in page
    assert "course-language-switch" not in page                     # no other edition next to it
    intro = (tmp_path / "rel" / "site" / "book" / "intro.html").read_text(encoding="utf-8")
    assert (tmp_path / "rel" / "site" / "download" / "index.html").is_file()
    if "download/index.html" in (ROOT / "zh" / "book" / "intro.md").read_text(encoding="utf-8"):
        assert 'href="../download/index.html"' in intro    # (the translated intro links the wheel; a stub does not)
