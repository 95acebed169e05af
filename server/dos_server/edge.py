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

MAX_JSON_DEPTH = 32
MAX_INT_DIGITS = 64
IDEMPOTENCY_KEY_MAX = 128  # idempotency_keys.key is String(128)

GAME_ID = re.compile(r"[a-z0-9]{1,16}")
PRINTABLE_ASCII = re.compile(r"[\x21-\x7e]+")
HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


def invalid_json(detail: str) -> Problem:
    return Problem(400, "invalid-json", "Invalid JSON", f"the JSON body {detail}")


class _Refused(ValueError):
    """Raised from inside ``json.loads`` by the number and constant hooks."""


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"has an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"has a number too large to be finite ({text[:20]}...)")
    return value


def _parse_constant(name: str) -> Any:
    raise _Refused(f"has {name}, which is not a JSON number")


def load_json(raw: bytes) -> Any:
    """Parse a request body as JSON (RFC 8259), refusing what could harm the server (400)."""
    try:
        text = raw.decode("utf-8")  # strict: an encoded surrogate is refused here too
    except UnicodeDecodeError as error:
        raise invalid_json(f"is not UTF-8 (byte {error.start})") from None
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                           parse_constant=_parse_constant)
    except RecursionError:
        raise invalid_json(f"is nested too deeply (at most {MAX_JSON_DEPTH} levels)") from None
    except _Refused as error:
        raise invalid_json(str(error)) from None
    except json.JSONDecodeError as error:
        raise invalid_json(f"is not JSON: {error.msg} (line {error.lineno}, column "
                           f"{error.colno})") from None
    _check_tree(value)
    return value


def _check_tree(value: Any) -> None:
    """Depth and strings of a parsed document, without recursion (it may be deep)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item, path or "(the whole body)")
            continue
        if not isinstance(item, dict | list):
            continue
        if depth >= MAX_JSON_DEPTH:
            raise invalid_json(f"is nested too deeply at {path or 'the top'} (at most "
                               f"{MAX_JSON_DEPTH} levels)")
        if isinstance(item, dict):
            for key, child in item.items():
                where = f"{path}.{key}" if path else key
                _check_text(key, f"a key at {path or 'the top'}")
                stack.append((child, where, depth + 1))
        else:
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def _check_text(text: str, where: str) -> None:
    if "\x00" in text:
        raise invalid_json(f"has a NUL character (\\u0000) in {_shown(where)}")
    for ch in text:
        if "\ud800" <= ch <= "\udfff":
            raise invalid_json(f"has a lone surrogate (\\u{ord(ch):04x}) in {_shown(where)}: "
                               "text must be valid Unicode")


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
                      "this server does not answer for that host name; use the address in "
                      f"your emails: {current_app.config['PUBLIC_URL']}") from None
    for name, value in (request.view_args or {}).items():
        if name == "game_id" and not GAME_ID.fullmatch(value):
            raise GameNotFound(f"there is no game {value[:40]!r} on this server; check the "
                               "game id")
        if name == "token" and not PRINTABLE_ASCII.fullmatch(value):
            raise NotAuthenticated("this link's token is not valid: it has characters no token "
                                   "has (it may have been cut or changed when copied)")
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (len(key) <= IDEMPOTENCY_KEY_MAX and HEADER_VALUE.fullmatch(key)):
        raise Problem(400, "invalid-header", "Invalid header",
                      f"the Idempotency-Key header must be 1 to {IDEMPOTENCY_KEY_MAX} printable "
                      f"ASCII characters (this one has {len(key)}); nothing was done: send the "
                      "request again with a valid key")


__all__ = ["MAX_INT_DIGITS", "MAX_JSON_DEPTH", "Blueprint", "EdgeParser", "check_request",
           "load_json"]
