"""Turn deadlines enforced by the worker's clock (injected), not by sleeping."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from flask import Flask
from flask.testing import FlaskClient
from notify_helpers import FakeClock, auth, create, current, player_tokens, rows, run_worker

from dos_server.extensions import db
from dos_server.models import GameRow

LIMIT = 3600


def _clock_at(app: Flask, game_id: str, fraction: float) -> FakeClock:
    """A clock at ``fraction`` of the current turn's time limit."""
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        assert game.turn_started_at is not None
        started = game.turn_started_at
        db.session.remove()
    started = started if started.tzinfo else started.replace(tzinfo=UTC)
    return FakeClock(started + timedelta(seconds=fraction * LIMIT))


def _deadline(app: Flask, game_id: str) -> datetime:
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        assert game.turn_deadline is not None
        deadline = game.turn_deadline
        db.session.remove()
    return deadline if deadline.tzinfo else deadline.replace(tzinfo=UTC)


def _history(client: FlaskClient, game_id: str, token: str) -> list[dict[str, object]]:
    answer = client.get(f"/api/games/{game_id}/events?limit=500", headers=auth(token))
    assert answer.status_code == 200
    return list(answer.get_json()["events"])


def test_reminder_at_80_percent_then_timeout(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    game = create(client, [{"name": "ann", "email": "ann@example.org"},
                           {"name": "bob", "email": "bob@example.org"}],
                  turn_time_limit=LIMIT)
    gid = game["id"]
    tokens = player_tokens(client, game)
    # the host reads: a look of the seat to move would keep its reminder back (attention.py)
    seat = current(client, gid, game["host_token"])["view"]["current"]
    other = 1 - seat

    run_worker(app, _clock_at(app, gid, 0.79))
    assert rows(app, event="reminder") == []
    clock = _clock_at(app, gid, 0.80)
    clock.advance(1)
    for _ in range(2):
        run_worker(app, clock)
    reminders = rows(app, event="reminder")
    assert [r.seats for r in reminders] == [[seat]]
    assert reminders[0].payload["deadline"]
    clock.advance(0.1 * LIMIT)
    run_worker(app, clock)
    assert len(rows(app, event="reminder")) == 1

    before = current(client, gid, tokens[0])
    clock.set(_deadline(app, gid) - timedelta(seconds=1))
    run_worker(app, clock)
    assert current(client, gid, tokens[0])["version"] == before["version"]  # not yet
    clock.advance(2)
    run_worker(app, clock)
    after = current(client, gid, tokens[0])
    assert after["version"] > before["version"]
    assert after["view"]["current"] == other
    timed = [e for e in _history(client, gid, tokens[0]) if e["kind"] == "timed_out"]
    assert len(timed) == 1
    assert timed[0]["seat"] == seat
    assert [r.seats for r in rows(app, event="timed_out")] == [[seat]]
    turns = rows(app, event="your_turn")
    assert turns[-1].seats == [other]
    run_worker(app, clock)  # the same expired deadline is not applied twice
    assert len([e for e in _history(client, gid, tokens[0]) if e["kind"] == "timed_out"]) == 1
    assert all(r.status == "sent" for r in rows(app))  # written to the instance folder


def test_forfeit_after_two_timeouts(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    game = create(client, [{"name": "ann", "email": "ann@example.org"},
                           {"name": "bob", "email": "bob@example.org"}, {"bot": "random"}],
                  turn_time_limit=LIMIT, forfeit_after=2, timeout_policy="greedy")
    gid = game["id"]
    tokens = player_tokens(client, game)
    clock = FakeClock()
    for _ in range(400):
        body = current(client, gid, tokens[0])
        assert body["status"] == "active"
        if body["seats"][0]["resigned"]:
            break
        seat = body["view"]["current"]
        if seat == 0:  # ann never plays: her clock runs out
            clock.set(max(clock.now, _deadline(app, gid)) + timedelta(seconds=1))
            run_worker(app, clock)
        else:  # bob plays his first move in time
            listing = client.get(f"/api/games/{gid}/actions", headers=auth(tokens[1])).get_json()
            answer = client.post(f"/api/games/{gid}/actions", headers=auth(tokens[1]),
                                 json={"version": listing["version"], "number": 1})
            assert answer.status_code == 200
    else:
        raise AssertionError("ann was never forfeited")
    history = _history(client, gid, tokens[1])
    assert [e["seat"] for e in history if e["kind"] == "timed_out"] == [0, 0]
    assert [e["seat"] for e in history if e["kind"] == "forfeited"] == [0]
    assert len(rows(app, event="timed_out")) == 2
    # from now on ann's seat is played by the random bot right after the turn before it
    forfeited_at = max(i for i, e in enumerate(history) if e["kind"] == "forfeited")
    for _ in range(30):
        body = current(client, gid, tokens[1])
        if body["status"] != "active":
            break
        assert body["view"]["current"] == 1  # never ann's, never the bot's: they play at once
        listing = client.get(f"/api/games/{gid}/actions", headers=auth(tokens[1])).get_json()
        client.post(f"/api/games/{gid}/actions", headers=auth(tokens[1]),
                    json={"version": listing["version"], "number": 1})
    later = _history(client, gid, tokens[1])[forfeited_at:]
    assert any(e["kind"] == "action" and e["seat"] == 0 for e in later)
    assert len([e for e in later if e["kind"] == "timed_out"]) == 0
