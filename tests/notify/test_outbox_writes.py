"""How the outbox is written: one INSERT for all the rows one notification makes, each row
complete (its own message id, pending, due), in the transaction of the change that caused it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Flask
from notify_helpers import create, player_tokens, rows

from dos_server.extensions import db
from dos_server.models import GameRow, utcnow
from dos_server.services import notify, play
from testkit import sent_statements

PEOPLE = [{"name": "ann", "email": "ann@example.org"}, {"name": "bob", "email": "bob@example.org"},
          {"name": "cy", "email": "cy@example.org"}]


def outbox_inserts(sent: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The INSERTs into the outbox among ``sent``."""
    return [(statement, parameters) for statement, parameters in sent
            if statement.lstrip().upper().startswith("INSERT INTO NOTIFICATIONS")]


def test_one_insert_writes_every_row_of_a_notification(mail_app: Flask) -> None:
    client = mail_app.test_client()
    game = create(client, PEOPLE)
    player_tokens(client, game)
    before = len(rows(mail_app))
    due = utcnow() + timedelta(hours=2)
    with mail_app.app_context():
        row = db.session.get(GameRow, game["id"])
        assert row is not None
        state = play.engine_state(row)
        with sent_statements() as sent:
            written = notify.enqueue(row, "round_over", list(row.seats), state, {}, key="r1",
                                     due=due)
        db.session.commit()
    assert written == 3
    # one statement (several rows: executemany or one VALUES list)
    assert len(outbox_inserts(sent)) == 1, sent
    made = rows(mail_app)[before:]
    assert sorted(r.target for r in made) == sorted(p["email"] for p in PEOPLE)
    assert len({r.message_id for r in made}) == 3
    assert {r.status for r in made} == {"pending"}
    assert {r.attempts for r in made} == {0}
    assert all(abs((r.next_attempt_at - due).total_seconds()) < 1 for r in made)
    assert all(r.created_at is not None and r.created_at <= utcnow() for r in made)
    assert {r.dedupe_key for r in made} == {f"{game['id']}:r1:round_over:email:{i}"
                                            for i in range(3)}


def test_a_rolled_back_change_leaves_no_outbox_row(mail_app: Flask) -> None:
    client = mail_app.test_client()
    game = create(client, PEOPLE)
    before = len(rows(mail_app))
    with mail_app.app_context():
        row = db.session.get(GameRow, game["id"])
        assert row is not None
        notify.enqueue(row, "round_over", list(row.seats), play.engine_state(row), {}, key="r2")
        db.session.rollback()
    assert len(rows(mail_app)) == before


def test_nothing_to_send_sends_no_statement(mail_app: Flask) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann"}, {"name": "bob"}])  # no address, no webhook
    with mail_app.app_context():
        row = db.session.get(GameRow, game["id"])
        assert row is not None
        with sent_statements() as sent:
            assert notify.enqueue(row, "round_over", list(row.seats), play.engine_state(row),
                                  {}, key="r3") == 0
        db.session.rollback()
    assert outbox_inserts(sent) == []
