"""Flask extensions, created unbound and bound to an app in ``create_app``."""

from __future__ import annotations

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
