"""Finding each student's notebooks in a folder of submissions, as learning-management systems deliver them.

Two layouts, mixed freely:
- one folder per student (``alice/03_relu.ipynb``; Moodle's "download all submissions" makes
  ``Alice Smith_123456_assignsubmission_file_/``): the folder name is the student's identifier;
- Canvas's flat download, ``smithalice_12345_67890_03_relu.ipynb`` (sortable name, user id,
  submission id, file name; ``_LATE_`` after the name when late): grouped by student, the name
  is the identifier and the Canvas user id is kept for the Canvas gradebook file.

A notebook is matched by the identity that ``release`` writes into its metadata (so a renamed
``03_relu (1).ipynb`` is found), else by its file name once LMS decorations are removed (Canvas's
prefix, `` (1)``, ``-2``). What matches nothing, hidden folders and symbolic links are reported
in the log; a symbolic link is never followed, and a student folder that is one is refused with a
row of its own. Notebooks over the size limit are not run; the row says why.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .notebooks import META_KEY

NOTEBOOK_SIZE_LIMIT_MB = 50
CANVAS_FILE = re.compile(r"^(?P<name>[A-Za-z0-9]+)_(?:LATE_)?(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
_COPY_SUFFIX = re.compile(r"(?:\s*\(\d+\)|-\d+)$")  # "03_relu (1)", "03_relu-2" (browser and LMS copies)
JUNK_FOLDERS = {"__MACOSX": "macOS archive metadata"}


@dataclass
class Submission:
    """One student's file for one released notebook (or why there is none to run)."""

    path: Path | None = None
    how: str = ""                 # "identity" (metadata written at release) or "file name"
    refused: str = ""             # a reason to give 0 without running it (symlink, too large)
    workdir: Path | None = None   # the folder copied as the notebook's working folder
    files: list = field(default_factory=list)  # flat layouts: (file, name in the working folder)


@dataclass
class Student:
    id: str
    folder: Path | None = None
    lms_id: str = ""              # e.g. the Canvas user id of a flat Canvas download
    refused: str = ""             # the whole folder is refused (a symbolic link)
    notebooks: dict = field(default_factory=dict)  # released name -> Submission


@dataclass
class Scan:
    students: list = field(default_factory=list)
    log: list = field(default_factory=list)

    @property
    def student_ids(self) -> list[str]:
        return [s.id for s in self.students]

    def get(self, student: str, notebook: str) -> Submission:
        st = next(s for s in self.students if s.id == student)
        if st.refused:
            return Submission(refused=st.refused)
        return st.notebooks.get(notebook, Submission())

    def student(self, student: str) -> Student:
        return next(s for s in self.students if s.id == student)


def name_candidates(filename: str) -> list[str]:
    """The released names a file name may stand for, most literal first:
    ``name_1_2_03_relu (1).ipynb`` -> ["name_1_2_03_relu (1).ipynb", "03_relu (1).ipynb", "03_relu.ipynb"]."""
    out = [filename]
    m = CANVAS_FILE.match(filename)
    if m:
        out.append(m.group("file"))
    for name in list(out):
        stem, ext = os.path.splitext(name)
        while _COPY_SUFFIX.search(stem):
            stem = _COPY_SUFFIX.sub("", stem)
            out.append(stem + ext)
    return list(dict.fromkeys(out))


def notebook_identity(path: Path) -> dict:
    """The identity ``release`` wrote into a student notebook's metadata ({} if none or unreadable)."""
    try:
        with open(path, "rb") as f:
            nb = json.loads(f.read(int(NOTEBOOK_SIZE_LIMIT_MB * 2**20) + 1).decode("utf-8"))
        meta = nb.get("metadata", {}).get(META_KEY, {})
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError, AttributeError, RecursionError):  # a hostile file: no identity, no crash
        return {}


def _size_text(n: int) -> str:
    return f"{n / 2**20:.1f} MB"


class _Matcher:
    def __init__(self, wanted: list[str], release: str | None, log: list):
        self.wanted, self.release, self.log = list(wanted), release, log

    def match(self, path: Path, shown: str) -> tuple[str | None, str, str]:
        """(released name or None, how, refusal) for one .ipynb file; ``shown`` names it in the log."""
        size = path.stat().st_size
        by_name = next((c for c in name_candidates(path.name) if c in self.wanted), None)
        if size > NOTEBOOK_SIZE_LIMIT_MB * 2**20:
            why = (f"{path.name} is {_size_text(size)}, over the grader's {NOTEBOOK_SIZE_LIMIT_MB} MB limit for a "
                   "notebook: it was not run. Clear its outputs (Kernel > Restart Kernel and Clear Outputs), "
                   "save, and submit it again")
            if by_name is None:
                self.log.append(f"{shown}: {_size_text(size)}, over the {NOTEBOOK_SIZE_LIMIT_MB} MB limit, and its "
                                "name matches no notebook of the assignment (ignored)")
            return by_name, "file name", why
        ident = notebook_identity(path)
        name = ident.get("notebook")
        if isinstance(name, str) and name:
            if name not in self.wanted:
                self.log.append(f"{shown}: the student edition of {name}, which is not part of this assignment "
                                "(ignored)")
                return None, "", ""
            if self.release and ident.get("release") and ident.get("release") != self.release:
                self.log.append(f"{shown}: released as {ident.get('release')}, the assignment is {self.release} "
                                "(graded against the current assignment)")
            return name, "identity", ""
        if by_name is None:
            self.log.append(f"{shown}: matches no notebook of the assignment (neither its metadata nor its name "
                            f"names one of {', '.join(self.wanted)}): ignored")
        return by_name, "file name", ""


def _pick(student: Student, found: dict, root: Path | None, log: list) -> None:
    """One file per released notebook: the newest when a student sent several."""
    for name, cands in found.items():
        cands.sort(key=lambda c: (not c[2], c[0].stat().st_mtime if c[0].exists() else 0), reverse=True)
        best = cands[0]
        if len(cands) > 1:
            others = ", ".join(repr(_rel(c[0], root)) for c in cands[1:])
            log.append(f"{student.id}: {len(cands)} files for {name}: graded {_rel(best[0], root)!r} "
                       f"(the newest), ignored {others}")
        path, how, refused, workdir, files = best
        student.notebooks[name] = Submission(path=path, how=how, refused=refused, workdir=workdir, files=files)


def _rel(p: Path, root: Path | None) -> str:
    try:
        return str(p.relative_to(root)) if root else p.name
    except ValueError:
        return p.name


def _scan_folder(student: Student, subs: Path, matcher: _Matcher, log: list) -> None:
    found: dict[str, list] = {}
    for dirpath, dirnames, filenames in os.walk(student.folder, followlinks=False):
        here = Path(dirpath)
        for d in sorted(dirnames):
            p = here / d
            if d.startswith(".") or d in JUNK_FOLDERS or p.is_symlink():
                why = ("a symbolic link (never followed)" if p.is_symlink()
                       else JUNK_FOLDERS.get(d, "a hidden folder"))
                log.append(f"{_rel(p, subs)}/: {why}: not searched, not copied")
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and d not in JUNK_FOLDERS and not (here / d).is_symlink())
        for f in sorted(filenames):
            p = here / f
            shown = _rel(p, subs)
            if p.is_symlink():
                if f.endswith(".ipynb"):
                    name = next((c for c in name_candidates(f) if c in matcher.wanted), None)
                    if name:
                        found.setdefault(name, []).append(
                            (p, "file name", f"{f} is a symbolic link: refused (submit the notebook file itself)",
                             here, []))
                        continue
                log.append(f"{shown}: a symbolic link: refused, not copied")
                continue
            if f.startswith("."):
                log.append(f"{shown}: a hidden file: not copied")
                continue
            if not f.endswith(".ipynb") or not p.is_file():
                continue
            name, how, refused = matcher.match(p, shown)
            if name:
                found.setdefault(name, []).append((p, how, refused, here, []))
    _pick(student, found, subs, log)


def scan(subs: str | os.PathLike, wanted: list[str], *, release: str | None = None) -> Scan:
    """Every student in ``subs`` and their file for each of the ``wanted`` (released) notebook names."""
    subs = Path(subs)
    result = Scan()
    log = result.log
    matcher = _Matcher(wanted, release, log)
    canvas: dict[str, list] = {}
    for p in sorted(subs.iterdir(), key=lambda q: q.name):
        name = p.name
        if name.startswith(".") or name in JUNK_FOLDERS:
            kind = "folder" if p.is_dir() and not p.is_symlink() else "file"
            log.append(f"{name}: {JUNK_FOLDERS.get(name, 'a hidden ' + kind)}: ignored (not a student)")
            continue
        if p.is_symlink():
            target = os.readlink(p)
            if p.is_dir():
                result.students.append(Student(id=name, refused=(
                    f"refused: the submission folder {name!r} is a symbolic link (to {target}), not a folder: "
                    "nothing in it was graded")))
            else:
                log.append(f"{name}: a symbolic link (to {target}): refused")
            continue
        if p.is_dir():
            st = Student(id=name, folder=p)
            _scan_folder(st, subs, matcher, log)
            result.students.append(st)
            continue
        m = CANVAS_FILE.match(name)
        if m and p.is_file():
            canvas.setdefault((m.group("name"), m.group("uid")), []).append(p)
        elif p.is_file():
            log.append(f"{name}: a file outside any student folder, and not named as Canvas names submissions "
                       "(name_userid_submissionid_file): ignored")
    names = [n for n, _ in canvas]
    for (cname, uid), files in sorted(canvas.items()):
        sid = cname if names.count(cname) == 1 else f"{cname}_{uid}"
        if any(s.id == sid for s in result.students):
            sid = f"{cname}_{uid}"
        st = Student(id=sid, lms_id=uid)
        renamed = [(f, CANVAS_FILE.match(f.name).group("file")) for f in files]
        found: dict[str, list] = {}
        for f, _ in renamed:
            if f.name.endswith(".ipynb"):
                nb_name, how, refused = matcher.match(f, f.name)
                if nb_name:
                    found.setdefault(nb_name, []).append((f, how, refused, None, renamed))
        _pick(st, found, subs, log)
        result.students.append(st)
    result.students.sort(key=lambda s: s.id)
    return result


def _copy_tree(src: Path, dst: Path) -> None:
    """Regular files and folders only: no symbolic links, no hidden or junk folders."""
    dst.mkdir(parents=True, exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames
                       if not d.startswith(".") and d not in JUNK_FOLDERS and not (here / d).is_symlink()]
        rel = here.relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in filenames:
            p = here / f
            if p.is_file() and not p.is_symlink() and not f.startswith("."):
                shutil.copyfile(p, dst / rel / f)


def prepare(sub: Submission, released_name: str, work: Path) -> Path:
    """Fill the working folder for one notebook: the files beside it, and the notebook itself
    under its released name. Returns the notebook's path in ``work``."""
    if sub.files:
        work.mkdir(parents=True, exist_ok=True)
        for f, name in sub.files:
            if f.is_file() and not f.is_symlink() and "/" not in name and not name.startswith("."):
                shutil.copyfile(f, work / name)
    elif sub.workdir is not None:
        _copy_tree(sub.workdir, work)
    target = work / released_name
    shutil.copyfile(sub.path, target)
    return target
