"""The languages people read: Flask-Babel's gettext catalogs (``translations/``), the locale
each request is answered in, and the list of languages shipped.

A catalog is made with Babel's own tools (docs/development.md, "Adding a language"): the
messages are extracted from the Python code and the Jinja templates (``babel.cfg``), each
language's ``messages.po`` is translated, and its ``messages.mo`` is compiled beside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from flask import Flask, current_app, g, has_request_context, request
from flask_babel import Babel, force_locale, get_locale, refresh

TRANSLATIONS = Path(__file__).parent / "translations"
DEFAULT_LANGUAGE = "en"  # the messages' own language: it needs no catalog


def translation_directories() -> list[Path]:
    """Where the app's catalogs are (Flask-Babel's ``BABEL_TRANSLATION_DIRECTORIES``: the
    package's own, unless configured)."""
    configured = current_app.config.get("BABEL_TRANSLATION_DIRECTORIES") if current_app else None
    return [Path(d) for d in configured.split(";")] if configured else [TRANSLATIONS]


def shipped_languages() -> list[str]:
    """English and every language with a compiled catalog."""
    return list(_languages_in(tuple(translation_directories())))


@lru_cache(maxsize=8)
def _languages_in(folders: tuple[Path, ...]) -> tuple[str, ...]:
    # Read once per set of folders: the locale of every request asks.
    found = sorted({p.parent.parent.name for folder in folders
                    for p in folder.glob("*/LC_MESSAGES/messages.mo")} - {DEFAULT_LANGUAGE})
    return (DEFAULT_LANGUAGE, *found)


def shipped_language(tag: object) -> str | None:
    """The shipped language a tag such as ``lo``, ``lo-LA`` or ``lo_LA.UTF-8`` names; None for
    none, or one not shipped (an unknown language is no mistake: it reads as English)."""
    if not isinstance(tag, str):
        return None
    base = tag.strip().replace("-", "_").partition(".")[0].partition("_")[0].lower()
    return base if base in shipped_languages() else None


def language_of(tag: str | None) -> str:
    """The shipped language of a tag; English for an unknown or missing one."""
    return shipped_language(tag) or DEFAULT_LANGUAGE


def browser_language() -> str | None:
    """The browser's preferred shipped language (``Accept-Language``); None for none, and
    outside a request (the worker, the mail-in listener, the CLI: they choose a reader's
    language with :func:`in_language`)."""
    if not has_request_context():
        return None
    best = request.accept_languages.best_match(shipped_languages())
    return str(best) if best else None


def request_locale() -> str:
    """The language a request is answered in: the reader's own, when the page knows it (a
    seat's stored language on that seat's pages, a signed-in identity's on its pages: see
    :func:`read_in`), else the browser's (``Accept-Language``), else English."""
    own = g.get(_OWN_LANGUAGE)
    return str(own) if own else browser_language() or DEFAULT_LANGUAGE


_OWN_LANGUAGE = "dos_language"


def read_in(language: str | None) -> str | None:
    """Answer the rest of this request in the reader's stored ``language`` (a seat's, an
    identity's); one not shipped, or None, leaves it to the browser. Returns the language
    chosen, or None."""
    shipped = shipped_language(language)
    if shipped is None:
        return None
    if g.get(_OWN_LANGUAGE) != shipped:
        setattr(g, _OWN_LANGUAGE, shipped)
        refresh()  # Flask-Babel keeps the locale of the request once asked: ask again
    return shipped


babel = Babel()


def page_language() -> str:
    """The language a page is answered in, for ``<html lang>``."""
    return str(get_locale() or DEFAULT_LANGUAGE)


def init_app(app: Flask) -> None:
    babel.init_app(app, locale_selector=request_locale,
                   default_translation_directories=str(TRANSLATIONS))
    app.add_template_global(page_language, "page_language")


@contextmanager
def in_language(language: str | None) -> Iterator[str]:
    """Inside, gettext, Babel's formats and templates speak ``language`` (a shipped one;
    English for none or one not shipped), whatever the request's: an email is written in its
    reader's language (Flask-Babel's ``force_locale``)."""
    chosen = language_of(language)
    with force_locale(chosen):
        yield chosen
