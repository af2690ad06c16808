"""The language of the exercises' feedback: standard ``gettext``, catalogue in ``locale/``.

The course's check messages are English in the source and translated through the message
catalogue ``locale/<LL>/LC_MESSAGES/minigrad-course.mo`` (compiled from its ``.po`` by
``python scripts/i18n.py compile-messages``; the wheel carries both). Which language a message
is given in is decided, in this order, by

1. ``using(lang)``: a context set by the grader for one submission (and by tests);
2. the environment variable ``MINIGRAD_COURSE_LANG`` (``zh`` or ``en``): the grader's runner sets it
   for the kernel and the checkers of a Chinese submission; a learner may set it too;
3. the notebook the kernel runs: Jupyter sets ``JPY_SESSION_NAME`` to its path, and a notebook of
   the Chinese edition (book or student edition) says ``"i18n": {"language": "zh"}`` in its
   metadata (the kernel cannot see the metadata otherwise, and the code cells are the English ones);
4. English.

The system locale (``LANG``) is not used: the feedback follows the notebook, not the machine.
"""
from __future__ import annotations

import contextlib
import gettext
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Iterator

DOMAIN = "minigrad-course"
LOCALE_DIR = Path(__file__).with_name("locale")
ENV = "MINIGRAD_COURSE_LANG"
#: the course's languages -> gettext's locale name (None: the source text, no catalogue)
LANGUAGES = {"en": None, "zh": "zh_CN"}
META = "i18n"  # notebook metadata key written by scripts/i18n.py build and kept by release

_forced: list[str] = []
#: catalogues carried as data (the grader's checker reads no file): lang -> {msgid: msgstr}
EMBEDDED: dict[str, dict[str, str]] = {}


def normalise(lang: str | None) -> str | None:
    """'zh', 'zh_CN', 'zh-CN', 'ZH' -> 'zh'; 'en...' -> 'en'; anything else -> None."""
    if not lang:
        return None
    code = str(lang).strip().lower().replace("-", "_").split("_")[0]
    return code if code in LANGUAGES else None


def notebook_language(metadata: dict | None) -> str:
    """The language a notebook's metadata declares (the Chinese edition's notebooks: 'zh')."""
    meta = (metadata or {}).get(META) or {}
    return normalise(meta.get("language") if isinstance(meta, dict) else None) or "en"


@lru_cache(maxsize=8)
def _session_language(path: str, mtime: float) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return notebook_language(json.load(f).get("metadata"))
    except (OSError, ValueError, AttributeError):
        return None


def _kernel_notebook_language() -> str | None:
    path = os.environ.get("JPY_SESSION_NAME", "")
    if not path.endswith(".ipynb"):
        return None
    # Jupyter Server gives the path relative to its root folder; the kernel runs in the notebook's
    # folder: try the path as given, then the notebook's name in the current folder
    for candidate in (path, os.path.join(os.getcwd(), os.path.basename(path))):
        try:
            return _session_language(candidate, os.path.getmtime(candidate))
        except OSError:
            continue
    return None


def current_language() -> str:
    """The language of the feedback now ('en' or 'zh'), decided as the module docstring says."""
    if _forced:
        return _forced[-1]
    return normalise(os.environ.get(ENV)) or _kernel_notebook_language() or "en"


@contextlib.contextmanager
def using(lang: str | None) -> Iterator[str]:
    """Give the feedback in ``lang`` inside the block (the grader: one submission's language)."""
    code = normalise(lang) or "en"
    _forced.append(code)
    try:
        yield code
    finally:
        _forced.pop()


@lru_cache(maxsize=None)
def translation(lang: str) -> gettext.NullTranslations:
    """The catalogue of a language (a NullTranslations for English or a missing catalogue)."""
    name = LANGUAGES.get(lang)
    if not name:
        return gettext.NullTranslations()
    if lang in EMBEDDED:
        return _Embedded(EMBEDDED[lang])
    return gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[name], fallback=True)


class _Embedded(gettext.NullTranslations):
    def __init__(self, catalog: dict[str, str]):
        super().__init__()
        self._catalog = catalog

    def gettext(self, message: str) -> str:
        return self._catalog.get(message) or message


def catalogues() -> dict[str, dict[str, str]]:
    """Every compiled catalogue, as dicts (msgid -> msgstr)."""
    out = {}
    for lang, name in LANGUAGES.items():
        mo = LOCALE_DIR / (name or "-") / "LC_MESSAGES" / f"{DOMAIN}.mo"
        if name and mo.is_file():
            with open(mo, "rb") as f:
                out[lang] = {k: v for k, v in gettext.GNUTranslations(f)._catalog.items() if k}
    return out


def bundled_source() -> str:
    """This module's source with the catalogues inside: the grader's checkers get it as text."""
    return Path(__file__).read_text(encoding="utf-8") + f"\nEMBEDDED.update({catalogues()!r})\n"


def submission_language(raw: bytes | None) -> str:
    """The language of a submitted notebook (its metadata); English if it cannot be read."""
    try:
        return notebook_language(json.loads(raw or b"{}").get("metadata"))
    except (ValueError, AttributeError, UnicodeDecodeError):
        return "en"


def _(message: str) -> str:
    """``message`` in the current language (unchanged where the catalogue has no translation)."""
    return translation(current_language()).gettext(message)


def N_(message: str) -> str:
    """Mark a message for the catalogue without translating it yet (gettext's ``gettext_noop``):
    for text kept in a constant and translated where it is shown, ``_(WHY[k])``."""
    return message


def available() -> dict[str, bool]:
    """Which languages have a compiled catalogue next to this module (packaging check)."""
    return {lang: name is None or (LOCALE_DIR / name / "LC_MESSAGES" / f"{DOMAIN}.mo").is_file()
            for lang, name in LANGUAGES.items()}
