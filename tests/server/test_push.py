"""The long-poll ``GET /api/games/<id>/events?after=N&wait=S``, on both backends.

Waiters are woken by the commit (PostgreSQL: LISTEN/NOTIFY, also from another process; any
backend: a commit in the same process), never by a connection or a poll held per waiter: the
tests set the polling backstop to an hour, so only a wake-up can answer them before ``wait``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, request
from flask.testing import FlaskClient
from flask.typing import ResponseReturnValue
from server_helpers import assert_problem, auth, create, join, stored_secrets

from dos_server.extensions import db
from dos_server.services import read, watch
from testkit import PYTHONPATH, ROOT, SECRET

NO_POLL = {"WEB_WAIT_POLL_SECONDS": 3600}  # only a wake-up can answer before `wait` runs out


class Table:
    """A started two-seat game on ``app``."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        client = app.test_client()
        game = create(client, [{"name": "ann"}, {"name": "bob"}], target_score=500)
        self.id = game["id"]
        self.tokens = {i["seat"]: join(client, self.id, invite=i["invite"])["player_token"]
                       for i in game["invites"]}

    def events(self, seat: int | None, query: str = "") -> dict[str, Any]:
        response = self.app.test_client().get(
            f"/api/games/{self.id}/events?limit=500&{query}",
            headers=auth(self.tokens[seat] if seat is not None else None))
        assert response.status_code == 200, response.get_data(as_text=True)
        return dict(response.get_json())

    def last(self) -> int:
        return int(self.events(None)["last"])

    def state(self) -> tuple[int, int]:
        """(the seat to move, the version)."""
        body = self.app.test_client().get(f"/api/games/{self.id}",
                                          headers=auth(self.tokens[0])).get_json()
        return body["view"]["current"], body["version"]

    def draw(self) -> int:
        """The seat to move draws; returns that seat."""
        seat, version = self.state()
        moved = self.app.test_client().post(f"/api/games/{self.id}/actions",
                                            headers=auth(self.tokens[seat]),
                                            json={"version": version, "turn": "draw"})
        assert moved.status_code == 200, moved.get_data(as_text=True)
        return seat


class Waiter(threading.Thread):
    """One long-poll in a thread; ``answer`` is its JSON body."""

    def __init__(self, call: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.call = call
        self.answer: dict[str, Any] = {}

    def run(self) -> None:
        response = self.call()
        assert response.status_code == 200, response.get_data(as_text=True)
        self.answer = response.get_json()


def parked(game_id: str, count: int) -> None:
    """Until ``count`` waiters of the game are parked in this process (after their first look)."""
    deadline = time.monotonic() + 120  # a bound for a broken build, not a measurement
    while time.monotonic() < deadline:
        if watch.parked(game_id) >= count:
            return
        time.sleep(0.01)
    pytest.fail(f"{count} waiters never parked")


def listening(app: Flask, backend: str) -> None:
    with app.app_context():
        assert watch.wait_until_listening(30) is (backend == "postgresql")


def test_answers_at_once_when_there_are_events(make_app: Callable[..., Flask]) -> None:
    app = make_app(**NO_POLL)
    table = Table(app)
    everything = table.events(0)
    assert everything["events"]
    assert everything["last"] == everything["events"][-1]["seq"]
    # events after `after` exist: the answer is the plain page, not a wait
    assert table.events(0, "wait=60") == everything
    assert table.events(0, "after=1&wait=60") == table.events(0, "after=1")


def test_answers_an_empty_list_after_wait_when_nothing_happens(
        make_app: Callable[..., Flask]) -> None:
    app = make_app(**NO_POLL)
    table = Table(app)
    last = table.last()
    assert table.events(1, f"after={last}&wait=0.3") == {
        "events": [], "next_after": last, "more": False, "last": last}
    assert table.events(None, f"after={last}&wait=0")["events"] == []


def test_a_move_wakes_every_waiter_with_its_own_redacted_events(
        make_app: Callable[..., Flask], backend: str) -> None:
    app = make_app(**NO_POLL)
    listening(app, backend)
    table = Table(app)
    last = table.last()
    waiters = {seat: Waiter(lambda seat=seat: app.test_client().get(
        f"/api/games/{table.id}/events?after={last}&wait=60",
        headers=auth(table.tokens[seat] if seat is not None else None)))
        for seat in (0, 1, None)}
    for waiter in waiters.values():
        waiter.start()
    parked(table.id, len(waiters))
    mover = table.draw()
    for waiter in waiters.values():
        waiter.join(90)
    secrets = stored_secrets(app, table.id)
    secrets = {seq: kept for seq, kept in secrets.items() if kept[1]}
    drawn = [seq for seq, (seat, _) in secrets.items() if seq > last and seat == mover]
    assert drawn, "a draw stores the cards as the drawer's secret"
    for seat, waiter in waiters.items():
        body = waiter.answer
        assert body["events"], f"seat {seat} was not woken"
        assert body["events"][0]["seq"] == last + 1
        # exactly what the plain history shows this viewer: redacted for it
        assert body["events"] == table.events(seat, f"after={last}")["events"]
        for event in body["events"]:
            if event["seq"] in secrets:
                owner, secret = secrets[event["seq"]]
                shown = set(secret) <= set(event["data"])
                assert shown is (seat is not None and seat == owner), (seat, event)


def test_a_move_by_another_process_wakes_the_waiter(
        make_app: Callable[..., Flask], db_url: str, backend: str) -> None:
    """PostgreSQL: by NOTIFY (polling is off). SQLite has no NOTIFY: it polls (fast here)."""
    app = make_app(**(NO_POLL if backend == "postgresql" else {"WEB_WAIT_POLL_SECONDS": 0.05}))
    listening(app, backend)
    table = Table(app)
    last = table.last()
    seat, version = table.state()
    waiter = Waiter(lambda: app.test_client().get(
        f"/api/games/{table.id}/events?after={last}&wait=60&limit=1",
        headers=auth(table.tokens[1 - seat])))
    waiter.start()
    parked(table.id, 1)
    script = (
        "import sys; from testkit import build_app\n"
        "app = build_app(sys.argv[1], migrate=False)\n"
        "r = app.test_client().post(f'/api/games/{sys.argv[2]}/actions', "
        "headers={'Authorization': 'Bearer ' + sys.argv[3]}, "
        "json={'version': int(sys.argv[4]), 'turn': 'draw'})\n"
        "assert r.status_code == 200, r.get_data(as_text=True)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([PYTHONPATH, str(ROOT / "tests")]),
           "SECRET_KEY": SECRET}
    subprocess.run([sys.executable, "-c", script, db_url, table.id, table.tokens[seat],
                    str(version)], check=True, env=env, cwd=ROOT, timeout=120)
    waiter.join(90)
    assert [e["seq"] for e in waiter.answer["events"]] == [last + 1]
    assert waiter.answer["more"] is True
    assert waiter.answer["last"] > last


def test_waiters_hold_no_connection_and_a_turn_goes_through(
        make_app: Callable[..., Flask], backend: str) -> None:
    app = make_app(**NO_POLL)
    listening(app, backend)
    table, idle = Table(app), Table(app)
    last, idle_last = table.last(), idle.last()
    waiters = [Waiter(lambda: app.test_client().get(
        f"/api/games/{table.id}/events?after={last}&wait=60", headers=auth(table.tokens[0])))
        for _ in range(20)]
    idlers = [Waiter(lambda: app.test_client().get(
        f"/api/games/{idle.id}/events?after={idle_last}&wait=60")) for _ in range(20)]
    for waiter in (*waiters, *idlers):
        waiter.start()
    parked(table.id, 20)
    parked(idle.id, 20)
    with app.app_context():
        assert db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    table.draw()
    for waiter in waiters:
        waiter.join(90)
        assert waiter.answer["events"][0]["seq"] == last + 1
    assert watch.parked(idle.id) == 20  # the other game's waiters were not woken
    assert not [w for w in idlers if not w.is_alive()]
    idle.draw()
    for waiter in idlers:
        waiter.join(90)
        assert waiter.answer["events"][0]["seq"] == idle_last + 1


def test_woken_waiters_look_a_few_at_a_time_and_share_their_reads(
        make_app: Callable[..., Flask], backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ordinary requests come first: a move that wakes twenty waiters of one seat makes a
    few reads (the waiters with the same question share one), at most WEB_WAIT_LOOKS at once."""
    app = make_app(**NO_POLL, WEB_WAIT_LOOKS=2)
    listening(app, backend)
    table = Table(app)
    last = table.last()
    looking = {"now": 0, "most": 0, "reads": 0}
    counting = threading.Lock()
    history_body = read.history_body

    def counted(*args: Any) -> dict[str, Any]:
        with counting:
            looking["now"] += 1
            looking["reads"] += 1
            looking["most"] = max(looking["most"], looking["now"])
        try:
            time.sleep(0.05)  # a slow read: the others are woken while it lasts
            return history_body(*args)
        finally:
            with counting:
                looking["now"] -= 1

    monkeypatch.setattr(read, "history_body", counted)
    waiters = [Waiter(lambda: app.test_client().get(
        f"/api/games/{table.id}/events?after={last}&wait=60", headers=auth(table.tokens[0])))
        for _ in range(20)]
    for waiter in waiters:
        waiter.start()
    parked(table.id, 20)
    first_looks = looking["reads"]
    table.draw()
    for waiter in waiters:
        waiter.join(90)
    expected = table.events(0, f"after={last}")["events"]
    assert expected
    for waiter in waiters:
        assert waiter.answer["events"] == expected
    assert looking["most"] <= 2
    assert first_looks < 20
    assert looking["reads"] - first_looks - 1 < 20  # less the plain read just above


def test_a_woken_waiter_answers_in_its_turn_and_a_plain_read_takes_none(
        make_app: Callable[..., Flask], backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """WEB_WAIT_LOOKS bounds the waiters at work, not only their reads: a turn lasts from the
    look to the end of the request, its answer made (under gevent that answer is CPU that an
    ordinary request would queue behind). A read without ``wait`` is an ordinary request: it
    never queues for a turn."""
    app = make_app(**NO_POLL, WEB_WAIT_LOOKS=1)
    listening(app, backend)
    woken = threading.Event()  # set once every waiter is parked: later looks follow the move
    holding = threading.Event()  # the first answer is made and holds its turn...
    release = threading.Event()  # ...until this
    counting = threading.Lock()
    work = {"now": 0, "most": 0, "answers": 0}
    history_body = read.history_body

    def counted(*args: Any) -> dict[str, Any]:
        if woken.is_set() and request.args.get("wait"):
            with counting:
                work["now"] += 1
                work["most"] = max(work["most"], work["now"])
        return history_body(*args)

    @app.after_request
    def answered(response: ResponseReturnValue) -> ResponseReturnValue:
        if woken.is_set() and request.args.get("wait"):
            with counting:
                work["now"] -= 1
                work["answers"] += 1
                first = work["answers"] == 1
            if first:
                holding.set()
                release.wait(90)
        return response

    monkeypatch.setattr(read, "history_body", counted)
    table = Table(app)
    last = table.last()
    # A limit each: no two waiters share a read, each one looks by itself.
    waiters = [Waiter(lambda limit=limit: app.test_client().get(
        f"/api/games/{table.id}/events?after={last}&limit={limit}&wait=60",
        headers=auth(table.tokens[0]))) for limit in range(101, 107)]
    for waiter in waiters:
        waiter.start()
    parked(table.id, len(waiters))
    woken.set()
    try:
        table.draw()
        assert holding.wait(90), "no waiter answered the move"
        plain = Waiter(lambda: app.test_client().get(f"/api/games/{table.id}/events?after={last}",
                                                     headers=auth(table.tokens[0])))
        plain.start()
        plain.join(90)  # a bound for a broken build: it waited for the turn held above
        assert not plain.is_alive(), "a read without wait queued for a waiter's turn"
        expected = plain.answer["events"]
        assert expected
        with counting:
            assert work["answers"] == 1  # the others wait for the turn the first still holds
    finally:
        release.set()
    for waiter in waiters:
        waiter.join(90)
        assert waiter.answer["events"] == expected
    assert work == {"now": 0, "most": 1, "answers": len(waiters)}


GEVENT_TURNS = """
from gevent import monkey; monkey.patch_all()
import json, socket, sys
import gevent, gevent.socket
from testkit import build_app
from dos_server.services import watch

app = build_app(sys.argv[1], migrate=False, WEB_WAIT_LOOKS=1)
order = []

def waiter():
    with app.app_context():  # a request's: its end gives the turn back
        watch.wait_until("g1", lambda: order.append("waiter"), lambda _: True, 60)

def ordinary():
    # Round trips through the loop's look at its sockets, as a request's database answers are:
    # its socket is readable every time, and each wait still goes through the loop.
    mine, theirs = socket.socketpair()
    theirs.sendall(b"x" * 10)
    for _ in range(10):
        gevent.socket.wait_read(mine.fileno())
        mine.recv(1)
        order.append("ordinary")

greenlets = [gevent.spawn(waiter) for _ in range(50)] + [gevent.spawn(ordinary)]
gevent.joinall(greenlets, raise_error=True)
print(json.dumps(order))
"""


def test_under_gevent_a_waiters_turn_waits_for_the_loops_next_round(tmp_path: Path) -> None:
    """gevent runs a chain of greenlets woken by one another before it looks at its sockets:
    turns handed from waiter to waiter, with no round trip to pause them, would run fifty
    answers between two database round trips of an ordinary request. A turn begins after the
    loop's next look at its sockets, so the request's steps and the waiters take turns."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([PYTHONPATH, str(ROOT / "tests")]),
           "SECRET_KEY": SECRET}
    ran = subprocess.run([sys.executable, "-c", GEVENT_TURNS,
                          f"sqlite:///{tmp_path / 'turns.sqlite'}"],
                         check=True, env=env, cwd=ROOT, timeout=120, capture_output=True,
                         text=True)
    order = json.loads(ran.stdout.splitlines()[-1])
    assert order.count("waiter") == 50
    assert order.count("ordinary") == 10
    last = len(order) - 1 - order[::-1].index("ordinary")
    runs = "".join("w" if step == "waiter" else "o" for step in order[:last]).split("o")
    assert max(len(run) for run in runs) <= 2  # one round each, and one before it began


@pytest.mark.parametrize("query", [
    "wait=-1", "wait=61", "wait=abc", "wait=nan", "wait=inf", "wait=", "after=-1&wait=5",
    "after=x&wait=5", "limit=0&wait=5"])
def test_bad_wait_or_after_is_a_problem(client: FlaskClient, query: str) -> None:
    game = create(client, [{"name": "ann"}, {"name": "bob"}])
    problem = assert_problem(client.get(f"/api/games/{game['id']}/events?{query}"), 422)
    assert "query" in problem["errors"]


def test_wait_still_checks_the_game_and_the_token_first(client: FlaskClient) -> None:
    game = create(client, [{"name": "ann"}, {"name": "bob"}])
    assert_problem(client.get("/api/games/nosuchgame/events?after=999&wait=60"), 404)
    assert_problem(client.get(f"/api/games/{game['id']}/events?after=999&wait=60",
                              headers=auth("not-a-token")), 401)


def test_openapi_documents_the_long_poll(client: FlaskClient) -> None:
    spec = client.get("/openapi.json").get_json()
    operation = spec["paths"]["/api/games/{game_id}/events"]["get"]
    params = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    assert params["wait"]["schema"]["maximum"] == 60
    assert "long-poll" in params["wait"]["description"].lower()
    assert "long-poll" in operation["description"]


def test_under_gevent_a_look_runs_in_a_reader_of_its_own(capfd: pytest.CaptureFixture[str]) -> None:
    """The reader sees the waiter's context, hands back its result or its problem, and a waiter
    killed while its reader waits on I/O ends the reader before its own cleanup; gevent reports
    nothing as a greenlet's failure."""
    import contextvars

    import gevent
    from greenlet import getcurrent

    reader = watch._in_a_greenlet_of_its_own
    who: contextvars.ContextVar[str] = contextvars.ContextVar("who")
    who.set("the waiter's request")
    waiter = getcurrent()
    assert reader(lambda: (who.get(), getcurrent() is not waiter)) == (
        "the waiter's request", True)

    def refuse() -> None:
        gevent.sleep(0.01)  # a database wait on the hub, then the problem
        raise ValueError("no such game")

    with pytest.raises(ValueError, match="no such game"):
        reader(refuse)

    ended: list[str] = []

    def slow_read() -> str:
        try:
            gevent.sleep(30)
            return "read"
        finally:
            ended.append("reader")

    def wait() -> None:
        try:
            reader(slow_read)
        finally:
            ended.append("waiter")

    killed = gevent.spawn(wait)
    gevent.sleep(0.05)
    killed.kill(block=True, timeout=5)
    assert killed.dead
    assert ended == ["reader", "waiter"]
    assert reader(lambda: "the loop goes on") == "the loop goes on"
    gevent.sleep(0.05)
    assert "Traceback" not in capfd.readouterr().err
