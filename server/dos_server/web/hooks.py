"""What every page shares: the CSRF check of every POST, the template helpers, and the
pages that errors become (a service's problem is a readable page, never a traceback)."""

from __future__ import annotations

import logging
from typing import Any

from flask import Response, current_app, render_template, request
from flask_babel import gettext
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.exceptions import HTTPException, InternalServerError

from dos_server.errors import DomainError
from dos_server.problems import Problem, busy_problem, problem_from_http, problem_of, problem_response
from dos_server.web import auth, forms, reader
from dos_server.web.blueprint import bp

log = logging.getLogger("dos_server.web")

# The titles of the services' problems (``problems.PROBLEM_TYPES``, ``problems._TITLES``): the
# API keeps them in English; a page shows them in its language (:func:`problem_title`).
PROBLEM_TITLES = (
    _l("Not an action"), _l("Not authorized"), _l("Wrong or expired code"),
    _l("Token for another game"), _l("No such seat"), _l("Host only"), _l("Players only"),
    _l("Not your seat"), _l("Wrong invite code"), _l("No such game"), _l("No such session"),
    _l("The game has moved on"), _l("Not your turn"), _l("Game not in play"),
    _l("Game not started"), _l("Game not finished"), _l("Game closed"), _l("Already started"),
    _l("Already resigned"), _l("Seat already claimed"), _l("No open seat"),
    _l("Not enough players"), _l("Too few seats"), _l("No person left"),
    _l("Not enough vacation days"), _l("Several seats"), _l("Address changed"),
    _l("Invalid input"), _l("Illegal action"), _l("Ambiguous action"), _l("No such action"),
    _l("Idempotency-Key reused"), _l("Too many requests"), _l("Bad request"), _l("Forbidden"),
    _l("Not found"), _l("Method not allowed"), _l("Conflict"), _l("Request too large"),
    _l("Unsupported media type"), _l("Muted"), _l("No such player"), _l("Player name taken"),
)


@bp.before_request
def _reader() -> None:
    """The page's language and zone: its seat's, its identity's, or the browser's."""
    reader.resolve()


@bp.before_request
def _csrf() -> None:
    view = current_app.view_functions.get(request.endpoint or "")
    limit = getattr(view, auth.FORM_LIMIT, None)
    if limit is not None:  # set before the check below reads the form
        request.max_content_length = limit
    if request.method == "POST" and not getattr(view, auth.ORIGIN_CHECKED, False):
        auth.check_csrf()


@bp.app_template_global()
def page_reader() -> reader.Reader:
    return reader.current()


@bp.app_template_global()
def csrf_field() -> str:
    return auth.csrf_token()


@bp.app_template_filter("game_name")
def game_name(game: Any) -> str:
    """How a page names a game: 'Friday cards (k3q9x7m2ab)', or 'Game k3q9x7m2ab' untitled."""
    title = game.get("title") if isinstance(game, dict) else None
    if title:
        return str(_("%(title)s (%(id)s)", title=title, id=game["id"]))
    return str(_("Game %(id)s", id=game["id"]))


@bp.app_template_filter("problem_title")
def problem_title(title: str) -> str:
    """A problem's title in the page's language (the API's stays English)."""
    return gettext(str(title)) if title else ""


GAME_STATUSES = {"waiting": _l("waiting"), "active": _l("in play"), "finished": _l("finished"),
                 "cancelled": _l("cancelled")}
EVENT_NAMES = {"your_turn": _l("your turn"), "reminder": _l("reminder"),
               "timed_out": _l("timed out"), "caught": _l("caught"),
               "round_over": _l("round over"), "game_over": _l("game over"),
               "invited": _l("invited")}
CHANNEL_NAMES = {"email": _l("email"), "webhook": _l("webhook")}


@bp.app_template_filter("game_status")
def game_status(status: str) -> str:
    return str(GAME_STATUSES.get(status, status))


@bp.app_template_filter("event_name")
def event_name(event: str) -> str:
    """A notification event as the settings page names it."""
    return str(EVENT_NAMES.get(event, event.replace("_", " ")))


@bp.app_template_filter("channel_name")
def channel_name(channel: str) -> str:
    return str(CHANNEL_NAMES.get(channel, channel))


@bp.app_template_filter("bot_name")
def bot_name(label: str, strategy: str) -> str:
    """A choice of the new-game form: a bot by its strategy's name, else ``label``."""
    return forms.bot_name(strategy) if strategy in forms.BOT_NAMES else str(label)


@bp.app_template_filter("sentence")
def sentence(text: str) -> str:
    """A service's detail as a sentence: capital first letter, a full stop at the end."""
    text = str(text).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


@bp.app_context_processor  # the web's templates, whichever blueprint renders them
def _helpers() -> dict[str, Any]:
    return {"CSRF_FIELD": auth.CSRF_FIELD}


@bp.errorhandler(Problem)
def _problem(problem: Problem) -> tuple[str, int, dict[str, str]]:
    return (render_template("error.html", problem=problem,
                            game_id=(request.view_args or {}).get("game_id")),
            problem.status, problem.headers)


@bp.errorhandler(DomainError)
def _domain_error(error: DomainError) -> tuple[str, int, dict[str, str]]:
    return _problem(problem_of(error))


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> tuple[str, int] | tuple[str, int, dict[str, str]]:
    if isinstance(error, InternalServerError):
        return _unexpected(error.original_exception or error)
    code = error.code or 500
    title = {404: _("Not found"), 405: _("Not allowed"), 413: _("Too large"),
             429: _("Too many requests")}.get(code, error.name)
    details = {404: _("the page you asked for does not exist: check the address, or start "
                      "from the home page"),
               405: _("this page cannot be used that way"),
               413: _("what was sent is too large"),
               429: _("too many requests from your address; wait a minute and try again")}
    detail = details.get(code) or error.description or title
    allow = {k: v for k, v in error.get_headers() if k.lower() == "allow"}  # with a 405
    return _problem(Problem(code, "http", title, detail, headers=allow))


def unrouted(error: HTTPException) -> Response | tuple[str, int] | tuple[str, int, dict[str, str]]:
    """A URL that no route answers (or not with this method) is answered before any blueprint
    has it: the page for a person, the problem for a program (under /api/, or asking for
    JSON, or naming no type: a browser's navigation always names text/html); a route's own
    404 or 405 keeps its blueprint's answer."""
    named = any(mimetype == "text/html" for mimetype, _quality in request.accept_mimetypes)
    best = request.accept_mimetypes.best_match(
        ["text/html", "application/problem+json", "application/json"])
    if request.blueprint is None and not request.path.startswith("/api/") and named \
            and best == "text/html":
        return _http_error(error)
    return problem_response(problem_from_http(error))


@bp.errorhandler(Exception)
def _unexpected(error: BaseException) -> tuple[str, int] | tuple[str, int, dict[str, str]]:
    busy = busy_problem(error)
    if busy is not None:
        return _problem(busy)
    log.error("unexpected error on a page", exc_info=error)
    problem = Problem(500, "internal-error", _("Something went wrong"),
                      _("something went wrong on the server; nothing was changed. Please try "
                        "again."))
    return render_template("error.html", problem=problem, game_id=None), 500
