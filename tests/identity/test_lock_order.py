"""One lock order for every writer (server/dos_server/services/locks.py): a person who
holds two seats of one game changes their settings, or deletes their identity, while that game
moves, and PostgreSQL never has to abort either request as a deadlock (that answered 500).

The first two tests build the deadlock's interleaving by hand on PostgreSQL: another
transaction holds seat 1's row lock, the account request starts and queues behind it, then a
request on the game starts and queues too; the holder lets go. Before the lock order, the
account request had seat 1 and waited for seat 0 while the game request had the game and
seat 0 and waited for seat 1. Two more tests check the safety net (a deadlock that slips
through, and SQLite's busy timeout, answer 503 with Retry-After); the races at the end hammer
the same pairs on both backends.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from identity_helpers import auth, create, finish, join_all, sign_in

from dos_engine import Game, GameRecord, replay
from dos_server import worker
from dos_server.config import normalize_database_url
from dos_server.extensions import db
from dos_server.models import (
    EventRow,
    GameRow,
    IdentityRow,
    NotificationRow,
    SeatRow,
    utcnow,
)
from dos_server.problems import busy_problem
from dos_server.services import digest
from testkit import ON_POSTGRESQL, SmtpSink, serving, wait_for

ANN, BOB = "ann@example.org", "bob@example.org"


def _game_with_two_seats_of_ann(client: FlaskClient, **options: Any) -> tuple[str, dict[int, str]]:
    """Ann holds seats 0 and 1 (claimed by the invites sent to her), Bob seat 2. Seat 1 is
    claimed first, so PostgreSQL's scans of Ann's seats meet seat 1 before seat 0 (the
    opposite of a turn's lock order, which is by seat index)."""
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "ann2", "email": ANN},
                           {"name": "bob", "email": BOB}], **options)
    invites = {i["seat"]: i["invite"] for i in game["invites"]}
    tokens = {}
    for seat in (1, 0, 2):
        answer = client.post(f"/api/games/{game['id']}/join", json={"invite": invites[seat]})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        tokens[seat] = answer.get_json()["player_token"]
    return game["id"], tokens


def _state(app: Flask, game_id: str) -> tuple[Game, int]:
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        assert game.state is not None
        found = Game.from_dict(game.state), game.version
        db.session.remove()
    return found


def _seats(app: Flask, game_id: str) -> list[SeatRow]:
    with app.app_context():
        rows = list(db.session.execute(db.select(SeatRow).where(SeatRow.game_id == game_id)
                                       .order_by(SeatRow.index)).scalars())
        db.session.expunge_all()
        db.session.remove()
    return rows


def _turn(app: Flask, game_id: str, tokens: dict[int, str]) -> tuple[str, dict[str, Any],
                                                                     dict[str, str]]:
    """The current player's first legal action at the current version: (path, body, headers)."""
    state, version = _state(app, game_id)
    action = state.legal_actions(state.current)[0].text()
    return (f"/api/games/{game_id}/actions", {"version": version, "actions": [action]},
            auth(tokens[state.current]))


# -- the interleaving, by hand (PostgreSQL) ---------------------------------------------------


class SeatLock:
    """Another transaction holds one seat's row lock until :meth:`release`."""

    def __init__(self, holder: sa.Connection, watcher: sa.Connection) -> None:
        self.holder = holder
        self.watcher = watcher
        self.pid = holder.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()

    def queued(self) -> int:
        """How many backends wait behind the holder (directly or behind one another)."""
        rows = self.watcher.execute(sa.text(
            "SELECT pid, pg_blocking_pids(pid) FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock'")).all()
        behind = {self.pid}
        while True:
            more = {pid for pid, blockers in rows if behind & set(blockers)} - behind
            if not more:
                return len(behind) - 1
            behind |= more

    def wait_until_queued(self, count: int) -> None:
        wait_for(lambda: self.queued() >= count, 30, f"{count} requests queued on the lock")

    def release(self) -> None:
        self.holder.rollback()


@contextmanager
def _seat_locked(db_url: str, game_id: str, index: int) -> Iterator[SeatLock]:
    engine = sa.create_engine(normalize_database_url(db_url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as holder, engine.connect() as watcher:
            # Each statement its own transaction: pg_stat_activity is read once per transaction.
            watcher.execution_options(isolation_level="AUTOCOMMIT")
            holder.execute(sa.text("SELECT 1 FROM seats WHERE game_id = :g AND index = :i "
                                   "FOR UPDATE"), {"g": game_id, "i": index})
            lock = SeatLock(holder, watcher)
            try:
                yield lock
            finally:
                lock.release()
    finally:
        engine.dispose()


def _one_after_another(lock: SeatLock, first: Callable[[], requests.Response],
                       second: Callable[[], requests.Response]) -> list[requests.Response]:
    """``first`` queues on the held lock, then ``second`` does, then the holder lets go."""
    with ThreadPoolExecutor(2) as pool:
        answers = [pool.submit(first)]
        lock.wait_until_queued(1)
        answers.append(pool.submit(second))
        lock.wait_until_queued(2)
        lock.release()
        return [answer.result(timeout=60) for answer in answers]


def _first_of_anns_seats(db_url: str, game_id: str) -> int:
    """The seat a scan of Ann's seats meets first (the precondition of the interleaving)."""
    engine = sa.create_engine(normalize_database_url(db_url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(
                "SELECT index FROM seats WHERE game_id = :g AND owner_key = :k LIMIT 1"),
                {"g": game_id, "k": ANN}).scalar_one())
    finally:
        engine.dispose()


@ON_POSTGRESQL
def test_settings_change_queued_with_a_turn_is_no_deadlock(mail_app: Flask, smtp: SmtpSink,
                                                           db_url: str) -> None:
    client = mail_app.test_client()
    game_id, tokens = _game_with_two_seats_of_ann(client)
    account = sign_in(client, mail_app, smtp, ANN)
    assert _first_of_anns_seats(db_url, game_id) == 1
    path, body, headers = _turn(mail_app, game_id, tokens)
    _, version = _state(mail_app, game_id)
    with serving(mail_app) as url, _seat_locked(db_url, game_id, 1) as lock:
        answers = _one_after_another(
            lock,
            lambda: requests.put(f"{url}/api/me/settings", json={"digest": True},
                                 headers=auth(account), timeout=60),
            lambda: requests.post(url + path, json=body, headers=headers, timeout=60))
    settings, turn = answers
    assert settings.status_code == 200, settings.text
    assert turn.status_code == 200, turn.text
    assert settings.json()["games_changed"] == 2
    assert [s.digest for s in _seats(mail_app, game_id)] == [True, True, False]
    assert _state(mail_app, game_id)[1] == version + 1


@ON_POSTGRESQL
def test_forgetting_queued_with_a_request_on_the_game_is_no_deadlock(
        mail_app: Flask, smtp: SmtpSink, db_url: str) -> None:
    client = mail_app.test_client()
    game_id, tokens = _game_with_two_seats_of_ann(client)
    finish(mail_app, game_id)  # forgetting an identity clears its seats in closed games
    account = sign_in(client, mail_app, smtp, ANN)
    assert _first_of_anns_seats(db_url, game_id) == 1
    with serving(mail_app) as url, _seat_locked(db_url, game_id, 1) as lock:
        forget, resign = _one_after_another(
            lock,
            lambda: requests.delete(f"{url}/api/me", headers=auth(account), timeout=60),
            lambda: requests.post(f"{url}/api/games/{game_id}/resign", headers=auth(tokens[2]),
                                  timeout=60))
    assert forget.status_code == 200, forget.text
    assert forget.json()["forgotten_in_games"] == [game_id]
    assert resign.status_code == 409, resign.text  # the game is over: nothing to resign from
    seats = _seats(mail_app, game_id)
    assert [(s.email, s.owner_key) for s in seats] == [(None, None), (None, None), (BOB, BOB)]


@ON_POSTGRESQL
def test_a_deadlock_that_slips_through_is_a_503_to_retry(mail_app: Flask,
                                                         db_url: str) -> None:
    """Safety net: should a deadlock happen all the same, its victim gets a 503 problem with
    Retry-After (nothing was changed), not a 500. Here another transaction takes seat 2,
    then the game, against a turn's order (the game, then seats 0, 1, 2)."""
    client = mail_app.test_client()
    game_id, tokens = _game_with_two_seats_of_ann(client)
    path, body, headers = _turn(mail_app, game_id, tokens)
    _, version = _state(mail_app, game_id)
    with serving(mail_app) as url, _seat_locked(db_url, game_id, 2) as lock, \
            ThreadPoolExecutor(1) as pool:
        # The turn's backend waited first, so it finds the deadlock (after deadlock_timeout)
        # long before this one would, and it is the one PostgreSQL rolls back.
        lock.holder.execute(sa.text("SET LOCAL deadlock_timeout = '60s'"))
        turn = pool.submit(lambda: requests.post(url + path, json=body, headers=headers,
                                                 timeout=60))
        lock.wait_until_queued(1)
        lock.holder.execute(sa.text("SELECT id FROM games WHERE id = :g FOR UPDATE"),
                            {"g": game_id})
        answer = turn.result(timeout=60)
    assert answer.status_code == 503, answer.text
    assert answer.headers["Content-Type"].startswith("application/problem+json")
    assert answer.headers["Retry-After"] == "1"
    assert answer.json()["type"].endswith("/busy")
    assert _state(mail_app, game_id)[1] == version  # rolled back whole
    again = client.post(path, json=body, headers=headers)  # sent again, it goes through
    assert again.status_code == 200, again.get_data(as_text=True)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_busy_sqlite_database_is_a_503_to_retry(make_app: Callable[..., Flask],
                                                   db_url: str) -> None:
    app = make_app(SQLITE_BUSY_TIMEOUT_SECONDS=0.1)
    client = app.test_client()
    game_id, tokens = _game_with_two_seats_of_ann(client)
    path, body, headers = _turn(app, game_id, tokens)
    engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as other:
            other.exec_driver_sql("BEGIN IMMEDIATE")  # another writer holds the database
            answer = client.post(path, json=body, headers=headers)
            other.rollback()
    finally:
        engine.dispose()
    assert answer.status_code == 503, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    assert answer.headers["Retry-After"] == "1"
    assert client.post(path, json=body, headers=headers).status_code == 200


# -- races on both backends ---------------------------------------------------------------


def _together(*calls: Callable[[], Any]) -> list[Any]:
    """Run ``calls`` at once, each in its own thread behind a barrier; their results in order.
    No HTTP answer among them may be a 5xx."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], Any]) -> Any:
        barrier.wait(15)
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        results = [f.result(timeout=120) for f in [pool.submit(run, c) for c in calls]]
    answers = [r for r in results if isinstance(r, requests.Response)]
    assert all(r.status_code < 500 for r in answers), [r.text for r in answers]
    return results


def _digests_follow_the_identity(app: Flask, game_id: str) -> None:
    """No lost change: each of Ann's seats has the digest setting her identity has now."""
    with app.app_context():
        identity = db.session.get(IdentityRow, ANN)
        assert identity is not None
        seats = list(db.session.execute(db.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.owner_key == ANN)).scalars())
        assert [s.digest for s in seats] == [bool(identity.digest)] * len(seats)
        db.session.remove()


def _history_replays_to_the_state(app: Flask, game_id: str) -> None:
    state = _state(app, game_id)[0]
    with app.app_context():
        actions = db.session.execute(
            db.select(EventRow.seat, EventRow.data)
            .where(EventRow.game_id == game_id, EventRow.kind == "action")
            .order_by(EventRow.seq)).all()
        db.session.remove()
    record = GameRecord(state.players, state.seed, state.options,
                        tuple((seat, data["action"]) for seat, data in actions))
    assert replay(record) == state


def test_races_on_a_game_where_ann_holds_two_seats(mail_app: Flask, smtp: SmtpSink) -> None:
    """Joins, turns, a resignation, the worker's timeout pass and forgetting, each racing
    Ann's settings changes: no 5xx, and what committed is consistent."""
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "ann2", "email": ANN},
                           {"name": "bob", "email": BOB}], turn_time_limit=3600)
    game_id = game["id"]
    invites = {i["seat"]: i["invite"] for i in game["invites"]}
    tokens = {seat: client.post(f"/api/games/{game_id}/join", json={"invite": invites[seat]})
              .get_json()["player_token"] for seat in (0, 2)}
    account = sign_in(client, mail_app, smtp, ANN)

    with serving(mail_app) as url:
        def settings(digest: bool) -> Callable[[], requests.Response]:
            return lambda: requests.put(f"{url}/api/me/settings", json={"digest": digest},
                                        headers=auth(account), timeout=60)

        toggles = [settings(i % 2 == 0) for i in range(6)]
        # Ann claims her second seat (the game starts) while she changes her settings.
        joins = _together(*[lambda: requests.post(f"{url}/api/games/{game_id}/join",
                                                  json={"invite": invites[1]}, timeout=60)
                            for _ in range(3)], *toggles)[:3]
        assert sorted(r.status_code for r in joins) == [200, 409, 409]
        tokens[1] = next(r.json()["player_token"] for r in joins if r.status_code == 200)
        _digests_follow_the_identity(mail_app, game_id)

        # A turn (raced four times), Bob's resignation and the worker's timeout pass.
        path, body, headers = _turn(mail_app, game_id, tokens)
        with mail_app.app_context():  # the turn's time is up: the worker may play it too
            row = db.session.get(GameRow, game_id)
            assert row is not None
            row.turn_deadline = utcnow() - timedelta(seconds=1)
            db.session.commit()
            db.session.remove()

        def worker_pass() -> int:
            with mail_app.app_context():
                try:
                    return worker.check_deadlines(utcnow())
                finally:
                    db.session.remove()

        results = _together(
            *[lambda: requests.post(url + path, json=body, headers=headers, timeout=60)
              for _ in range(4)],
            lambda: requests.post(f"{url}/api/games/{game_id}/resign", headers=auth(tokens[2]),
                                  timeout=60),
            worker_pass, *toggles)
        turns = [r.status_code for r in results[:4]]
        assert turns.count(200) <= 1, turns
        assert set(turns) <= {200, 409}, turns
        assert results[4].status_code == 200, results[4].text
        assert results[5] in (0, 1)  # the timeout pass played the rest of the turn, or nothing
        _digests_follow_the_identity(mail_app, game_id)
        _history_replays_to_the_state(mail_app, game_id)

        # The game is over; Ann forgets her identity while its seats are asked for and her
        # settings change.
        finish(mail_app, game_id)
        path, body, headers = _turn(mail_app, game_id, tokens)
        results = _together(
            lambda: requests.delete(f"{url}/api/me", headers=auth(account), timeout=60),
            *[lambda: requests.post(url + path, json=body, headers=headers, timeout=60)
              for _ in range(3)],
            *[lambda seat=seat: requests.post(f"{url}/api/games/{game_id}/resign",
                                              headers=auth(tokens[seat]), timeout=60)
              for seat in (0, 1)],
            *toggles[:3])
        assert results[0].status_code == 200, results[0].text
        assert {r.status_code for r in results[1:6]} == {409}
        assert {r.status_code for r in results[6:]} <= {200, 401}
    seats = _seats(mail_app, game_id)
    assert [(s.email, s.owner_key) for s in seats] == [(None, None), (None, None), (BOB, BOB)]
    with mail_app.app_context():
        assert db.session.get(IdentityRow, ANN) is None
        db.session.remove()


def test_a_busy_error_straight_from_the_driver_is_a_503_too(tmp_path: Path) -> None:
    """The hot reads run on the driver's cursor, so their errors arrive unwrapped by
    SQLAlchemy: a real SQLITE_BUSY from sqlite3 itself is still a 503 to retry."""
    path = tmp_path / "busy.sqlite3"
    holder = sqlite3.connect(path, timeout=0)
    waiter = sqlite3.connect(path, timeout=0)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlite3.OperationalError) as raised:
            waiter.execute("BEGIN IMMEDIATE")
    finally:
        holder.close()
        waiter.close()
    busy = busy_problem(raised.value)
    assert busy is not None
    assert busy.status == 503
    assert busy_problem(ValueError("not a database error")) is None


@ON_POSTGRESQL
def test_two_workers_reaching_one_digest_at_once_send_it_once(mail_app: Flask,
                                                              db_url: str) -> None:
    """Another worker has just queued Ann's digest and not yet committed: this worker's pass
    waits for it, then sends nothing (it used to fail on the other's new row, and the rest of
    its pass was lost)."""
    client = mail_app.test_client()
    for _ in range(40):  # the dealer is random: until Ann's turn comes first
        game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
        tokens = join_all(client, game)
        answer = client.put(f"/api/games/{game['id']}/seats/0/notifications",
                            json={"digest": True}, headers=auth(tokens[0]))
        assert answer.status_code == 200, answer.get_data(as_text=True)
        if _state(mail_app, game["id"])[0].current == 0:
            break
    else:
        pytest.fail("Ann never moved first in 40 deals")
    now = utcnow()
    engine = sa.create_engine(normalize_database_url(db_url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as other, engine.connect() as watcher:
            watcher.execution_options(isolation_level="AUTOCOMMIT")
            other.execute(sa.text("INSERT INTO digests (address, last_sent_at) VALUES (:a, :t)"),
                          {"a": ANN, "t": now})
            lock = SeatLock(other, watcher)
            outcome: dict[str, Any] = {}

            def worker_pass() -> None:
                with mail_app.app_context():
                    try:
                        outcome["queued"] = digest.send_digests(now)
                    except Exception as error:
                        outcome["error"] = error
                    db.session.remove()

            thread = threading.Thread(target=worker_pass)
            thread.start()
            lock.wait_until_queued(1)  # the pass waits on the other worker's new row
            other.commit()
            thread.join(30)
    finally:
        engine.dispose()
    assert "error" not in outcome, repr(outcome.get("error"))
    assert outcome["queued"] == 0
    with mail_app.app_context():
        queued = db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.event == "digest")).scalars().all()
        db.session.remove()
    assert queued == []  # the other worker's digest (its outbox row) is the only one
