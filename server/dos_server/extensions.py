"""Flask extensions, created unbound and bound to an app in ``create_app``."""

from __future__ import annotations

from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy.orm import DeclarativeBase

from dos_server.problems import ProblemApi


class Base(DeclarativeBase):
    pass


db = SQLAlchemy(model_class=Base)
api = ProblemApi()
# Memory storage by default; RATELIMIT_STORAGE_URI=redis://... shares limits between processes.
limiter = Limiter(key_func=get_remote_address)


# Config keys of limits that apply to every request, which only the app-wide hook checks.
_APP_WIDE_LIMITS = ("RATELIMIT_DEFAULT", "RATELIMIT_APPLICATION", "RATELIMIT_META")


def init_limiter(app: Flask) -> None:
    """Bind the limiter; without app-wide limits, only the limited views check a limit.

    Each ``@limiter.limit`` view checks its own limit in the decorator. Flask-Limiter also
    checks every request in a ``before_request`` hook, which for a view without a limit finds
    none at some cost (about 5% of a move's CPU): the hook goes unless the configuration sets
    limits that apply to every request.
    """
    limiter.init_app(app)
    hooks = app.before_request_funcs.get(None, [])
    hook = limiter._check_request_limit
    if hook in hooks and not any(app.config.get(key) for key in _APP_WIDE_LIMITS):
        hooks.remove(hook)  # a disabled limiter (RATELIMIT_ENABLED false) added no hook
