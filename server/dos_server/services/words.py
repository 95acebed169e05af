"""The words of a refusal in the reader's language: Flask-Babel's gettext for the server's own
sentences, the engine's catalog (``dos_engine.errors.explain``) for the rules' errors.

A refusal is worded where it is raised, in the locale of the request (``Accept-Language``, see
``i18n``) or of ``flask_babel.force_locale`` (an email's recipient); the worker and the CLI,
which have neither, word it in English. The problem ``type`` and ``title`` are never
translated (``problems.PROBLEM_TYPES``): programs read those.
"""

from __future__ import annotations

import flask_babel

from dos_engine.errors import DosError, IllegalActionError
from dos_engine.errors import explain as explain_error

ENGLISH = "en"
# An app without Flask-Babel (a bare app with the problem handlers, in tests) has no locale:
# English. (Outside a request the locale selector says English itself: i18n.browser_language.)
_NO_LOCALE = (RuntimeError, KeyError)


def _(message: str, **variables: object) -> str:
    """Flask-Babel's ``gettext``: ``message`` (named ``%(name)s`` placeholders) in the reader's
    language, English where no request or forced locale says which."""
    try:
        return str(flask_babel.gettext(message, **variables))
    except _NO_LOCALE:
        return message % variables if variables else message


def ngettext(singular: str, plural: str, num: int, **variables: object) -> str:
    """Flask-Babel's ``ngettext`` (``%(num)d`` is the count), English outside a request."""
    try:
        return str(flask_babel.ngettext(singular, plural, num, **variables))
    except _NO_LOCALE:
        return (singular if num == 1 else plural) % {"num": num, **variables}


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for the marker)
    """Marks a sentence worded elsewhere in English, for extraction; :func:`_` reads it."""
    return message


def language() -> str:
    """The language a refusal is worded in now: Flask-Babel's locale, English outside one."""
    try:
        locale = flask_babel.get_locale()
    except _NO_LOCALE:
        return ENGLISH
    return locale.language if locale is not None else ENGLISH


def engine_detail(error: DosError) -> str:
    """An engine error's message in the reader's language; a rule error's without its rule
    (the problem's ``rule`` says that apart)."""
    if isinstance(error, IllegalActionError):
        return error.message(language())
    return explain_error(error, language())


__all__ = ["N_", "_", "engine_detail", "language", "ngettext"]
