#!/usr/bin/env bash
# Set everything up (idempotent) and build the website into _build/html.
# Every notebook is executed; warnings are errors; any cell error fails the build.
#
#   bash scripts/build_book.sh              # setup + build
#   bash scripts/build_book.sh --no-setup   # build only (used by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" != "--no-setup" ]; then bash scripts/setup.sh; fi
export PATH="$PWD/.venv/bin:$PATH" JUPYTER_PREFER_ENV_PATH=1 PYTHONHASHSEED=0

.venv/bin/python scripts/check_toc.py
rm -f _build/html/.build-ok
start=$(date +%s)
if ! .venv/bin/jupyter-book build . -W -n --keep-going --all; then
  echo >&2
  echo "build_book.sh: the book build FAILED (see the messages above; a failing notebook is" >&2
  echo "named with its cell, and _build/html/reports/ has the execution logs)." >&2
  exit 1
fi
touch _build/html/.build-ok
cat <<MSG

Book built in $(( $(date +%s) - start )) s. Open it:
  file://$PWD/_build/html/index.html
or serve it locally and open http://127.0.0.1:8000/ :
  .venv/bin/python -m http.server --bind 127.0.0.1 --directory _build/html 8000
MSG
