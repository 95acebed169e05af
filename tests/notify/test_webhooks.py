"""Webhooks to a real HTTP receiver on loopback, verified with the ``standardwebhooks`` library."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

import pytest
from flask import Flask
from notify_helpers import (
    FakeClock,
    Receiver,
    attempts,
    auth,
    create,
    play_one,
    play_to_end,
    player_tokens,
    rows,
    run_worker,
    verify,
)

from testkit import free_port


def test_signed_events_and_one_delivery_per_shared_url(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app = make_app()
    client = app.test_client()
    shared, solo = receiver.url("/shared"), receiver.url("/solo")
    game = create(client, [{"name": "ann", "webhook_url": shared},
                           {"name": "bob", "webhook_url": shared},
                           {"name": "cid", "webhook_url": solo}],
                  options={"target_score": 1})
    gid = game["id"]
    secrets = {i["seat"]: i["webhook_secret"] for i in game["invites"]}
    assert all(s.startswith("whsec_") for s in secrets.values())
    assert secrets[0] == secrets[1] != secrets[2]  # one secret per URL
    tokens = player_tokens(client, game)
    play_to_end(client, gid, tokens)
    run_worker(app, passes=200)
    assert {r.status for r in rows(app)} == {"sent"}

    by_path = {"/shared": secrets[0], "/solo": secrets[2]}
    bodies = {path: [verify(r, key) for r in receiver.at(path)] for path, key in by_path.items()}
    for path, received in bodies.items():
        assert received, path
        for body in received:
            assert body["game_id"] == gid
            assert body["type"].startswith("game.")
            assert isinstance(body["version"], int)
            assert body["links"]["game"].endswith(f"/api/games/{gid}")
            assert body["links"]["actions"].endswith(f"/api/games/{gid}/actions")
            assert "secret" not in body
    # round over and game over go to every seat: ONE delivery for the two seats on /shared
    shared_types = Counter(b["type"] for b in bodies["/shared"])
    assert shared_types["game.game_over"] == 1
    assert shared_types["game.round_over"] == 1
    over = next(b for b in bodies["/shared"] if b["type"] == "game.game_over")
    assert over["seats"] == [0, 1]
    assert over["seat"] is None
    solo_over = next(b for b in bodies["/solo"] if b["type"] == "game.game_over")
    assert solo_over["seats"] == [2]
    assert solo_over["seat"] == 2
    turns = [b for b in bodies["/shared"] + bodies["/solo"] if b["type"] == "game.your_turn"]
    assert turns
    assert all(len(b["seats"]) == 1 for b in turns)
    # receivers can dedupe by webhook-id: every id is new here
    ids = [r.webhook_id for r in receiver.all()]
    assert len(ids) == len(set(ids)) == len(rows(app))


def test_secret_from_put_notifications(make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app = make_app()
    client = app.test_client()
    game = create(client, [{"name": "ann"}, {"name": "bob"}])
    gid = game["id"]
    tokens = player_tokens(client, game)
    answers = {}
    for seat in (0, 1):
        answer = client.put(f"/api/games/{gid}/seats/{seat}/notifications",
                            headers=auth(tokens[seat]),
                            json={"webhook_url": receiver.url(f"/p{seat}"),
                                  "events": {"webhook": ["your_turn", "game_over"]}})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        answers[seat] = answer.get_json()["webhook_secret"]
        assert answers[seat].startswith("whsec_")
    for _ in range(60):  # until each seat has been told "your turn" at least once
        targets = {r.target for r in rows(app, event="your_turn")}
        if len(targets) == 2:
            break
        assert play_one(client, gid, tokens) is not None
    run_worker(app, passes=20)
    for seat in (0, 1):
        received = receiver.at(f"/p{seat}")
        assert received
        for r in received:
            body = verify(r, answers[seat])
            assert body["type"] == "game.your_turn"
            assert body["seat"] == seat


def test_410_disables_the_endpoint(make_app: Callable[..., Flask], receiver: Receiver) -> None:
    receiver.script["/gone"] = [(410, {})]
    app = make_app()
    client = app.test_client()
    gone, fine = receiver.url("/gone"), receiver.url("/fine")
    game = create(client, [{"name": "ann", "webhook_url": gone},
                           {"name": "bob", "webhook_url": fine}])
    tokens = player_tokens(client, game)
    run_worker(app, passes=5)
    first = rows(app, target=gone)
    assert first
    assert {r.status for r in first} == {"dropped"}  # each tried once, then dropped
    assert len(receiver.at("/gone")) == len(first)
    for _ in range(8):
        play_one(client, game["id"], tokens)
    run_worker(app, passes=20)
    assert [r.id for r in rows(app, target=gone)] == [r.id for r in first]  # no further rows
    assert len(receiver.at("/gone")) == len(first)
    assert len(receiver.at("/fine")) > 1


def test_429_and_5xx_back_off_honouring_retry_after(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    receiver.script["/busy"] = [(429, {"Retry-After": "120"}), (200, {})]
    receiver.script["/down"] = [(503, {}), (200, {})]
    app = make_app()
    client = app.test_client()
    create(client, [{"name": "ann", "webhook_url": receiver.url("/busy")},
                    {"name": "bob", "webhook_url": receiver.url("/down")}])
    clock = FakeClock()
    busy = rows(app, target=receiver.url("/busy"))
    down = rows(app, target=receiver.url("/down"))
    assert busy
    assert down
    run_worker(app, clock)
    assert len(receiver.at("/busy")) == len(busy)
    assert len(receiver.at("/down")) == len(down)
    for row in rows(app, target=receiver.url("/busy")):
        assert row.status == "pending"
        wait = (row.next_attempt_at.replace(tzinfo=clock.now.tzinfo) - clock.now).total_seconds()
        assert 119 <= wait <= 121, wait  # Retry-After beats the 5 s step
    for row in rows(app, target=receiver.url("/down")):
        wait = (row.next_attempt_at.replace(tzinfo=clock.now.tzinfo) - clock.now).total_seconds()
        assert 4.4 <= wait <= 5.6, wait  # the schedule's 5 s step, with jitter
    clock.advance(7)  # past the 5 s step: the 503s are retried, the 429s wait
    run_worker(app, clock)
    assert len(receiver.at("/down")) == 2 * len(down)
    assert len(receiver.at("/busy")) == len(busy)
    clock.advance(60)
    run_worker(app, clock)
    assert len(receiver.at("/busy")) == len(busy)
    clock.advance(60)
    run_worker(app, clock)
    assert len(receiver.at("/busy")) == 2 * len(busy)
    assert {r.status for r in rows(app)} == {"sent"}
    for row in busy:
        tried = attempts(app, row.id)
        assert [(a.ok, a.status_code) for a in tried] == [(False, 429), (True, None)]


def test_500_twice_then_200_keeps_the_webhook_id(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    receiver.script["/flaky"] = [(500, {}), (500, {}), (200, {})]
    app = make_app()
    client = app.test_client()
    game = create(client, [{"name": "ann", "webhook_url": receiver.url("/flaky")},
                           {"bot": "random"}])
    secret = game["invites"][0]["webhook_secret"]
    clock = FakeClock()
    first = rows(app, target=receiver.url("/flaky"))[0]
    for step in (0, 6, 340):  # RETRY_SCHEDULE: now, 5 s, 300 s (each +-10%)
        clock.advance(step)
        run_worker(app, clock)
    got = [r for r in receiver.at("/flaky") if r.webhook_id == first.message_id]
    assert [r.status for r in got] == [500, 500, 200]
    for r in got:
        assert verify(r, secret)["type"] == f"game.{first.event}"
    assert rows(app, id=first.id)[0].status == "sent"
    tried = attempts(app, first.id)
    assert [(a.ok, a.status_code) for a in tried] == [(False, 500), (False, 500), (True, None)]
    assert all(a.worker for a in tried)


def test_failures_never_show_the_secret_part_of_a_webhook_url(
        make_app: Callable[..., Flask], receiver: Receiver,
        caplog: pytest.LogCaptureFixture) -> None:
    """Slack-style URLs carry their secret in the path and query: errors show the origin only."""
    receiver.script["/hooks/T0SECRETPATH?token=Q1SECRETQUERY"] = [(500, {})] * 5
    app = make_app()
    client = app.test_client()
    failing = receiver.url("/hooks/T0SECRETPATH") + "?token=Q1SECRETQUERY"
    closed = f"http://127.0.0.1:{free_port()}/hooks/T0SECRETDEAD?token=Q1SECRETDEAD"
    create(client, [{"name": "ann", "webhook_url": failing},
                    {"name": "bob", "webhook_url": closed}])
    with caplog.at_level(logging.INFO):  # what a server logs (urllib3's debug lines aside)
        run_worker(app, passes=3)
    stored = rows(app)
    errors = [r.last_error or "" for r in stored]
    errors += [a.error or "" for r in stored for a in attempts(app, r.id)]
    assert any("answered HTTP 500" in e for e in errors)
    assert any("ConnectionError" in e for e in errors)
    for text in [*errors, caplog.text]:
        assert "SECRET" not in text, text
    assert "http://127.0.0.1:" in caplog.text  # the origin is still there to debug with
