"""The serving model of a web process (dos_server/serving.py): a first-come-first-served gate
of REQUESTS_AT_ONCE requests, long-polls that leave it when they park, and the pool sized from
the same settings in one place."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from flask import Flask
from server_helpers import auth
from test_push import NO_POLL, Table, Waiter, listening, parked

from dos_server import serving
from dos_server.extensions import db
from dos_server.services import watch


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60  # a bound for a broken build, not a measurement
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("the condition never held")
        time.sleep(0.005)


def test_the_gate_lets_size_in_and_hands_each_slot_to_the_longest_waiter() -> None:
    gate = serving.Gate(2)
    gate.enter()
    gate.enter()
    order: list[int] = []

    def queued(number: int) -> None:
        gate.enter()
        order.append(number)

    threads = []
    for number in range(5):  # each is queued before the next one comes
        thread = threading.Thread(target=queued, args=(number,), daemon=True)
        thread.start()
        threads.append(thread)
        _until(lambda number=number: gate.waiting == number + 1)
    assert gate.inside == 2
    assert order == []
    for served in range(5):
        gate.leave()
        _until(lambda served=served: len(order) == served + 1)
        assert order == list(range(served + 1))
        assert gate.inside == 2
    # a newcomer does not pass a queue: with nobody waiting it goes straight in
    for _ in range(2):
        gate.leave()
    assert gate.inside == 0
    for thread in threads:
        thread.join(10)


def test_a_gate_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one"):
        serving.Gate(0)


def test_a_request_waits_at_a_full_gate_and_goes_through_when_one_leaves(
        make_app: Callable[..., Flask]) -> None:
    app = make_app(REQUESTS_AT_ONCE=1)
    gate: serving.Gate = app.extensions["dos_gate"]
    gate.enter()  # the only slot: taken, as a long request would
    answered = Waiter(lambda: app.test_client().get("/api/ping"))
    answered.start()
    _until(lambda: gate.waiting == 1)
    assert answered.is_alive()
    gate.leave()
    answered.join(30)
    assert answered.answer is not None
    assert not answered.is_alive()
    assert gate.inside == 0
    assert gate.waiting == 0


def test_a_parked_long_poll_holds_no_slot(make_app: Callable[..., Flask], backend: str) -> None:
    """With one slot a process would stop while a long-poll waits, if the poll held it: the
    ping below is answered while the poll is still parked, and the poll is still answered."""
    app = make_app(REQUESTS_AT_ONCE=1, **NO_POLL)
    listening(app, backend)
    table = Table(app)
    last = table.last()
    waiter = Waiter(lambda: app.test_client().get(
        f"/api/games/{table.id}/events?after={last}&wait=60", headers=auth(table.tokens[0])))
    waiter.start()
    parked(table.id, 1)
    gate: serving.Gate = app.extensions["dos_gate"]
    assert gate.inside == 0
    assert app.test_client().get("/api/ping").status_code == 200
    assert waiter.is_alive()  # the ping did not wait for the poll
    table.draw()  # a move of its own, through the gate while the poll is parked
    waiter.join(90)
    assert waiter.answer["events"][0]["seq"] == last + 1
    assert gate.inside == 0


def test_the_pool_is_sized_from_the_serving_model(make_app: Callable[..., Flask]) -> None:
    app = make_app(REQUESTS_AT_ONCE=3, WEB_WAIT_LOOKS=2)
    with app.app_context():
        pool = db.engine.pool
        # two for each request inside the gate, one for each waiter's look, one spare; no
        # overflow: no connection is opened only to be closed again
        assert pool.size() == 2 * 3 + 2 + 1  # type: ignore[attr-defined]
        assert pool._max_overflow == 0  # type: ignore[attr-defined]


def test_a_pool_set_in_the_configuration_is_kept(make_app: Callable[..., Flask]) -> None:
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS={"pool_size": 4, "max_overflow": 1})
    with app.app_context():
        assert db.engine.pool.size() == 4  # type: ignore[attr-defined]


def test_no_gate_keeps_sqlalchemys_pool(make_app: Callable[..., Flask]) -> None:
    """Without the gate nothing bounds the requests in progress: a pool without overflow,
    sized for the gate, would make them queue (or time out) for a connection."""
    app = make_app(REQUESTS_AT_ONCE=0)
    with app.app_context():
        assert db.engine.pool._max_overflow > 0  # type: ignore[attr-defined]


def test_no_gate_when_switched_off(make_app: Callable[..., Flask]) -> None:
    app = make_app(REQUESTS_AT_ONCE=0)
    assert "dos_gate" not in app.extensions
    assert app.test_client().get("/api/ping").status_code == 200


class Stop(BaseException):
    """What kills a queued request (a greenlet's GreenletExit, say)."""


class InterruptedGate(serving.Gate):
    def _wait_for(self, turn: threading.Event) -> None:
        raise Stop


def test_a_request_interrupted_while_queued_takes_no_slot_with_it() -> None:
    gate = InterruptedGate(1)
    gate.enter()
    with pytest.raises(Stop):
        gate.enter()
    assert gate.waiting == 0
    gate.leave()
    assert gate.inside == 0  # the slot came back, not handed to the interrupted one
    gate.enter()
    assert gate.inside == 1


class HandedOverThenInterruptedGate(serving.Gate):
    def _wait_for(self, turn: threading.Event) -> None:
        self.leave()  # the holder leaves: the slot goes to this waiter...
        assert turn.is_set()
        raise Stop  # ...which is killed before it could use it


def test_a_slot_handed_to_an_interrupted_request_goes_on_to_the_next() -> None:
    gate = HandedOverThenInterruptedGate(1)
    gate.enter()
    with pytest.raises(Stop):
        gate.enter()
    assert gate.waiting == 0
    assert gate.inside == 0


def test_a_long_poll_waiting_for_its_turn_holds_no_slot(make_app: Callable[..., Flask],
                                                        backend: str) -> None:
    """Waiters have their own turns (WEB_WAIT_LOOKS): one queued for a turn has left the gate,
    so a herd of long-polls never fills it in front of ordinary requests."""
    app = make_app(REQUESTS_AT_ONCE=1, WEB_WAIT_LOOKS=1, **NO_POLL)
    listening(app, backend)
    table = Table(app)
    last = table.last()
    with app.app_context():
        turns = watch._looks()
    turns.acquire()  # the only turn, held: the long-poll below queues for it
    try:
        waiter = Waiter(lambda: app.test_client().get(
            f"/api/games/{table.id}/events?after={last}&wait=60", headers=auth(table.tokens[0])))
        waiter.start()
        _until(lambda: bool(watch._waiters.get(table.id)))  # in its wait, queued for a turn
        ping = Waiter(lambda: app.test_client().get("/api/ping"))
        ping.start()
        ping.join(60)
        assert not ping.is_alive()  # answered while the poll still waits for its turn
        assert waiter.is_alive()
    finally:
        turns.release()
    table.draw()
    waiter.join(90)
    assert waiter.answer["events"][0]["seq"] == last + 1
