"""Sharded grading (minigrad/course/shard.py): ``grade --shard i/n`` and ``merge``.

- which shard a student is in: a function of the id alone; ``--shard auto`` from Slurm's and
  Kubernetes' variables; refusals of merge (one line each) on parts that do not cover one class once;
- end to end: a small class of the fixture course graded in two shards and merged gives the same
  gradebook, LMS files and log, byte for byte, as one run (the ``seconds`` of each row aside);
- on a real single-node Slurm (Debian's slurm-wlm: slurmctld, slurmd and munge on localhost), a
  4-task job array (``sbatch --array=1-4 --wait``) runs the guide's command; merged, it equals one run.
  Skipped, with the reason, where Slurm cannot start; REQUIRE_SLURM=1 (.ci/run) turns that into a failure.
"""
import csv
import json
import re
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from minigrad.course import shard
from minigrad.course.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------ which shard
def test_a_students_shard_depends_on_the_id_alone():
    names = [f"student{k:03d}" for k in range(400)]
    for n in (1, 2, 3, 7):
        parts = [shard.select(names, shard.Shard(i, n)) for i in range(1, n + 1)]
        assert sorted(s for p in parts for s in p) == sorted(names)          # each student once
        assert all(len(p) > 400 / n * 0.7 for p in parts), [len(p) for p in parts]  # roughly even
        # the same in another order and in another class
        assert shard.select(list(reversed(names)), shard.Shard(1, n)) == list(reversed(parts[0]))
        assert shard.select(names[::3] + ["newcomer"], shard.Shard(1, n)) == \
            [s for s in names[::3] + ["newcomer"] if s in set(parts[0]) or
             (s == "newcomer" and shard.shard_of(s, n) == 1)]
    # pinned: a change of the hash would split an old run's shards differently
    assert [shard.shard_of(s, 4) for s in ("alice", "bob", "leo", "mia")] == [4, 3, 4, 4]
    assert shard.fingerprint(["a", "b"]) != shard.fingerprint(["b", "a"])


def test_shard_option_and_the_schedulers_variables():
    assert shard.parse(None) is None
    assert (shard.parse("2/4").i, shard.parse("2/4").n) == (2, 4)
    slurm = {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4",
             "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_STEP": "1"}
    assert str(shard.parse("auto", slurm)) == "3/4"
    assert str(shard.parse("auto", {**slurm, "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0",
                                    "SLURM_ARRAY_TASK_MAX": "3"})) == "3/4"            # --array=0-3
    assert str(shard.parse("auto", {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4"})) == "4/4"
    assert str(shard.parse("auto", {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1",
                                    "SLURM_ARRAY_TASK_MAX": "7", "SLURM_ARRAY_TASK_STEP": "2"})) == "3/4"
    assert str(shard.parse("auto/4", slurm)) == "3/4"
    assert str(shard.parse("auto/5", {"JOB_COMPLETION_INDEX": "0"})) == "1/5"
    assert str(shard.parse("auto", {"JOB_COMPLETION_INDEX": "4", shard.COUNT_ENV: "5"})) == "5/5"
    for text, env, match in [
        ("0/4", {}, "outside 1..4"), ("5/4", {}, "outside 1..4"), ("2", {}, "expected i/n"),
        ("auto", {}, "neither SLURM_ARRAY_TASK_ID"), ("auto", {"JOB_COMPLETION_INDEX": "1"}, "auto/N"),
        ("auto/3", slurm, "has 4 tasks, not 3"), ("auto/2", {"JOB_COMPLETION_INDEX": "2"}, "outside 1..2"),
        ("auto", {"SLURM_ARRAY_TASK_ID": "x"}, "not a whole number"),
    ]:
        with pytest.raises(ValueError, match=match):
            shard.parse(text, env)
    assert shard.out_for("parts/{i}-of-{n}", shard.Shard(2, 4)) == "parts/2-of-4"


def test_grade_shard_auto_outside_a_scheduler_says_what_to_give(tmp_path, monkeypatch, capsys):
    for name in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", shard.COUNT_ENV):
        monkeypatch.delenv(name, raising=False)
    assert cli_main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--shard", "auto"]) == 2
    err = capsys.readouterr().err
    assert err == ("minigrad-course: error: --shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
                   "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set: give --shard i/n\n")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------ merge's refusals
def _row(student, points=1.0, **extra):
    return {"student": student, "notebook": "99_fixture.ipynb", "exercise": "ch99-ex1", "points": points,
            "max_points": 2.0, "parts": [], "flagged": "", "feedback": "✓" if points == 2 else "✗ wrong",
            "seconds": 1.0, **extra}


def _parts(tmp: Path, students: list[str], n: int, *, rows=None, changes=None) -> list[Path]:
    """Partial gradebooks as `grade --shard i/n` writes them (rows made up: no grading)."""
    rows = rows if rows is not None else {s: [_row(s)] for s in students}
    out = []
    for i in range(1, n + 1):
        sh = shard.Shard(i, n, "test")
        assignment = {"title": "Chapter 99", "release_id": "r1", "chapters": [99], "points": 2.0,
                      "exercises": [["99_fixture.ipynb", "ch99-ex1", 2.0]], "checks": "sha256:0"}
        rec = shard.record(sh, students, assignment=assignment,
                           roster={}, lms_ids={}, scan_notes=["hidden.txt: a hidden file"])
        rec.update((changes or {}).get(i, {}))
        mine = [r for s in rec["students"] for r in rows.get(s, [])]
        part = tmp / f"part{i}"
        part.mkdir(parents=True)
        shard.write_partial(part, mine, record=rec, run={"sandbox": "test", "warnings": [], "not_graded": 0},
                            notes=[], log=lambda *a: None)
        out.append(part)
    return out


STUDENTS = ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]


@pytest.mark.parametrize("case, match", [
    ("missing", "shard 2 of 3 missing"),
    ("twice", "shard 1/3 is given twice"),
    ("other n", "different numbers of shards"),
    ("version", "different grader versions"),
    ("checks", "different grader checks"),
    ("class", "different classes"),
    ("assignment", "different assignments"),
    ("student twice", "is in two parts"),
    ("wrong shard", "whose shard is 3/3"),
    ("not a shard", "not a shard's gradebook"),
])
def test_merge_refuses_parts_that_do_not_cover_one_class_once(tmp_path, case, match, capsys):
    parts = _parts(tmp_path / "a", STUDENTS, 3)
    if case == "missing":
        parts = [parts[0], parts[2]]
    elif case == "twice":
        parts = parts + [parts[0]]
    elif case == "other n":
        parts = parts[:2] + _parts(tmp_path / "b", STUDENTS, 2)[1:]
    elif case == "version":
        parts = parts[:2] + _parts(tmp_path / "b", STUDENTS, 3, changes={3: {"grader_version": "9.9"}})[2:]
    elif case == "checks":
        parts = parts[:2] + _parts(tmp_path / "b", STUDENTS, 3, changes={3: {"grader_checks": "sha256:1"}})[2:]
    elif case == "class":
        parts = parts[:2] + _parts(tmp_path / "b", STUDENTS + ["late"], 3)[2:]
    elif case == "assignment":
        other = {"title": "other", "points": 2.0}
        parts = parts[:2] + _parts(tmp_path / "b", STUDENTS, 3, changes={3: {"assignment": other}})[2:]
    elif case in ("student twice", "wrong shard"):
        book = json.loads((parts[0] / "grades.json").read_text())
        other = next(s for s in STUDENTS if shard.shard_of(s, 3) == 3)
        if case == "wrong shard":
            third = json.loads((parts[2] / "grades.json").read_text())
            k = third["shard"]["students"].index(other)
            del third["shard"]["students"][k], third["shard"]["positions"][k]
            third["rows"] = [r for r in third["rows"] if r["student"] != other]
            (parts[2] / "grades.json").write_text(json.dumps(third))
        book["shard"]["students"].append(other)
        book["shard"]["positions"].append(STUDENTS.index(other))
        (parts[0] / "grades.json").write_text(json.dumps(book))
    else:
        (parts[1] / "grades.json").write_text(json.dumps({"run": {}, "rows": []}))
    with pytest.raises(ValueError, match=match):
        shard.merge(parts, tmp_path / "merged", log=lambda *a: None)
    assert not (tmp_path / "merged" / "grades.json").exists()
    assert cli_main(["merge", *map(str, parts), "--out", str(tmp_path / "merged")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("minigrad-course: error: merge: ") and "\n" not in err and match in err


def test_merge_keeps_not_graded_rows_out_of_the_lms_files(tmp_path, capsys):
    rows = {s: [_row(s, 2.0)] for s in STUDENTS}
    rows["dave"] = [_row("dave", 0.0, feedback="not graded: the kernel could not start",
                         not_graded="the kernel could not start")]
    parts = _parts(tmp_path, STUDENTS, 3, rows=rows)
    for p in parts:
        book = json.loads((p / "grades.json").read_text())
        book["run"]["not_graded"] = sum(1 for r in book["rows"] if r.get("not_graded"))
        (p / "grades.json").write_text(json.dumps(book))
    out = tmp_path / "merged"
    assert cli_main(["merge", *map(str, parts), "--out", str(out)]) == 3
    assert "1 exercise rows not graded: the kernel could not start" in capsys.readouterr().err
    book = json.loads((out / "grades.json").read_text())
    assert [r["student"] for r in book["rows"]] == STUDENTS and "shard" not in book
    assert book["run"] == {"sandbox": "test", "warnings": [], "not_graded": 1}
    with open(out / "moodle.csv", newline="") as f:
        assert [r["Username"] for r in csv.DictReader(f)] == [s for s in STUDENTS if s != "dave"]
    log = (out / "grading_log.txt").read_text()
    assert log.startswith("hidden.txt: a hidden file\nnot graded (the grader's fault, not the students'): 1 rows "
                          "of 1 students (dave)")
    assert (out / "report.html").is_file() and (out / "scores_by_exercise.png").is_file()


# ------------------------------------------------------------------- end to end, one machine
pytest.importorskip("nbformat")
from _grading import FIXTURE, editions, variant, write_class  # noqa: E402

from minigrad.course import sandbox  # noqa: E402

NO_SANDBOX = sandbox.find_bwrap() is None and not os.environ.get("REQUIRE_SANDBOX")
CLASS = ["alice", "bob", "leo", "mia", "smithsam"]


def _make_class(tmp: Path) -> tuple[Path, Path]:
    _, _, good = editions()
    subs = tmp / "submissions"
    write_class(subs, {"alice": good,
                       "bob": variant(good, ch99_ex2=lambda s: s.replace("x_leaky_saved > 0", "x_leaky_saved < 0")),
                       "leo": "this is not a notebook"})
    (subs / "mia").mkdir()
    (subs / "mia" / "notes.txt").write_text("forgot to submit")
    (subs / ".DS_Store").write_text("")
    (subs / "smithsam_12345_67890_99_fixture.ipynb").write_text("{ not a notebook")  # Canvas's flat download
    roster = tmp / "roster.csv"
    roster.write_text("folder,Student,ID,SIS User ID,Username\nalice,Alice A,11,s11,alice1\nbob,Bob B,12,s12,bob1\n"
                      "mia,Mia M,14,s14,mia1\nzed,Zed Z,19,s19,zed1\n")
    return subs, roster


def _grade_args(subs, roster, out, *extra):
    return ["grade", str(subs), "--out", str(out), "--source", str(FIXTURE), "--roster", str(roster),
            "--timeout", "240", "--memory", "1024", "--jobs", "2", *(["--no-sandbox"] if NO_SANDBOX else []), *extra]


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    """The class graded by one run (the reference for every merge)."""
    tmp = tmp_path_factory.mktemp("one_run")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))
        mp.chdir(tmp)
        subs, roster = _make_class(tmp)
        t0 = time.monotonic()
        assert cli_main(_grade_args(subs, roster, tmp / "single")) == 0
        print(f"one run: {time.monotonic() - t0:.1f} s")
    return {"tmp": tmp, "subs": subs, "roster": roster, "out": tmp / "single"}


def _strip_seconds(text: str) -> dict:
    book = json.loads(text)
    for r in book["rows"]:
        r.pop("seconds", None)
    return book


def assert_same_gradebook(single: Path, merged: Path) -> None:
    names = sorted(p.name for p in single.iterdir())
    assert names == ["canvas.csv", "grades.csv", "grades.json", "grading_log.txt", "moodle.csv", "report.html",
                     "scores_by_exercise.png", "totals.csv"]
    assert sorted(p.name for p in merged.iterdir()) == names
    for name in names:
        a, b = (single / name).read_bytes(), (merged / name).read_bytes()
        if name == "grades.json":  # the seconds each notebook took differ from run to run
            assert _strip_seconds(a.decode()) == _strip_seconds(b.decode())
            assert [len(line) for line in a.splitlines() if b'"seconds"' not in line] == \
                   [len(line) for line in b.splitlines() if b'"seconds"' not in line]
        elif name == "report.html":  # the same up to the time per notebook
            cut = b'<h2 id="time">'
            assert a[:a.index(cut)] == b[:b.index(cut)]
        else:
            assert a == b, name


def test_two_shards_merged_equal_one_run(one_run, monkeypatch, capsys):
    tmp, subs, roster = one_run["tmp"], one_run["subs"], one_run["roster"]
    monkeypatch.setenv("MINIGRAD_COURSE_EXTRA_EXERCISES", str(FIXTURE / "exercises"))
    monkeypatch.chdir(tmp)
    for i in (1, 2):
        assert cli_main(_grade_args(subs, roster, tmp / "parts" / "{i}", "--shard", f"{i}/2")) == 0
    book = json.loads((tmp / "parts" / "2" / "grades.json").read_text())
    sh = book["shard"]
    assert (sh["i"], sh["n"], sh["students"], sh["positions"]) == (2, 2, ["alice", "leo", "mia"], [0, 2, 3])
    assert sh["class"]["size"] == 5 and sh["class"]["fingerprint"] == shard.fingerprint(CLASS)
    first = json.loads((tmp / "parts" / "1" / "grades.json").read_text())["shard"]
    assert first["students"] == ["bob", "smithsam"] and first["lms_ids"] == {"smithsam": "12345"}
    assert sh["grader_version"] and sh["assignment"]["exercises"][0][:2] == ["99_fixture.ipynb", "ch99-ex1"]
    assert {r["student"] for r in book["rows"]} == {"alice", "leo", "mia"}
    assert not (tmp / "parts" / "2" / "canvas.csv").exists()  # a shard is not the class: no LMS file
    capsys.readouterr()
    assert cli_main(["merge", str(tmp / "parts" / "2"), str(tmp / "parts" / "1"), "--out", str(tmp / "merged")]) == 0
    assert "merged 2 shards: 5 students" in capsys.readouterr().out
    assert_same_gradebook(one_run["out"], tmp / "merged")
    with open(tmp / "merged" / "canvas.csv", newline="") as f:  # the Canvas user id of the flat download
        assert [r["ID"] for r in csv.DictReader(f)] == ["", "11", "12", "", "14", "12345"]
    assert "zed: in the roster, but no submission folder" in (tmp / "merged" / "grading_log.txt").read_text()


# ------------------------------------------------------------------------------------ Slurm
SLURM_CONF = """\
ClusterName=minigrad
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=30
KillWait=5
Waittime=0
NodeName=localhost NodeHostname={host} CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slurm:
    """A single-node Slurm on localhost (munged, slurmctld, slurmd), all under one tmp folder."""

    def __init__(self, d: Path):
        self.d = d
        self.procs: list[subprocess.Popen] = []
        self.env = dict(os.environ, SLURM_CONF=str(d / "slurm.conf"))

    def start(self) -> str | None:
        """None when it runs, else why it cannot."""
        for tool in ("munged", "slurmctld", "slurmd", "sbatch"):
            if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
                return f"{tool} is not installed (Debian: apt-get install slurm-wlm munge; .ci/run installs them)"
        if os.geteuid() != 0:
            return "a local Slurm needs root here (slurmd runs the jobs as the submitting user)"
        d = self.d
        for sub in ("state", "spool", "munge"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(d / "munge", 0o700)
        key = d / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = d / "munge" / "munge.socket"
        munged = shutil.which("munged") or "/usr/sbin/munged"
        self.procs.append(subprocess.Popen(
            [munged, "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
             f"--pid-file={d / 'munge' / 'munged.pid'}", f"--log-file={d / 'munge' / 'munged.log'}",
             f"--seed-file={d / 'munge' / 'munged.seed'}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True, text=True))
        end = time.monotonic() + 10
        while not sock.exists() and self.procs[0].poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        if not sock.exists():
            munge = self.procs[0]
            return "munged did not start: " + (munge.stdout.read()[:300] if munge.poll() is not None
                                               else "no socket after 10 s")
        conf = SLURM_CONF.format(d=d, host=socket.gethostname(), cpus=os.cpu_count() or 1,
                                 ctld_port=_free_port(), d_port=_free_port())
        # the munge socket: slurm's auth/munge plugin reads it from AuthInfo
        conf = conf.replace("AuthType=auth/munge\n", f"AuthType=auth/munge\nAuthInfo=socket={sock}\n")
        (d / "slurm.conf").write_text(conf)
        for daemon in ("slurmctld", "slurmd"):
            exe = shutil.which(daemon) or f"/usr/sbin/{daemon}"
            log = open(d / f"{daemon}.out", "w")
            self.procs.append(subprocess.Popen([exe, "-D", "-f", str(d / "slurm.conf")] +
                                               (["-i"] if daemon == "slurmctld" else ["-N", "localhost"]), env=self.env,
                                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        end = time.monotonic() + 40
        while time.monotonic() < end:
            for p in self.procs:
                if p.poll() is not None:
                    return f"{Path(p.args[0]).name} stopped at start: {self.tail()}"
            r = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env, capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip().rstrip("*") in ("idle", "mixed", "allocated"):
                return None
            time.sleep(0.5)
        return f"the node did not come up within 40 s (sinfo: {r.stdout.strip() or r.stderr.strip()}): {self.tail()}"

    def tail(self) -> str:
        out = []
        for name in ("slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out"):
            p = self.d / name
            if p.exists():
                lines = [ln for ln in p.read_text(errors="replace").splitlines() if "error" in ln.lower()]
                out += [f"{name}: {ln}" for ln in lines[-3:]]
        return " | ".join(out)[:800] or "no error in the logs"

    def stop(self) -> None:
        for p in reversed(self.procs):  # the daemons, then munged
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


SECTION = "Grading a large class: shards on Slurm or Kubernetes"
DEPLOY = ROOT / "deploy"


def _guide():
    from guide_blocks import blocks, commands, section

    bs = blocks(section(SECTION))
    return {"sbatch": next(b for b in bs if b.caption == "grade.sbatch"),
            "yaml": next(b for b in bs if b.caption == "grade-job.yaml"),
            "commands": [c for b in bs if b.lang == "bash" and not b.caption for c in commands(b)]}


def test_the_guide_shows_the_deploy_files_as_they_are():
    g = _guide()
    assert g["sbatch"].body == (DEPLOY / "slurm" / "grade.sbatch").read_text()
    assert g["yaml"].body == (DEPLOY / "kubernetes" / "grade-job.yaml").read_text()
    assert g["commands"] == ["minigrad-course merge parts/* --out gradebook/", "sbatch --wait grade.sbatch",
                             "minigrad-course merge parts/* --out gradebook/", "kubectl apply -f grade-job.yaml",
                             "kubectl wait --for=condition=complete job/grade-chapter-3 --timeout=6h"]


def test_the_kubernetes_indexed_job_is_valid_and_grades_every_shard_once():
    import yaml

    from minigrad.course.cli import _parser

    job = yaml.safe_load((DEPLOY / "kubernetes" / "grade-job.yaml").read_text())
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"], spec["completionMode"]) == ("batch/v1", "Job", "Indexed")
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"   # required by backoffLimitPerIndex
    (box,) = pod["containers"]
    env = {e["name"]: e["value"] for e in box.get("env", [])}
    n = spec["completions"]
    assert spec["parallelism"] == n and int(env[shard.COUNT_ENV]) == n
    cmd = box["command"]
    assert cmd[:2] == ["minigrad-course", "grade"]
    args = _parser().parse_args(cmd[1:])   # the command is one our CLI takes
    assert args.shard == "auto" and "{i}" in args.out
    mounts = {m["mountPath"] for m in box["volumeMounts"]}
    assert all(any(a.startswith(m + "/") for m in mounts) for a in (args.submissions, args.out, args.assignment,
                                                                      args.roster))
    # each pod's shard: completion index k grades shard k+1 of n, into its own folder
    got = [shard.parse(args.shard, {"JOB_COMPLETION_INDEX": str(k), **env}) for k in range(n)]
    assert [(s.i, s.n) for s in got] == [(k + 1, n) for k in range(n)]
    assert len({shard.out_for(args.out, s) for s in got}) == n
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (the Kubernetes JSON schemas, "
                             "offline) is not installed: pip install kubernetes-validate")
    assert kv.validate(job, kv.latest_version(), strict=True)
    broken = yaml.safe_load((DEPLOY / "kubernetes" / "grade-job.yaml").read_text())
    broken["spec"]["template"]["spec"]["containers"][0]["comand"] = cmd   # the validator catches typos
    with pytest.raises(kv.ValidationError):
        kv.validate(broken, kv.latest_version(), strict=True)


def test_slurm_array_merged_equals_one_run(one_run, tmp_path):
    t0 = time.monotonic()
    slurm = Slurm(Path(tmp_path))
    why = slurm.start()
    try:
        if why:
            if os.environ.get("REQUIRE_SLURM") == "1":
                pytest.fail(f"Slurm required (REQUIRE_SLURM=1) but it cannot start: {why}")
            pytest.skip(f"Slurm cannot start here: {why}")
        started = time.monotonic() - t0
        # the guide's folder: submissions/, roster.csv (the fixture course stands for release/)
        shutil.copytree(one_run["subs"], tmp_path / "submissions")
        shutil.copyfile(one_run["roster"], tmp_path / "roster.csv")
        script = _guide()["sbatch"].body
        fixture = shlex.join(["--source", str(FIXTURE), "--timeout", "240", "--memory", "1024",
                              *(["--no-sandbox"] if NO_SANDBOX else [])])
        assert script.count("--assignment release/assignment.json") == 1
        (tmp_path / "grade.sbatch").write_text(script.replace("--assignment release/assignment.json", fixture))
        env = dict(slurm.env, MINIGRAD_COURSE_EXTRA_EXERCISES=str(FIXTURE / "exercises"),
                   PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
        r = subprocess.run(["sbatch", "--parsable", "grade.sbatch"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, f"sbatch: {r.stdout}{r.stderr}\n{slurm.tail()}"
        job = r.stdout.strip().split(";")[0]
        # sbatch --wait polls every few seconds, and more slowly as time passes: squeue, twice a second
        end = time.monotonic() + 600
        while time.monotonic() < end:
            q = subprocess.run(["squeue", "-h", "-j", job, "-o", "%i %T"], env=env, capture_output=True, text=True)
            if q.returncode == 0 and not q.stdout.strip():
                break
            time.sleep(0.5)
        tasks = subprocess.run(["scontrol", "-o", "show", "job", job], env=env, capture_output=True, text=True).stdout
        states = sorted(re.findall(r"ArrayTaskId=(\d+) .*?JobState=(\w+) .*?ExitCode=(\d+:\d+)", tasks))
        outs = "\n".join(p.read_text(errors="replace")[-600:] for p in sorted(tmp_path.glob("grade-*.out")))
        assert states == [(str(i), "COMPLETED", "0:0") for i in (1, 2, 3, 4)], f"{tasks}\n{outs}\n{slurm.tail()}"
        parts = sorted((tmp_path / "parts").iterdir())
        assert [p.name for p in parts] == ["1", "2", "3", "4"]
        hows = [json.loads((p / "grades.json").read_text())["shard"]["how"] for p in parts]
        assert hows == [f"Slurm array task {i}" for i in (1, 2, 3, 4)]
        (merge,) = {c for c in _guide()["commands"] if c.startswith("minigrad-course merge")}
        m = subprocess.run(["bash", "-c", merge], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert m.returncode == 0, m.stdout + m.stderr
        assert_same_gradebook(one_run["out"], tmp_path / "gradebook")
        print(f"Slurm up in {started:.1f} s; array graded and merged in {time.monotonic() - t0:.1f} s")
    finally:
        slurm.stop()
