"""Runs that can be trusted: one run per gradebook folder at a time; SIGTERM/SIGINT stop every notebook at
once, remove the scratch folder and leave the previous gradebook untouched; a killed run's scratch is
cleaned by the next run."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbformat")
pytest.importorskip("IPython")  # the grader's kernel is an IPython shell

from _grading import FIXTURE, editions, processes_under, processes_with, variant, wait_until, write_class  # noqa: E402

from minigrad.course import sandbox  # noqa: E402
from minigrad.course.grade import RunLock, grade  # noqa: E402

PREVIOUS = "student,notebook,exercise,points\nsomeone,99_fixture.ipynb,ch99-ex1,2\n"


def _cli(subs: Path, out: Path, *extra) -> subprocess.Popen:
    env = dict(os.environ, MINIGRAD_COURSE_EXTRA_EXERCISES=str(FIXTURE / "exercises"))
    return subprocess.Popen([sys.executable, "-m", "minigrad.course.cli", "grade", str(subs), "--out", str(out),
                             "--jobs", "2", "--timeout", "600", "--source", str(FIXTURE), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def _interrupt(run: subprocess.Popen, sig: int) -> str:
    """Send ``sig`` to a running `grade` and return its stderr (it is killed if it does not stop)."""
    try:
        run.send_signal(sig)
        return run.communicate(timeout=60)[1]
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)


def _slow_class(tmp: Path, cell: str) -> tuple[Path, Path]:
    _, _, good = editions()
    subs, out = tmp / "subs", tmp / "out"
    write_class(subs, {"slow": variant(good, before=cell), "also-slow": variant(good, before=cell)})
    out.mkdir()
    (out / "grades.csv").write_text(PREVIOUS)
    return subs, out


@pytest.mark.skipif(sandbox.find_bwrap() is None and not os.environ.get("REQUIRE_SANDBOX"),
                    reason="bubblewrap is not installed (.ci/run installs it)")
def test_a_second_run_refuses_and_sigterm_stops_every_sandbox(tmp_path):
    subs, out = _slow_class(tmp_path, "import subprocess, time\nsubprocess.Popen(['sleep', '1234.5'])\n"
                                      "time.sleep(600)")
    first = _cli(subs, out)
    try:
        assert wait_until(lambda: len(processes_with("sleep 1234.5")) == 2, 240)
        second = _cli(subs, out)
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2 and "another `minigrad-course grade` is writing into" in err, err
    finally:
        err = _interrupt(first, signal.SIGTERM)
    assert first.returncode == 128 + signal.SIGTERM and "interrupted by SIGTERM" in err, err
    assert wait_until(lambda: processes_with("sleep 1234.5") == [], 10)
    assert sorted(p.name for p in out.iterdir()) == ["grades.csv"]
    assert (out / "grades.csv").read_text() == PREVIOUS


def test_sigint_without_sandbox_removes_the_scratch_folder(tmp_path):
    subs, out = _slow_class(tmp_path, "import time\nopen('started.txt', 'w').close()\ntime.sleep(600)")
    run = _cli(subs, out, "--no-sandbox")
    try:
        assert wait_until(lambda: len(list(out.glob(".grading-*/*/work/started.txt"))) == 2, 240)
        assert len(processes_under(out)) >= 2  # the two kernels (they work in the scratch folder)
    finally:
        err = _interrupt(run, signal.SIGINT)
    assert run.returncode == 128 + signal.SIGINT and "interrupted by SIGINT" in err, err
    assert wait_until(lambda: processes_with(str(out)) == [] and processes_under(out) == [], 10)
    assert sorted(p.name for p in out.iterdir()) == ["grades.csv"]
    assert (out / "grades.csv").read_text() == PREVIOUS


def test_a_killed_runs_scratch_is_cleaned_by_the_next_run(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "nobody-submitted").mkdir(parents=True)
    left = out / ".grading-k1ll3d" / "0000" / "work"
    left.mkdir(parents=True)
    (left / "99_fixture.ipynb").write_text("a student's copy")
    logs = []
    rows = grade(subs, out, source=FIXTURE, sandbox=False, log=logs.append)
    assert [r["feedback"] for r in rows] == ["notebook not submitted"] * 3
    assert not (out / ".grading-k1ll3d").exists()
    assert any("removed .grading-k1ll3d" in line for line in logs)


def test_the_lock_is_held_for_the_whole_run(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))
    (tmp_path / "subs" / "x").mkdir(parents=True)
    out = tmp_path / "out"
    out.mkdir()
    with RunLock(out):
        with pytest.raises(RuntimeError, match=r"another `minigrad-course grade` is writing into .*pid \d+"):
            grade(tmp_path / "subs", out, source=FIXTURE, sandbox=False, log=lambda *a: None)
    grade(tmp_path / "subs", out, source=FIXTURE, sandbox=False, log=lambda *a: None)
    assert not (out / ".grade.lock").exists()
