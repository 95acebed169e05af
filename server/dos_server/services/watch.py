"""Waiting for a game to change (the pages' live updates), without a connection per waiter.

A waiter reads the game's version in a short transaction, gives the connection back to the
pool, and sleeps on an in-process event. On PostgreSQL every transaction that writes a game
row sends ``NOTIFY dos_games, '<game id>'`` (delivered at commit; nothing on rollback), and
one listener thread per process (one connection of its own, ``LISTEN dos_games``) wakes the
waiters of that game. On SQLite, and as a backstop on PostgreSQL, waiters look again every
``WEB_WAIT_POLL_SECONDS``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from flask import Flask, current_app
from sqlalchemy import event
from sqlalchemy.orm import Session

from dos_server.extensions import db
from dos_server.models import GameRow
from dos_server.services import access

CHANNEL = "dos_games"
log = logging.getLogger("dos_server.watch")

_lock = threading.Lock()
_waiters: dict[str, set[threading.Event]] = {}
_listeners: dict[str, threading.Thread] = {}  # database URL -> its listener thread
_ready: dict[str, threading.Event] = {}  # database URL -> set once its LISTEN is in place
_registered = False


def version_of(game_id: str) -> int:
    """The game's version, read in a transaction that ends at once (404 problem if none)."""
    try:
        return access.get_game(game_id).version
    finally:
        db.session.rollback()  # the connection goes back to the pool while we wait
        db.session.close()


def wait_for_change(game_id: str, version: int, timeout: float) -> int:
    """The game's version once it differs from ``version``, or after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    poll = float(current_app.config["WEB_WAIT_POLL_SECONDS"])
    if _listening(current_app):
        poll = max(poll, 5.0)  # NOTIFY wakes us; polling is only the backstop
    wake = threading.Event()
    with _lock:
        _waiters.setdefault(game_id, set()).add(wake)
    try:
        while True:
            current = version_of(game_id)
            left = deadline - time.monotonic()
            if current != version or left <= 0:
                return current
            wake.wait(min(poll, left))
            wake.clear()
    finally:
        with _lock:
            waiting = _waiters.get(game_id)
            if waiting is not None:
                waiting.discard(wake)
                if not waiting:
                    del _waiters[game_id]


def _wake(game_id: str) -> None:
    with _lock:
        for wake in _waiters.get(game_id, ()):
            wake.set()


# -- PostgreSQL: NOTIFY on every game write, one LISTEN connection per process ---------------


def init_app(app: Flask) -> None:
    """Send a NOTIFY with every transaction that writes a game row (PostgreSQL only)."""
    global _registered
    with _lock:
        if _registered:
            return
        _registered = True
    event.listen(Session, "after_flush", _notify_games)


def _notify_games(session: Session, _context: Any) -> None:
    changed = {obj.id for obj in (*session.new, *session.dirty)
               if isinstance(obj, GameRow) and obj.id}
    if not changed:
        return
    connection = session.connection()
    if connection.dialect.name != "postgresql":
        return
    for game_id in sorted(changed):
        connection.exec_driver_sql("SELECT pg_notify(%(channel)s, %(id)s)",
                                   {"channel": CHANNEL, "id": game_id})


def _listening(app: Flask) -> bool:
    """Whether this process listens for NOTIFY on the app's database (starting it if needed)."""
    url = db.engine.url
    if url.get_backend_name() != "postgresql":
        return False
    key = url.set(query={}).render_as_string(hide_password=False)  # one per database
    with _lock:
        thread = _listeners.get(key)
        if thread is not None and thread.is_alive():
            return True
        ready = _ready.setdefault(key, threading.Event())
        thread = threading.Thread(target=_listen, args=(url.set(query={}), ready),
                                  name="dos-listen", daemon=True)
        _listeners[key] = thread
    thread.start()
    return True


def wait_until_listening(timeout: float) -> bool:
    """Start listening on the app's database (PostgreSQL) and wait until LISTEN is in place."""
    if not _listening(current_app):
        return False
    key = db.engine.url.set(query={}).render_as_string(hide_password=False)
    return _ready[key].wait(timeout)


def _listen(url: Any, ready: threading.Event) -> None:
    import psycopg

    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    while True:
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                ready.set()
                for note in conn.notifies():
                    _wake(note.payload)
        except Exception as error:  # the database went away: try again shortly
            log.warning("listening for game changes failed: %s", type(error).__name__)
            time.sleep(2)


__all__ = ["init_app", "version_of", "wait_for_change", "wait_until_listening"]
