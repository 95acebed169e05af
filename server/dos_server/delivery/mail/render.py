"""Rendering an email kind's templates, ``templates/email/<kind>/``: ``subject.txt`` (one
line), ``body.txt`` (the text part, the reference) and ``body.html`` (the HTML part).

The environment is Flask's own, overlaid: the same loaders (so emails import the pages' card
macro from ``cards.html``), globals and filters, and Flask's autoescape, which escapes
``.html`` templates and leaves ``.txt`` ones alone (a name shows as typed in the text part and
escaped in the HTML part). Only the whitespace differs, for line-oriented text: a block tag's
line leaves no blank line (``trim_blocks``, ``lstrip_blocks``) and a file's last newline is
kept. A tag that ends a line of text and must keep its newline is written ``{% endif +%}``.

Every phrase is marked for gettext (``_()``/``ngettext()``, Flask-Babel's catalogs): an email
is rendered inside ``force_locale`` of its reader's language (:func:`in_language`, which the
dispatch calls around building and rendering), whatever the language of the request or the
worker that caused it. The email environment adds ``names`` (a list of names joined the
language's way, Babel's ``format_list``: "bob and carol", "bob ແລະ carol") and the font
stacks of the HTML part, which name Lao fonts after the Latin ones.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from babel.lists import format_list
from flask import current_app
from flask_babel import get_locale
from jinja2 import Environment
from markupsafe import Markup

from dos_server import i18n, timefmt

_KEY = "dos_email_jinja"

# The HTML part's fonts: Latin ones first, then fonts that have Lao script (mail clients have
# no web fonts; a reader's system has one of these).
LAO_FONTS = "'Noto Sans Lao', 'Noto Sans Lao UI', 'Phetsarath OT', 'Saysettha OT', 'Lao UI'"
FONTS = f"-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, {LAO_FONTS}, sans-serif"
MONO_FONTS = f"ui-monospace, Menlo, Consolas, 'DejaVu Sans Mono', {LAO_FONTS}, monospace"


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str


def environment() -> Environment:
    """The app's email environment (made once per app, with its own template cache)."""
    extensions = current_app.extensions
    if _KEY not in extensions:
        overlay = current_app.jinja_env.overlay(
            trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
        # The overlay shares the app's dicts: the email's own names go into copies.
        overlay.filters = {**overlay.filters, "names": names, "width": width, "pad": pad}
        # Markup: single quotes inside the style="..." attribute, not escaped.
        overlay.globals = {**overlay.globals, "email_fonts": Markup(FONTS),
                           "email_mono_fonts": Markup(MONO_FONTS)}
        extensions[_KEY] = overlay
    env: Environment = extensions[_KEY]
    return env


def names(items: Iterable[object]) -> str:
    """Names joined the reader's language's way: "bob, carol and dan" (Babel's CLDR lists)."""
    listed = [str(item) for item in items]
    return format_list(listed, locale=timefmt.current_locale()) if listed else ""


def width(text: object) -> int:
    """How many columns ``text`` takes in a monospaced text part: Lao vowel and tone marks
    (and other combining marks) sit on their letter and take none."""
    return sum(unicodedata.category(c) not in ("Mn", "Me", "Cf") for c in str(text))


def pad(text: object, size: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``size`` columns (on the left when ``right``)."""
    fill = " " * max(0, size - width(text))
    return f"{fill}{text}" if right else f"{text}{fill}"


in_language = i18n.in_language  # where the dispatch renders an email in its reader's language


def render(kind: str, context: Mapping[str, Any]) -> Rendered:
    """The three parts of one email; ``body.html`` also gets the rendered ``text`` (the plain
    emails show it as their HTML part)."""
    if not _has_locale():  # an app but no request, outside in_language: English
        with in_language(None):
            return render(kind, context)
    env = environment()
    folder = f"email/{kind}"
    subject = env.get_template(f"{folder}/subject.txt").render(context).rstrip("\n")
    text = env.get_template(f"{folder}/body.txt").render(context)
    html = env.get_template(f"{folder}/body.html").render(context, text=text)
    return Rendered(subject, text, html)


def _has_locale() -> bool:
    try:
        get_locale()
    except RuntimeError:  # the app's locale selector reads a request
        return False
    return True


__all__ = ["FONTS", "LAO_FONTS", "MONO_FONTS", "Rendered", "environment", "in_language",
           "names", "pad", "render", "width"]
