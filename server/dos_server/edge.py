"""Checks at the edge, before a view or service sees the request: the JSON body, the path
parameters and the header values. Each refusal is a 4xx problem naming what was wrong.

- JSON bodies are parsed by :func:`load_json` (the views' argument parser uses it): no
  nesting deeper than :data:`MAX_JSON_DEPTH`, no integer literal longer than
  :data:`MAX_INT_DIGITS`, no NaN/Infinity, no lone surrogate or NUL in any string or key.
  Such text would otherwise crash the parser, the database driver or a later request.
- Path parameters: a game id is ``[a-z0-9]{1,16}`` (anything else is no game: 404 without a
  query); a token in a path is printable ASCII (else 401, like any bad token).
- The host: with ``TRUSTED_HOSTS`` (production), any other Host header is refused (400).
- Headers: ``Idempotency-Key`` is 1-128 printable ASCII characters (else 400, before the
  move is tried, so a retrying client learns to fix its key instead of losing its move).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

import flask_smorest
from flask import Request, current_app, request
from webargs import core
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import SecurityError

from dos_server.errors import GameNotFound, NotAuthenticated
from dos_server.problems import Problem
from dos_server.services.words import _

MAX_JSON_DEPTH = 32
MAX_INT_DIGITS = 64
IDEMPOTENCY_KEY_MAX = 128  # idempotency_keys.key is String(128)

GAME_ID = re.compile(r"[a-z0-9]{1,16}")
PRINTABLE_ASCII = re.compile(r"[\x21-\x7e]+")
HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


def invalid_json(detail: str) -> Problem:
    """A 400 for a body that is no JSON we read; ``detail`` is the whole sentence (``_()``)."""
    return Problem(400, "invalid-json", "Invalid JSON", detail)


class _Refused(ValueError):
    """Raised from inside ``json.loads`` by the number and constant hooks."""


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(_("the JSON body has an integer of %(digits)s digits (at most "
                         "%(most)s)", digits=digits, most=MAX_INT_DIGITS))
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(_("the JSON body has a number too large to be finite (%(number)s...)",
                         number=text[:20]))
    return value


def _parse_constant(name: str) -> Any:
    raise _Refused(_("the JSON body has %(name)s, which is not a JSON number", name=name))


def load_json(raw: bytes) -> Any:
    """Parse a request body as JSON (RFC 8259), refusing what could harm the server (400)."""
    try:
        text = raw.decode("utf-8")  # strict: an encoded surrogate is refused here too
    except UnicodeDecodeError as error:
        raise invalid_json(_("the JSON body is not UTF-8 (byte %(byte)s)",
                             byte=error.start)) from None
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                           parse_constant=_parse_constant)
    except RecursionError:
        raise invalid_json(_("the JSON body is nested too deeply (at most %(most)s levels)",
                             most=MAX_JSON_DEPTH)) from None
    except _Refused as error:
        raise invalid_json(str(error)) from None
    except json.JSONDecodeError as error:
        raise invalid_json(_("the JSON body is not JSON: %(reason)s (line %(line)s, column "
                             "%(column)s)", reason=error.msg, line=error.lineno,
                             column=error.colno)) from None
    _check_tree(value)
    return value


def _check_tree(value: Any) -> None:
    """Depth and strings of a parsed document, without recursion (it may be deep)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item, path)
            continue
        if not isinstance(item, dict | list):
            continue
        if depth >= MAX_JSON_DEPTH:
            if path:
                raise invalid_json(_("the JSON body is nested too deeply at %(path)s (at most "
                                     "%(most)s levels)", path=path, most=MAX_JSON_DEPTH))
            raise invalid_json(_("the JSON body is nested too deeply at the top (at most "
                                 "%(most)s levels)", most=MAX_JSON_DEPTH))
        if isinstance(item, dict):
            for key, child in item.items():
                where = f"{path}.{key}" if path else key
                _check_text(key, path, key=True)
                stack.append((child, where, depth + 1))
        else:
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def _check_text(text: str, path: str, key: bool = False) -> None:
    """A string of the body (or a key, at ``path``): no NUL, no lone surrogate."""
    if "\x00" in text:
        raise invalid_json(_("the JSON body has a NUL character (\\u0000) in %(where)s",
                             where=_where(path, key)))
    for ch in text:
        if "\ud800" <= ch <= "\udfff":
            code = f"\\u{ord(ch):04x}"
            raise invalid_json(_("the JSON body has a lone surrogate (%(code)s) in %(where)s: "
                                 "text must be valid Unicode", code=code,
                                 where=_where(path, key)))


def _where(path: str, key: bool) -> str:
    """Where in the body a bad string is, for :func:`_check_text`'s sentences."""
    if key:
        return (_("a key at %(path)s", path=_shown(path)) if path
                else _("a key at the top"))
    return _shown(path) if path else _("(the whole body)")


def _shown(where: str) -> str:
    return ascii(where)[1:-1][:100]  # a key itself may hold the bad character


View = TypeVar("View", bound=Callable[..., Any])


class EdgeParser(FlaskParser):
    """webargs' Flask parser with :func:`load_json` instead of a bare ``json.loads``."""

    def _raw_load_json(self, req: Request) -> Any:
        if not core.is_json(req.mimetype):
            return core.missing
        raw = req.get_data(cache=True)
        return load_json(raw) if raw else core.missing


class Blueprint(flask_smorest.Blueprint):  # type: ignore[misc]
    """flask-smorest's Blueprint whose ``arguments`` parse JSON with :class:`EdgeParser`, and
    whose ``alt_response`` only documents."""

    ARGUMENTS_PARSER = EdgeParser()

    def arguments(self, schema: Any, **kwargs: Any) -> Callable[[View], View]:
        """flask-smorest's ``arguments``, with one instance of a schema class made here.

        Given a class, webargs makes a new instance on every request, deep-copying each of its
        fields (a few percent of a move's request). A schema holds no state while it loads, so
        every request can share one.
        """
        shared = schema() if isinstance(schema, type) else schema
        return super().arguments(shared, **kwargs)  # type: ignore[no-any-return]

    def alt_response(self, *args: Any, **kwargs: Any) -> Callable[[View], View]:
        """flask-smorest's ``alt_response``, its documentation without its wrapper.

        Each ``alt_response`` wraps the view in a function that only calls it (after
        ``ensure_sync``) and carries the documented response in ``_apidoc``: a view with seven
        documented errors ran seven such layers on every request. The same ``_apidoc`` is put
        on the view itself instead, where the outer decorators find it.
        """
        document = super().alt_response(*args, **kwargs)

        def decorator(view: View) -> View:
            view._apidoc = document(view)._apidoc  # type: ignore[attr-defined]
            return view

        return decorator


def check_request() -> None:
    """``before_request``: the host, path parameters and header values, before any view."""
    try:
        request.host  # noqa: B018 - checks TRUSTED_HOSTS (werkzeug raises SecurityError)
    except SecurityError:
        raise Problem(400, "untrusted-host", "Unknown host",
                      _("this server does not answer for that host name; use the address in "
                        "your emails: %(url)s", url=current_app.config["PUBLIC_URL"])) from None
    for name, value in (request.view_args or {}).items():
        if name == "game_id" and not GAME_ID.fullmatch(value):
            raise GameNotFound(_("there is no game %(game)s on this server; check the game "
                                 "id", game=repr(value[:40])))
        if name == "token" and not PRINTABLE_ASCII.fullmatch(value):
            raise NotAuthenticated(_("this link's token is not valid: it has characters no "
                                     "token has (it may have been cut or changed when "
                                     "copied)"), invalid=True)
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (len(key) <= IDEMPOTENCY_KEY_MAX and HEADER_VALUE.fullmatch(key)):
        raise Problem(400, "invalid-header", "Invalid header",
                      _("the Idempotency-Key header must be 1 to %(most)s printable ASCII "
                        "characters (this one has %(length)s); nothing was done: send the "
                        "request again with a valid key", most=IDEMPOTENCY_KEY_MAX,
                        length=len(key)))


__all__ = ["MAX_INT_DIGITS", "MAX_JSON_DEPTH", "Blueprint", "EdgeParser", "check_request",
           "load_json"]
