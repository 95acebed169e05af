"""Finished games archived: every read of their history answers as before."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import flask_migrate
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import auth, create, join, play_game, stored_state

from dos_engine import GameRecord, replay
from dos_server.extensions import db
from dos_server.models import EventRow, GameArchiveRow, GameRow, utcnow
from dos_server.services import access, archive, inbound, notify

PAGES = [(0, 1), (0, 7), (0, 500), (3, 50), (40, 13), (100, 200), (10_000, 5)]


def _finished_game(client: FlaskClient, target: int = 60) -> tuple[dict[str, Any], dict[int, str]]:
    """Two people and two bots play to ``target``; one person resigns on the way (the
    server's own ``resigned`` entry is in the history), the other plays to the end."""
    game = create(client, [{"name": "ann"}, {"bot": "random"}, {"name": "bob"}, {"bot": "greedy"}],
                  target_score=target)
    tokens = {}
    for invite in game["invites"]:
        joined = join(client, game["id"], invite=invite["invite"])
        tokens[joined["seat"]] = joined["player_token"]
    posts = 0

    def observe(kind: str, seat: int | None, body: Any) -> None:
        nonlocal posts
        if kind == "post":
            posts += 1
            if posts == 2 and body["game"]["status"] == "active":
                assert client.post(f"/api/games/{game['id']}/resign",
                                   headers=auth(tokens[2])).status_code == 200

    play_game(client, game["id"], tokens, seed=3, observe=observe)
    return game, tokens


def _viewers(game: dict[str, Any], tokens: dict[int, str]) -> dict[str, dict[str, str]]:
    out = {"anyone": {}, "host": auth(game["host_token"])}
    out.update({f"seat {seat}": auth(token) for seat, token in tokens.items()})
    return out


def _everything(client: FlaskClient, app: Flask, game: dict[str, Any],
                tokens: dict[int, str]) -> dict[str, Any]:
    """Every read of the game's history: API pages per viewer, the record, the web history
    page, and what the emails are made of."""
    game_id = game["id"]
    seen: dict[str, Any] = {}
    for name, headers in _viewers(game, tokens).items():
        for after, limit in PAGES:
            page = client.get(f"/api/games/{game_id}/events?after={after}&limit={limit}",
                              headers=headers)
            assert page.status_code == 200
            seen[f"{name} {after}/{limit}"] = page.get_json()
    seen["record"] = client.get(f"/api/games/{game_id}/record").get_json()
    seen["web"] = client.get(f"/games/{game_id}/history?after=5").get_data(as_text=True)
    with app.app_context():
        row = access.get_game(game_id)
        for seat in row.seats:
            seen[f"since {seat.index}"] = notify.since_last_turn(row, seat)
            seen[f"timed out {seat.index}"] = notify.since_last_turn(row, seat, timed_out=True)
            seen[f"mail history {seat.index}"] = inbound._history(row, seat)
        seen["round"] = notify.round_result(row, access.engine_state(row))
        db.session.remove()
    return seen


def _archive_now(app: Flask) -> int:
    with app.app_context():
        done = archive.archive_due(utcnow() + timedelta(days=30))
        db.session.remove()
    return done


def _count(app: Flask, model: Any, game_id: str) -> int:
    with app.app_context():
        found = db.session.execute(sa.select(sa.func.count()).select_from(model)
                                   .where(model.game_id == game_id)).scalar_one()
        db.session.remove()
    return int(found)


def test_archived_history_reads_exactly_as_before(app: Flask, client: FlaskClient) -> None:
    game, tokens = _finished_game(client, target=200)  # 60 can end in one short round
    before = _everything(client, app, game, tokens)
    assert len(before["anyone 0/500"]["events"]) > 50
    assert any(e["kind"] == "resigned" for e in before["anyone 0/500"]["events"])
    rows = _count(app, EventRow, game["id"])

    assert _archive_now(app) == 1
    assert _count(app, EventRow, game["id"]) == 0
    assert _count(app, GameArchiveRow, game["id"]) == 1
    with app.app_context():
        stored = db.session.get(GameArchiveRow, game["id"])
        assert stored is not None
        assert stored.events == rows
        assert len(stored.data) < 600 + rows * 4  # a few bytes an entry: the record replays the rest
        db.session.remove()

    after = _everything(client, app, game, tokens)
    assert after.keys() == before.keys()
    for key, value in before.items():
        assert after[key] == value, key
    # Another process (a fresh cache) decodes the archive to the same answers.
    archive._decoded.cache_clear()
    assert _everything(client, app, game, tokens) == before
    # The record still replays to the stored state.
    assert replay(GameRecord.from_dict(after["record"])) == stored_state(app, game["id"])


def test_archiving_twice_changes_nothing(app: Flask, client: FlaskClient) -> None:
    game, tokens = _finished_game(client, target=15)
    assert _archive_now(app) == 1
    archived = _everything(client, app, game, tokens)
    assert _archive_now(app) == 0
    with app.app_context():
        row = access.get_game(game["id"], for_update=True)
        assert archive.archive_game(row) is False
        db.session.commit()
        db.session.remove()
    assert _count(app, GameArchiveRow, game["id"]) == 1
    assert _everything(client, app, game, tokens) == archived


def test_two_workers_archive_each_game_once(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    games = [_finished_game(client, target=10)[0]["id"] for _ in range(4)]
    pages = {game_id: client.get(f"/api/games/{game_id}/events?limit=500").get_json()
             for game_id in games}
    workers = [make_app() for _ in range(2)]  # two processes' worth: own engines and sessions
    start = threading.Barrier(len(workers))
    done: list[int] = []
    errors: list[BaseException] = []

    def work(worker: Flask) -> None:
        try:
            with worker.app_context():
                start.wait()
                done.append(archive.archive_due(utcnow() + timedelta(days=30)))
                db.session.remove()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sum(done) == len(games)
    for game_id in games:
        assert _count(app, GameArchiveRow, game_id) == 1
        assert _count(app, EventRow, game_id) == 0
        assert client.get(f"/api/games/{game_id}/events?limit=500").get_json() == pages[game_id]


def test_active_and_recent_games_are_not_archived(make_app: Callable[..., Flask]) -> None:
    app = make_app(ARCHIVE_AFTER_SECONDS=3600)
    client = app.test_client()
    active = create(client, [{"name": "ann"}, {"bot": "random"}], target_score=500)
    joined = join(client, active["id"], invite=active["invites"][0]["invite"])
    assert joined["game"]["status"] == "active"
    finished, _ = _finished_game(client, target=10)
    with app.app_context():
        assert archive.archive_due(utcnow()) == 0  # finished less than an hour ago
        assert archive.archive_due(utcnow() + timedelta(days=365)) == 1
        assert db.session.get(GameRow, active["id"]).archived_at is None
        assert db.session.get(GameRow, finished["id"]).archived_at is not None
        db.session.remove()
    assert _count(app, EventRow, active["id"]) > 0
    assert _count(app, GameArchiveRow, active["id"]) == 0
    off = make_app(ARCHIVE_AFTER_SECONDS=-1)
    with off.app_context():
        assert archive.archive_due(utcnow() + timedelta(days=365)) == 0
        db.session.remove()


def test_entries_the_record_does_not_predict_are_kept() -> None:
    """A whole turn's actions listed before its events, extra entries, reordered ones and a
    record that does not replay all decode to what was stored."""
    from dos_engine import start_game

    state, _ = start_game(["a", "b", "c"], "seed-x")
    actions: list[tuple[int, str]] = []
    for _ in range(30):
        seat = state.current
        action = state.legal_actions(seat)[0]
        state.play(action, seat)
        actions.append((seat, action.text()))
    record = GameRecord(("a", "b", "c"), "seed-x", state.options, tuple(actions))
    entries = archive.predicted(record)
    moment = utcnow()

    def rows(listed: list[Any]) -> list[archive.ArchivedEvent]:
        return [archive.ArchivedEvent(seq=n, version=1 + n // 5, seat=seat, kind=kind,
                                      data=data, secret=secret,
                                      created_at=moment + timedelta(microseconds=37 * n))
                for n, (seat, kind, data, secret) in enumerate(listed, start=1)]

    shuffled = list(entries)
    shuffled[10], shuffled[11] = shuffled[11], shuffled[10]
    shuffled.insert(20, (1, "timed_out", {"policy": "random", "timeouts": 1}, None))
    del shuffled[40]
    for history, rec in ((entries, record), (shuffled, record),
                         (entries, GameRecord(("a", "b", "c"), "other seed", state.options,
                                              tuple(actions)))):
        stored = rows(history)
        assert list(archive.decode(archive.encode(rec, stored))[1]) == stored
    assert len(archive.encode(record, rows(entries))) < len(
        archive.encode(record, rows(entries), predict=False)) / 3


def test_downgrade_puts_the_event_rows_back(app: Flask, client: FlaskClient) -> None:
    game, _ = _finished_game(client, target=10)
    history = client.get(f"/api/games/{game['id']}/events?limit=500").get_json()
    rows = _count(app, EventRow, game["id"])
    assert _archive_now(app) == 1
    with app.app_context():
        flask_migrate.downgrade(revision="6a3e0008t1t1e")
        found = db.session.execute(sa.text(
            "SELECT count(*) FROM game_events WHERE game_id = :id"), {"id": game["id"]}).scalar()
        db.session.remove()
        assert found == rows
        flask_migrate.upgrade()
        db.session.remove()
    assert client.get(f"/api/games/{game['id']}/events?limit=500").get_json() == history
