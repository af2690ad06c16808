"""The version of minigrad, in one place.

pyproject.toml reads it (``[tool.setuptools.dynamic]``), ``minigrad.__version__`` re-exports it,
and scripts/install_cell.py writes it into every notebook's install cell. To release a new
version, change it here only (README.md, "Releasing").
"""
__version__ = "0.1.0"
