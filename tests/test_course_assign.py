"""Assignments, submissions as LMSs deliver them, LMS gradebooks, partial credit, book checks (issue 11).

Fast tests: no kernel runs here (the end-to-end runs are in test_instructor_guide.py and
test_course_custom_exercise.py).
"""
import csv
import json
import os
import textwrap
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

import minigrad.course as course  # noqa: E402
from minigrad.course import CheckFailed, exercise, part, run_check  # noqa: E402
from minigrad.course import assignment as assignment_mod  # noqa: E402
from minigrad.course import custom, gradebook, submissions  # noqa: E402
from minigrad.course.notebooks import student_text  # noqa: E402
from minigrad.course.release import release, student_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COLLAPSED = r"collaps"


# ------------------------------------------------------------------------------------ assignments
def test_parse_chapters():
    assert assignment_mod.parse_chapters("3") == [3]
    assert assignment_mod.parse_chapters("4,3") == [3, 4]
    assert assignment_mod.parse_chapters("0, 2-4") == [0, 2, 3, 4]
    assert assignment_mod.parse_chapters(None) is None and assignment_mod.parse_chapters(" ") is None
    for bad in ("three", "5-3", "3;4"):
        with pytest.raises(ValueError, match="--chapters"):
            assignment_mod.parse_chapters(bad)


def test_unknown_chapter_is_a_clear_error():
    with pytest.raises(ValueError, match=r"no chapter 42 \(its chapters: 0, 1, 2, 3, 4"):
        assignment_mod.build(ROOT, [42])


def test_release_chapter_3_only(tmp_path, monkeypatch):
    monkeypatch.delenv("MINIGRAD_COURSE_EXTRA_EXERCISES", raising=False)
    out = tmp_path / "release"
    (out / "notebooks").mkdir(parents=True)
    # a notebook of an earlier release in the same folder is replaced; a file of the instructor's is kept
    stale = nbformat.v4.new_notebook(metadata={"minigrad_course": {"edition": "student", "notebook": "04_x.ipynb"}})
    nbformat.write(stale, out / "notebooks" / "04_sigmoid.ipynb")
    (out / "notebooks" / "README.txt").write_text("mine")
    res = release(out, ROOT, site=False, chapters=[3], log=lambda *a: None)
    kept = sorted(p.name for p in (out / "notebooks").iterdir() if not p.name.endswith(".whl"))
    assert kept == ["03_relu.ipynb", "README.txt"]
    assert res["notebooks"] == {"03_relu.ipynb": ["ch03-ex1", "ch03-ex2", "ch03-ex3"]}
    a = json.loads((out / "assignment.json").read_text())
    assert a["chapters"] == [3] and a["points"] == 7
    assert [(e["id"], e["points"]) for e in a["exercises"]] == [("ch03-ex1", 2), ("ch03-ex2", 2), ("ch03-ex3", 3)]
    assert a["title"] == "Chapter 3: ReLU as a custom Function"
    assert a["release_id"].startswith("ch03-") and a["format"] == assignment_mod.FORMAT
    nb = nbformat.read(out / "notebooks" / "03_relu.ipynb", as_version=4)
    ident = nb.metadata["minigrad_course"]
    assert ident == {"edition": "student", "notebook": "03_relu.ipynb", "chapter": 3, "release": a["release_id"],
                     "exercises": ["ch03-ex1", "ch03-ex2", "ch03-ex3"]}
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "exercise" in prose.lower() and not __import__("re").search(COLLAPSED, prose, __import__("re").I)
    loaded = assignment_mod.Assignment.load(out / "assignment.json")
    assert loaded.points == 7 and loaded.exercise_ids == ["ch03-ex1", "ch03-ex2", "ch03-ex3"]


def test_assignment_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="release --chapters"):
        assignment_mod.Assignment.load(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text('{"title": "x"}')
    with pytest.raises(ValueError, match="not an assignment written by minigrad-course release"):
        assignment_mod.Assignment.load(tmp_path / "bad.json")
    a = assignment_mod.build(ROOT, [3])
    a.exercises.append({"id": "ch03-ex9", "number": "3.9", "title": "gone", "notebook": "03_relu.ipynb",
                        "points": 1.0, "parts": {}})
    a.write(tmp_path)
    with pytest.raises(ValueError, match="lists ch03-ex9, which the book's notebooks no longer have"):
        assignment_mod.for_grading(ROOT, assignment=tmp_path / "assignment.json")
    with pytest.raises(ValueError, match="either --chapters or --assignment"):
        assignment_mod.for_grading(ROOT, chapters=[3], assignment=tmp_path / "assignment.json")


def test_restrict_grades_only_the_assignment_out_of_its_points(tmp_path):
    from minigrad.course.grade import SourceNotebook

    def src(name, *ids):
        return SourceNotebook(name, [{"id": i, "title": i, "max_points": 2.0, "cell_spec": {}} for i in ids])

    sources = [src("02_x.ipynb", "ch02-ex1"), src("03_relu.ipynb", "ch03-ex1", "ch03-ex2")]
    a = assignment_mod.Assignment(title="t", chapters=[3], notebooks=[{"name": "03_relu.ipynb"}],
                                  exercises=[{"id": "ch03-ex1", "points": 4.0}])
    got = assignment_mod.restrict(sources, a)
    assert [s.name for s in got] == ["03_relu.ipynb"]
    assert got[0].exercises == [{"id": "ch03-ex1", "title": "ch03-ex1", "max_points": 4.0, "registry_points": 2.0,
                                 "cell_spec": {}}]
    assert assignment_mod.restrict(sources, None) is sources
    # parts scale with the exercise when the assignment's points differ from the registry's
    parts = [{"name": "forward", "passed": True, "points": 1.0, "max_points": 1.0, "message": ""}]
    assert gradebook.scale_parts(parts, got[0].exercises[0])[0]["points"] == 2.0


# ------------------------------------------------------------------------------ student edition text
def test_student_text_drops_what_it_says_about_collapsed_solutions():
    md = textwrap.dedent("""\
        ## Exercises

        Each exercise has a collapsed solution and a one-line self-check. Write your answer
        in the solution cell, then run the check below it.

        Chapters end with exercises. The solution is collapsed: try first, then click. The cell after it checks.

        - **Do the exercises.** Each chapter ends with exercises; the solutions are
          collapsed — try first, then click to compare.

        ```python
        x = "a collapsed solution stays in code"
        ```

        ```{exercise} Title
        :label: ch03-ex1
        Text.
        ```
        See [chapter 3](03_relu.ipynb#sec) and [chapter 4](04_sigmoid.ipynb), [the web](https://x.org/a.md).""")
    got = student_text(md, keep_link=lambda t: "://" in t or t.startswith("03"))
    assert "Each exercise has a one-line self-check. Write your answer\nin the solution cell" in got
    assert "Chapters end with exercises. The cell after it checks." in got
    assert "- **Do the exercises.** Each chapter ends with exercises." in got
    assert 'x = "a collapsed solution stays in code"' in got
    assert "```{exercise} Title\n:label: ch03-ex1\nText.\n```" in got
    assert "[chapter 3](03_relu.ipynb#sec)" in got and "and chapter 4," in got and "(https://x.org/a.md)" in got
    assert got.count("collaps") == 1  # only inside the code block
    plain = "A paragraph\nwith two lines.\n\n- an item\n  continued."
    assert student_text(plain) == plain


def test_student_site_config_points_at_the_student_repository_or_nowhere():
    import yaml

    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    # an instructor repository with launch buttons, as once the course is public
    cfg["repository"]["url"] = "https://github.com/instructor/private-course"
    cfg["launch_buttons"].update(binderhub_url="https://mybinder.org", colab_url="https://colab.research.google.com")
    cfg["html"]["use_repository_button"] = True
    none = student_config(cfg)
    assert "repository" not in none and none["html"]["use_repository_button"] is False
    assert not any(none["launch_buttons"].get(k) for k in ("binderhub_url", "colab_url", "jupyterhub_url"))
    assert none["title"].endswith("(student edition)")
    url = "https://github.com/example-course/relu-student"
    mine = student_config(cfg, repository_url=url, repository_branch="fall")
    assert mine["repository"] == {"url": url, "branch": "fall", "path_to_book": ""}
    assert mine["launch_buttons"] == cfg["launch_buttons"] and mine["html"]["use_repository_button"] is True
    assert cfg["repository"]["url"] not in json.dumps(none) + json.dumps(mine)


# ------------------------------------------------------------------------------------ submissions
def _student_nb(name="03_relu.ipynb", release="r1", code="x = 1"):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["minigrad_course"] = {"edition": "student", "notebook": name, "chapter": 3, "release": release}
    return nb


def test_submissions_are_found_as_lms_deliver_them(tmp_path, monkeypatch):
    subs = tmp_path / "subs"
    book = tmp_path / "book"
    book.mkdir()
    (book / "03_relu.ipynb").write_text("instructor")
    wanted = ["03_relu.ipynb"]

    def put(rel, nb=None, text=None, mtime=None):
        p = subs / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if nb is not None:
            nbformat.write(nb, p)
        else:
            p.write_text(text or "")
        if mtime:
            os.utime(p, (mtime, mtime))
        return p

    put("alice/03_relu (1).ipynb", _student_nb())                       # browser copy
    put("bob/03_relu-2.ipynb", _student_nb())                            # LMS resubmission suffix
    put("carol/carol_12345_67890_03_relu.ipynb", _student_nb())          # Canvas prefix, in a folder
    put("dave/homework.ipynb", _student_nb())                            # renamed: the metadata says what it is
    put("dave/.ipynb_checkpoints/03_relu-checkpoint.ipynb", _student_nb())
    put("erin/03_relu.ipynb", _student_nb(), mtime=1_000_000)            # two files: the newest is graded
    put("erin/03_relu (2).ipynb", _student_nb(code="newest"), mtime=2_000_000)
    put("frank/scratch.ipynb", nbformat.v4.new_notebook())               # matches nothing
    put("frank/04_sigmoid.ipynb", _student_nb("04_sigmoid.ipynb"))      # another chapter
    put("gina/03_relu.ipynb", _student_nb(release="r0"))                 # an older release
    put("Hank Lee_4242_assignsubmission_file_/sub/03_relu.ipynb", _student_nb())  # Moodle folder, nested
    put("smithivy_777_888_03_relu.ipynb", _student_nb())                 # Canvas flat download
    put("smithivy_777_889_data.csv", text="1,2")
    put("smithjo_LATE_999_111_03_relu (1).ipynb", _student_nb())
    put("notes.txt", text="?")
    put(".DS_Store", text="")
    put("__MACOSX/x", text="")
    (subs / "mallory").symlink_to(book, target_is_directory=True)       # a folder that is a symlink
    put("nick/data.csv", text="1")
    (subs / "nick" / "03_relu.ipynb").symlink_to(book / "03_relu.ipynb")  # a notebook that is a symlink
    (subs / "nick" / "secrets").symlink_to(book, target_is_directory=True)
    big = put("olga/03_relu.ipynb", _student_nb(code="x = 1  # " + "x" * 300_000))  # outputs of megabytes
    monkeypatch.setattr(submissions, "NOTEBOOK_SIZE_LIMIT_MB", 0.1)
    assert big.stat().st_size > 0.1 * 2**20
    put("pat/03_relu.ipynb", text="not json at all")                     # matched by name; the grader says why

    scan = submissions.scan(subs, wanted, release="r1")
    got = {s: scan.get(s, "03_relu.ipynb") for s in scan.student_ids}
    assert scan.student_ids == sorted(["Hank Lee_4242_assignsubmission_file_", "alice", "bob", "carol", "dave", "erin",
                                       "frank", "gina", "mallory", "nick", "olga", "pat", "smithivy", "smithjo"])
    for who, how in [("alice", "identity"), ("bob", "identity"), ("carol", "identity"), ("dave", "identity"),
                     ("gina", "identity"), ("smithivy", "identity"), ("smithjo", "identity"), ("pat", "file name")]:
        assert got[who].path is not None and got[who].how == how and not got[who].refused, who
    assert got["dave"].path.name == "homework.ipynb"
    assert got["erin"].path.name == "03_relu (2).ipynb"
    assert got["frank"].path is None
    assert got["Hank Lee_4242_assignsubmission_file_"].path.parent.name == "sub"
    assert scan.student("smithivy").lms_id == "777" and scan.student("smithjo").lms_id == "999"
    assert "symbolic link" in got["mallory"].refused and str(book) in got["mallory"].refused
    assert "symbolic link" in got["nick"].refused
    assert "over the grader's" in got["olga"].refused and "MB limit" in got["olga"].refused
    log = "\n".join(scan.log)
    for needle in ["dave/.ipynb_checkpoints/: a hidden folder", "frank/scratch.ipynb: matches no notebook",
                   "frank/04_sigmoid.ipynb: the student edition of 04_sigmoid.ipynb, which is not part",
                   "gina/03_relu.ipynb: released as r0", "erin: 2 files for 03_relu.ipynb: graded 'erin/03_relu (2).ipynb' (the newest)",
                   "notes.txt: a file outside any student folder", ".DS_Store: a hidden file", "__MACOSX: macOS",
                   "nick/secrets/: a symbolic link"]:
        assert needle in log, (needle, log)

    # the working folder: the notebook's folder (data beside it), the notebook under its released name;
    # Canvas's flat files: only that student's, without the prefix
    work = tmp_path / "work"
    nb = submissions.prepare(got["Hank Lee_4242_assignsubmission_file_"], "03_relu.ipynb", work / "h")
    assert nb == work / "h" / "03_relu.ipynb" and nb.exists()
    submissions.prepare(got["smithivy"], "03_relu.ipynb", work / "i")
    assert sorted(p.name for p in (work / "i").iterdir()) == ["03_relu.ipynb", "data.csv"]
    submissions.prepare(scan.get("dave", "03_relu.ipynb"), "03_relu.ipynb", work / "d")
    assert not (work / "d" / ".ipynb_checkpoints").exists() and (work / "d" / "03_relu.ipynb").exists()


def test_name_candidates():
    c = submissions.name_candidates("name_12345_67890_03_relu (1).ipynb")
    assert c[0] == "name_12345_67890_03_relu (1).ipynb" and {"03_relu (1).ipynb", "03_relu.ipynb"} <= set(c)
    assert submissions.name_candidates("03_relu.ipynb") == ["03_relu.ipynb"]
    assert "03_relu.ipynb" in submissions.name_candidates("03_relu-2.ipynb")


# ------------------------------------------------------------------------------------ gradebooks
def _rows(*students):
    out = []
    for s, pts in students:
        for ex, (p, m) in zip(("ch03-ex1", "ch03-ex2"), pts):
            out.append({"student": s, "notebook": "03_relu.ipynb", "exercise": ex, "points": float(p),
                        "max_points": float(m), "parts": [], "feedback": "=1+1 ✓ ok" if s == "alice" else "-x"})
    return out


def test_formula_injection_is_escaped_everywhere(tmp_path):
    evil = '=HYPERLINK("evil.invalid","grade")'
    assert gradebook.escape_cell(evil) == "'" + evil
    for s in ("+1", "-1", "@SUM(A1)", "\t=1", "\r=1", "＝1", " =1+1", "\u00a0=HYPERLINK(1)", "  @A1", "\u3000-2"):
        assert gradebook.escape_cell(s).startswith("'"), repr(s)
    assert gradebook.escape_cell(" a = b") == " a = b"
    assert gradebook.escape_cell("alice") == "alice" and gradebook.escape_cell(2.5) == "2.5"
    rows = _rows((evil, [(1, 2), (0, 3)]), ("alice", [(2, 2), (3, 3)]))
    gradebook.write_gradebook(tmp_path, rows, title="@title", points=5, log=lambda *a: None)
    for name in ("grades.csv", "totals.csv", "canvas.csv", "moodle.csv"):
        with open(tmp_path / name, newline="", encoding="utf-8") as f:
            cells = [c for row in csv.reader(f) for c in row]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@"))], (name, cells)
        assert any(c == "'" + evil for c in cells), name


def test_canvas_and_moodle_files_with_a_roster(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,folder,Email address\n"
                      "Points Possible,,,,,,\n"
                      '"Doe, Alice",1001,A1,alice,S1,alice,alice@example.edu\n'
                      '"Roe, Bob",1002,B2,bob,S1,bob,bob@example.edu\n'
                      '"Poe, Zed",1003,Z3,zed,S2,zed,zed@example.edu\n')
    r = gradebook.load_roster(roster)
    assert set(r) == {"alice", "bob", "zed"}
    lines = []
    rows = _rows(("alice", [(2, 2), (1.5, 3)]), ("bob", [(0, 2), (0, 3)]), ("carl", [(2, 2), (3, 3)]))
    gradebook.write_gradebook(tmp_path, rows, title="Chapter 3", points=5, roster=r, lms_ids={"carl": "2024"},
                              log_lines=["x.ipynb: matches no notebook"], log=lines.append)
    canvas = list(csv.reader(open(tmp_path / "canvas.csv", newline="")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Chapter 3"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "5"]
    assert canvas[2:] == [["Doe, Alice", "1001", "A1", "alice", "S1", "3.5"], ["Roe, Bob", "1002", "B2", "bob", "S1", "0"],
                          ["carl", "2024", "", "", "", "5"]]
    moodle = list(csv.reader(open(tmp_path / "moodle.csv", newline="")))
    assert moodle == [["Email address", "Chapter 3"], ["alice@example.edu", "3.5"], ["bob@example.edu", "0"],
                      ["", "5"]]
    log = (tmp_path / gradebook.LOG_NAME).read_text()
    assert "x.ipynb: matches no notebook" in log and "carl: not in the roster" in log
    assert "zed: in the roster, but no submission folder" in log
    assert any("carl: not in the roster" in line for line in lines)
    # a roster without a folder column, or without any LMS column, is refused with the reason
    (tmp_path / "r2.csv").write_text("name,ID\nalice,1\n")
    with pytest.raises(ValueError, match="no 'folder' column"):
        gradebook.load_roster(tmp_path / "r2.csv")
    (tmp_path / "r3.csv").write_text("folder,name\nalice,A\n")
    with pytest.raises(ValueError, match="no LMS identity column"):
        gradebook.load_roster(tmp_path / "r3.csv")


def test_gradebook_shows_parts(tmp_path):
    rows = [{"student": "a", "notebook": "n.ipynb", "exercise": "ch03-ex4", "points": 1.0, "max_points": 2.0,
             "parts": [{"name": "forward", "passed": True, "points": 1.0, "max_points": 1.0, "message": ""},
                       {"name": "backward", "passed": False, "points": 0.0, "max_points": 1.0, "message": "sign"}],
             "feedback": "f"}]
    gradebook.write_gradebook(tmp_path, rows, log=lambda *a: None)
    got = list(csv.DictReader(open(tmp_path / "grades.csv", newline="")))
    assert got[0]["parts"] == "forward 1/1; backward 0/1" and got[0]["points"] == "1"
    assert json.loads((tmp_path / "grades.json").read_text())["rows"][0]["parts"][1]["message"] == "sign"


# ------------------------------------------------------------------------- registry and partial credit
def test_exercise_registration_errors_are_clear():
    with pytest.raises(ValueError, match="'chNN-exK'"):
        exercise("relu-1")
    with pytest.raises(ValueError, match="points must be a positive number"):
        exercise("ch90-ex7", points=0)
    with pytest.raises(ValueError, match="minutes"):
        exercise("ch90-ex7", minutes="ten")
    with pytest.raises(ValueError, match=r"add up to 3, not to the exercise's points=2"):
        exercise("ch90-ex7", points=2, parts={"forward": 1, "backward": 2})
    ok = exercise("ch90-ex7", points=2, title="t", minutes=5, objective="o  with\nspaces")(lambda a: True)
    ex = course.registry["ch90-ex7"]
    assert ok is not None and ex.minutes == 5 and ex.objective == "o with spaces" and ex.number == "90.7"
    assert ex.missing_metadata() == [] and ex.origin.endswith(".py:" + ex.origin.rsplit(":", 1)[1])
    exercise("ch90-ex8")(lambda a: True)
    assert course.registry["ch90-ex8"].missing_metadata() == ["minutes", "objective"]


def test_partial_credit_scores_independent_parts():
    @exercise("ch90-ex9", points=3, title="Parts", minutes=5, objective="o", parts={"forward": 1, "backward": 2})
    def _(answer):
        if answer is None:
            raise CheckFailed("pass your answer")
        with part("forward", "forward values match"):
            if answer["forward"] != "ok":
                raise CheckFailed("forward is wrong")
        with part("backward"):
            if answer["backward"] == "raise":
                raise ZeroDivisionError("in the learner's backward")
            assert answer["backward"] == "ok", "backward has the wrong sign"
        return "done"

    r = run_check("ch90-ex9", {"forward": "ok", "backward": "sign"})
    assert (r.passed, r.points, r.max_points) == (False, 1.0, 3.0)
    assert [(p["name"], p["points"], p["passed"]) for p in r.parts] == [("forward", 1.0, True), ("backward", 0.0, False)]
    assert r.as_dict()["parts"] == r.parts and r.as_dict()["points"] == 1.0
    assert "Exercise 90.9 (Parts): 1/3 points" in r.message and "✓ forward [1/1]: forward values match" in r.message
    assert "✗ backward [0/2]: backward has the wrong sign" in r.message
    r = run_check("ch90-ex9", {"forward": "bad", "backward": "raise"})
    assert r.points == 0 and "ZeroDivisionError" in r.parts[1]["message"]
    r = run_check("ch90-ex9", {"forward": "ok", "backward": "ok"})
    assert r.passed and r.points == 3 and r.message.startswith("✓ Exercise 90.9 (Parts): 3/3 points")
    r = run_check("ch90-ex9", None)  # the check itself fails before any part: every part fails with the reason
    assert r.points == 0 and all(p["message"] == "not checked: pass your answer" for p in r.parts)

    @exercise("ch90-ex10", points=1, minutes=1, objective="o")
    def _(answer):
        with part("x"):
            pass

    assert "declares no parts" in run_check("ch90-ex10", 1).message


# ------------------------------------------------------------------------------ the book's own checks
CUSTOM = '''
from minigrad.course import CheckFailed, exercise

@exercise("ch03-ex1", points=5, title="Leaky ReLU, re-pointed", minutes=3, objective="re-pointed")
def _(answer):
    return answer == "custom" or (False, "the book's own check")

@exercise("ch91-ex1", points=1, title="Brand new", minutes=2, objective="new")
def _(answer):
    return True
'''


def test_book_checks_are_found_by_check_and_override(tmp_path, monkeypatch):
    original = course.registry["ch03-ex1"] if "ch03-ex1" in course.registry else None
    book = tmp_path / "course_repo"
    (book / "course" / "checks").mkdir(parents=True)
    (book / "book").mkdir()
    (book / "course" / "checks" / "extras.py").write_text(CUSTOM)
    (book / "course" / "checks" / "_helpers.py").write_text("raise SystemExit('never loaded')")
    monkeypatch.chdir(book / "book")  # a notebook's kernel starts in the notebook's folder
    try:
        course._load_exercises()
        assert run_check("ch91-ex1", 1).passed
        r = run_check("ch03-ex1", "custom")
        assert r.passed and r.max_points == 5 and "re-pointed" in r.message
        assert custom.discover() == [book / "course" / "checks"]
        names = [n for n, _ in custom.bundle(book)]
        assert names == ["minigrad.course.exercises.book_extras"]
        (book / "course" / "checks" / "broken.py").write_text("import no_such_module_here\n")
        course._load_exercises()
        with pytest.raises(KeyError, match="broken.py .*No module named"):
            course.get_exercise("ch91-ex9")
    finally:
        if original is not None:
            course.registry["ch03-ex1"] = original
        course.registry.pop("ch91-ex1", None)
        custom.load_errors.clear()


def test_the_grader_reads_the_book_checks_and_skips_practice_exercises(tmp_path):
    """load_sources takes points and graded= from the book's course/checks/ (the grader's cwd is anywhere)."""
    from minigrad.course.grade import load_sources

    original = course.registry.get("ch03-ex2")
    root = tmp_path / "course_repo"
    (root / "book").mkdir(parents=True)
    (root / "book" / "03_relu.ipynb").write_text((ROOT / "book" / "03_relu.ipynb").read_text())
    (root / "course" / "checks").mkdir(parents=True)
    (root / "course" / "checks" / "practice.py").write_text(
        "from minigrad.course import exercise\n"
        "@exercise('ch03-ex2', points=2, title='A one-byte mask', minutes=15, objective='o', graded=False)\n"
        "def _(answer):\n    return True\n"
        "@exercise('ch03-ex3', points=6, title='ReLU6, worth more', minutes=25, objective='o')\n"
        "def _(answer):\n    return True\n")
    original3 = course.registry.get("ch03-ex3")
    try:
        (src,) = load_sources(root)
        assert [(e["id"], e["max_points"]) for e in src.exercises] == [("ch03-ex1", 2.0), ("ch03-ex3", 6.0)]
    finally:
        for key, ex in (("ch03-ex2", original), ("ch03-ex3", original3)):
            if ex is not None:
                course.registry[key] = ex


def test_a_hostile_notebook_file_has_no_identity_and_does_not_stop_the_scan(tmp_path):
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "03_relu.ipynb").write_text("[" * 200_000 + "]" * 200_000)  # JSON too deep to parse
    assert submissions.notebook_identity(tmp_path / "eve" / "03_relu.ipynb") == {}
    found = submissions.scan(tmp_path, ["03_relu.ipynb"])
    assert found.get("eve", "03_relu.ipynb").how == "file name"


# ------------------------------------------------------------------------------ the public website
def test_hidden_tests_are_stripped_from_downloadable_notebooks(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("strip_hidden_tests", ROOT / "_ext" / "strip_hidden_tests.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    src = tmp_path / "_sources" / "book"
    src.mkdir(parents=True)
    text = (ROOT / "book" / "03_relu.ipynb").read_text()
    (src / "03_relu.ipynb").write_text(text)
    assert "### BEGIN HIDDEN TESTS" in text
    assert mod.strip_folder(tmp_path / "_sources") == 3
    after = (src / "03_relu.ipynb").read_text()
    assert "BEGIN HIDDEN TESTS" not in after and 'check(\\"ch03-ex1\\"' in after
    assert mod.strip_folder(tmp_path / "_sources") == 0


def test_public_site_downloads_have_no_hidden_tests():
    """The built website (bash scripts/build_book.sh) offers each chapter's .ipynb: no hidden tests in it."""
    sources = ROOT / "_build" / "html" / "_sources"
    if not (ROOT / "_build" / "html" / ".build-ok").exists():
        pytest.skip("the book is not built (bash scripts/build_book.sh; scripts/test.sh builds it first)")
    nbs = sorted(sources.rglob("*.ipynb"))
    assert len(nbs) >= 5
    for p in nbs:
        assert "BEGIN HIDDEN TESTS" not in p.read_text(), p


def test_hidden_tests_per_part_and_the_verdict():
    from minigrad.course import _extract
    from minigrad.course._verdict import check_parts, exercise_verdict

    src = "x = 1\n# part: forward\nassert x == 1\n#part: backward\ny = 2\nassert x == 2, 'sign'\n"
    assert [(s.number, s.part) for s in _extract.hidden_steps(src)] == [(0, None), (1, "forward"), (0, "backward"),
                                                                       (2, "backward")]
    assert [(s.number, s.part) for s in _extract.hidden_steps("### only\nassert True\n")] == [(1, None)]
    r = course.CheckResult(True, "m", 3.0, 3.0, "ch90-ex9", "t", parts=[
        {"name": "forward", "passed": True, "points": 1.0, "max_points": 1.0, "message": ""},
        {"name": "backward", "passed": True, "points": 2.0, "max_points": 2.0, "message": ""}]).as_dict()
    parts = check_parts([r])
    assert parts == r["parts"]
    check = {"results": [r], "error": None}
    assert exercise_verdict(check, {"passed": True}, True, parts) == {"outcome": "passed", "parts": parts}
    # a hidden test of the backward part costs that part only
    failed = {"passed": False, "failures": [{"failed": 2, "kind": "sign", "part": "backward"}]}
    v = exercise_verdict(check, failed, True, parts)
    assert v["outcome"] == "partial" and [p["points"] for p in v["parts"]] == [1.0, 0.0]
    assert parts[1]["points"] == 2.0  # the input is left as it was
    # a failure outside the parts (set-up, or the checker died) costs the whole exercise
    for whole in ({"passed": False, "failures": [{"failed": 0, "kind": "raised", "part": None}]},
                  {"passed": False, "kind": "died"}):
        v = exercise_verdict(check, whole, True, parts)
        assert v["outcome"] == "failed" and [p["points"] for p in v["parts"]] == [0.0, 0.0]
    # the check failed one part: the other keeps its points; without parts, a failed check is a 0
    half = {**r, "passed": False, "points": 1.0, "parts": [dict(parts[0]), {**parts[1], "passed": False,
                                                                             "points": 0.0}]}
    v = exercise_verdict({"results": [half], "error": None}, {"passed": True}, True, check_parts([half]))
    assert v["outcome"] == "partial" and [p["points"] for p in v["parts"]] == [1.0, 0.0]
    plain = course.CheckResult(False, "m", 0.0, 2.0, "ch90-ex1", "t").as_dict()
    assert exercise_verdict({"results": [plain], "error": None}, None, False, []) == {"outcome": "failed",
                                                                                    "parts": []}
    # a part's points never exceed its maximum, whatever the reply says
    assert check_parts([{"parts": [{"name": "f", "points": 9, "max_points": 1, "passed": True}, "junk"]}]) == [
        {"name": "f", "passed": True, "points": 1.0, "max_points": 1.0, "message": ""}]


def test_partial_credit_becomes_points_in_the_gradebook():
    from minigrad.course.grade import exercise_points

    ex = {"id": "ch90-ex9", "max_points": 6.0, "registry_points": 3.0}  # released at twice the registry's points
    parts = [{"name": "forward", "passed": True, "points": 1.0, "max_points": 1.0},
             {"name": "backward", "passed": False, "points": 0.0, "max_points": 2.0}]
    assert exercise_points(ex, {"outcome": "partial", "parts": parts}) == 2.0
    assert exercise_points(ex, {"outcome": "partial", "parts": parts, "flagged": "tampering: x"}) == 0.0
    assert exercise_points(ex, {"outcome": "failed", "parts": parts}) == 0.0
    assert exercise_points(ex, {"outcome": "passed", "check": [{"points": 3.0, "max_points": 3.0}]}) == 6.0
    assert exercise_points(ex, {"outcome": "passed"}) == 6.0  # hidden tests only
    assert exercise_points(ex, {"outcome": "partial"}) == 0.0


def test_cli_names_the_assignment_options():
    import subprocess
    import sys

    def help_of(*cmd):
        return subprocess.run([sys.executable, "-m", "minigrad.course.cli", *cmd, "--help"], capture_output=True,
                              text=True, check=True).stdout

    assert all(w in help_of("release") for w in ("--chapters", "--repository-url", "--title", "--no-site"))
    assert all(w in help_of("grade") for w in ("--chapters", "--assignment", "--roster", "--lms-column"))
    assert all(w in help_of("new-exercise") for w in ("--title", "--answer", "--points", "--minutes"))
    assert "--write" in help_of("catalogue") and "--check" in help_of("catalogue")
    both = subprocess.run([sys.executable, "-m", "minigrad.course.cli", "grade", "s", "--out", "o", "--chapters", "3",
                           "--assignment", "a.json"], capture_output=True, text=True)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    bad = subprocess.run([sys.executable, "-m", "minigrad.course.cli", "release", "--out", "o", "--chapters", "x",
                          "--no-site"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--chapters 'x'" in bad.stderr


def test_new_exercise_refuses_what_would_break_the_book():
    from minigrad.course.scaffold import new_exercise

    with pytest.raises(ValueError, match="already has an exercise ch03-ex1"):
        new_exercise("ch03-ex1", "Twice", "X", source=ROOT, log=lambda *a: None)
    with pytest.raises(ValueError, match="'chNN-exK'"):
        new_exercise("relu4", "X", "X", source=ROOT, log=lambda *a: None)
    with pytest.raises(ValueError, match="--answer"):
        new_exercise("ch03-ex9", "X", "not a name", source=ROOT, log=lambda *a: None)
    with pytest.raises(FileNotFoundError, match="no notebook of chapter 42"):
        new_exercise("ch42-ex1", "X", "X", source=ROOT, log=lambda *a: None)
    assert not (ROOT / "course").exists()


def test_a_student_not_graded_is_left_out_of_the_lms_files(tmp_path):
    rows = _rows(("alice", [(2, 2), (3, 3)]), ("bob", [(0, 2), (0, 3)]))
    rows[2]["not_graded"] = "the grader's Python environment cannot import matplotlib"
    gradebook.write_gradebook(tmp_path, rows, points=5, log=lambda *a: None)
    for name in ("canvas.csv", "moodle.csv"):
        text = (tmp_path / name).read_text()
        assert "alice" in text and "bob" not in text, (name, text)
    assert "bob" in (tmp_path / "totals.csv").read_text()
    # no number where the grader failed: the row's points cell is empty, the total says so
    with open(tmp_path / "grades.csv", newline="") as f:
        bob = [r for r in csv.DictReader(f) if r["student"] == "bob"]
    assert [r["points"] for r in bob] == ["", "0"]
    with open(tmp_path / "totals.csv", newline="") as f:
        total = {r["student"]: r for r in csv.DictReader(f)}
    assert total["bob"]["points"] == "" and total["bob"]["percent"] == "not graded"
    assert total["alice"]["percent"] == "100.0"
    from minigrad.course.grade import summary_table

    table = summary_table(rows)
    assert "n/g" in table and "not graded" in table.splitlines()[3] and "5/5" in table.splitlines()[2]
    gradebook.write_gradebook(tmp_path, rows, points=5, log=lambda *a: None, lms=False)
    assert not (tmp_path / "canvas.csv").exists() and not (tmp_path / "moodle.csv").exists()
