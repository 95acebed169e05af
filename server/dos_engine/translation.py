"""The engine's words in the reader's language: standard-library gettext over the engine's own
catalog (``locale/<language>/LC_MESSAGES/dos_engine.mo``), so the event lines and the rule errors
read the same in the server's pages and emails and in ``dos-client``, neither of which the engine
depends on.

The catalog is made with Babel's tools (docs/development.md, "Languages"; the commands are in
``babel.cfg``).
"""

from __future__ import annotations

import gettext
from functools import lru_cache
from pathlib import Path

LOCALE = Path(__file__).parent / "locale"
DOMAIN = "dos_engine"
DEFAULT_LANGUAGE = "en"  # the messages' own language: it needs no catalog


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for the marker)
    """Marks a message for extraction where it is defined; it is translated where it is read."""
    return message


@lru_cache(maxsize=16)
def translator(language: str | None) -> gettext.NullTranslations:
    """The engine's catalog for ``language`` (a shipped language code such as ``lo``); English,
    which needs none, for any other."""
    if not language or language == DEFAULT_LANGUAGE:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE, languages=[language], fallback=True)


def shipped_languages() -> list[str]:
    """English and every language the engine has a compiled catalog for."""
    found = sorted({p.parent.parent.name for p in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.mo")})
    return [DEFAULT_LANGUAGE, *[code for code in found if code != DEFAULT_LANGUAGE]]
