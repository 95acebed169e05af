"""Waiting for a game to change (long-polls), without a database connection or a thread per waiter.

A waiter runs a short read (its connection goes back to the pool at once), then parks on an
in-process event until the game changes or its time is up, and reads again when woken. Under
gunicorn's gevent workers (``dos_server.gunicorn_conf``, the serving model of ``make run`` and
the Procfile) a parked waiter is a greenlet, so a thousand of them cost memory, not threads.

What wakes a waiter:

* PostgreSQL: every transaction that writes a game row sends ``NOTIFY dos_games, '<game id>'``
  (delivered at commit, nothing on rollback); one listener per process (one connection of its
  own, ``LISTEN dos_games``) wakes that game's waiters. When the listener (re)connects, every
  waiter looks again, since notifications may have been missed meanwhile.
* Any backend: a commit in this process wakes this process's waiters of the games it wrote.
* SQLite (commits by other processes), and PostgreSQL until its listener is in place: waiters
  look again about every ``WEB_WAIT_POLL_SECONDS`` (each interval drawn from 0.5-1.5 times it,
  so that waiters woken together do not all look together again and again).

Waiters come second to ordinary requests. At most ``WEB_WAIT_LOOKS`` of a process's waiters
work at once (fewer than its pool has connections); the others queue for a turn. A turn runs
from a waiter's look to the end of its request, so it covers the read and the making of the
answer, and it is given up while the waiter parks. Under gevent a turn also begins only after
the worker's loop has looked at its sockets again: the loop runs a chain of greenlets woken by
one another (a turn handed from waiter to waiter) without looking, so a move that wakes
hundreds of waiters (or hundreds of long-polls asked again at once) would otherwise put each
database round trip of a turn or a read arriving meanwhile behind hundreds of answers. A read
without ``wait`` is an ordinary request and takes no turn.
"""

from __future__ import annotations

import contextvars
import logging
import random
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from flask import current_app, g
from greenlet import greenlet  # type: ignore[import-untyped]
from sqlalchemy import Update, event, func
from sqlalchemy.orm import Session

from dos_server import metrics, serving
from dos_server.extensions import db
from dos_server.models import GameRow
from dos_server.services import access

CHANNEL = "dos_games"
CHANGED = "dos_changed_games"  # Session.info key: the game ids this transaction wrote
_LOOKS = "dos_wait_looks"  # app.extensions key: the semaphore of :func:`_looks`
_TURN = "dos_wait_turn"  # flask.g key: this app context holds a waiter's turn
HEALTH_SECONDS = 30.0  # the listener checks its connection this often when nothing arrives
log = logging.getLogger("dos_server.watch")

T = TypeVar("T")

_lock = threading.Lock()
_waiters: dict[str, set[threading.Event]] = {}
_parked: dict[str, int] = {}  # game id -> waiters parked between two looks (holding nothing)
_listeners: dict[str, threading.Thread] = {}  # database URL -> its listener thread
_ready: dict[str, threading.Event] = {}  # database URL -> set while its LISTEN is in place
_shared: dict[Hashable, _SharedLook] = {}  # look key -> the read its waiters share
_registered = False


def wait_until(game_id: str, look: Callable[[], T], done: Callable[[T], bool],
               timeout: float, key: Hashable | None = None) -> T:
    """``look()`` now and each time the game may have changed, until ``done`` holds for what it
    returned or ``timeout`` seconds have passed; returns the last look.

    ``look`` reads the database (it may raise a problem: 404, 401...); no connection is held
    between looks. ``key``: everything the look's answer depends on (the game, who asks, what
    they asked); waiters of this process with the same key that are due to look at the same
    time share one read (its answer is shared too: nobody may change it).
    """
    if timeout <= 0:  # a plain read: an ordinary request, with no turn to wait for
        return look()
    # A waiter's work is bounded by the waiters' turns, not by the process's gate (which is
    # for ordinary requests: dos_server/serving.py): it holds no slot from here on.
    serving.leave_gate()
    deadline = time.monotonic() + timeout
    wake = threading.Event()
    with _lock:  # before the first look: a change after it always wakes us
        _waiters.setdefault(game_id, set()).add(wake)
    metrics.WAITERS.inc()
    try:
        result = _look(look, key)
        while not done(result):
            left = deadline - time.monotonic()
            if left <= 0:
                return result
            listening = _listening()
            poll = float(current_app.config.get("WEB_WAIT_POLL_SECONDS", 1.0))
            poll *= random.uniform(0.5, 1.5)  # spreads the looks of many waiters
            _give_turn()  # parked, it holds nothing
            with _lock:
                _parked[game_id] = _parked.get(game_id, 0) + 1
            try:
                # With NOTIFY heard there is no need to look before we are woken.
                woken = wake.wait(left if listening else min(poll, left))
            finally:
                with _lock:
                    _parked[game_id] -= 1
                    if not _parked[game_id]:
                        del _parked[game_id]
            if listening and not woken:
                _take_turn()  # its answer, the last look, is made in turn
                return result
            wake.clear()
            result = _look(look, key)
        return result
    finally:
        metrics.WAITERS.dec()
        with _lock:
            waiting = _waiters.get(game_id)
            if waiting is not None:
                waiting.discard(wake)
                if not waiting:
                    del _waiters[game_id]


def parked(game_id: str) -> int:
    """How many of this process's waiters of the game are parked now (between two looks)."""
    with _lock:
        return _parked.get(game_id, 0)


class _SharedLook:
    """One read that the waiters with the same key share: queued until it begins."""

    def __init__(self) -> None:
        self.began = False  # once it reads, a waiter woken since must read again by itself
        self.over = threading.Event()
        self.answered = False
        self.answer: Any = None


def _look(look: Callable[[], T], key: Hashable | None = None) -> T:
    """A waiter's look, in its turn (held on after it: see :func:`_take_turn`); with a ``key``,
    a read still queued with the same key is joined instead of queueing another."""
    if key is None:
        _take_turn()
        return _read(look)
    with _lock:
        shared = _shared.get(key)
        joined = shared is not None and not shared.began
        if shared is None or not joined:
            shared = _shared[key] = _SharedLook()
    if joined:
        shared.over.wait()
        _take_turn()  # its answer is made in turn too
        if shared.answered:
            return cast(T, shared.answer)
        return _read(look)  # it failed: this waiter meets its own problem
    try:
        _take_turn()
        with _lock:
            shared.began = True
        shared.answer = _read(look)
        shared.answered = True
        return cast(T, shared.answer)
    finally:
        with _lock:
            shared.began = True
            if _shared.get(key) is shared:
                del _shared[key]
        shared.over.set()


def _read(look: Callable[[], T]) -> T:
    try:
        if serving.runs_greenlets():
            return _in_a_greenlet_of_its_own(look)
        return look()
    finally:
        # The connection goes back to the pool while we wait, and the session goes too (its
        # identity map and state, about 1 KiB): a parked waiter holds neither.
        db.session.remove()


def _in_a_greenlet_of_its_own(look: Callable[[], T]) -> T:
    """The look's result, read by a greenlet that ends with it, in the waiter's context (its
    app context, so its session). A greenlet keeps every page of the frames' stack that its
    deepest call touched for as long as it lives: the look's calls (the ORM's, the driver's)
    reach deeper than the request's own, so a waiter that made them itself would keep about
    3 KiB more through every park.

    The reader is a plain greenlet whose parent is the waiter, switched to at once: it begins
    now, not in the loop's next round (as one gevent spawns would), its I/O waits on gevent's
    hub like any other, and when it ends its result, or the problem it raised, comes back to
    the waiter. A waiter killed meanwhile ends its reader first, so that nothing uses the
    session the waiter then removes."""
    reader = greenlet(look)
    reader.gr_context = contextvars.copy_context()
    try:
        return cast(T, reader.switch())
    except BaseException:
        if not reader.dead:  # the waiter was killed (a worker's stop) while the reader waits
            reader.throw()  # GreenletExit: the reader ends too, before the waiter's cleanup
        raise


def _take_turn() -> None:
    """Wait for one of the waiters' turns and hold it until the waiter parks or its app
    context (the request) ends, once its answer is made; a turn held already is kept."""
    if g.get(_TURN):
        return
    _looks().acquire()
    setattr(g, _TURN, True)
    _next_round()


def _next_round() -> None:
    """Under gevent, wait until the worker's loop has looked at its sockets again: what became
    ready meanwhile (a request's database answer) runs in the same round as this waiter, not
    after every waiter the turn is handed to."""
    if serving.runs_greenlets():
        import gevent  # type: ignore[import-untyped]

        hub = gevent.get_hub()
        waiter = gevent.hub.Waiter()
        # After the loop's next look at its sockets; the idle watcher keeps that look from
        # blocking when nothing else is ready.
        with hub.loop.check() as after_poll, hub.loop.idle() as idle:
            after_poll.start(waiter.switch, None)
            idle.start(waiter.switch, None)
            waiter.get()


def _give_turn(_error: BaseException | None = None) -> None:
    if g.pop(_TURN, False):
        _looks().release()


def _looks() -> threading.BoundedSemaphore:
    """The app's turnstile for waiters' turns: ``WEB_WAIT_LOOKS`` at once, fewer than the
    pool's connections (a pool without a size, SQLite's in memory, leaves it as it is)."""
    extensions = current_app.extensions
    turnstile: threading.BoundedSemaphore | None = extensions.get(_LOOKS)
    if turnstile is None:
        with _lock:
            turnstile = extensions.get(_LOOKS)
            if turnstile is None:
                wanted = int(current_app.config["WEB_WAIT_LOOKS"])
                size = getattr(db.engine.pool, "size", None)
                if callable(size):
                    wanted = min(wanted, int(size()) - 1)
                turnstile = extensions[_LOOKS] = threading.BoundedSemaphore(max(1, wanted))
    return turnstile


def version_of(game_id: str) -> int:
    """The game's version, read in a transaction that ends at once (404 problem if none)."""
    return _look(lambda: access.get_game(game_id).version)


def wait_for_change(game_id: str, version: int, timeout: float) -> int:
    """The game's version once it differs from ``version``, or after ``timeout`` seconds."""
    return wait_until(game_id, lambda: access.get_game(game_id).version,
                      lambda current: current != version, timeout, key=("version", game_id))


def _wake(game_ids: Any) -> None:
    with _lock:
        for game_id in game_ids:
            for wake in _waiters.get(game_id, ()):
                wake.set()


def _wake_all() -> None:
    with _lock:
        for waiting in _waiters.values():
            for wake in waiting:
                wake.set()


# -- what a transaction changed: NOTIFY (PostgreSQL), and this process's waiters at commit ----


def init_app(app: Any) -> None:
    """Give a waiter's turn back when its request ends; track the game rows each transaction
    writes (once per process: the events are global)."""
    global _registered
    app.teardown_appcontext(_give_turn)
    with _lock:
        if _registered:
            return
        _registered = True
    event.listen(Session, "after_flush", _after_flush)
    event.listen(Session, "after_commit", _after_commit)
    event.listen(Session, "after_rollback", _after_rollback)


def _after_flush(session: Session, _context: Any) -> None:
    changed = {obj.id for obj in (*session.new, *session.dirty)
               if isinstance(obj, GameRow) and obj.id}
    if changed:
        _note(session, changed)


def notifying(statement: Update) -> Update:
    """An UPDATE of game rows that also sends each row's NOTIFY (PostgreSQL): one round trip
    where a separate ``SELECT pg_notify(...)`` would be a second one. Pass ``notified=True``
    to :func:`wrote` after running it."""
    return statement.returning(func.pg_notify(CHANNEL, GameRow.__table__.c.id))


def wrote(game_id: str, *, notified: bool = False) -> None:
    """The current transaction wrote the game row with a statement of its own, not by flushing
    the ORM row (``play.write_game``): it is noted, and notified (unless the statement did,
    see :func:`notifying`) as a flush would be."""
    _note(db.session(), {game_id}, notified)


def _note(session: Session, changed: set[str], notified: bool = False) -> None:
    noted = session.info.setdefault(CHANGED, set())
    new = changed - noted  # a NOTIFY is delivered at commit: once per game is enough
    noted.update(new)
    if not new or notified:
        return
    connection = session.connection()
    if connection.dialect.name != "postgresql":
        return
    for game_id in sorted(new):
        connection.exec_driver_sql("SELECT pg_notify(%(channel)s, %(id)s)",
                                   {"channel": CHANNEL, "id": game_id})


def _after_commit(session: Session) -> None:
    changed = session.info.pop(CHANGED, None)
    if changed:
        _wake(changed)


def _after_rollback(session: Session) -> None:
    session.info.pop(CHANGED, None)


# -- PostgreSQL: one LISTEN connection per process --------------------------------------------


def _key() -> str | None:
    url = db.engine.url
    if url.get_backend_name() != "postgresql":
        return None
    return url.set(query={}).render_as_string(hide_password=False)  # one listener per database


def _listening() -> bool:
    """Whether NOTIFY is heard on the app's database now (starting the listener if needed)."""
    key = _key()
    if key is None:
        return False
    with _lock:
        ready = _ready.setdefault(key, threading.Event())
        thread = _listeners.get(key)
        if thread is None or not thread.is_alive():
            thread = threading.Thread(target=_listen, args=(db.engine.url.set(query={}), ready),
                                      name="dos-listen", daemon=True)
            _listeners[key] = thread
            thread.start()
    return ready.is_set()


def wait_until_listening(timeout: float) -> bool:
    """Start listening on the app's database (PostgreSQL) and wait until LISTEN is in place."""
    key = _key()
    if key is None:
        return False
    _listening()
    return _ready[key].wait(timeout)


def _listen(url: Any, ready: threading.Event) -> None:
    # Imported here, at first use: under gevent psycopg must be imported after the patching,
    # so that it picks its cooperative wait functions.
    import psycopg

    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    while True:
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                ready.set()
                _wake_all()  # whatever changed before LISTEN was in place is looked at again
                while True:
                    for note in conn.notifies(timeout=HEALTH_SECONDS):
                        _wake((note.payload,))
                    conn.execute("SELECT 1")  # a dead connection raises here
        except Exception as error:  # the database went away: try again shortly
            ready.clear()
            log.warning("listening for game changes failed: %s", type(error).__name__)
            time.sleep(2)


__all__ = [
    "init_app",
    "notifying",
    "parked",
    "version_of",
    "wait_for_change",
    "wait_until",
    "wait_until_listening",
    "wrote",
]
