"""End to end: grade simulated submissions of the fixture course (good, buggy, empty, broken, noisy).

Asserts the gradebook's points, flags and feedback (one line per problem, cells numbered as
Jupyter numbers them), that no submission changed, that nothing was written outside the
gradebook folder, the --no-sandbox fallback and the refusal when bubblewrap is missing.
The hostile class (every attack of issue 10) is tests/test_course_hostile.py.
"""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("IPython")  # the grader's kernel is an IPython shell

from _grading import FIXTURE, FIXTURE_NB, ROOT, editions, tree, variant, write_class  # noqa: E402

from minigrad.course import sandbox  # noqa: E402
from minigrad.course.grade import grade  # noqa: E402

needs_bwrap = pytest.mark.skipif(sandbox.find_bwrap() is None and not os.environ.get("REQUIRE_SANDBOX"),
                                 reason="bubblewrap is not installed (.ci/run installs it)")


@pytest.fixture
def fixture_env(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _class(tmp: Path) -> dict:
    _, student, good = editions()
    outside = tmp / "outside"
    outside.mkdir()
    writes = f"open({str(outside / 'marker.txt')!r}, 'w').write('escaped')\n"
    look_in_history = (
        "import glob\n_seen = ' '.join(map(str, In)) + ' '.join(map(str, globals().keys()))\n"
        "for _p in glob.glob('**', recursive=True) + glob.glob('../**', recursive=True):\n"
        "    try:\n        _seen += open(_p, errors='replace').read()\n    except Exception:\n        pass\n"
        "if 'HIDDEN' + '-CUBE' in _seen:  # the hidden test's assertion message\n"
        "    LeakyReLU = None  # would lose the points\n")
    kernel_tamper = ("import minigrad.course as _mc, minigrad.course.diagnose as _md, builtins\n"
                     "def check(*a, **k):\n    print('✓ all good')\n    return True\n"
                     "_mc.check = check\n_mc.run_check = lambda *a, **k: _mc.CheckResult(True, '✓', 9, 9)\n"
                     "_md.diagnose_function = lambda *a, **k: _mc.CheckResult(True, 'ok')\n"
                     "builtins.all = lambda *a: True\n")
    magics = "%%time\n_unused = 1\n"
    notebooks = {
        "alice": good,
        "bob": variant(good, ch99_ex2=lambda s: s.replace("x_leaky_saved > 0", "x_leaky_saved < 0"),
                       ch99_ex3=lambda s: s + "\ngrad_at_two = 11.0"),
        "carol": student,
        "erin": variant(good, ch99_ex2=lambda s: "raise RuntimeError('student bug')\n" + s),
        "frank": variant(good, ch99_ex1=lambda s: "import sys\nsys.exit(3)\n" + s),
        "gina": variant(good, ch99_ex2=lambda s: "import os\nos._exit(1)\n" + s),
        "hank": variant(student, ch99_ex1=lambda s: "print('x' * 5_000_000)\n" + s),
        "ivy": variant(good, ch99_ex1=lambda s: f"leaked = open({str(FIXTURE_NB)!r}).read()\n" + s,
                       ch99_ex2=lambda s: s + "\n" + look_in_history),
        "jack": variant(good, ch99_ex1=lambda s: writes + s),
        "kate": variant(student, ch99_ex1=lambda s: kernel_tamper + s),
        "leo": "this is not a notebook",
        "nina": variant(good, ch99_ex1=lambda s: s.replace("return grad_output * 3 * x_saved_cube",
                                                           "return -grad_output * 3 * x_saved_cube")),
        "oscar": variant(good, before="!echo shell lines and magics are fine\n%matplotlib inline\nimport math",
                         ch99_ex1=lambda s: s + "\nif False:\n    Cube = None\n",
                         ch99_ex3=lambda s: magics + s),
    }
    subs = tmp / "submissions"
    write_class(subs, notebooks)
    (subs / "mia").mkdir()
    (subs / "mia" / "notes.txt").write_text("forgot to submit")
    return {"subs": subs, "outside": outside}


@needs_bwrap
def test_grade_end_to_end(fixture_env):
    tmp = fixture_env
    paths = _class(tmp)
    subs, outside, out = paths["subs"], paths["outside"], tmp / "grades"
    # The infinite loop is graded on its own with a short time limit, the others with a generous one
    # (the machine may be busy: no assertion depends on how fast a correct notebook runs).
    looping = tmp / "looping"
    _, _, good = editions()
    write_class(looping, {"dave": variant(good, ch99_ex1=lambda s: "while True:\n    pass\n" + s)})
    before, before_loop = tree(subs), tree(looping)
    top_before = sorted(p.name for p in tmp.iterdir())
    logs = []
    loop_rows = grade(looping, tmp / "grades_loop", source=FIXTURE, timeout=8, memory_mb=1024, jobs=1,
                      log=lambda *a: None)
    rows = grade(subs, out, source=FIXTURE, timeout=240, memory_mb=1024, jobs=2, log=logs.append)

    # ---- the gradebook files
    assert sorted(p.name for p in out.iterdir()) == ["canvas.csv", "grades.csv", "grades.json", "grading_log.txt",
                                                      "moodle.csv", "report.html", "scores_by_exercise.png",
                                                      "totals.csv"]
    assert (out / "scores_by_exercise.png").read_bytes()[:4] == b"\x89PNG"
    with open(out / "grades.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    book = json.loads((out / "grades.json").read_text())
    assert book["rows"] == rows and book["run"]["warnings"] == []
    assert book["run"]["sandbox"].startswith("bubblewrap")
    assert [r["student"] for r in csv_rows] == [r["student"] for r in rows]
    assert list(csv_rows[0]) == ["student", "notebook", "exercise", "points", "max_points", "parts", "flagged",
                                 "feedback"]
    students = ["alice", "bob", "carol", "erin", "frank", "gina", "hank", "ivy", "jack", "kate", "leo", "mia",
                "nina", "oscar"]
    assert [r["student"] for r in rows] == [s for s in students for _ in range(3)]
    got = {(r["student"], r["exercise"]): r for r in rows}

    def pts(who):
        return [got[(who, f"ch99-ex{k}")]["points"] for k in (1, 2, 3)]

    def fb(who, k):
        return got[(who, f"ch99-ex{k}")]["feedback"]

    assert not any(r["flagged"] for r in rows), [(r["student"], r["flagged"]) for r in rows if r["flagged"]]
    assert [got[("alice", f"ch99-ex{k}")]["max_points"] for k in (1, 2, 3)] == [2, 3, 1]
    assert pts("alice") == [2, 3, 1] and fb("alice", 1).startswith("✓") and "hidden tests passed" in fb("alice", 1)
    assert pts("bob") == [2, 0, 0]
    assert "wrong side of the kink" in fb("bob", 2) and "got 11.0" in fb("bob", 3)
    # an untouched exercise: one problem, said once, with Jupyter's numbering of code cells
    assert pts("carol") == [0, 0, 0]
    for k in (1, 2, 3):
        assert fb("carol", k).count("stub with your solution") == 1, fb("carol", k)
    assert fb("carol", 3) == ("✗ not attempted yet: In [7] still raises NotImplementedError (replace the "
                              "`raise NotImplementedError()` stub with your solution).")
    loop = {r["exercise"]: r for r in loop_rows}
    assert [loop[f"ch99-ex{k}"]["points"] for k in (1, 2, 3)] == [0, 0, 0]
    assert all("time limit" in loop[f"ch99-ex{k}"]["feedback"] for k in (1, 2, 3))
    assert pts("erin") == [2, 0, 1] and "In [5] raised RuntimeError: student bug" in fb("erin", 2)
    assert "`LeakyReLU` is not available" in fb("erin", 2)
    assert pts("frank") == [0, 3, 1] and "In [2] raised SystemExit" in fb("frank", 1)
    assert pts("gina") == [2, 0, 1] and "In [5] killed the kernel" in fb("gina", 2)
    assert pts("hank") == [0, 0, 0] and "printed more than" in fb("hank", 1)
    # the instructor's notebook does not exist in the sandbox; nothing leaks into exercise 2
    assert pts("ivy") == [0, 3, 1] and "FileNotFoundError" in fb("ivy", 1)
    assert pts("jack") == [0, 3, 1] and "FileNotFoundError" in fb("jack", 1)
    # tampering inside the kernel changes nothing: the verdict is computed elsewhere
    assert pts("kate") == [0, 0, 0] and "NotImplementedError" in fb("kate", 1)
    assert pts("leo") == [0, 0, 0] and "not a valid notebook" in fb("leo", 1)
    assert pts("mia") == [0, 0, 0] and fb("mia", 1) == "notebook not submitted"
    assert pts("nina") == [0, 3, 1] and "wrong sign" in fb("nina", 1)
    assert pts("oscar") == [2, 3, 1], [fb("oscar", k) for k in (1, 2, 3)]
    totals = (out / "totals.csv").read_text().splitlines()
    assert totals[0] == "student,points,max_points,percent" and totals[1] == "alice,6,6,100.0"
    assert any("% full" in line for line in logs)

    # ---- nothing changed in the submissions, nothing written outside the gradebook folders
    assert tree(subs) == before and tree(looping) == before_loop
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp.iterdir()) == sorted(top_before + ["grades", "grades_loop"])


def test_no_sandbox_runs_with_a_warning_in_grades_json(fixture_env):
    tmp = fixture_env
    _, _, good = editions()
    write_class(tmp / "subs", {"alice": good})
    logs = []
    rows = grade(tmp / "subs", tmp / "out", source=FIXTURE, timeout=240, jobs=1, sandbox=False, log=logs.append)
    assert [r["points"] for r in rows] == [2, 3, 1]
    run = json.loads((tmp / "out" / "grades.json").read_text())["run"]
    assert run["sandbox"] == "none (--no-sandbox)"
    assert len(run["warnings"]) == 1 and "WITHOUT the bubblewrap sandbox" in run["warnings"][0]
    assert any(line.startswith("WARNING: graded WITHOUT the bubblewrap sandbox") for line in logs)
    assert not list((tmp / "out").glob(".grading-*"))


def test_missing_bubblewrap_is_refused_with_what_to_install(fixture_env, monkeypatch, capsys):
    from minigrad.course import cli

    tmp = fixture_env
    write_class(tmp / "subs", {"alice": editions()[2]})
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install bubblewrap"):
        grade(tmp / "subs", tmp / "out", source=FIXTURE, log=lambda *a: None)
    assert cli.main(["grade", str(tmp / "subs"), "--out", str(tmp / "out2"), "--source", str(FIXTURE)]) == 2
    err = capsys.readouterr().err
    assert "bubblewrap" in err and "--no-sandbox" in err
    assert not (tmp / "out" / "grades.csv").exists() and not (tmp / "out2" / "grades.csv").exists()


@needs_bwrap
def test_real_book_reference_solutions_get_full_marks(tmp_path, monkeypatch):
    """The real chapters: the instructor's solutions, submitted as a student would, earn every point."""
    from minigrad.course.notebooks import fill_solutions, make_student_notebook, parse_exercises
    from minigrad.course.release import book_notebooks

    monkeypatch.delenv("MINIGRAD_COURSE_EXTRA_EXERCISES", raising=False)
    chapters = [p for p in book_notebooks(ROOT)
                if any(e.check_cell is not None for e in parse_exercises(nbformat.read(p, as_version=4)))]
    if not chapters:
        pytest.skip("no chapter notebook with exercises in book/ yet")
    subs = tmp_path / "subs"
    (subs / "reference").mkdir(parents=True)
    for p in chapters:
        instructor = nbformat.read(p, as_version=4)
        student = make_student_notebook(instructor)
        nbformat.write(fill_solutions(student, instructor), subs / "reference" / p.name)
    rows = grade(subs, tmp_path / "out", source=ROOT, timeout=300, jobs=2, log=lambda *a: None)
    ref = [r for r in rows if r["student"] == "reference"]
    assert ref and all(r["points"] == r["max_points"] for r in ref), \
        [(r["exercise"], r["feedback"][:300]) for r in ref if r["points"] != r["max_points"]]
    assert {r["notebook"] for r in ref} == {p.name for p in chapters}
    assert not any(r["flagged"] for r in ref)


def test_cli_help_names_the_sandbox():
    r = subprocess.run([sys.executable, "-m", "minigrad.course.cli", "grade", "--help"], capture_output=True,
                       text=True, check=True)
    assert "--no-sandbox" in r.stdout
