"""Every error is ``application/problem+json`` (RFC 9457): one exception type, one handler.

Services raise domain errors (:mod:`dos_server.errors`); :data:`PROBLEM_TYPES` is the one
table that gives each its status and title, for the API and the pages alike
(:func:`problem_of`). Views raise :class:`Problem` for what only HTTP knows; flask-smorest's
validation errors (422), werkzeug's HTTP errors and any unexpected exception are turned into
the same shape. Nothing reaches a client as a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import marshmallow as ma
from apispec import BasePlugin
from flask import Flask, Response, current_app, json, request
from flask_smorest import Api
from sqlalchemy.exc import DBAPIError
from werkzeug.exceptions import HTTPException, InternalServerError

from dos_server import errors
from dos_server.errors import DomainError
from dos_server.services.words import N_, _

PROBLEM_BASE = "https://dos-by-mail.invalid/problems/"
PROBLEM_JSON = "application/problem+json"

log = logging.getLogger("dos_server.problems")


class Problem(Exception):
    """An error answer: ``kind`` is the last part of the problem ``type`` URI.

    ``title`` is stable English (programs may read it, like ``type``); ``detail`` is in the
    reader's language (``Accept-Language``), worded with ``_()`` where it is raised.
    """

    def __init__(
        self,
        status: int,
        kind: str,
        title: str,
        detail: str,
        *,
        rule: str | None = None,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.rule = rule
        self.headers = dict(headers or {})
        self.extra = extra

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": PROBLEM_BASE + self.kind,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if self.rule:
            out["rule"] = self.rule
        out.update(self.extra)
        return out


# Each domain error's status and title; its ``kind`` ends the problem type.
PROBLEM_TYPES: dict[type[DomainError], tuple[int, str]] = {
    errors.InvalidAction: (400, "Not an action"),
    errors.NotAuthenticated: (401, "Not authorized"),
    errors.WrongCode: (401, "Wrong or expired code"),
    errors.WrongGame: (403, "Token for another game"),
    errors.NoSuchSeat: (403, "No such seat"),
    errors.HostOnly: (403, "Host only"),
    errors.PlayersOnly: (403, "Players only"),
    errors.NotYourSeat: (403, "Not your seat"),
    errors.WrongInviteCode: (403, "Wrong invite code"),
    errors.GameNotFound: (404, "No such game"),
    errors.SessionNotFound: (404, "No such session"),
    errors.PlayerNotFound: (404, "No such player"),
    errors.StaleVersion: (409, "The game has moved on"),
    errors.NotYourTurn: (409, "Not your turn"),
    errors.GameNotActive: (409, "Game not in play"),
    errors.GameNotStarted: (409, "Game not started"),
    errors.GameNotFinished: (409, "Game not finished"),
    errors.GameClosed: (409, "Game closed"),
    errors.AlreadyStarted: (409, "Already started"),
    errors.AlreadyResigned: (409, "Already resigned"),
    errors.SeatClaimed: (409, "Seat already claimed"),
    errors.NoOpenSeat: (409, "No open seat"),
    errors.NotEnoughPlayers: (409, "Not enough players"),
    errors.TooFewSeats: (409, "Too few seats"),
    errors.NoPersonLeft: (409, "No person left"),
    errors.NoVacationLeft: (409, "Not enough vacation days"),
    errors.SeveralSeats: (409, "Several seats"),
    errors.AddressChanged: (409, "Address changed"),
    errors.PlayerNameTaken: (409, "Player name taken"),
    errors.InvalidInput: (422, "Invalid input"),
    errors.IllegalAction: (422, "Illegal action"),
    errors.AmbiguousAction: (422, "Ambiguous action"),
    errors.NoSuchAction: (422, "No such action"),
    errors.IdempotencyKeyReused: (422, "Idempotency-Key reused"),
    errors.RateLimited: (429, "Too many requests"),
    errors.NothingToNudge: (409, "Nobody to nudge"),
    errors.NudgesOff: (409, "Nudges off"),
    errors.NudgeTooSoon: (429, "Nudged lately"),
    errors.NotAbsent: (409, "Seat not absent"),
    errors.NotAVoter: (403, "Not a voter"),
    errors.ChatMuted: (403, "Muted"),
}

BEARER_CHALLENGE = 'Bearer realm="dos"'  # WWW-Authenticate of every 401 (RFC 6750)


def problem_of(error: DomainError) -> Problem:
    """The answer to a domain error: its :data:`PROBLEM_TYPES` entry, detail and fields.

    A 401 names the Bearer scheme (``WWW-Authenticate``); ``retry_after`` becomes
    ``Retry-After``. A detail worded in English below the services (:data:`WORDED_ELSEWHERE`)
    is read in the reader's language here.
    """
    status, title = next(PROBLEM_TYPES[cls] for cls in type(error).__mro__
                         if cls in PROBLEM_TYPES)
    headers = {"WWW-Authenticate": BEARER_CHALLENGE} if status == 401 else {}
    if error.retry_after is not None:
        headers["Retry-After"] = str(error.retry_after)
    fields = dict(error.fields)
    return Problem(status, error.kind, title, _(error.detail), rule=fields.pop("rule", None),
                   headers=headers, **fields)


# The refusals ``tokens`` words in English, whole sentences for each kind of token it reads:
# gettext finds their translation by the English sentence itself (:func:`problem_of`).
EXPIRED_ELSEWHERE = (
    N_("this player token has expired; ask the game's host for a new one"),
    N_("this host token has expired; ask the game's host for a new one"),
    N_("this invite token has expired; ask the game's host for a new one"),
    N_("this unsubscribe token has expired; ask the game's host for a new one"),
    N_("this sign-in link has expired"),
    N_("this account token has expired"),
    N_("this confirmation link has expired"),
)
WORDED_ELSEWHERE = (
    N_("this is not a valid player token for this server"),
    N_("this is not a valid host token for this server"),
    N_("this is not a valid invite token for this server"),
    N_("this is not a valid unsubscribe token for this server"),
    N_("this is not a valid sign-in link for this server"),
    N_("this is not a valid account token for this server"),
    N_("this is not a valid confirmation link for this server"),
    *EXPIRED_ELSEWHERE,
)


class ProblemSchema(ma.Schema):
    """RFC 9457 problem details, as documented in the OpenAPI document."""

    type = ma.fields.String(required=True)
    title = ma.fields.String(required=True)
    status = ma.fields.Integer(required=True)
    detail = ma.fields.String(required=True)
    rule = ma.fields.String(metadata={"description": "RULES.md section, for rule errors"})
    errors = ma.fields.Dict(metadata={"description": "validation errors by location and field"})
    current_version = ma.fields.Integer(metadata={"description": "with 409: the game's version"})
    candidates = ma.fields.List(ma.fields.String(), metadata={"description": "ambiguous input"})
    expired = ma.fields.Boolean(metadata={
        "description": "with 401: the token or link was good but has expired (or was used "
                       "up): ask for a new one"})
    invalid = ma.fields.Boolean(metadata={
        "description": "with 401: the token or link was never one of this server's (cut short "
                       "or changed when copied, or another server's)"})


def problem_response(problem: Problem) -> Response:
    response = current_app.response_class(
        json.dumps(problem.body()), status=problem.status, mimetype=PROBLEM_JSON
    )
    for name, value in problem.headers.items():
        response.headers[name] = value
    return response


def domain_error_response(error: DomainError) -> Response:
    return problem_response(problem_of(error))


_TITLES = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Not authorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    409: ("conflict", "Conflict"),
    413: ("too-large", "Request too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    422: ("invalid-input", "Invalid input"),
    429: ("rate-limited", "Too many requests"),
}


def _http_detail(code: int) -> str | None:
    """Our words for an HTTP error werkzeug describes in English; None for another status."""
    if code == 400:
        return _("the request was not understood; check its syntax and send it again")
    if code == 401:
        return _("this request needs a valid token in the Authorization header")
    if code == 403:
        return _("this request is not allowed with the token it was sent with")
    if code == 404:
        return _("there is nothing at this address on this server; check the URL")
    if code == 405:
        return _("this address does not accept the %(method)s method; the Allow header lists "
                 "the ones it does", method=request.method if request else "?")
    if code == 409:
        return _("the request conflicts with the state of the game; reload it")
    if code == 413:
        return _("the request is too large for this server")
    if code == 415:
        return _("send the body as JSON, with Content-Type: application/json")
    return None


def problem_from_http(error: HTTPException) -> Problem:
    code = error.code or 500
    kind, title = _TITLES.get(code, ("http-error", error.name))
    data = getattr(error, "data", None) or {}
    detail = data.get("message") or error.description or title
    if not data.get("message") and error.description == type(error).description:
        detail = _http_detail(code) or detail  # werkzeug's own English description
    extra: dict[str, Any] = {}
    errors = data.get("errors") or data.get("messages")
    if errors:
        extra["errors"] = errors
        if code == 422:
            detail = _("The request has invalid fields: %(fields)s", fields=_summarize(errors))
    headers = dict(data.get("headers") or {})
    if error.response is None:  # keep what the status needs: Allow with 405 (RFC 9110)
        headers.update({k: v for k, v in error.get_headers()
                        if k.lower() in ("retry-after", "allow")})
    if code == 429:
        detail = _("too many requests from your address (limit: %(limit)s); wait a minute and "
                   "try again", limit=error.description)
    return Problem(code, kind, title, detail, headers=headers, **extra)


_LOCATIONS = ("json", "query", "headers", "form", "files")


def _summarize(errors: Any, path: tuple[str, ...] = ()) -> str:
    """Flatten marshmallow's nested error dict into 'field: message; ...'."""
    where = ".".join(path) or _("body")
    if isinstance(errors, Mapping):
        return "; ".join(
            _summarize(value, path if key in _LOCATIONS else (*path, str(key)))
            for key, value in errors.items()
        )
    if isinstance(errors, list):
        texts = [e for e in errors if isinstance(e, str)]
        nested = [_summarize(e, path) for e in errors if not isinstance(e, str)]
        head = f"{where}: {' '.join(texts)}" if texts else ""
        return "; ".join(x for x in (head, *nested) if x)
    return f"{where}: {errors}"


class ProblemResponses(BasePlugin):
    """apispec plugin: the response components flask-smorest registers (one per HTTP status,
    and DEFAULT_ERROR, all with ERROR_SCHEMA) are documented as application/problem+json.

    Uses apispec's public plugin hook (``response_helper``, run for every
    ``spec.components.response``); routes' own success responses are not components and keep
    their content type.
    """

    def response_helper(self, response: dict[str, Any], **kwargs: Any) -> dict[str, Any] | None:
        content = response.get("content")
        if not content or "application/json" not in content:
            return None
        return {"content": {PROBLEM_JSON if kind == "application/json" else kind: value
                            for kind, value in content.items()}}


def _with_problem_responses(spec_kwargs: dict[str, Any]) -> dict[str, Any]:
    plugins = [*spec_kwargs.get("extra_plugins", ()), ProblemResponses()]
    return {**spec_kwargs, "extra_plugins": plugins}


class ProblemApi(Api):  # type: ignore[misc]
    """flask-smorest's Api with problem+json errors, documented as such.

    Only public hooks: ``ERROR_SCHEMA`` and ``handle_http_exception`` (flask-smorest's
    documented ways to shape errors), an apispec plugin passed as ``extra_plugins``, and
    Flask's ``register_error_handler`` after ``init_app``.
    """

    ERROR_SCHEMA = ProblemSchema

    def __init__(self, app: Flask | None = None, *, spec_kwargs: dict[str, Any] | None = None,
                 config_prefix: str = "") -> None:
        super().__init__(app, spec_kwargs=_with_problem_responses(spec_kwargs or {}),
                         config_prefix=config_prefix)

    def init_app(self, app: Flask, *, spec_kwargs: dict[str, Any] | None = None) -> None:
        if spec_kwargs and "extra_plugins" in spec_kwargs:  # these replace the __init__ ones
            spec_kwargs = _with_problem_responses(spec_kwargs)
        super().init_app(app, spec_kwargs=spec_kwargs)
        app.register_error_handler(Problem, problem_response)
        app.register_error_handler(DomainError, domain_error_response)
        app.register_error_handler(HTTPException, self.handle_http_exception)
        app.register_error_handler(Exception, _unexpected)

    def handle_http_exception(self, error: HTTPException) -> Response:
        if isinstance(error, InternalServerError):
            return _unexpected(error.original_exception or error)
        return problem_response(problem_from_http(error))


# PostgreSQL's SQLSTATEs for a transaction it rolled back so that another could go on:
# deadlock_detected and serialization_failure. Writers take their locks in one order
# (services/locks.py), so neither should happen; if one does, the client may simply retry.
RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})


def busy_problem(error: BaseException) -> Problem | None:
    """A 503 with Retry-After for a write the database gave up on for now (a deadlock or a
    serialization failure on PostgreSQL, a lock SQLite waited for in vain), or a request whose
    database connection was lost; None otherwise.

    The write transaction was rolled back whole (``database.write_transaction``), so the
    request can be sent again as it was (dos-client retries its GETs and POSTs on a 503).
    """
    # The hot reads run on the driver's cursor: its errors come unwrapped by SQLAlchemy.
    cause = error.orig if isinstance(error, DBAPIError) else error
    if (isinstance(error, DBAPIError) and error.connection_invalidated) or _unreachable(cause):
        # PostgreSQL is down or restarting, or something between us closed the connection:
        # SQLAlchemy drops the pool's connections, and a later request connects again.
        log.warning("the database could not be reached (answered 503): %s: %s",
                    type(cause).__name__, str(cause).partition("\n")[0])
        return Problem(503, "database-unavailable", "Database unavailable, try again",
                       _("the server could not reach its database just now; send the request "
                         "again in a moment (a move carries its version, so it is never "
                         "applied twice)."), headers={"Retry-After": "1"})
    retryable = (getattr(cause, "sqlstate", None) in RETRYABLE_SQLSTATES
                 or getattr(cause, "sqlite_errorname", None) == "SQLITE_BUSY")
    if not retryable:
        return None
    log.warning("the database turned a write away (answered 503): %s: %s",
                type(cause).__name__, str(cause).partition("\n")[0])
    return Problem(503, "busy", "Busy, try again",
                   _("the database had to turn this request away while another change went "
                     "through at the same moment; nothing was changed. Send it again."),
                   headers={"Retry-After": "1"})


# PostgreSQL's connection exceptions (08...) and its shutdowns (admin, crash, still starting).
_UNREACHABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})


def _unreachable(cause: BaseException | None) -> bool:
    """Whether psycopg failed to connect or lost its connection (it gives those no SQLSTATE,
    or a connection-exception or shutdown one); other errors are the request's own."""
    import psycopg  # a server dependency; imported here, after gevent patches the workers

    if not isinstance(cause, psycopg.OperationalError):
        return False
    state = cause.sqlstate
    return state is None or state.startswith("08") or state in _UNREACHABLE_SQLSTATES


def _unexpected(error: BaseException) -> Response:
    if isinstance(error, HTTPException) and not isinstance(error, InternalServerError):
        return problem_response(problem_from_http(error))
    busy = busy_problem(error)
    if busy is not None:
        return problem_response(busy)
    log.error("unexpected error", exc_info=error)
    return problem_response(
        Problem(500, "internal-error", "Internal server error",
                _("Something went wrong on the server; nothing was changed. Please try again."))
    )
