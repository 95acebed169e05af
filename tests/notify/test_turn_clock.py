"""Every new turn starts its own clock and its own "your turn".

A person whose turns follow each other with only bots (or resigned seats) in between sits in
the same (round, current seat) turn after turn; turns are told apart by the engine's turn
counter. The worker's clock is injected: each of the person's turns gets its own your-turn
webhook, a reminder at 80% of the limit and a timeout at the full limit, never earlier and
never twice; its your-turn email comes again only once the person has come back (played or
looked) since the last one, and says how many turns the deadline played meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from notify_helpers import (
    FakeClock,
    Receiver,
    auth,
    create,
    current,
    player_tokens,
    rows,
    run_worker,
)

from dos_server.extensions import db
from dos_server.models import GameRow

LIMIT = 60
DORA = "dora@example.org"


def _turn(app: Flask, game_id: str) -> tuple[int, datetime, datetime, str]:
    """(turn_no, turn_started_at, turn_deadline, status) as stored."""
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        assert game.state is not None
        if game.status != "active":  # over (a bot went out, or nobody is left): no clock
            ended = datetime.min.replace(tzinfo=UTC)
            out = (int(game.state["turn_no"]), ended, ended, game.status)
        else:
            out = (int(game.state["turn_no"]), _utc(game.turn_started_at),
                   _utc(game.turn_deadline), game.status)
        db.session.remove()
    return out


def _utc(moment: datetime | None) -> datetime:
    assert moment is not None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _count(app: Flask, game_id: str, event: str, channel: str = "email") -> int:
    return len([r for r in rows(app, event=event, channel=channel, game_id=game_id)
                if r.seats == [0]])


TABLES: dict[str, list[dict[str, Any]]] = {
    "one-bot": [{"bot": "greedy"}],
    "two-bots": [{"bot": "greedy"}, {"bot": "random"}],
    "three-bots": [{"bot": "random"}, {"bot": "greedy"}, {"bot": "greedy"}],
    "resigned": [{"name": "bob"}, {"bot": "greedy"}],
    "resigned-two": [{"name": "bob"}, {"name": "cid"}, {"bot": "random"}],
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_each_turn_of_one_person_has_its_own_clock(
        make_app: Callable[..., Flask], receiver: Receiver, table: str) -> None:
    app = make_app()
    client = app.test_client()
    hook = receiver.url("/dora")
    for _ in range(10):  # bots may (rarely) win the whole game before dora's first turn
        game = create(client, [{"name": "dora", "email": DORA, "webhook_url": hook},
                               *TABLES[table]], turn_time_limit=LIMIT,
                      options={"target_score": 10_000})  # no bot wins the game in six turns
        if game["status"] == "active":
            break
    assert game["status"] == "active"
    gid = game["id"]
    tokens = player_tokens(client, game)
    for seat in [s for s in tokens if s != 0]:  # the other people resign at once
        answer = client.post(f"/api/games/{gid}/resign", headers=auth(tokens[seat]))
        assert answer.status_code == 200, answer.get_data(as_text=True)
    body = current(client, gid, game["host_token"])  # not a look of dora's: the host's
    assert body["status"] == "active"
    assert body["view"]["current"] == 0  # nobody else plays for themselves

    clock = FakeClock()
    seen_turns: list[int] = []
    for number in range(6):
        turn_no, started, deadline, status = _turn(app, gid)
        if status != "active":
            break
        assert turn_no not in seen_turns  # a new turn, by the counter
        seen_turns.append(turn_no)
        assert deadline == started + timedelta(seconds=LIMIT)
        # its own your-turn webhook; an email only if she came back since the last one (she
        # plays the odd turns herself, the deadline plays the even ones)
        assert _count(app, gid, "your_turn", "webhook") == number + 1
        emails = [r for r in rows(app, event="your_turn", channel="email", game_id=gid)
                  if r.seats == [0]]
        assert len(emails) == number // 2 + 1
        assert emails[-1].payload["data"].get("turns_missed", 0) == (1 if number >= 2 else 0)
        reminders, timeouts = _count(app, gid, "reminder"), _count(app, gid, "timed_out")

        clock.set(started + timedelta(seconds=0.8 * LIMIT - 0.5))
        run_worker(app, clock)
        assert _count(app, gid, "reminder") == reminders  # not before 80%
        clock.set(started + timedelta(seconds=0.8 * LIMIT))
        run_worker(app, clock)
        assert _count(app, gid, "reminder") == reminders + 1  # at 80%
        run_worker(app, clock)
        assert _count(app, gid, "reminder") == reminders + 1  # once

        if number % 2:  # dora plays this one herself (the clock must restart after it)
            listing = client.get(f"/api/games/{gid}/actions", headers=auth(tokens[0])).get_json()
            choice = next((a for a in listing["actions"] if a["action"] == "draw"),
                          listing["actions"][0])
            turn = [choice["action"]]
            for _ in range(5):  # finish the turn: end, or whatever must come next
                answer = client.post(f"/api/games/{gid}/actions", headers=auth(tokens[0]),
                                     json={"version": listing["version"], "actions": turn})
                assert answer.status_code == 200, answer.get_data(as_text=True)
                if _turn(app, gid)[0] != turn_no or answer.get_json()["game"]["status"] != "active":
                    break
                listing = client.get(f"/api/games/{gid}/actions",
                                     headers=auth(tokens[0])).get_json()
                turn = [next((a["action"] for a in listing["actions"] if a["action"] == "end"),
                             listing["actions"][0]["action"])]
            assert _count(app, gid, "timed_out") == timeouts
            continue
        clock.set(started + timedelta(seconds=LIMIT - 0.5))
        run_worker(app, clock)
        assert _count(app, gid, "timed_out") == timeouts  # not before the limit
        assert _turn(app, gid)[0] == turn_no
        clock.set(started + timedelta(seconds=LIMIT))
        run_worker(app, clock)
        assert _count(app, gid, "timed_out") == timeouts + 1  # at the limit, once
        after = _turn(app, gid)
        if after[3] == "active":
            assert after[0] > turn_no
            assert after[1] == clock.now  # the new turn's clock starts at the timeout
        run_worker(app, clock)
        assert _count(app, gid, "timed_out") == timeouts + 1
    assert len(seen_turns) >= 4
    run_worker(app, clock, passes=20)
    kinds = [r.json["type"] for r in receiver.at("/dora")]
    assert kinds.count("game.your_turn") == _count(app, gid, "your_turn", "webhook")
