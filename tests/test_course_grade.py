"""End to end: release the fixture course, grade simulated submissions (good, partial, empty, hostile).

Asserts the gradebook's points and feedback, that no submission file changed, and that nothing
was written outside the grading folder.
"""
import csv
import hashlib
import json
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

from minigrad.course.grade import grade  # noqa: E402
from minigrad.course.notebooks import fill_solutions, make_student_notebook  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "course"
FIXTURE_NB = FIXTURE / "book" / "99_fixture.ipynb"
NAME = "99_fixture.ipynb"


def _stub_cell(nb, ex_id):
    return next(c for c in nb.cells if c.get("metadata", {}).get("minigrad_course", {}).get("exercise") == ex_id
                and c.metadata["minigrad_course"]["role"] == "stub")


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
            for p in sorted(root.rglob("*"))}


def _submissions(tmp: Path) -> dict:
    instructor = nbformat.read(FIXTURE_NB, as_version=4)
    student = make_student_notebook(instructor)
    good = fill_solutions(student, instructor)
    subs, outside = tmp / "submissions", tmp / "outside"
    outside.mkdir()

    def variant(base, **edits):
        nb = nbformat.from_dict(json.loads(json.dumps(base)))
        for ex_id, fn in edits.items():
            cell = _stub_cell(nb, ex_id.replace("_", "-"))
            cell.source = fn(cell.source)
        return nb

    peek = (f"leaked = open({str(FIXTURE_NB)!r}).read()\n")
    look_in_history = (
        "import glob\n_seen = ' '.join(map(str, In)) + ' '.join(map(str, globals().keys()))\n"
        "for _p in glob.glob('**', recursive=True) + glob.glob('../**', recursive=True):\n"
        "    try:\n        _seen += open(_p, errors='replace').read()\n    except Exception:\n        pass\n"
        "if 'HIDDEN' + '-CUBE' in _seen:  # the hidden test's assertion message\n"
        "    LeakyReLU = None  # would lose the points\n")
    writes = (f"open({str(outside / 'marker.txt')!r}, 'w').write('escaped')\n")
    sneaky_writes = (
        "import os, shutil\n"
        f"for _target in [{str(subs / 'jack' / 'pwned.txt')!r}, '../escape.txt', {str(outside / 'm2.txt')!r}]:\n"
        "    try:\n        open(_target, 'w').write('x')\n    except PermissionError:\n        pass\n"
        f"for _f in [lambda: os.remove({str(subs / 'jack' / NAME)!r}), lambda: os.kill(os.getpid(), 9),\n"
        f"           lambda: shutil.rmtree({str(subs)!r}), lambda: os.system('touch /tmp/mgc_pwned')]:\n"
        "    try:\n        _f()\n    except PermissionError:\n        pass\n")
    tamper = ("import minigrad.course as _mc, minigrad.course.diagnose as _md\n"
              "def check(*a, **k):\n    print('✓ all good')\n    return True\n"
              "_mc.check = check\n_mc.run_check = lambda *a, **k: _mc.CheckResult(True, '✓', 9, 9)\n"
              "_md.diagnose_function = lambda *a, **k: _mc.CheckResult(True, 'ok')\n")
    notebooks = {
        "alice": good,
        "bob": variant(good, ch99_ex2=lambda s: s.replace("x_leaky_saved > 0", "x_leaky_saved < 0"),
                       ch99_ex3=lambda s: s + "\ngrad_at_two = 11.0"),
        "carol": student,
        "dave": variant(good, ch99_ex1=lambda s: "while True:\n    pass\n" + s),
        "erin": variant(good, ch99_ex2=lambda s: "raise RuntimeError('student bug')\n" + s),
        "frank": variant(good, ch99_ex1=lambda s: "import sys\nsys.exit(3)\n" + s),
        "gina": variant(good, ch99_ex2=lambda s: "import os\nos._exit(1)\n" + s),
        "hank": variant(student, ch99_ex1=lambda s: "print('x' * 5_000_000)\n" + s),
        "ivy": variant(good, ch99_ex1=lambda s: peek + s, ch99_ex2=lambda s: s + "\n" + look_in_history),
        "jack": variant(good, ch99_ex1=lambda s: writes + s, ch99_ex2=lambda s: sneaky_writes + s),
        "kate": variant(student, ch99_ex1=lambda s: tamper + s),
    }
    for who, nb in notebooks.items():
        (subs / who).mkdir(parents=True)
        nbformat.write(nb, subs / who / NAME)
    (subs / "leo").mkdir()
    (subs / "leo" / NAME).write_text("this is not a notebook")
    (subs / "mia").mkdir()
    (subs / "mia" / "notes.txt").write_text("forgot to submit")
    return {"subs": subs, "outside": outside}


def test_grade_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))
    monkeypatch.chdir(tmp_path)
    paths = _submissions(tmp_path)
    subs, outside, out = paths["subs"], paths["outside"], tmp_path / "grades"
    # The infinite loop is graded on its own with a short time limit, the others with a generous one
    # (the machine may be busy: no assertion depends on how fast a correct notebook runs).
    looping = tmp_path / "looping"
    looping.mkdir()
    (subs / "dave").rename(looping / "dave")
    before, before_loop = _tree(subs), _tree(looping)
    top_before = sorted(p.name for p in tmp_path.iterdir())
    logs = []
    loop_rows = grade(looping, tmp_path / "grades_loop", source=FIXTURE, timeout=6, memory_mb=1024, jobs=1,
                      log=lambda *a: None)
    rows = grade(subs, out, source=FIXTURE, timeout=240, memory_mb=1024, jobs=2, log=logs.append)

    # ---- the gradebook files
    assert sorted(p.name for p in out.iterdir()) == ["canvas.csv", "grades.csv", "grades.json", "grading_log.txt",
                                                      "moodle.csv", "scores_by_exercise.png", "totals.csv"]
    assert (out / "scores_by_exercise.png").read_bytes()[:4] == b"\x89PNG"
    with open(out / "grades.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    assert json.loads((out / "grades.json").read_text()) == rows
    assert [r["student"] for r in csv_rows] == [r["student"] for r in rows]
    assert set(csv_rows[0]) == {"student", "notebook", "exercise", "points", "max_points", "parts", "feedback"}
    students = ["alice", "bob", "carol", "erin", "frank", "gina", "hank", "ivy", "jack", "kate", "leo", "mia"]
    assert [r["student"] for r in rows] == [s for s in students for _ in range(3)]
    got = {(r["student"], r["exercise"]): r for r in rows}

    def pts(who):
        return [got[(who, f"ch99-ex{k}")]["points"] for k in (1, 2, 3)]

    def fb(who, k):
        return got[(who, f"ch99-ex{k}")]["feedback"]

    assert [got[("alice", f"ch99-ex{k}")]["max_points"] for k in (1, 2, 3)] == [2, 3, 1]
    assert pts("alice") == [2, 3, 1] and fb("alice", 1).startswith("✓") and "hidden tests passed" in fb("alice", 1)
    assert pts("bob") == [2, 0, 0]
    assert "wrong side of the kink" in fb("bob", 2) and "got 11.0" in fb("bob", 3)
    assert pts("carol") == [0, 0, 0] and "NotImplementedError" in fb("carol", 1)
    loop = {r["exercise"]: r for r in loop_rows}
    assert [loop[f"ch99-ex{k}"]["points"] for k in (1, 2, 3)] == [0, 0, 0]
    assert all("time limit" in loop[f"ch99-ex{k}"]["feedback"] for k in (1, 2, 3))
    assert pts("erin") == [2, 0, 1] and "RuntimeError: student bug" in fb("erin", 2)
    assert pts("frank") == [0, 3, 1] and "SystemExit" in fb("frank", 1)
    assert pts("gina") == [2, 0, 1] and "killed the kernel" in fb("gina", 2)
    assert pts("hank") == [0, 0, 0] and "printed more than" in fb("hank", 1)
    assert pts("ivy") == [0, 3, 1]   # reading the instructor notebook fails; nothing leaked into ex2
    assert "PermissionError" in fb("ivy", 1) and "grader sandbox" in fb("ivy", 1)
    assert pts("jack") == [0, 3, 1] and "writing outside the working directory" in fb("jack", 1)
    assert pts("kate") == [0, 0, 0] and all("tampering detected" in fb("kate", k) for k in (1, 2, 3))
    assert "check" in fb("kate", 1)
    assert pts("leo") == [0, 0, 0] and "not a valid notebook" in fb("leo", 1)
    assert pts("mia") == [0, 0, 0] and fb("mia", 1) == "notebook not submitted"
    totals = (out / "totals.csv").read_text().splitlines()
    assert totals[0] == "student,points,max_points,percent" and totals[1] == "alice,6,6,100.0"
    assert any("% full" in line for line in logs)

    # ---- nothing changed in the submissions, nothing written outside the grading folder
    assert _tree(subs) == before and _tree(looping) == before_loop
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(top_before + ["grades", "grades_loop"])
    assert not os.path.exists("/tmp/mgc_pwned")


def test_real_book_reference_solutions_get_full_marks(tmp_path, monkeypatch):
    """The real chapters: the instructor's solutions, submitted as a student would, earn every point."""
    from minigrad.course.notebooks import parse_exercises
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
