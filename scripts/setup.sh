#!/usr/bin/env bash
# Set up everything the book and the tests need, in this checkout only
# (nothing global is registered). Idempotent: a second run only checks.
#
#   .venv/             Python virtual environment: requirements.txt + minigrad (pip install -e .)
#   node_modules/      npm packages from package-lock.json (MathJax, widget manager, require.js)
#   _assets/           the offline assets copied from node_modules/ (scripts/vendor_assets.sh)
#
# Environment: PYTHON=python3.x to choose the interpreter for the venv (>= 3.11: the pinned NumPy and IPython need it).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# ---- Python venv -----------------------------------------------------------------
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is required"' \
    || { echo "setup.sh: $PYTHON is too old; set PYTHON=python3.11 (or newer)" >&2; exit 1; }
  say "creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
want=$(hash_of requirements.txt pyproject.toml)
if [ "$(cat .venv/.setup-stamp 2>/dev/null || true)" != "$want" ] \
   || ! .venv/bin/python -I -c 'import jupyter_book, nbval, playwright, minigrad' 2>/dev/null; then
  say "installing Python packages (requirements.txt, then minigrad in editable mode)"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements.txt
  .venv/bin/python -m pip install --quiet -e .
  .venv/bin/python -m pip check
  echo "$want" > .venv/.setup-stamp
else
  say "Python packages up to date (.venv)"
fi

# ---- optional: PyTorch as a test oracle ----------------------------------------------
# WITH_TORCH=1 installs the CPU build of PyTorch into .venv so that the optional tests that
# compare minigrad with PyTorch (tests/test_torch_oracle.py, tests/test_chapter_transfer.py)
# run instead of skipping. Neither the book nor minigrad needs it. .ci/run sets it.
if [ "${WITH_TORCH:-0}" = 1 ] && ! .venv/bin/python -c 'import torch' 2>/dev/null; then
  say "installing torch==${TORCH_VERSION:-2.13.0} (test oracle only)"
  .venv/bin/python -m pip install --quiet "torch==${TORCH_VERSION:-2.13.0}" \
    || say "WARNING: could not install torch; the PyTorch comparison tests will be skipped"
fi
# torchviz (tests/test_torchviz.py) requires torch: it comes with the oracle (pinned; --no-deps keeps torch as is)
if .venv/bin/python -c 'import torch' 2>/dev/null && ! .venv/bin/python -c 'import torchviz' 2>/dev/null; then
  say "installing torchviz==0.0.3 (test of torchviz compatibility)"
  .venv/bin/python -m pip install --quiet --no-deps "torchviz==0.0.3" \
    || say "WARNING: could not install torchviz; tests/test_torchviz.py will be skipped"
fi

# ---- npm packages and offline assets ----------------------------------------------
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "npm not found: installing Debian's nodejs + npm"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "setup.sh: npm (Node.js) is required to install the offline assets; install Node.js >= 18" >&2
    exit 1
  fi
fi
want=$(hash_of package-lock.json)
if [ "$(cat node_modules/.setup-stamp 2>/dev/null || true)" != "$want" ]; then
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > node_modules/.setup-stamp
else
  say "npm packages up to date (node_modules)"
fi
if [ ! -f _assets/widgets-config.js ] || [ scripts/vendor_assets.sh -nt _assets/widgets-config.js ] \
   || [ node_modules/.setup-stamp -nt _assets/widgets-config.js ]; then
  bash scripts/vendor_assets.sh
else
  say "offline assets up to date (_assets)"
fi
# matplotlib's font list, built now if missing (a minute with the CJK fonts), not by the first
# notebook that draws: that kernel would print "Matplotlib is building the font cache" under its plot
.venv/bin/python -c 'import logging; logging.disable(logging.WARNING); import matplotlib.font_manager'
say "ready"
