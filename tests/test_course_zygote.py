"""The grader's fork servers (minigrad/course/_zygote.py): workers and judges made by fork.

Every grading test uses them (a notebook's workers come from its zygote, a notebook's judge from
the run's); these tests pin down what the runner and the grader rely on: a forked worker is a
real worker (ready frame, its own process, killed alone), a forked judge is a real judge in a
process group of its own, and a zygote that has stopped makes ``spawn`` fail loudly, so that the caller
starts a process of its own instead.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigrad.course import _runner, _zygote

ROOT = Path(__file__).resolve().parents[1]


class _LocalIsolation:
    """What the runner's worker zygote needs of ``_runner.Isolation``, without bubblewrap."""

    nested, workdir, memory = False, "/tmp", 2048

    def checker_command(self, module):
        return [sys.executable, "-m", f"minigrad.course.{module}"]

    def env(self, extra=None):
        return {**os.environ, "PYTHONPATH": str(ROOT), **(extra or {})}

    def limits(self, cpu_s, nproc=None):
        return None

    def kill(self, proc):
        try:
            proc.kill()
        except OSError:
            pass
        proc.wait(timeout=10)


@pytest.fixture
def zygote():
    z = _zygote.WorkerZygote(_LocalIsolation(), 60)
    yield z
    z.close()


def test_forked_workers_are_ready_and_separate(zygote):
    iso = _LocalIsolation()
    first = _runner.Checker(iso, 30, "_worker", zygote)
    second = _runner.Checker(iso, 30, "_worker", zygote)
    try:
        assert isinstance(first.proc, _zygote.ForkedProc) and isinstance(second.proc, _zygote.ForkedProc)
        assert first.wait_ready(60) is None and second.wait_ready(60) is None
        assert first.proc.pid != second.proc.pid
        zygote.send(f"kill {first.proc.pid}")  # killed alone: its zygote reports the signal, the other lives on
        assert first.proc.wait(10) == -signal.SIGKILL
        assert second.proc.poll() is None
    finally:
        first.close()
        second.close()
    assert second.proc.wait(10) in (0, -signal.SIGKILL)  # its input closed first: it may end on its own
    assert not _alive(second.proc.pid)


def test_a_worker_that_ends_reports_its_status(zygote):
    """A worker whose request pipe closes before its set-up ends cleanly (exit 0), and says so."""
    w = _runner.Checker(_LocalIsolation(), 30, "_worker", zygote)
    try:
        assert w.wait_ready(60) is None
        w.proc.stdin.close()
        assert w.proc.wait(10) == 0
    finally:
        w.close()


def test_a_stopped_zygote_fails_loudly_and_the_checker_starts_its_own_worker(zygote):
    zygote.proc.kill()
    zygote.proc.wait(10)
    with pytest.raises(OSError, match="zygote"):
        zygote.spawn(30)
    w = _runner.Checker(_LocalIsolation(), 30, "_worker", zygote)
    try:
        assert isinstance(w.proc, subprocess.Popen)  # the fallback: a process of its own
        assert w.wait_ready(120) is None
    finally:
        w.close()


def test_killing_the_zygote_ends_its_workers():
    z = _zygote.WorkerZygote(_LocalIsolation(), 60)
    w = _runner.Checker(_LocalIsolation(), 30, "_worker", z)
    try:
        assert w.wait_ready(60) is None
        pid = w.proc.pid
        z.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        w.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_forked_judge_is_a_judge_in_a_process_group_of_its_own():
    """Fed no spec, a judge says so and ends: the forked one exactly as a new process would."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    z = _zygote.JudgeZygote(env)
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    try:
        judge = z.spawn(r1, w2)
        assert os.getpgid(judge.pid) == judge.pid
        out, _ = judge.communicate(b"", timeout=60)
        events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
        assert events[0]["event"] == "runner-error" and "the judge failed" in events[0]["error"]
        assert events[-1] == {"event": "judge-done"}
        started = [sys.executable, "-m", "minigrad.course._judge", str(r1), str(w2)]
        p = subprocess.run(started, input=b"", capture_output=True, env=env, pass_fds=(r1, w2), timeout=60)
        fresh = [json.loads(line)["event"] for line in p.stdout.decode().splitlines() if line.strip()]
        assert fresh == [e["event"] for e in events]
    finally:
        for fd in (r1, w1, r2, w2):
            os.close(fd)
        z.close()
    with pytest.raises(OSError, match="zygote"):
        z.spawn(0, 1)


def test_a_judge_that_overruns_is_reported_and_killed():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    z = _zygote.JudgeZygote(env)
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    try:
        judge = z.spawn(r1, w2)
        # a runner that never speaks (its end is held open here): the judge waits for it
        from minigrad.course.grade import course_bundle

        spec = json.dumps({"exercises": [], "bundle": course_bundle(), "course_dir": "", "payload": 0}).encode()
        with pytest.raises(subprocess.TimeoutExpired):
            judge.communicate(b"%d\n" % len(spec) + spec, timeout=3.0)
        os.killpg(judge.pid, signal.SIGKILL)
        out, _ = judge.communicate(timeout=10)
        assert b"judge-done" not in out
    finally:
        for fd in (r1, w1, r2, w2):
            os.close(fd)
        z.close()


# ------------------------------------------------------------------- matplotlib's font list, built once
def test_the_kernel_starts_with_the_graders_font_list(tmp_path):
    """The grader builds matplotlib's font list once; a kernel copies it into its own config folder
    and matplotlib uses it as it is (it would rewrite the file if it rebuilt the list)."""
    pytest.importorskip("matplotlib")
    from minigrad.course import _kernel

    cache = _kernel.build_font_cache()
    assert cache is not None and _kernel.FONT_CACHE.fullmatch(cache["name"]) and json.loads(cache["data"])
    source = tmp_path / "run" / cache["name"]
    source.parent.mkdir()
    source.write_text(cache["data"])
    config = tmp_path / "mpl"
    _kernel.seed_font_cache(str(source), str(config))
    copied = config / cache["name"]
    assert copied.read_text() == cache["data"]
    os.utime(copied, (1_000_000_000, 1_000_000_000))
    env = {**os.environ, "MPLCONFIGDIR": str(config), "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-c", "import matplotlib.pyplot as plt; plt.figure().savefig('/dev/null', format='png')"],
                   env=env, check=True, timeout=120)
    assert copied.stat().st_mtime == 1_000_000_000  # read, not rebuilt
    # a name that is not matplotlib's font list is not copied
    odd = tmp_path / "run" / "evil.py"
    odd.write_text("x")
    _kernel.seed_font_cache(str(odd), str(config))
    assert not (config / "evil.py").exists()


_REFUSING_ZYGOTE = (
    "import os, socket\n"
    "s = socket.socket(fileno=os.dup(0))\nbuf = b''\n"
    "while True:\n"
    "    data, fds, _, _ = socket.recv_fds(s, 4096, 4)\n"
    "    if not data:\n        break\n"
    "    for fd in fds:\n        os.close(fd)\n"
    "    buf += data\n"
    "    while b'\\n' in buf:\n"
    "        line, buf = buf.split(b'\\n', 1)\n"
    "        words = line.split()\n"
    "        if words[0] == b'spawn':\n            s.sendall(b'pid ' + words[1] + b' 0\\n')\n")


def test_a_worker_the_zygote_could_not_make_is_started_as_a_process_of_its_own():
    """A zygote that makes no worker (a fork that failed for the grader's reasons) never turns into
    a "not graded" row by itself: the runner starts that worker as a process of its own."""

    class Iso(_LocalIsolation):
        def checker_command(self, module):
            if module == "_zygote":
                return [sys.executable, "-c", _REFUSING_ZYGOTE]
            return super().checker_command(module)

    z = _zygote.WorkerZygote(Iso(), 60)
    w = _runner.Checker(Iso(), 30, "_worker", z)
    try:
        assert isinstance(w.proc, _zygote.ForkedProc)
        assert w.proc.wait(10) == -1  # never made
        assert w.wait_ready(120) is None
        assert isinstance(w.proc, subprocess.Popen)
    finally:
        w.close()
        z.close()
