"""One lock order for every writer (server/dos_server/database.py says which): a person who
holds two seats of one game changes their settings, or deletes their identity, while that game
moves, and PostgreSQL never has to abort either request as a deadlock (that answered 500).

The first two tests build the deadlock's interleaving by hand on PostgreSQL: another
transaction holds seat 1's row lock, the account request starts and queues behind it, then a
request on the game starts and queues too; the holder lets go. Before the lock order, the
account request had seat 1 and waited for seat 0 while the game request had the game and
seat 0 and waited for seat 1. The races after them hammer the same pairs on both backends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
import requests
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from identity_helpers import auth, create, sign_in

from dos_engine import Game
from dos_server import worker
from dos_server.config import normalize_database_url
from dos_server.extensions import db
from dos_server.models import GameRow, IdentityRow, SeatRow, utcnow
from testkit import PG_URL, SmtpSink, serving, wait_for

ANN, BOB = "ann@example.org", "bob@example.org"
ON_POSTGRESQL = pytest.mark.parametrize("backend", ["postgresql"] if PG_URL else [],
                                        indirect=True)


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
        assert game is not None and game.state is not None
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


def _finish(app: Flask, game_id: str) -> None:
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        row.status = "finished"
        row.version += 1
        db.session.commit()
        db.session.remove()


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


