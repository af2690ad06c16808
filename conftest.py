"""Root conftest: make nbval use nbval_sanitize.cfg wherever pytest is started from.

(`--nbval-sanitize-with=relative.cfg` in addopts would resolve against the current
folder, not the repository root.)
"""
from pathlib import Path


def pytest_configure(config):
    opt = config.option
    if (getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False)) and not getattr(
        opt, "nbval_sanitize_with", None
    ):
        opt.nbval_sanitize_with = str(Path(__file__).with_name("nbval_sanitize.cfg"))
