#!/usr/bin/env bash
# Run every test: setup (idempotent), build the website (only what changed since the last
# build: nothing, the changed pages, or everything; see scripts/build_book.sh), then pytest,
# which runs
#   - tests/              unit tests of minigrad and of the book's structure,
#   - book/*.ipynb        every notebook with strict nbval (stored outputs must match),
#   - tests/test_browser.py  the headless-Chromium check of the built site
#                         (skipped, with the reason, when chromium is not installed;
#                          `apt-get install chromium` or run .ci/run, which installs it).
# Skipped tests are listed with their reasons at the end (-rs in pyproject.toml's addopts).
# Extra arguments go to pytest, e.g.  bash scripts/test.sh -n 2   or   -k relu
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || exit 1
export PATH="$PWD/.venv/bin:$PATH" JUPYTER_PREFER_ENV_PATH=1 PYTHONHASHSEED=0

rc=0
bash scripts/build_book.sh --no-setup || rc=1
# pytest runs even when the build failed, so that nbval names the failing cells.
.venv/bin/python -m pytest "$@" || rc=$?
if [ "$rc" != 0 ]; then
  echo "test.sh: FAILED (exit $rc)" >&2
else
  echo "test.sh: all tests passed"
fi
exit "$rc"
