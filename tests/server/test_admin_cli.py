"""``dos-server admin``: the operator's commands on a real database (SQLite and PostgreSQL),
through click as the operator types them, and once through the installed ``dos-server``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from click.testing import Result
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import auth, started_game, stored_state

from dos_engine.wording import describe
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow, IdentityRow, NotificationRow, SeatRow
from testkit import PYTHONPATH, SECRET

DOS_SERVER = str(Path(sys.executable).parent / "dos-server")


def admin(app: Flask, *args: str, ok: bool = True, **kwargs: Any) -> Result:
    result = app.test_cli_runner().invoke(args=["admin", *args], **kwargs)
    if ok:
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output
    return result


def history(app: Flask, game_id: str) -> list[EventRow]:
    with app.app_context():
        rows = db.session.execute(sa.select(EventRow).where(EventRow.game_id == game_id)
                                  .order_by(EventRow.seq)).scalars().all()
        db.session.expunge_all()
        db.session.remove()
    return list(rows)


def notifications(app: Flask, game_id: str) -> list[tuple[int, str, str]]:
    with app.app_context():
        rows = db.session.execute(sa.select(
            NotificationRow.id, NotificationRow.event, NotificationRow.status)
            .where(NotificationRow.game_id == game_id).order_by(NotificationRow.id)).all()
        db.session.remove()
    return [tuple(row) for row in rows]  # type: ignore[misc]


def with_email(app: Flask, game_id: str, index: int, address: str) -> None:
    with app.app_context():
        seat = db.session.execute(sa.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.index == index)).scalar_one()
        seat.email = address
        db.session.commit()
        db.session.remove()


def test_the_operator_lists_and_looks_at_games_without_seeing_a_hand(
        app: Flask, client: FlaskClient) -> None:
    game_id, _host, _seats = started_game(client)
    waiting = client.post("/api/games", json={"seats": [{"name": "cy"}, {"name": "di"}]})
    state = stored_state(app, game_id)
    listed = admin(app, "games").output
    assert game_id in listed
    assert waiting.get_json()["id"] in listed
    assert f"turn: {state.players[state.current]}" in listed
    assert admin(app, "games", "--status", "waiting").output.count("\n") == 1
    rows = json.loads(admin(app, "games", "--status", "active", "--json").output)
    assert [row["id"] for row in rows] == [game_id]
    assert admin(app, "games", "--idle-days", "1").output.strip() == "no games"

    shown = admin(app, "game", game_id).output
    assert f"turn of seat {state.current}" in shown
    assert "seat 0: ann" in shown
    assert "seat 1: bob" in shown
    assert f"cards {len(state.hands[0])}" in shown
    cards = {card.code for hand in state.hands for card in hand} | {
        card.code for card in state.draw_pile}
    assert not cards & set(re.findall(r"\b[RGBYW][#0-9]{1,2}\b", shown))
    details = json.loads(admin(app, "game", game_id, "--json").output)
    assert "hands" not in json.dumps(details)
    assert details["seats"][1]["name"] == "bob"

    missing = admin(app, "game", "nosuchgame", ok=False)
    assert "nosuchgame" in missing.output


def test_cancelling_a_game_in_play_is_recorded_as_the_operators_and_stops_it(
        app: Flask, client: FlaskClient) -> None:
    game_id, _host, seats = started_game(client)
    state = stored_state(app, game_id)
    mover = state.current
    with_email(app, game_id, 1 - mover, "next@example.org")
    while stored_state(app, game_id).current == mover:  # the first listed move, to the turn's end
        listing = client.get(f"/api/games/{game_id}/actions",
                             headers=auth(seats[mover])).get_json()
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(seats[mover]),
                             json={"version": listing["version"], "number": 1})
        assert answer.status_code == 200, answer.get_data(as_text=True)
    assert ("your_turn", "pending") in [(event, status) for _id, event, status
                                        in notifications(app, game_id)]

    admin(app, "cancel", game_id, "--reason", "a player asked")
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        assert (game.status, game.turn_deadline) == ("cancelled", None)
        db.session.remove()
    last = history(app, game_id)[-1]
    assert (last.kind, last.data) == ("game_cancelled", {"by": "operator",
                                                         "reason": "a player asked"})
    assert all(status != "pending" for _id, event, status in notifications(app, game_id)
               if event == "your_turn")
    told = client.get(f"/api/games/{game_id}/events", headers=auth(seats[0])).get_json()
    assert describe(told["events"][-1], ["ann", "bob"]) == (
        "The server's operator cancelled the game")
    assert describe(told["events"][-1], ["ann", "bob"], language="lo") == (
        "ຜູ້ດູແລເຊີບເວີໄດ້ຍົກເລີກເກມນີ້")
    refused = client.post(f"/api/games/{game_id}/actions", headers=auth(seats[1 - mover]),
                          json={"version": last.version + 1, "actions": ["draw"]})
    assert refused.status_code == 409
    again = admin(app, "cancel", game_id, ok=False)
    assert "cancelled already" in again.output


def test_a_seat_handed_to_a_bot_plays_at_once_when_it_is_its_turn(
        app: Flask, client: FlaskClient) -> None:
    game_id, _host, _seats = started_game(client)
    before = stored_state(app, game_id)
    absent = before.current
    refused = admin(app, "bot", game_id, str(absent), "--bot", "skynet", ok=False)
    assert "there is no bot 'skynet'" in refused.output
    assert stored_state(app, game_id) == before

    admin(app, "bot", game_id, str(absent), "--bot", "greedy")
    after = stored_state(app, game_id)
    assert after.current != absent or after.turn_no > before.turn_no
    rows = history(app, game_id)
    handed = next(row for row in rows if row.kind == "seat_handed_to_bot")
    assert (handed.seat, handed.data) == (absent, {"bot": "greedy", "by": "operator"})
    assert any(row.kind == "action" and row.seat == absent and row.seq > handed.seq
               for row in rows)
    with app.app_context():
        seat = db.session.execute(sa.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.index == absent)).scalar_one()
        assert seat.bot == "greedy"
        db.session.remove()
    twice = admin(app, "bot", game_id, str(absent), ok=False)
    assert "already" in twice.output
    no_seat = admin(app, "bot", game_id, "7", ok=False)
    assert "7" in no_seat.output


def test_a_dead_letter_is_resent_and_recorded_but_nothing_else_is(
        app: Flask, client: FlaskClient) -> None:
    game_id, _host, _seats = started_game(client)
    with_email(app, game_id, 0, "ann@example.org")
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        row = NotificationRow(game_id=game_id, seats=[0], channel="email",
                              target="ann@example.org", event="your_turn",
                              dedupe_key=f"test-dead-{game_id}", message_id="m-1",
                              payload={"kind": "your_turn"}, status="dead", attempts=8,
                              last_error="relay refused")
        sent = NotificationRow(game_id=game_id, seats=[0], channel="email",
                               target="ann@example.org", event="your_turn",
                               dedupe_key=f"test-sent-{game_id}", message_id="m-2",
                               payload={"kind": "your_turn"}, status="sent", attempts=1)
        db.session.add_all([row, sent])
        db.session.commit()
        dead_id, sent_id = row.id, sent.id
        db.session.remove()
    refused = admin(app, "resend", str(sent_id), ok=False)
    assert "is sent, not dead-lettered" in refused.output
    assert "no notification 999999" in admin(app, "resend", "999999", ok=False).output

    assert "is queued again" in admin(app, "resend", str(dead_id)).output
    with app.app_context():
        again = db.session.get(NotificationRow, dead_id)
        assert again is not None
        assert (again.status, again.attempts, again.message_id) == ("pending", 0, "m-1")
        db.session.remove()
    last = history(app, game_id)[-1]
    assert (last.kind, last.data["by"], last.data["notification"]) == (
        "notification_resent", "operator", dead_id)


def test_forgetting_an_address_and_the_figures(app: Flask, client: FlaskClient) -> None:
    game_id, _host, _seats = started_game(client)
    with_email(app, game_id, 0, "Ann@Example.org")
    with app.app_context():
        db.session.add(IdentityRow(email_key="ann@example.org", address="Ann@Example.org"))
        db.session.commit()
        db.session.remove()
    figures = json.loads(admin(app, "stats", "--json").output)
    assert figures["games"] == {"active": 1}
    assert (figures["addresses"], figures["identities"]) == (1, 1)
    assert "turns today (UTC)" in admin(app, "stats").output

    bad = admin(app, "forget", "not an address", "--yes", ok=False)
    assert "email address" in bad.output
    done = admin(app, "forget", "ann@example.org", "--yes").output
    assert "kept in 1 game(s) still in play" in done
    with app.app_context():
        assert db.session.get(IdentityRow, "ann@example.org") is None
        db.session.remove()


def test_the_installed_command_answers(app: Flask, db_url: str, tmp_path: Path) -> None:
    environment = {**os.environ, "DATABASE_URL": db_url, "SECRET_KEY": SECRET,
                   "DOS_INSTANCE_PATH": str(tmp_path / "instance"), "PYTHONPATH": PYTHONPATH}
    done = subprocess.run([DOS_SERVER, "admin", "stats", "--json"], env=environment,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == {}
    missing = subprocess.run([DOS_SERVER, "admin", "cancel", "nosuchgame"], env=environment,
                             capture_output=True, text=True, timeout=60, check=False)
    assert missing.returncode == 1
    assert "nosuchgame" in missing.stderr
    assert "Traceback" not in missing.stderr
