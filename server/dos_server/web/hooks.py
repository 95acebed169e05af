"""What every page shares: the CSRF check of every POST, the template helpers, and the
pages that errors become (a service's problem is a readable page, never a traceback)."""

from __future__ import annotations

import logging
from typing import Any

from flask import Response, current_app, render_template, request
from werkzeug.exceptions import HTTPException, InternalServerError

from dos_server.errors import DomainError
from dos_server.problems import Problem, busy_problem, problem_from_http, problem_of, problem_response
from dos_server.web import auth
from dos_server.web.blueprint import bp

log = logging.getLogger("dos_server.web")


@bp.before_request
def _csrf() -> None:
    view = current_app.view_functions.get(request.endpoint or "")
    if request.method == "POST" and not getattr(view, auth.ORIGIN_CHECKED, False):
        auth.check_csrf()


@bp.app_template_global()
def csrf_field() -> str:
    return auth.csrf_token()


@bp.app_template_filter("game_name")
def game_name(game: Any) -> str:
    """How a page names a game: 'Friday cards (k3q9x7m2ab)', or 'Game k3q9x7m2ab' untitled."""
    title = game.get("title") if isinstance(game, dict) else None
    return f"{title} ({game['id']})" if title else f"Game {game['id']}"


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
    title = {404: "Not found", 405: "Not allowed", 413: "Too large",
             429: "Too many requests"}.get(code, error.name)
    detail = ("too many requests from your address; wait a minute and try again"
              if code == 429 else error.description or title)
    allow = {k: v for k, v in error.get_headers() if k.lower() == "allow"}  # with a 405
    return _problem(Problem(code, "http", title, detail, headers=allow))


def unrouted(error: HTTPException) -> Response | tuple[str, int] | tuple[str, int, dict[str, str]]:
    """A URL that no route answers (or not with this method) is answered before any blueprint
    has it: the page for a person, the problem for a program (under /api/, or asking for
    JSON, or naming no type: a browser's navigation always names text/html); a route's own
    404 or 405 keeps its blueprint's answer."""
    named = any(mimetype == "text/html" for mimetype, _ in request.accept_mimetypes)
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
    problem = Problem(500, "internal-error", "Something went wrong",
                      "something went wrong on the server; nothing was changed. Please try again.")
    return render_template("error.html", problem=problem, game_id=None), 500
