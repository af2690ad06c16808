"""Resource limits per graded notebook with Linux control groups.

A bubblewrap sandbox bounds what a submission can *see*; rlimits bound each of its processes. A
cgroup bounds the whole sandbox at once: all its memory (tmpfs and ``/dev/shm`` pages included),
its number of processes, and its share of the CPU, whatever it forks and however many sessions
it opens (a cgroup's tasks do not get the scheduler's per-session autogroups). One group is made
per job, under the grader's own cgroup, so the host's own limits still hold above it.

Both hierarchies are supported: cgroup v2 (the unified tree, when the memory, pids and cpu
controllers are delegated to the grader: root, or a systemd scope with ``Delegate=yes``) and
cgroup v1 (one tree per controller, as some container hosts still have). ``Cgroups.detect``
returns ``(None, reason)`` where neither can be used: the grader says so in its log and in
``grades.json`` and keeps the per-process rlimits.
"""
from __future__ import annotations

import os
import signal
import time

CONTROLLERS = ("memory", "pids", "cpu")
PERIOD_US = 100_000


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _mounts() -> list[tuple[str, str, set]]:
    """(mount point, filesystem type, options) of every cgroup filesystem."""
    out = []
    try:
        lines = _read("/proc/self/mountinfo").splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) >= 5 and len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
            out.append((fields[4], rfields[0], set(rfields[2].split(","))))
    return out


def _own_paths() -> dict[str, str]:
    """controller name (or "" for v2) -> this process's cgroup path."""
    out = {}
    try:
        for line in _read("/proc/self/cgroup").splitlines():
            _, ctrls, path = line.split(":", 2)
            for c in (ctrls.split(",") if ctrls else [""]):
                out[c] = path
    except (OSError, ValueError):
        pass
    return out


class JobGroup:
    """The cgroup(s) of one job: entered by the job's first process, emptied and removed after it."""

    def __init__(self, dirs: list[str], version: int):
        self.dirs, self.version = dirs, version
        self._procs = [os.path.join(d, "cgroup.procs") for d in dirs]

    def enter(self) -> None:
        """In the job's first process, between fork and exec: move it (and so its children) in."""
        pid = str(os.getpid()).encode()
        for p in self._procs:
            fd = os.open(p, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def pids(self) -> set[int]:
        out = set()
        for p in self._procs:
            try:
                out |= {int(x) for x in _read(p).split()}
            except (OSError, ValueError):
                pass
        return out

    def stats(self) -> dict:
        """What the job used at its peak, and whether a limit was hit (for the grader's log)."""
        got = {}
        for d in self.dirs:
            for name, key in (("memory.peak", "memory_peak"), ("memory.max_usage_in_bytes", "memory_peak"),
                              ("pids.peak", "pids_peak")):
                try:
                    got[key] = int(_read(os.path.join(d, name)).strip())
                except (OSError, ValueError):
                    pass
            for name in ("memory.events", "pids.events"):
                try:
                    for line in _read(os.path.join(d, name)).splitlines():
                        k, v = line.split()
                        if k in ("oom_kill", "max") and int(v):
                            got[f"{name.split('.')[0]}_{k}"] = int(v)
                except (OSError, ValueError):
                    pass
        return got

    def kill_and_remove(self) -> None:
        """Kill every process left in the job's group, then remove the group."""
        if self.version == 2:
            try:
                _write(os.path.join(self.dirs[0], "cgroup.kill"), "1")
            except OSError:
                pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.05)
        for d in self.dirs:
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


class Cgroups:
    """A parent group for one grading run; ``job()`` makes one child group per notebook."""

    def __init__(self, version: int, parents: dict[str, str]):
        self.version, self.parents = version, parents

    @property
    def description(self) -> str:
        return f"cgroup v{self.version} per notebook (memory, processes, CPU)"

    @classmethod
    def detect(cls, run_id: str) -> tuple["Cgroups | None", str]:
        """The run's parent group(s), or (None, why no cgroup can be used here)."""
        if os.environ.get("MINIGRAD_COURSE_NO_CGROUPS"):
            return None, "cgroups switched off (MINIGRAD_COURSE_NO_CGROUPS)"
        mounts, own = _mounts(), _own_paths()
        name = f"minigrad-grade-{run_id}"
        reasons = []
        for point, kind, _opts in mounts:  # v2
            if kind != "cgroup2" or "" not in own:
                continue
            base = os.path.join(point, own[""].lstrip("/"))
            parent = os.path.join(base, name)
            try:
                os.mkdir(parent)
                have = set(_read(os.path.join(parent, "cgroup.controllers")).split())
                if not set(CONTROLLERS) <= have:  # enable them below the grader's group (root: always allowed)
                    _try_write(os.path.join(base, "cgroup.subtree_control"), " ".join(f"+{c}" for c in CONTROLLERS))
                    have = set(_read(os.path.join(parent, "cgroup.controllers")).split())
                if not set(CONTROLLERS) <= have:
                    _rmdir(parent)
                    reasons.append(f"cgroup v2 at {point}: the controllers "
                                   f"{', '.join(sorted(set(CONTROLLERS) - have))} are not delegated to the grader")
                    continue
                _write(os.path.join(parent, "cgroup.subtree_control"), " ".join(f"+{c}" for c in CONTROLLERS))
            except OSError as e:
                _rmdir(parent)
                reasons.append(f"cgroup v2 at {point}: cannot create a group ({e.strerror or e})")
                continue
            return cls(2, {"": parent}), ""
        parents = {}
        for ctrl in CONTROLLERS:  # v1: one hierarchy per controller
            point = next((p for p, kind, opts in mounts if kind == "cgroup" and ctrl in opts), None)
            if point is None or ctrl not in own:
                reasons.append(f"no cgroup v1 {ctrl} hierarchy")
                break
            parent = os.path.join(point, own[ctrl].lstrip("/"), name)
            try:
                os.mkdir(parent)
            except OSError as e:
                reasons.append(f"cgroup v1 {ctrl}: cannot create a group ({e.strerror or e})")
                break
            parents[ctrl] = parent
        else:
            return cls(1, parents), ""
        for p in parents.values():
            _rmdir(p)
        return None, "; ".join(reasons) or "no cgroup filesystem is mounted"

    def job(self, index: int, *, memory_mb: int, pids: int, cpus: float) -> JobGroup:
        mem = str(int(memory_mb) << 20)
        quota = str(int(PERIOD_US * cpus))
        if self.version == 2:
            d = os.path.join(self.parents[""], f"job-{index}")
            os.mkdir(d)
            _write(os.path.join(d, "memory.max"), mem)
            _try_write(os.path.join(d, "memory.swap.max"), "0")
            _write(os.path.join(d, "pids.max"), str(pids))
            _write(os.path.join(d, "cpu.max"), f"{quota} {PERIOD_US}")
            return JobGroup([d], 2)
        dirs = []
        for ctrl, parent in self.parents.items():
            d = os.path.join(parent, f"job-{index}")
            os.mkdir(d)
            dirs.append(d)
            if ctrl == "memory":
                _write(os.path.join(d, "memory.limit_in_bytes"), mem)
                _try_write(os.path.join(d, "memory.memsw.limit_in_bytes"), mem)  # no escape into swap
            elif ctrl == "pids":
                _write(os.path.join(d, "pids.max"), str(pids))
            elif ctrl == "cpu":
                _write(os.path.join(d, "cpu.cfs_period_us"), str(PERIOD_US))
                _write(os.path.join(d, "cpu.cfs_quota_us"), quota)
        return JobGroup(dirs, 1)

    def remove(self) -> None:
        for p in self.parents.values():
            _rmdir(p)


def _try_write(path: str, text: str) -> None:
    try:
        _write(path, text)
    except OSError:
        pass


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass
