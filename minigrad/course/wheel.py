"""The engine's wheel for a release: ``minigrad-course release`` writes it next to the student
notebooks, whose first cell installs it from there when minigrad is missing. A class on a
JupyterHub without internet access thus needs nothing from the package index.

The wheel is built from the book's own checkout when the book holds this package's source
(``pyproject.toml`` + ``minigrad/``), so that students get the engine the book was written
with; otherwise from the checkout the running minigrad comes from; otherwise it is downloaded
from the package index (the version of the running minigrad).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

DIST = "inside-autograd"
WHEEL_PREFIX = DIST.replace("-", "_") + "-"  # inside_autograd-0.1.0-py3-none-any.whl
# what a build of the package reads (pyproject.toml names the rest)
SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE")


def package_source(root: str | os.PathLike | None = None) -> Path | None:
    """The checkout to build the wheel from: ``root`` if it holds this package, else the one the
    running minigrad was imported from; None for an installed (non-editable) minigrad."""
    import minigrad

    for cand in ([Path(root)] if root else []) + [Path(minigrad.__file__).resolve().parents[1]]:
        pyproject = cand / "pyproject.toml"
        if pyproject.is_file() and (cand / "minigrad" / "__init__.py").is_file():
            if tomllib.loads(pyproject.read_text()).get("project", {}).get("name") == DIST:
                return cand.resolve()
    return None


def copy_package_source(src: Path, dest: Path) -> Path:
    """Copy what a build needs (and nothing else: no book, no tests, no caches) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in SOURCE_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, dest / name)
    shutil.copytree(src / "minigrad", dest / "minigrad",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
    return dest


def _setuptools_ready() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77  # pyproject.toml's build requirement


def write_wheel(root: str | os.PathLike | None, out_dir: str | os.PathLike, *, log=print) -> Path:
    """Write the wheel of inside-autograd into ``out_dir`` (replacing older ones); return its path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob(WHEEL_PREFIX + "*.whl"):
        old.unlink()
    src = package_source(root)
    pip = [sys.executable, "-m", "pip"]
    if src is not None:
        with tempfile.TemporaryDirectory(prefix="minigrad-wheel-") as tmp:
            copy_package_source(src, Path(tmp) / "src")
            cmd = pip + ["wheel", "--no-deps", "--quiet", "--wheel-dir", str(out_dir), str(Path(tmp) / "src")]
            if _setuptools_ready():  # no download of a build environment
                cmd.insert(4, "--no-build-isolation")
            proc = subprocess.run(cmd, capture_output=True, text=True)
        what = f"built from {src}"
    else:
        import minigrad

        cmd = pip + ["download", "--no-deps", "--only-binary", ":all:", "--quiet", "--dest", str(out_dir),
                     f"{DIST}=={minigrad.__version__}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        what = "downloaded from the package index"
    wheels = sorted(out_dir.glob(WHEEL_PREFIX + "*.whl"))
    if proc.returncode != 0 or len(wheels) != 1:
        tail = (proc.stdout + proc.stderr).strip()[-1500:]
        raise RuntimeError(f"could not write the wheel of {DIST} into {out_dir} ({' '.join(cmd)}):\n{tail}")
    log(f"wheel {wheels[0].name} ({what}): students' notebooks install it from {out_dir}")
    return wheels[0]
