"""Root conftest: make nbval use nbval_sanitize.cfg wherever pytest is started from, give the
run a matplotlib font cache of its own, and make nbval say what an unexpected output was.

(`--nbval-sanitize-with=relative.cfg` in addopts would resolve against the current
folder, not the repository root.)
"""
import logging
import os
import shutil
import tempfile
from pathlib import Path


def pytest_configure(config):
    opt = config.option
    if (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False)) and not getattr(
        opt, "nbval_sanitize_with", None
    ):
        opt.nbval_sanitize_with = str(Path(__file__).with_name("nbval_sanitize.cfg"))
    _own_font_cache()
    _explain_unexpected_outputs()


_OWN_CACHE = [""]  # the folder _own_font_cache made, removed when the run ends


def pytest_unconfigure(config):
    if _OWN_CACHE[0]:
        shutil.rmtree(_OWN_CACHE[0], ignore_errors=True)
        os.environ.pop("MPLCONFIGDIR", None)
        _OWN_CACHE[0] = ""


def _own_font_cache():
    """matplotlib's font list is kept per user (~/.cache/matplotlib) and names font files by path.
    A list written by another environment on this machine (a clone under /tmp, since removed)
    sends matplotlib looking for missing files: it rebuilds the list and says so on stderr, in the
    first notebook cell that draws, which strict nbval then fails. The run (its kernels included:
    they inherit the environment) gets a list of its own, built here once, before any test."""
    if os.environ.get("MPLCONFIGDIR") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    os.environ["MPLCONFIGDIR"] = _OWN_CACHE[0] = tempfile.mkdtemp(prefix="mpl-tests-")
    try:
        logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
        import matplotlib.font_manager  # noqa: F401  (builds the list into MPLCONFIGDIR)
    except ImportError:
        pass
    finally:
        logging.getLogger("matplotlib.font_manager").setLevel(logging.NOTSET)


def _explain_unexpected_outputs():
    """nbval reports "Unexpected output fields from running code: {'stderr'}" without the text;
    the text is what says why, so it is added to the failure."""
    try:
        from nbval import plugin
    except ImportError:
        return
    if getattr(plugin.IPyNbCell.compare_outputs, "_explained", False):
        return
    original = plugin.IPyNbCell.compare_outputs

    def compare_outputs(self, test, ref, skip_compare=None):
        ok = original(self, test, ref, skip_compare)
        if not ok:
            stored = {o.get("name") for o in ref if o.get("output_type") == "stream"}
            for out in test:
                if out.get("output_type") == "stream" and out.get("name") not in stored:
                    self.comparison_traceback.append(f"{out.get('name')} of the fresh run:\n{out.get('text', '')}")
        return ok

    compare_outputs._explained = True
    plugin.IPyNbCell.compare_outputs = compare_outputs
