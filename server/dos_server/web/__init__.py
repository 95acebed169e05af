"""The web front end (issue #13): server-rendered pages for players, hosts and spectators.

A blueprint of ``dos_server``: views (``views.py``), Jinja templates, one CSS file and a little
plain JavaScript, with no build step. Views call the same services as the API and never
touch the engine or the database themselves. Sessions and CSRF are in ``auth.py``; plain
words and card chips in ``present.py``; the addresses that emails link to in ``links.py``; the
pages of emailed links (unsubscribe, confirm an address, a bad or expired link) in ``mailed.py``.
"""

from __future__ import annotations

import logging

from flask import Blueprint, Flask

bp = Blueprint("web", __name__, template_folder="templates", static_folder="static",
               static_url_path="/web-static")

DEFAULTS = {
    "WEB_SIGNIN_MAX_AGE_DAYS": 7,  # the sign-in link in an email
    "WEB_WAIT_SECONDS": 25,  # a live-update request answers after this long at most
    "WEB_WAIT_POLL_SECONDS": 1.0,  # how often a waiter looks (SQLite; PostgreSQL is woken)
}


def init_app(app: Flask) -> None:
    from dos_server.services import watch
    from dos_server.web import mailed, views  # noqa: F401 - registers the routes on ``bp``

    for key, value in DEFAULTS.items():
        app.config.setdefault(key, value)
    # The session cookie holds player tokens: HttpOnly (Flask's default), SameSite=Lax, and
    # Secure when players reach the server over https.
    app.config["SESSION_COOKIE_NAME"] = app.config.get("WEB_SESSION_COOKIE_NAME", "dos_session")
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    if str(app.config.get("PUBLIC_URL", "")).startswith("https://"):
        app.config["SESSION_COOKIE_SECURE"] = True
    watch.init_app(app)
    _redact_werkzeug_log()
    app.register_blueprint(bp)


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
