#!/usr/bin/env bash
# Set everything up (idempotent) and build the website into _build/html: the English book at
# its root, the Chinese edition (zh/, generated from book/ and i18n/zh/ by scripts/i18n.py)
# under _build/html/zh/. Every English notebook is executed; the Chinese notebooks are not
# (their code and outputs are the English ones: tests/test_i18n.py). Warnings are errors;
# any cell error fails the build.
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

# the Chinese edition's book, from the English notebooks and the translations (deterministic;
# zh/ is committed, and tests/test_i18n.py checks it is what this writes)
.venv/bin/python scripts/i18n.py build --lang zh

mode=$(.venv/bin/python scripts/book_inputs.py decide)                  # none | pages | full
zh_mode=$(.venv/bin/python scripts/book_inputs.py --edition zh decide)  # the same, for zh/
if [ "$all" = 1 ]; then mode=full zh_mode=full; fi
if [ "$mode" = none ] && [ "$zh_mode" = none ] && [ -f _build/html/zh/index.html ]; then
  echo "build_book.sh: the website is up to date (nothing changed since the last build):"
  echo "  file://$PWD/_build/html/index.html   (bash scripts/build_book.sh --all rebuilds it anyway)"
  exit 0
fi

start=$(date +%s)
if [ "$mode" != none ]; then
  rm -f _build/html/.build-ok _build/html/.build-inputs
  inputs=$(.venv/bin/python scripts/book_inputs.py snapshot)  # before the build: edits made during it count
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
fi

# The Chinese edition: its own Sphinx build (zh/_config.yml: language zh_CN, jieba search, no
# execution), into _build/zh/_build/html, then copied to _build/html/zh/.
if [ "$zh_mode" != none ] || [ ! -f _build/html/zh/index.html ]; then
  mkdir -p _build/zh
  rm -f _build/zh/.build-ok _build/zh/.build-inputs
  zh_inputs=$(.venv/bin/python scripts/book_inputs.py --edition zh snapshot)
  zh_args=()
  if [ "$zh_mode" = full ]; then zh_args=(--all); fi
  echo "build_book.sh: building the Chinese edition (zh/)"
  if ! .venv/bin/jupyter-book build zh --path-output _build/zh -W -n --keep-going ${zh_args[@]+"${zh_args[@]}"}; then
    echo >&2
    echo "build_book.sh: the Chinese edition's build FAILED (see the messages above;" >&2
    echo "python scripts/i18n.py lint names translations whose MyST differs from the English)." >&2
    exit 1
  fi
  rm -rf _build/html/zh
  cp -r _build/zh/_build/html _build/html/zh
  touch _build/zh/.build-ok
  .venv/bin/python scripts/book_inputs.py --edition zh record $zh_inputs
fi
# each page's top-bar link to the page in the other language (_ext/language_switch.py)
.venv/bin/python scripts/i18n.py relink _build/html
cat <<MSG

Book built in $(( $(date +%s) - start )) s. Open it (the Chinese edition: zh/index.html):
  file://$PWD/_build/html/index.html
or serve it locally and open http://127.0.0.1:8000/ :
  .venv/bin/python -m http.server --bind 127.0.0.1 --directory _build/html 8000
MSG
