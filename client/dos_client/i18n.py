# The client's catalog (domain dos_client), from the repository's root:
#   pybabel extract -o /tmp/dos_client.pot client/dos_client
#   pybabel update -i /tmp/dos_client.pot -D dos_client -d client/dos_client/locale --no-fuzzy-matching
#   pybabel compile -D dos_client -d client/dos_client/locale
# (a new language: `pybabel init -i /tmp/dos_client.pot -D dos_client -d client/dos_client/locale
# -l CODE` instead of update). tests/client/test_client_catalog.py fails on a message left out.
"""dos-client in its reader's language: standard-library gettext over the client's own catalog
(``locale/<language>/LC_MESSAGES/dos_client.mo``), never the server's stack.

The language is chosen as gettext chooses it: the first of LANGUAGE (a ``:``-separated list),
LC_ALL, LC_MESSAGES and LANG that is set, and in it the first language the client has a
catalog of (``lo_LA.UTF-8`` is ``lo``); English for any other, and for ``C``. It is read when a
message is, so a command run with another environment speaks its language. With ``--json`` the
client speaks English (:func:`use`), so what a script reads is the same in every language.

Click's own words ("Usage:", "Options", its errors) are read through the same catalog
(:func:`localized`); the ones translated are listed in ``click_words.py``.
"""

from __future__ import annotations

import gettext
import inspect
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

LOCALE = Path(__file__).parent / "locale"
DOMAIN = "dos_client"
DEFAULT_LANGUAGE = "en"  # the messages' own language: it needs no catalog
ENVIRONMENT = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")  # gettext's order

_forced: str | None = None  # set by use(): --json speaks English


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for the marker)
    """Marks a message for extraction where it is defined; it is translated where it is read."""
    return message


def language(environ: Mapping[str, str] | None = None) -> str:
    """The language this environment asks for, among the client's (``en`` otherwise)."""
    if _forced is not None and environ is None:
        return _forced
    environ = os.environ if environ is None else environ
    for variable in ENVIRONMENT:
        value = environ.get(variable)
        if value:
            return _first_shipped(tuple(value.split(":")))
    return DEFAULT_LANGUAGE


@lru_cache(maxsize=32)
def _first_shipped(wanted: tuple[str, ...]) -> str:
    found = gettext.find(DOMAIN, str(LOCALE), languages=[*wanted, "C"])
    return Path(found).parent.parent.name if found else DEFAULT_LANGUAGE


def use(code: str | None) -> None:
    """Speak ``code`` whatever the environment says (None: the environment's language again)."""
    global _forced
    _forced = code


@lru_cache(maxsize=8)
def translator(code: str) -> gettext.NullTranslations:
    """The client's catalog for ``code``; English, which needs none, for any other."""
    if code == DEFAULT_LANGUAGE:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, str(LOCALE), languages=[code], fallback=True)


def _(message: str) -> str:
    """``message`` in the reader's language."""
    return translator(language()).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """``singular`` or ``plural``, as ``count`` and the reader's language want it."""
    return translator(language()).ngettext(singular, plural, count)


def shipped_languages() -> list[str]:
    """English and every language the client has a compiled catalog for."""
    found = sorted({p.parent.parent.name for p in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.mo")})
    return [DEFAULT_LANGUAGE, *[code for code in found if code != DEFAULT_LANGUAGE]]


# -- click -------------------------------------------------------------------------------------

_SOURCE = "_dos_source_text"  # where a command or option keeps the English its help began as


@contextmanager
def localized(command: Any) -> Iterator[None]:
    """While the command line runs: ``command``'s help texts, and those of its options and
    subcommands, in the reader's language, and click's own words too (click reads them through
    standard gettext's global domain, which is the client's meanwhile: this is the application).
    Entered as each run starts, so each run speaks its environment's language."""
    gettext.bindtextdomain(DOMAIN, str(LOCALE))
    previous = gettext.textdomain()
    gettext.textdomain(DOMAIN)
    try:
        _localize(command)
        yield
    finally:
        gettext.textdomain(previous)
        use(None)


def _localize(command: Any) -> None:
    if getattr(command, "_help_option", None) is not None:
        command._help_option = None  # click made it in the language of a run before this one
    for owner, field in ((command, "help"), (command, "short_help"),
                         *((p, f) for p in command.params for f in ("help", "prompt"))):
        _translate(owner, field)
    for sub in getattr(command, "commands", {}).values():
        _localize(sub)


def _translate(owner: Any, field: str) -> None:
    sources: dict[str, str | None] = owner.__dict__.setdefault(_SOURCE, {})
    if field not in sources:
        text = getattr(owner, field, None)
        sources[field] = inspect.cleandoc(text) if isinstance(text, str) else None
    source = sources[field]
    if source is not None:
        setattr(owner, field, _(source))
