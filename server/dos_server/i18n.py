"""The languages people read: Flask-Babel's gettext catalogs (``translations/``), the locale
each request is answered in, and the list of languages shipped.

A catalog is made with Babel's own tools (docs/development.md, "Adding a language"): the
messages are extracted from the Python code and the Jinja templates (``babel.cfg``), each
language's ``messages.po`` is translated, and its ``messages.mo`` is compiled beside it.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, current_app, request
from flask_babel import Babel, get_locale

TRANSLATIONS = Path(__file__).parent / "translations"
DEFAULT_LANGUAGE = "en"  # the messages' own language: it needs no catalog


def translation_directories() -> list[Path]:
    """Where the app's catalogs are (Flask-Babel's ``BABEL_TRANSLATION_DIRECTORIES``: the
    package's own, unless configured)."""
    configured = current_app.config.get("BABEL_TRANSLATION_DIRECTORIES") if current_app else None
    return [Path(d) for d in configured.split(";")] if configured else [TRANSLATIONS]


def shipped_languages() -> list[str]:
    """English and every language with a compiled catalog."""
    found = sorted({p.parent.parent.name for folder in translation_directories()
                    for p in folder.glob("*/LC_MESSAGES/messages.mo")} - {DEFAULT_LANGUAGE})
    return [DEFAULT_LANGUAGE, *found]


def language_of(tag: str | None) -> str:
    """A shipped language for a tag such as ``lo``, ``lo-LA`` or ``lo_LA.UTF-8``; English for
    an unknown or missing one."""
    if not tag:
        return DEFAULT_LANGUAGE
    base = tag.replace("_", "-").split(".", 1)[0].split("-", 1)[0].strip().lower()
    return base if base in shipped_languages() else DEFAULT_LANGUAGE


def request_locale() -> str:
    """The browser's preferred shipped language (``Accept-Language``), else English."""
    return request.accept_languages.best_match(shipped_languages()) or DEFAULT_LANGUAGE


babel = Babel()


def page_language() -> str:
    """The language a page is answered in, for ``<html lang>``."""
    return str(get_locale() or DEFAULT_LANGUAGE)


def init_app(app: Flask) -> None:
    babel.init_app(app, locale_selector=request_locale,
                   default_translation_directories=str(TRANSLATIONS))
    app.add_template_global(page_language, "page_language")
