"""Browser sessions kept on the server: the cookie holds only an opaque random id.

What the pages keep for a browser (its seats, host controls, account sign-in, CSRF secret) is
a ``browser_sessions`` row keyed by the SHA-256 of the cookie's id, so no token is ever
readable in a cookie, and ending the row (signing out, a seat's token rotated, an account
session revoked) ends the session at the browser's next request, whatever copies of the
cookie exist.

The row is read the first time a view touches ``session`` (the API never does, so it costs
the API nothing) on a connection of its own that goes back to the pool at once: a long-poll
holds no connection. A save updates the row it read and never recreates one that was ended
meanwhile, so a slow request cannot bring a signed-out session back. ``renew()`` (called
whenever who the browser is changes) moves the data to a new id and deletes the old row.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SessionInterface, SessionMixin
from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine

from dos_server.extensions import db
from dos_server.models import BrowserSessionRow, as_utc, utcnow

SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)
ACCOUNT_SESSION = "account_session"  # the data key of the account session id (a column too)
_TOUCH_AFTER = timedelta(days=1)  # a read pushes the expiry forward at most this often
TABLE = BrowserSessionRow.__table__


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


class BrowserSession(SessionMixin):  # SessionMixin is a MutableMapping
    """The session of one request, loaded from its row when first used."""

    def __init__(self, session_id: str | None, engine: Engine) -> None:
        self.session_id = session_id
        self._engine = engine  # the app's: the row may be read outside the app context
        self._data: dict[str, Any] | None = None
        self.expires_at: datetime | None = None
        self.stored = False  # a row for ``session_id`` existed when it was read
        self.modified = False
        self.accessed = False
        self.renewed = False

    @property
    def loaded(self) -> bool:
        return self._data is not None

    def _load(self) -> dict[str, Any]:
        self.accessed = True
        if self._data is None:
            self._data = {}
            if self.session_id is not None:
                with self._engine.connect() as connection:
                    row = connection.execute(
                        select(TABLE.c.data, TABLE.c.expires_at)
                        .where(TABLE.c.id_hash == _digest(self.session_id))
                    ).first()
                if row is not None and as_utc(row.expires_at) > utcnow():
                    self._data = dict(row.data or {})
                    self.expires_at = as_utc(row.expires_at)
                    self.stored = True
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._load()[key] = value
        self.modified = True

    def __delitem__(self, key: str) -> None:
        del self._load()[key]
        self.modified = True

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def renew(self) -> None:
        """Give this browser a new session id and forget the CSRF secret: who the browser is
        changes, so a cookie or a form taken before opens nothing after."""
        self._load().pop("csrf", None)
        self.renewed = True
        self.modified = True


class ServerSideSessions(SessionInterface):
    """Flask's session interface over ``browser_sessions`` rows."""

    def open_session(self, app: Flask, request: Request) -> BrowserSession:
        given = request.cookies.get(self.get_cookie_name(app))
        return BrowserSession(given if given and SESSION_ID.fullmatch(given) else None,
                              db.engine)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        assert isinstance(session, BrowserSession)
        if not session.loaded:
            return
        response.vary.add("Cookie")
        now = utcnow()
        lifetime = app.permanent_session_lifetime
        data = {key: session[key] for key in session}
        old = session.session_id if session.stored else None
        if session.renewed or not data:
            if old is not None:
                self._delete(old)
            session.session_id, session.stored = None, False
        if not data:
            if old is not None or session.session_id is not None:
                self._clear_cookie(app, response)
            return
        if session.stored:
            assert session.session_id is not None
            assert session.expires_at is not None
            if not session.modified and session.expires_at > now + lifetime - _TOUCH_AFTER:
                return  # nothing new, and the expiry was pushed forward lately
            kept = self._update(session.session_id, data, now + lifetime)
            if not kept:  # ended by another request meanwhile: it stays ended
                self._clear_cookie(app, response)
                return
        else:
            if not session.modified:
                return
            session.session_id = secrets.token_urlsafe(32)
            self._insert(session.session_id, data, now, now + lifetime)
        response.set_cookie(
            self.get_cookie_name(app), session.session_id,
            expires=self.get_expiration_time(app, session),
            httponly=self.get_cookie_httponly(app), domain=self.get_cookie_domain(app),
            path=self.get_cookie_path(app), secure=self.get_cookie_secure(app),
            samesite=self.get_cookie_samesite(app))

    def _clear_cookie(self, app: Flask, response: Response) -> None:
        response.delete_cookie(
            self.get_cookie_name(app), domain=self.get_cookie_domain(app),
            path=self.get_cookie_path(app), secure=self.get_cookie_secure(app),
            httponly=self.get_cookie_httponly(app), samesite=self.get_cookie_samesite(app))

    @staticmethod
    def _values(data: dict[str, Any], expires_at: datetime) -> dict[str, Any]:
        account_session = data.get(ACCOUNT_SESSION)
        return {"data": data, "expires_at": expires_at,
                "account_session_id": account_session if isinstance(account_session, str)
                else None}

    def _insert(self, session_id: str, data: dict[str, Any], now: datetime,
                expires_at: datetime) -> None:
        with db.engine.begin() as connection:
            connection.execute(insert(TABLE).values(
                id_hash=_digest(session_id), created_at=now, **self._values(data, expires_at)))

    def _update(self, session_id: str, data: dict[str, Any], expires_at: datetime) -> bool:
        with db.engine.begin() as connection:
            done = connection.execute(
                update(TABLE).where(TABLE.c.id_hash == _digest(session_id))
                .values(**self._values(data, expires_at)))
        return bool(done.rowcount)

    def _delete(self, session_id: str) -> None:
        with db.engine.begin() as connection:
            connection.execute(delete(TABLE).where(TABLE.c.id_hash == _digest(session_id)))


__all__ = ["ACCOUNT_SESSION", "BrowserSession", "ServerSideSessions"]
