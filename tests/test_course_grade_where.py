"""Grading works wherever Python lives, and a failure of the grader's own is never a grade.

Issue 22 saw the sandbox fail to start when the Python environment was under /tmp or a home
folder (the sandbox's own tmpfs hid it), and ``--no-sandbox`` give a whole class 0 without a word
when the venv was inside the book's folder (the README's layout). Here the fixture course is
graded by a Python environment made under /tmp, under a home folder, and inside the course's own
folder, as root and, where the machine allows it, as an unprivileged user; and a class whose
notebooks need a module the grader's environment lacks ends non-zero, with "not graded" rows
and no LMS file.
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("nbformat")
pytest.importorskip("IPython")  # the grader's kernel is an IPython shell

import nbformat  # noqa: E402
from _grading import FIXTURE, NAME, ROOT, editions, write_class  # noqa: E402

from minigrad.course import sandbox  # noqa: E402

needs_bwrap = pytest.mark.skipif(sandbox.find_bwrap() is None and not os.environ.get("REQUIRE_SANDBOX"),
                                 reason="bubblewrap is not installed (.ci/run installs it)")
NOBODY = 65534


def _base_python(unprivileged: bool = False) -> str:
    """The interpreter to make a venv from: this one's, or for an unprivileged user one it can reach.

    (This machine's own Python may sit in root's home, which no other user can look into; the
    system's Python of the same version runs the same wheels.)
    """
    own = sys._base_executable if hasattr(sys, "_base_executable") else sys.executable
    if not unprivileged or _reachable(sys.base_prefix):
        return own
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    return system if os.path.exists(system) and _reachable("/usr/lib") else ""


def _reachable(path: str) -> bool:
    r = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "ls", path],
                       capture_output=True, text=True)
    return r.returncode == 0


def make_environment(base: Path, unprivileged: bool = False) -> Path:
    """A Python environment at ``base``: a venv, and a copy of minigrad in it (nothing of this checkout)."""
    venv = base / "venv"
    subprocess.run([_base_python(unprivileged), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    shutil.copytree(ROOT / "minigrad", site / "minigrad", ignore=shutil.ignore_patterns("__pycache__"))
    # the other packages (NumPy, Jupyter ...) come from this test's environment, read-only
    (site / "_mgc_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin" / "python"


def make_class(where: Path) -> tuple[Path, Path]:
    _, student, good = editions()
    subs = where / "subs"
    write_class(subs, {"alice": good, "carol": student})
    return subs, where / "out"


def grade_cli(python: Path, subs: Path, out: Path, source: Path, *, user: int | None = None, extra=(),
              home: Path | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["MINIGRAD_COURSE_EXTRA_EXERCISES"] = str(source / "exercises")
    env["PATH"] = f"{python.parent}:/usr/local/bin:/usr/bin:/bin"
    if home is not None:
        env["HOME"] = str(home)
    cmd = [str(python), "-m", "minigrad.course.cli", "grade", str(subs), "--out", str(out), "--source", str(source),
           "--jobs", "1", "--timeout", "240", *extra]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, cwd=str(subs.parent))


def _points(out: Path) -> dict:
    rows = json.loads((out / "grades.json").read_text())["rows"]
    got: dict = {}
    for r in rows:
        got.setdefault(r["student"], []).append(r["points"])
    return got


def _unprivileged_possible() -> str:
    """'' if bubblewrap works for an unprivileged user here, else why not."""
    if os.geteuid() != 0:
        return "the tests already run unprivileged"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    r = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        sandbox.find_bwrap() or "bwrap", "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/",
                        "--proc", "/proc", "--dev", "/dev", "true"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"unprivileged user namespaces are not allowed here ({r.stderr.strip()})"
    if not _base_python(unprivileged=True):  # bubblewrap binds the interpreter's prefix: the user must see it
        return f"no Python {sys.version_info.major}.{sys.version_info.minor} that an unprivileged user can reach"
    if not _reachable(sysconfig.get_paths()["purelib"]):
        return "an unprivileged user cannot read this environment's packages"
    return ""


def _place(kind: str, tmp_path: Path):
    """(base folder of the environment, the course root to grade from, a folder to remove afterwards)."""
    if kind == "tmp":
        base = Path(tempfile.mkdtemp(prefix="mgc-where-", dir="/tmp"))
        return base, FIXTURE, base
    if kind == "home":
        home = Path(tempfile.mkdtemp(prefix="mgc-where-", dir="/home" if os.path.isdir("/home") else None))
        return home / "instructor", FIXTURE, home
    # inside the clone: the README's layout, a venv inside the folder the course is graded from
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    return course / ".venv-inside", course, None


@needs_bwrap
@pytest.mark.parametrize("as_user", ["root", "unprivileged"])
@pytest.mark.parametrize("kind", ["tmp", "home", "clone"])
def test_grading_runs_wherever_python_lives(kind, as_user, tmp_path):
    user = None
    if as_user == "unprivileged":
        why = _unprivileged_possible()
        if why:
            pytest.skip(why)
        user = NOBODY
    base, source, cleanup = _place(kind, tmp_path)
    try:
        base.mkdir(parents=True, exist_ok=True)
        python = make_environment(base, unprivileged=user is not None)
        work = Path(tempfile.mkdtemp(prefix="mgc-where-work-", dir=str(tmp_path)))
        subs, out = make_class(work)
        if user is not None:  # the instructor's files readable, the class and the gradebook theirs
            for p in [base, *base.rglob("*")]:
                if not p.is_symlink():
                    os.chmod(p, os.stat(p).st_mode | (0o055 if p.is_dir() else 0o044))
            for p in [base, tmp_path, *base.parents, *tmp_path.parents]:
                if str(p) not in ("/", "/tmp", "/home"):
                    os.chmod(p, os.stat(p).st_mode | 0o055)
            for p in [work, *work.rglob("*")]:
                os.chown(p, user, user)
        r = grade_cli(python, subs, out, source, user=user, home=work)
        assert r.returncode == 0, r.stderr[-3000:]
        assert _points(out) == {"alice": [2, 3, 1], "carol": [0, 0, 0]}, r.stderr[-2000:]
        assert (out / "canvas.csv").exists()
        assert "could not create a grading sandbox" not in r.stderr
    finally:
        if cleanup is not None:
            shutil.rmtree(cleanup, ignore_errors=True)


def test_no_sandbox_grades_with_the_venv_inside_the_course_folder(tmp_path):
    """--no-sandbox with the README's layout: the guard must let the kernel import the course's packages."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    python = make_environment(course / ".venv")
    subs, out = make_class(tmp_path / "work")
    r = grade_cli(python, subs, out, course, extra=["--no-sandbox"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert _points(out) == {"alice": [2, 3, 1], "carol": [0, 0, 0]}


def _course_needing(tmp_path: Path, module: str) -> Path:
    """A copy of the fixture course whose notebook imports ``module`` (not installed anywhere)."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    nb_path = course / "book" / NAME
    nb = nbformat.read(nb_path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    first.source = f"import {module}\n" + first.source
    nbformat.write(nb, nb_path)
    return course


@pytest.mark.parametrize("no_sandbox", [True, False], ids=["no-sandbox", "sandbox"])
def test_an_import_the_grader_lacks_is_not_graded_and_writes_no_lms_file(no_sandbox, tmp_path, monkeypatch):
    if not no_sandbox and sandbox.find_bwrap() is None and not os.environ.get("REQUIRE_SANDBOX"):
        pytest.skip("bubblewrap is not installed (.ci/run installs it)")
    from minigrad.course.grade import GradingIncomplete, grade
    from minigrad.course.notebooks import fill_solutions, make_student_notebook

    course = _course_needing(tmp_path, "mgc_module_the_grader_lacks")
    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(course / "exercises"))
    instructor = nbformat.read(course / "book" / NAME, as_version=4)
    good = fill_solutions(make_student_notebook(instructor), instructor)
    subs = tmp_path / "subs"
    write_class(subs, {f"s{k}": good for k in range(6)})
    out = tmp_path / "out"
    logs = []
    with pytest.raises(GradingIncomplete) as err:
        grade(subs, out, source=course, timeout=240, jobs=1, sandbox=not no_sandbox, log=logs.append)
    assert err.value.stopped_early
    assert "mgc_module_the_grader_lacks" in str(err.value)
    rows = json.loads((out / "grades.json").read_text())["rows"]
    assert len(rows) == 18 and all(r["feedback"].startswith("not graded: ") and r["not_graded"] for r in rows)
    assert any("cannot import mgc_module_the_grader_lacks" in r["feedback"] for r in rows)
    assert not (out / "canvas.csv").exists() and not (out / "moodle.csv").exists()
    run = json.loads((out / "grades.json").read_text())["run"]
    assert run["not_graded"] == 18 and "mgc_module_the_grader_lacks" in run["stopped_early"]
    log_text = (out / "grading_log.txt").read_text()
    assert "not graded" in log_text and "no LMS file was written" in log_text
    # the command line: non-zero, one line that says why
    from minigrad.course import cli

    monkeypatch.chdir(tmp_path)
    code = cli.main(["grade", str(subs), "--out", str(tmp_path / "out2"), "--source", str(course), "--jobs", "1",
                     *(["--no-sandbox"] if no_sandbox else [])])
    assert code == 3


def test_a_student_who_imports_a_missing_module_is_graded_not_excused(tmp_path, monkeypatch):
    """Only the course's own imports count as the grader's fault: a student's stray import is the student's."""
    from minigrad.course.grade import grade

    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))
    _, _, good = editions()
    from _grading import variant

    write_class(tmp_path / "subs", {"alice": good, "bob": variant(good, before="import mgc_students_own_typo")})
    rows = grade(tmp_path / "subs", tmp_path / "out", source=FIXTURE, timeout=240, jobs=1, sandbox=False,
                 log=lambda *a: None)
    got = {(r["student"], r["exercise"]): r for r in rows}
    assert [got[("alice", f"ch99-ex{k}")]["points"] for k in (1, 2, 3)] == [2, 3, 1]
    assert not any(r.get("not_graded") for r in rows)
    assert [got[("bob", f"ch99-ex{k}")]["points"] for k in (1, 2, 3)] == [2, 3, 1]
    assert (tmp_path / "out" / "canvas.csv").exists()
