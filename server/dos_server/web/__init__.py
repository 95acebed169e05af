"""The web front end: server-rendered pages for players, hosts and spectators.

A blueprint of ``dos_server``: pages by role (``pages/``, on ``hooks.py`` and ``forms.py``),
Jinja templates, one CSS file and a little plain JavaScript, with no build step. Views call
the same services as the API and never touch the engine or the database themselves. Who the
browser is and CSRF are in ``auth.py``, on server-side sessions (``sessions.py``); plain words
and times in ``present.py`` (card chips are ``dos_server.cards``); the pages of emailed links
(unsubscribe, confirm an address, the account's sign-in link, a bad or expired link) in
``pages/mailed.py``. Every HTML answer of the app, whichever blueprint made it, gets its
security headers here.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from flask import Flask, current_app, redirect, request
from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.wrappers import Response as BaseResponse

from dos_server.web.blueprint import bp
from dos_server.web.sessions import ServerSideSessions

DEFAULTS = {
    "WEB_SIGNIN_MAX_AGE_DAYS": 7,  # the sign-in link in an email
    "WEB_WAIT_SECONDS": 25,  # a live-update request answers after this long at most
    "WEB_WAIT_POLL_SECONDS": 1.0,  # how often a waiter looks (SQLite; PostgreSQL is woken)
}


def init_app(app: Flask) -> None:
    from dos_server.services import watch
    from dos_server.web import hooks, pages  # noqa: F401 - registers the routes on ``bp``

    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    # The session cookie holds only the id of a server-side session: HttpOnly (Flask's
    # default), SameSite=Lax, and Secure when players reach the server over https.
    app.session_interface = ServerSideSessions()
    app.config["SESSION_COOKIE_NAME"] = app.config.get("WEB_SESSION_COOKIE_NAME", "dos_session")
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    if str(app.config.get("PUBLIC_URL", "")).startswith("https://"):
        app.config["SESSION_COOKIE_SECURE"] = True
    watch.init_app(app)
    _redact_werkzeug_log()
    app.register_blueprint(bp)
    for unrouted in (NotFound, MethodNotAllowed):  # before the API's handler of every HTTP error
        app.register_error_handler(unrouted, hooks.unrouted)


CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")


def _csp() -> str:
    """The pages' policy; the API reference page (ReDoc) also loads its one script."""
    if request.path == current_app.config.get("OPENAPI_REDOC_PATH"):
        script = urlsplit(str(current_app.config.get("OPENAPI_REDOC_URL", "")))
        origin = f"{script.scheme}://{script.netloc}" if script.netloc else ""
        return (f"default-src 'self'; script-src 'self' {origin}; style-src 'self' "
                "'unsafe-inline' https://fonts.googleapis.com; font-src https://fonts.gstatic.com; "
                "img-src 'self' data: https://cdn.redoc.ly; worker-src blob:; object-src 'none'; "
                "base-uri 'none'; frame-ancestors 'none'")
    return CSP


@bp.after_app_request
def _security_headers(response: BaseResponse) -> BaseResponse:
    """The same headers on every page, whichever blueprint answered (the API's few HTML
    answers and error pages included), and nosniff on every answer."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    if request.blueprint == "web" or response.mimetype == "text/html":
        response.headers["Content-Security-Policy"] = _csp()
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Frame-Options"] = "DENY"
    if response.mimetype == "text/html":  # pages show hands: never kept by shared caches
        response.headers["Cache-Control"] = "no-store"
    location = response.headers.get("Location")
    if location and location.startswith(request.host_url):
        # werkzeug's own redirects (a doubled slash) name the request's Host in the Location
        # and the body: answer with the path only, so a forged Host reaches neither (nor a
        # cache keeping the answer).
        relative = redirect("/" + location[len(request.host_url):], response.status_code)
        relative.headers["Cache-Control"] = "no-store"
        return _security_headers(relative)
    return response


class _RedactFilter(logging.Filter):
    """werkzeug's development server logs the request line: blank the sign-in and invite
    tokens in it (gunicorn's access log is redacted by ``logs.GunicornLogger``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from dos_server.logs import redact

        record.msg = redact(record.getMessage())
        record.args = None
        return True


def _redact_werkzeug_log() -> None:
    werkzeug = logging.getLogger("werkzeug")
    if not any(isinstance(f, _RedactFilter) for f in werkzeug.filters):
        werkzeug.addFilter(_RedactFilter())


__all__ = ["bp", "init_app"]
