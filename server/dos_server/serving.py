"""How much a web process works on at once, and the database pool sized from it, in one place.

A gunicorn gevent worker (``dos_server.gunicorn_conf``) accepts thousands of connections, but it
has one core: running many requests at once only interleaves them. Each switch at a database wait
lets another request overtake, so with 64 clients a request is overtaken again and again (a p99
several times the p50), and as many requests as clients would hold a pooled connection (a pool
that opens and closes connections beyond its size all the time).

So a process works on at most ``REQUESTS_AT_ONCE`` requests; the others wait at a gate in the
order they came (a slot goes straight to the longest waiter, never to a newcomer). A long-poll
leaves the gate when it begins to wait (:func:`leave_gate`): waiters have their own turns
(``WEB_WAIT_LOOKS``, services/watch.py), and hold no slot.
The pool keeps enough connections for every request inside the gate to hold two (its session's
and a read or look of its own) plus the waiters' looks, and opens no more: :func:`pool_options`.
"""

from __future__ import annotations

import collections
import sys
import threading
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from flask import Flask
from sqlalchemy.engine import make_url

from dos_server import jsoncodec

# The gate the current request is inside, if any (a long-poll leaves it when it begins to wait).
_PASSED: ContextVar[Gate | None] = ContextVar("dos_gate_passed", default=None)

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class Gate:
    """At most ``size`` holders at once; the others wait first come, first served.

    ``threading`` is gevent's under gunicorn's gevent workers (a waiter is a parked greenlet)
    and the real one elsewhere (the development server, tests).
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a gate lets at least one request through")
        self.size = size
        self._free = size
        self._lock = threading.Lock()
        self._queue: collections.deque[threading.Event] = collections.deque()

    def enter(self) -> None:
        with self._lock:
            if self._free and not self._queue:
                self._free -= 1
                return
            turn = threading.Event()
            self._queue.append(turn)
        try:
            self._wait_for(turn)
        except BaseException:  # interrupted while queued (a killed greenlet): no slot is lost
            with self._lock:
                if turn in self._queue:
                    self._queue.remove(turn)
                    raise
            self.leave()  # it was handed over meanwhile: to the next one
            raise

    def _wait_for(self, turn: threading.Event) -> None:
        turn.wait()  # the slot is handed over by :meth:`leave`

    def leave(self) -> None:
        with self._lock:
            if self._queue:
                self._queue.popleft().set()
            else:
                self._free += 1

    @property
    def waiting(self) -> int:
        return len(self._queue)

    @property
    def inside(self) -> int:
        return self.size - self._free


class GatedApp:
    """WSGI middleware: the app's work on a request happens inside the gate.

    The slot is left when the app returns its response (a Flask view's work and its
    transaction are done by then; sending the body holds no slot), or earlier by a long-poll
    that begins to wait (:func:`leave_gate`).
    """

    def __init__(self, app: WSGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        self.gate.enter()
        token = _PASSED.set(self.gate)
        try:
            return self.app(environ, start_response)
        finally:
            inside = _PASSED.get() is self.gate
            _PASSED.reset(token)
            if inside:
                self.gate.leave()


def leave_gate() -> None:
    """The request becomes a waiter (a long-poll, or a writer waiting for SQLite's lock): its
    slot goes to the next request now, and the rest of it runs outside the gate. A long-poll's
    work is bounded by the waiters' own turns (``WEB_WAIT_LOOKS``, services/watch.py), so a
    herd of waiters never fills the gate in front of ordinary requests."""
    gate = _PASSED.get()
    if gate is not None:
        _PASSED.set(None)
        gate.leave()


def runs_greenlets() -> bool:
    """This process runs greenlets: gevent patched the standard library (gunicorn's gevent
    workers), so ``threading`` and ``time.sleep`` are cooperative. gevent is not imported here
    for the question: a process that never imported it runs none."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("threading"))


def requests_at_once(config: dict[str, Any]) -> int:
    return int(config["REQUESTS_AT_ONCE"])


def pool_options(config: dict[str, Any]) -> dict[str, Any]:
    """SQLAlchemy's pool for a web process at the gate: two connections for each request inside
    it, one for each waiter's look (``WEB_WAIT_LOOKS``) and a spare; no overflow, so the pool
    never opens a connection only to close it again. A queued checkout waits POOL_TIMEOUT."""
    at_once = requests_at_once(config)
    looks = max(1, int(config["WEB_WAIT_LOOKS"]))
    return {"pool_size": 2 * at_once + looks + 1, "max_overflow": 0,
            "pool_timeout": float(config["POOL_TIMEOUT_SECONDS"])}


def configure(app: Flask) -> None:
    """Before the database is bound: the gate around the app and the pool's size from it
    (unless the configuration sets one); ``REQUESTS_AT_ONCE`` 0 turns both off."""
    options = dict(app.config.get("SQLALCHEMY_ENGINE_OPTIONS") or {})
    options.setdefault("json_serializer", jsoncodec.dumps)
    options.setdefault("json_deserializer", jsoncodec.loads)
    url = make_url(str(app.config["SQLALCHEMY_DATABASE_URI"]))
    in_memory = url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")
    at_once = requests_at_once(app.config)
    gated = at_once > 0
    # Without a gate nothing bounds the requests in progress: SQLAlchemy's own pool stays.
    if gated and not in_memory and "pool_size" not in options and "poolclass" not in options:
        options.update(pool_options(app.config))
    app.config["SQLALCHEMY_ENGINE_OPTIONS"] = options
    if gated:
        gate = Gate(at_once)
        app.extensions["dos_gate"] = gate
        app.wsgi_app = GatedApp(app.wsgi_app, gate)  # type: ignore[method-assign]
