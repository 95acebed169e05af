"""JSON log lines with a request id; tokens never appear.

We log paths, never headers, and every logged path, query and message passes through
:func:`redact`, which blanks the token in unsubscribe links (``/api/unsubscribe/<token>``), in
query parameters named like ``token``, in play-by-email reply addresses and anything shaped
like one of our signed tokens. :class:`GunicornLogger` does the same for gunicorn's access log
(``--logger-class dos_server.logs.GunicornLogger``, as in the Procfile and ``make run``).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from gunicorn.glogging import Logger as _GunicornBaseLogger  # type: ignore[import-untyped]

# gunicorn's master imports this module for GunicornLogger: Flask is imported by init_logging,
# in the workers, so that the master stays small (dos_server/__init__.py).
if TYPE_CHECKING:
    from flask import Flask, Response

REDACTED = "[redacted]"
_SECRET_PATTERNS = [
    # /api/unsubscribe/<token> (and any other ``.../unsubscribe/<token>`` link)
    (re.compile(r"(/unsubscribe/)[^/?#\s\"']+", re.IGNORECASE), r"\1" + REDACTED),
    # ?token=..., &invite_token=..., ?invite=..., ?code=... (the web pages' sign-in and join
    # links), in a query string or a whole URI
    (re.compile(r"((?:^|[?&;])[^=&;?\s]*(?:token|invite|code)[^=&;?\s]*=)[^&;#\s\"']*",
                re.IGNORECASE),
     r"\1" + REDACTED),
    # play-by-email reply addresses: play+<token>@domain
    (re.compile(r"(play\+)[^@\s\"'<>]+(@)", re.IGNORECASE), r"\1" + REDACTED + r"\2"),
    # an itsdangerous URLSafeTimedSerializer token anywhere: payload.timestamp.signature
    (re.compile(r"\.?[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}"), REDACTED),
]
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")
# What every match of a pattern above contains: text without it has nothing to redact, and
# one search costs less than the four substitutions (every request logs a line).
_MAYBE_SECRET = re.compile(
    r"unsubscribe|token|invite|code|play\+|[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.", re.IGNORECASE)


def _redact_plain(text: str) -> str:
    if not _MAYBE_SECRET.search(text):
        return text
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact(text: str) -> str:
    """``text`` without any token we know the shape of (also when it is percent-encoded)."""
    cleaned = _redact_plain(text)
    if "%" in cleaned:
        decoded = unquote(cleaned)
        if _redact_plain(decoded) != decoded:  # a token hidden by percent-encoding
            return _UNPRINTABLE.sub("?", _redact_plain(decoded))
    return cleaned


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for key in ("request_id", "method", "path", "status", "ms"):
            if hasattr(record, key):
                value = getattr(record, key)
                entry[key] = redact(value) if isinstance(value, str) else value
        if record.exc_info:
            entry["error"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry)


class GunicornLogger(_GunicornBaseLogger):  # type: ignore[misc]
    """gunicorn's logger with tokens redacted from every access-log atom.

    The request line (``r``), path (``U``), query (``q``), referer and every ``{...}e``
    environ value (``RAW_URI``, ``PATH_INFO``, ...) pass through :func:`redact`;
    credentials headers (``Authorization``, ``Cookie``) are never printed, whatever
    ``--access-logformat`` asks for.
    """

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any],
              request_time: timedelta) -> dict[str, Any]:
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        for key, value in atoms.items():
            if any(word in key for word in ("authorization", "cookie")):
                atoms[key] = REDACTED
            elif isinstance(value, str):
                atoms[key] = redact(value)
        return atoms


def init_logging(app: Flask) -> None:
    from flask import g, request

    logger = logging.getLogger("dos_server")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    if not any(isinstance(h.formatter, JsonFormatter) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logger.addHandler(handler)
    logger.propagate = False
    access = logging.getLogger("dos_server.access")

    @app.before_request
    def _start() -> None:
        g.request_id = request.headers.get("X-Request-Id", "")[:64] or secrets.token_hex(8)
        g.started = time.perf_counter()

    @app.after_request
    def _finish(response: Response) -> Response:
        response.headers["X-Request-Id"] = g.get("request_id", "")
        if not app.config.get("TESTING"):
            access.info("request", extra={
                "request_id": g.get("request_id"), "method": request.method,
                # request.path never includes the query string or headers; the formatter
                # redacts the token of an unsubscribe link in it.
                "path": request.path, "status": response.status_code,
                "ms": round((time.perf_counter() - g.get("started", time.perf_counter())) * 1000, 1),
            })
        return response
