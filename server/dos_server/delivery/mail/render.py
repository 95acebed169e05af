"""Rendering an email kind's templates, ``templates/email/<kind>/``: ``subject.txt`` (one
line), ``body.txt`` (the text part, the reference) and ``body.html`` (the HTML part).

The environment is Flask's own, overlaid: the same loaders (so emails import the pages' card
macro from ``cards.html``), globals and filters, and Flask's autoescape, which escapes
``.html`` templates and leaves ``.txt`` ones alone (a name shows as typed in the text part and
escaped in the HTML part). Only the whitespace differs, for line-oriented text: a block tag's
line leaves no blank line (``trim_blocks``, ``lstrip_blocks``) and a file's last newline is
kept. A tag that ends a line of text and must keep its newline is written ``{% endif +%}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import current_app
from jinja2 import Environment

_KEY = "dos_email_jinja"


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str


def environment() -> Environment:
    """The app's email environment (made once per app, with its own template cache)."""
    extensions = current_app.extensions
    if _KEY not in extensions:
        extensions[_KEY] = current_app.jinja_env.overlay(
            trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env: Environment = extensions[_KEY]
    return env


def render(kind: str, context: Mapping[str, Any]) -> Rendered:
    """The three parts of one email; ``body.html`` also gets the rendered ``text`` (the plain
    emails show it as their HTML part)."""
    env = environment()
    folder = f"email/{kind}"
    subject = env.get_template(f"{folder}/subject.txt").render(context).rstrip("\n")
    text = env.get_template(f"{folder}/body.txt").render(context)
    html = env.get_template(f"{folder}/body.html").render(context, text=text)
    return Rendered(subject, text, html)


__all__ = ["Rendered", "environment", "render"]
