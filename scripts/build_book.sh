#!/usr/bin/env bash
# Set everything up (idempotent) and build the website into _build/html.
# Every notebook is executed; warnings are errors; any cell error fails the build.
#
#   bash scripts/build_book.sh              # setup + build what changed
#   bash scripts/build_book.sh --no-setup   # build only (used by scripts/test.sh)
#   bash scripts/build_book.sh --all        # rebuild every page, changed or not
#
# What changed since the last successful build decides how much is rebuilt:
#   - nothing: nothing is rebuilt (a second run right after a build takes seconds);
#   - only pages in book/: Sphinx re-reads, re-executes and rewrites those pages only;
#   - anything else the site is made from (minigrad/, whose code every page runs, the
#     configuration, _toc.yml, _ext/, _theme/, the pinned packages and assets): every page.
# Either way it is a real build: -W -n --keep-going (any warning fails it), and a failed
# build is followed by a full one. scripts/book_inputs.py decides, from what the last
# successful build was made of (_build/html/.build-inputs).
set -euo pipefail
cd "$(dirname "$0")/.."

setup=1 all=0
for arg in "$@"; do
  case "$arg" in
    --no-setup) setup=0 ;;
    --all) all=1 ;;
    *) echo "build_book.sh: unknown argument '$arg' (use --no-setup and/or --all)" >&2; exit 2 ;;
  esac
done
if [ "$setup" = 1 ]; then bash scripts/setup.sh; fi
export PATH="$PWD/.venv/bin:$PATH" JUPYTER_PREFER_ENV_PATH=1 PYTHONHASHSEED=0

.venv/bin/python scripts/check_toc.py

# Every notebook kernel of the build writes, into each matplotlib figure's PNG, the smallest font
# size of its text and its dpi (minigrad/course/figure_text.py): the browser check reads them and
# fails on figure text under 9 CSS px at 1280 px. An IPython startup file, loaded by path (it
# imports nothing of minigrad before the notebook does).
export IPYTHONDIR="$PWD/_build/ipython"
mkdir -p "$IPYTHONDIR/profile_default/startup"
cat > "$IPYTHONDIR/profile_default/startup/00-figure-text.py" <<PY
# written by scripts/build_book.sh: see minigrad/course/figure_text.py
import importlib.util as _u
_spec = _u.spec_from_file_location("_minigrad_figure_text", "$PWD/minigrad/course/figure_text.py")
_m = _u.module_from_spec(_spec)
_spec.loader.exec_module(_m)
_m.install()
del _u, _spec, _m
PY

mode=$(.venv/bin/python scripts/book_inputs.py decide)    # none | pages | full
if [ "$all" = 1 ]; then mode=full; fi
if [ "$mode" = none ]; then
  echo "build_book.sh: the website is up to date (nothing changed since the last build):"
  echo "  file://$PWD/_build/html/index.html   (bash scripts/build_book.sh --all rebuilds it anyway)"
  exit 0
fi

rm -f _build/html/.build-ok _build/html/.build-inputs
inputs=$(.venv/bin/python scripts/book_inputs.py snapshot)  # before the build: edits made during it count
start=$(date +%s)
if [ "$mode" = full ]; then
  echo "build_book.sh: building every page"
  args=(--all)
else
  echo "build_book.sh: only pages in book/ changed: rebuilding those"
  args=()
fi
if ! .venv/bin/jupyter-book build . -W -n --keep-going ${args[@]+"${args[@]}"}; then
  echo >&2
  echo "build_book.sh: the book build FAILED (see the messages above; a failing notebook is" >&2
  echo "named with its cell, and _build/html/reports/ has the execution logs)." >&2
  exit 1
fi
# the engine's wheel, for a learner who downloads a chapter (the landing page links to it):
# _build/html/download/<wheel> and its page (minigrad/course/release.py, site_download)
.venv/bin/python -c "from minigrad.course.release import site_download; site_download('.', '_build/html')"
touch _build/html/.build-ok
.venv/bin/python scripts/book_inputs.py record $inputs
cat <<MSG

Book built in $(( $(date +%s) - start )) s. Open it:
  file://$PWD/_build/html/index.html
or serve it locally and open http://127.0.0.1:8000/ :
  .venv/bin/python -m http.server --bind 127.0.0.1 --directory _build/html 8000
MSG
