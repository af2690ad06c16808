"""``minigrad-course release``: the student edition of the book, or of some of its chapters.

Writes ``OUT/notebooks/*.ipynb`` (every solution replaced by a stub, hidden tests and the gated
solution cells removed, outputs cleared, the notebook's identity in its metadata),
``OUT/assignment.json`` (chapters, exercises, points, release id) and, unless ``site=False``, a
student website: ``OUT/book/`` (a copy of the book configuration with a ``_toc.yml`` pointing at
the student notebooks; the instructor guide is left out) built with jupyter-book into ``OUT/site/``.
Next to the notebooks goes the engine's wheel (``OUT/notebooks/inside_autograd-*.whl``), which
their first cell installs when minigrad is missing (no internet needed).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from .notebooks import META_KEY, make_student_notebook, parse_exercises, student_text

INSTRUCTOR_ONLY = {"instructor_guide"}


def find_source_root(start: str | os.PathLike | None = None) -> Path:
    """The book's root folder (holds ``_toc.yml``/``_config.yml`` and ``book/``)."""
    cands = []
    if start is not None:
        return Path(start).resolve()
    here = Path.cwd().resolve()
    cands += [here, *here.parents]
    cands.append(Path(__file__).resolve().parents[2])  # the checkout minigrad is installed from
    for c in cands:
        if (c / "book").is_dir() and ((c / "_toc.yml").exists() or any((c / "book").glob("*.ipynb"))):
            return c
    raise FileNotFoundError("could not find the book (a folder with _toc.yml and book/); pass --source")


def _toc_files(toc) -> list[str]:
    out = []
    if isinstance(toc, dict):
        for k, v in toc.items():
            if k in ("file", "root") and isinstance(v, str):
                out.append(v)
            else:
                out += _toc_files(v)
    elif isinstance(toc, list):
        for v in toc:
            out += _toc_files(v)
    return out


def _load_toc(root: Path):
    p = root / "_toc.yml"
    if not p.exists():
        return None
    import yaml

    return yaml.safe_load(p.read_text())


def book_notebooks(root: Path) -> list[Path]:
    """The chapter notebooks: book/*.ipynb, those listed in _toc.yml first and in its order."""
    toc = _load_toc(root)
    if toc is None:
        return sorted((root / "book").glob("*.ipynb"))
    out = []
    for f in _toc_files(toc):
        p = root / (f if f.endswith(".ipynb") else f + ".ipynb")
        if p.exists() and p not in out:
            out.append(p)
    # chapters not (yet) in the table of contents are released and graded too, after the listed ones
    out += [p for p in sorted((root / "book").glob("*.ipynb")) if p not in out]
    return out


def _filter_toc(toc, keep):
    if isinstance(toc, dict):
        if "file" in toc and not keep(toc["file"]):
            return None
        new = {}
        for k, v in toc.items():
            fv = _filter_toc(v, keep) if isinstance(v, (list, dict)) else v
            if fv is not None:
                new[k] = fv
        return new
    if isinstance(toc, list):
        items = [x for x in (_filter_toc(v, keep) for v in toc) if x is not None]
        return items
    return toc


def _keep_link_factory(kept_stems: set):
    def keep(target: str) -> bool:
        if "://" in target:
            return True
        return Path(target).stem in kept_stems
    return keep


def _clear_previous(nb_out: Path) -> None:
    """Remove the notebooks of an earlier release from ``nb_out`` (only files this tool wrote)."""
    for p in nb_out.glob("*.ipynb"):
        try:
            meta = json.loads(p.read_text(encoding="utf-8")).get("metadata", {}).get(META_KEY, {})
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("edition") == "student":
            p.unlink()


def release(out: str | os.PathLike, source: str | os.PathLike | None = None, *, site: bool = True,
            chapters: list[int] | None = None, repository_url: str | None = None,
            repository_branch: str = "main", title: str | None = None, log=print) -> dict:
    """Write the student edition of ``chapters`` (None: the whole book) into ``out``.

    ``out/notebooks/``: the student notebooks, each carrying its identity (notebook, chapter,
    release id) in its metadata, and ``course/checks/`` when the book has its own checks;
    ``out/assignment.json``; and unless ``site=False`` the student website in ``out/site/``,
    whose launch buttons point at ``repository_url`` (the student repository) or are absent.
    """
    from . import assignment as assignment_mod
    from . import custom

    root = find_source_root(source)
    out = Path(out).resolve()
    if site and _jupyter_book() is None:  # said before anything is written
        raise RuntimeError("building the student website needs jupyter-book, which the `course` extra does not "
                           "install: pip install \"jupyter-book>=1,<2\" (or the repository's requirements.txt), "
                           "or release the notebooks only with --no-site")
    created = not out.exists()
    try:
        return _release(root, out, site=site, chapters=chapters, repository_url=repository_url,
                        repository_branch=repository_branch, title=title, log=log)
    except BaseException:
        if created:  # no half-written release left behind
            shutil.rmtree(out, ignore_errors=True)
        raise


def _jupyter_book() -> str | None:
    return shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) or shutil.which("jupyter-book")


def _release(root: Path, out: Path, *, site, chapters, repository_url, repository_branch, title, log) -> dict:
    from . import assignment as assignment_mod
    from . import custom

    book = assignment_mod.book_exercises(root)
    a = assignment_mod.build(root, chapters, title=title, book=book)
    nb_out = out / "notebooks"
    nb_out.mkdir(parents=True, exist_ok=True)
    _clear_previous(nb_out)
    keep = _keep_link_factory({Path(n).stem for n in a.notebook_names} | _site_pages(root))
    released = {}
    for path, nb, _ in book:
        if path.name not in a.notebook_names:
            continue
        entry = next(n for n in a.notebooks if n["name"] == path.name)
        student = make_student_notebook(nb, keep_link=keep)
        student.metadata[META_KEY] = {"edition": "student", "notebook": path.name, "chapter": entry["chapter"],
                                      "release": a.release_id, "exercises": entry["exercises"]}
        nbformat.write(student, nb_out / path.name)
        released[path.name] = [ex.id for ex in parse_exercises(nb)]
        log(f"released {path.name}: {len(released[path.name])} exercise(s)")
    checks = custom.check_files(custom.book_checks_dir(root))
    if checks:
        dest = nb_out / custom.CHECKS_DIR
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for p in checks:
            shutil.copy2(p, dest / p.name)
        log(f"copied the book's own checks ({len(checks)} file(s)) into {dest}: check() needs them")
    a.write(out)
    log(f"assignment {a.release_id}: {a.title}, {len(a.exercises)} graded exercise(s), {a.points:g} points "
        f"-> {out / assignment_mod.FILENAME}")
    result = {"notebooks": released, "notebooks_dir": str(nb_out), "site": None, "assignment": a.to_dict()}
    result["wheel"] = _write_wheel(root, nb_out, log)
    if site:
        result["site"] = str(build_site(root, out, repository_url=repository_url,
                                        repository_branch=repository_branch, keep_link=keep, log=log))
    return result


def _site_pages(root: Path) -> set:
    """Stems of the Markdown pages the student site keeps (every page but the instructor's)."""
    return {p.stem for p in (root / "book").glob("*.md") if p.stem not in INSTRUCTOR_ONLY}


def student_config(cfg: dict, *, title_suffix: str = " (student edition)", repository_url: str | None = None,
                   repository_branch: str = "main") -> dict:
    """The book's _config.yml for the student site: its launch buttons, repository and download
    links point at the student notebooks, or there are none."""
    cfg = dict(cfg)
    if cfg.get("title"):
        cfg["title"] = str(cfg["title"]) + title_suffix
    html = dict(cfg.get("html") or {})
    if repository_url:
        cfg["repository"] = {"url": repository_url, "branch": repository_branch, "path_to_book": ""}
        html["use_repository_button"] = True
    else:
        # no student repository: no launch buttons, no repository button (Jupyter Book would
        # otherwise point them at its own default repository, or at the instructor's)
        cfg.pop("repository", None)
        cfg["launch_buttons"] = {"binderhub_url": "", "colab_url": "", "jupyterhub_url": "", "thebe": False}
        html["use_repository_button"] = False
    html["use_issues_button"] = False
    html["use_edit_page_button"] = False
    cfg["html"] = html
    return cfg


def build_site(root: Path, out: Path, *, repository_url: str | None = None, repository_branch: str = "main",
               keep_link=None, log=print) -> Path:
    """Copy the book configuration next to the student notebooks and build it with jupyter-book."""
    import yaml

    src = out / "book"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for name in ("requirements.txt", "nbval_sanitize.cfg"):  # the cfg: _ext/machine_paths.py
        if (root / name).exists():
            shutil.copy2(root / name, src / name)
    for d in ("_assets", "_ext", "_theme"):  # _theme: the course CSS and JS (accessibility fixes)
        if (root / d).is_dir():
            shutil.copytree(root / d, src / d)
    book_src = root / "book"
    (src / "book").mkdir()
    for p in book_src.iterdir():
        if p.name.startswith(".") or p.suffix == ".ipynb" or p.stem in INSTRUCTOR_ONLY:
            continue
        if p.is_dir():
            shutil.copytree(p, src / "book" / p.name, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.ipynb"))
        elif p.suffix == ".md":
            (src / "book" / p.name).write_text(student_text(p.read_text(encoding="utf-8"), keep_link),
                                               encoding="utf-8")
        else:
            shutil.copy2(p, src / "book" / p.name)
    for p in (out / "notebooks").glob("*.ipynb"):
        shutil.copy2(p, src / "book" / p.name)
    checks = out / "notebooks" / "course"
    if checks.is_dir():  # the book's own checks, found by check() from book/ upwards
        shutil.copytree(checks, src / "course")
    toc = _load_toc(root)
    if toc is not None:
        def keep(f):
            stem = Path(f).stem
            return stem not in INSTRUCTOR_ONLY and any((src / (f + ext)).exists() or (src / f).exists()
                                                         for ext in ("", ".ipynb", ".md"))
        toc = _filter_toc(toc, keep)
        (src / "_toc.yml").write_text("# Student edition: generated by minigrad-course release\n"
                                      + yaml.safe_dump(toc, sort_keys=False))
    cfg_path = root / "_config.yml"
    if cfg_path.exists():
        cfg = student_config(yaml.safe_load(cfg_path.read_text()) or {}, repository_url=repository_url,
                             repository_branch=repository_branch)
        (src / "_config.yml").write_text("# Student edition: generated by minigrad-course release\n"
                                         + yaml.safe_dump(cfg, sort_keys=False))
    (src / ".gitignore").write_text("# built by jupyter-book, and the offline assets: not sources\n_build/\n_assets/\n")
    jb = _jupyter_book()
    if jb is None:
        raise RuntimeError("jupyter-book is not installed: install it, or release with --no-site")
    log("building the student website with jupyter-book (executes every notebook) ...")
    proc = subprocess.run([jb, "build", str(src), "--all", "--keep-going"], capture_output=True, text=True)
    html = src / "_build" / "html"
    if proc.returncode != 0 or not html.is_dir():
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise RuntimeError(f"jupyter-book build of the student edition failed (rc={proc.returncode}):\n{tail}")
    site = out / "site"
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(html, site)
    try:  # the landing page links to it, as on the book's own website
        site_download(root, site, log=log)
    except RuntimeError as e:
        log(f"WARNING: the student website has no wheel to download: {e}")
    log(f"student website: {site / 'index.html'}")
    return site


# ---- the engine's wheel on the website: a way in for a learner who downloads a chapter ----
SITE_DOWNLOAD = "download"  # _build/html/download/: the wheel and a page that links to it


def site_download(root: str | os.PathLike, html_dir: str | os.PathLike, log=print) -> Path:
    """Put the engine's wheel into the built website: ``HTML/download/<wheel>`` and
    ``HTML/download/index.html``, a page that links to it and says how to install it (the landing
    page links there; the install cell's message points at it). The page is also a ``pip
    --find-links`` page: ``pip install --find-links <site>/download/ "inside-autograd[book]"``."""
    import html as html_mod

    from .wheel import DIST, write_wheel

    dest = Path(html_dir) / SITE_DOWNLOAD
    wheel = write_wheel(root, dest, log=log)
    name = html_mod.escape(wheel.name)
    version = wheel.name.split("-")[1]
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Download minigrad {version}</title>
<link rel="icon" href="../_static/favicon.svg" type="image/svg+xml">
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}}
code,pre{{background:#f3f4f6;border-radius:4px}}pre{{padding:.6rem;overflow-x:auto}}</style></head>
<body><h1>minigrad, the engine of the course</h1>
<p>The chapters' notebooks need minigrad (package <code>{DIST}</code>). Until it is on the
package index, install it from this wheel:</p>
<p><a href="{name}" download>{name}</a></p>
<ul>
<li><strong>With a downloaded chapter:</strong> put the wheel next to the notebook (the same
folder), open the notebook and run its first cell: it installs the wheel and what the chapters
use (matplotlib, ipywidgets, scikit-learn, tqdm).</li>
<li><strong>By hand:</strong> <code>pip install "{name}[book]"</code> in the folder you saved it to.</li>
</ul>
<p><a href="../index.html">Back to the course</a></p>
</body></html>
"""
    (dest / "index.html").write_text(page, encoding="utf-8")
    log(f"website download: {dest / 'index.html'} -> {wheel.name}")
    return wheel


# ---- the engine's wheel, next to the notebooks (their install cell uses it; see wheel.py) ----
def _write_wheel(root: Path, nb_out: Path, log) -> str | None:
    from .wheel import write_wheel

    try:
        return str(write_wheel(root, nb_out, log=log))
    except RuntimeError as e:  # the notebooks are still released; students then need the package index
        log(f"WARNING: {e}\nThe notebooks will install minigrad from the package index instead "
            "(students need internet access).")
        return None
