"""Archiving a game people played by email and webhook: the outbox and the inbound
messages are slimmed, and everything that reads them after the game ends works as before."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from email.message import EmailMessage
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import auth

from dos_server import worker
from dos_server.database import write_transaction
from dos_server.delivery import DeliveryError
from dos_server.delivery.mail import dispatch as email_delivery
from dos_server.extensions import db
from dos_server.models import (
    DeliveryAttemptRow,
    GameRow,
    InboundMessageRow,
    NotificationRow,
    utcnow,
)
from dos_server.services import access, account, archive, inbound, lobby, play
from testkit import MAIL_DOMAIN, reply_to, write_reply

ANN = "ann@example.org"
HOOK = "http://127.0.0.1:9/hooks/hal"
SEATS = [lobby.SeatSpec(name="ann", email=ANN), lobby.SeatSpec(name="hal", webhook_url=HOOK),
         lobby.SeatSpec(bot="random"), lobby.SeatSpec(bot="greedy")]


class Post:
    """The worker's senders: emails are built and kept; webhooks fail as told, once each."""

    def __init__(self) -> None:
        self.mail: list[EmailMessage] = []
        self.hooks: list[dict[str, Any]] = []
        self.fail: dict[str, DeliveryError] = {}  # webhook type -> its next attempt's error
        self.clock = utcnow()

    def email(self, target: str, payload: dict[str, Any], message_id: str,
              timeout: float | None = None) -> None:
        self.mail.append(email_delivery.build(payload, message_id))

    def webhook(self, target: str, payload: dict[str, Any], message_id: str,
                timeout: float | None = None) -> None:
        failure = self.fail.pop(payload["type"], None)
        if failure is not None:
            raise failure
        self.hooks.append(payload)

    def now(self) -> datetime:
        return self.clock

    def deliver_due(self) -> None:
        """One worker pass over what is due now."""
        self.clock = max(self.clock, utcnow())
        for notification_id in worker.claim(self.clock, limit=500):
            worker.deliver(notification_id, self.now)

    def deliver_all(self) -> None:
        """Until nothing is pending: the clock moves on to each retry."""
        while True:
            due = db.session.execute(sa.select(sa.func.min(NotificationRow.next_attempt_at))
                                     .where(NotificationRow.status == "pending")).scalar()
            db.session.rollback()
            if due is None:
                return
            self.clock = max(self.clock, due)
            self.deliver_due()

    def answerable(self) -> EmailMessage | None:
        found = [m for m in self.mail if m["Reply-To"]]
        return found[-1] if found else None


def _reply(post: Post, number: int) -> tuple[bytes, str]:
    """Ann's reply to her latest email, as her mail client writes it; and its recipient."""
    last = post.answerable()
    assert last is not None
    return write_reply("gmail", last, str(number), ANN, "Ann").as_bytes(), reply_to(last)


def _finished_by_mail(app: Flask, post: Post) -> str:
    """Ann plays by replying to her emails, hal by API with a webhook, two bots; the game
    ends with its game_over webhook failed once (so still pending, due again soon), a
    round_over webhook dead (a permanent failure), a your_turn webhook sent on the second
    attempt, and one email of Ann's rejected (a stale reply).

    The deal is random: a game that ends before Ann's stale reply could be sent (one short
    round can reach the target) is deleted with all its rows, and a new one is played."""
    for _ in range(20):
        played, complete = _played_by_mail(app, post)
        if complete:
            return played
        with app.app_context(), write_transaction():  # seats, events, outbox: by cascade
            db.session.execute(sa.delete(InboundMessageRow)
                               .where(InboundMessageRow.game_id == played))
            db.session.execute(sa.delete(GameRow).where(GameRow.id == played))
        post.mail.clear()
        post.hooks.clear()
    pytest.fail("20 games in a row ended before Ann's stale reply could be sent")


def _played_by_mail(app: Flask, post: Post) -> tuple[str, bool]:
    """One game of :func:`_finished_by_mail`: its id, and whether the stale reply was sent."""
    post.fail = {"game.your_turn": DeliveryError("HTTP 503", status=503),
                 "game.round_over": DeliveryError("HTTP 400", status=400, permanent=True),
                 "game.game_over": DeliveryError("HTTP 502", status=502)}
    rng = random.Random(7)
    with app.app_context():
        created = lobby.create_game(lobby.NewGame(SEATS, {"target_score": 40}))
        game_id = created.game.id
        lobby.start_now(game_id, created.host_token)  # Ann plays from her emails
        stale: tuple[bytes, str] | None = None
        while True:
            game = access.get_game(game_id)
            if game.status != "active":
                break
            post.deliver_all()
            game = access.get_game(game_id)
            state = access.engine_state(game)
            number = rng.randrange(len(state.legal_actions(state.current))) + 1
            db.session.rollback()
            if state.current == 0 and post.answerable() is not None:
                raw, rcpt = _reply(post, number)
                stored = inbound.store(raw, "smtp", ANN, [rcpt])
                assert inbound.process(stored.id) == "processed"
                if stale is None:
                    stale = _reply(post, 1)  # to the answer; sent after hal has moved
            else:
                with write_transaction():
                    game = access.get_game(game_id, for_update=True)
                    play.apply_turn(game, state.current, game.version, None, number)
                if stale is not None and stale[0]:
                    stored = inbound.store(stale[0], "smtp", ANN, [stale[1]])
                    assert inbound.process(stored.id) == "rejected"
                    stale = (b"", "")
            db.session.remove()
        post.deliver_due()  # game_over: the email goes, the webhook fails once
        db.session.remove()
    return game_id, stale == (b"", "")


def _rows(app: Flask, game_id: str) -> dict[str, Any]:
    """Every outbox, attempt and inbound row of the game, as plain values."""
    with app.app_context():
        notes = db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.game_id == game_id).order_by(NotificationRow.id)).scalars().all()
        ids = [n.id for n in notes]
        attempts = db.session.execute(sa.select(DeliveryAttemptRow).where(
            DeliveryAttemptRow.notification_id.in_(ids)).order_by(DeliveryAttemptRow.id)
        ).scalars().all()
        messages = db.session.execute(sa.select(InboundMessageRow).where(
            InboundMessageRow.game_id == game_id).order_by(InboundMessageRow.id)).scalars().all()
        out = {
            "notifications": {n.id: {c: getattr(n, c) for c in (
                "seats", "channel", "target", "event", "dedupe_key", "message_id", "payload",
                "status", "attempts", "next_attempt_at", "last_error", "created_at", "sent_at")}
                for n in notes},
            "attempts": [(a.id, a.notification_id, a.ok, a.status_code, a.error) for a in attempts],
            "inbound": {m.id: {c: getattr(m, c) for c in (
                "dedupe_key", "message_id", "mail_from", "rcpt_to", "raw", "size", "status",
                "outcome", "seat", "received_at", "processed_at")} for m in messages},
        }
        db.session.remove()
    return out


def _export(client: FlaskClient, app: Flask) -> dict[str, Any]:
    with app.app_context(), write_transaction():
        token = account._sign_in([], ANN, utcnow(), None, "api")["account_token"]
    response = client.get("/api/me/export", headers=auth(token))
    assert response.status_code == 200, response.get_data(as_text=True)
    body = dict(response.get_json())
    return {"emails": body["emails"], "emails_received": body["emails_received"]}


def _reads(client: FlaskClient, game_id: str) -> dict[str, Any]:
    return {"game": client.get(f"/api/games/{game_id}").get_json(),
            "events": client.get(f"/api/games/{game_id}/events?limit=500").get_json(),
            "record": client.get(f"/api/games/{game_id}/record").get_json(),
            "web": client.get(f"/games/{game_id}/history").get_data(as_text=True)}


def _archive(app: Flask) -> int:
    with app.app_context():
        done = archive.archive_due(utcnow() + timedelta(days=30))
        db.session.remove()
    return done


@pytest.fixture
def mail_app(make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> tuple[Flask, Post]:
    post = Post()
    monkeypatch.setitem(worker.SENDERS, "email", post.email)
    monkeypatch.setitem(worker.SENDERS, "webhook", post.webhook)
    return make_app(MAIL_DOMAIN=MAIL_DOMAIN), post


def test_archiving_slims_the_mail_and_every_read_still_works(
        mail_app: tuple[Flask, Post]) -> None:
    app, post = mail_app
    client = app.test_client()
    game_id = _finished_by_mail(app, post)
    # A reply that arrived but is not processed yet: the archive pass leaves it alone.
    late, late_rcpt = _reply(post, 1)
    with app.app_context():
        waiting = inbound.store(late, "smtp", ANN, [late_rcpt])
        db.session.remove()
    before = _rows(app, game_id)
    notes = before["notifications"]
    statuses = sorted({n["status"] for n in notes.values()})
    assert statuses == ["dead", "pending", "sent"], statuses
    pending = [i for i, n in notes.items() if n["status"] == "pending"]
    assert len(pending) == 1
    assert notes[pending[0]]["event"] == "game_over"
    assert notes[pending[0]]["channel"] == "webhook"
    handled = [i for i, m in before["inbound"].items() if m["status"] in archive.HANDLED]
    assert {before["inbound"][i]["status"] for i in handled} == {"processed", "rejected"}
    exported, reads = _export(client, app), _reads(client, game_id)
    assert len(exported["emails"]) > 5
    assert len(exported["emails_received"]) == len(before["inbound"]) + 1  # + the waiting one

    # The worker's pass waits for the game_over webhook being retried ...
    assert _archive(app) == 0
    # ... and a row that became pending after the pass saw none (a race) is not touched.
    with app.app_context(), write_transaction():
        assert archive.archive_game(access.get_game(game_id, for_update=True)) is True
    after = _rows(app, game_id)
    # Outbox: the same rows; settled ones without their payload; a sent row's attempts gone,
    # a dead row's and the pending row's kept; the pending row exactly as it was.
    assert after["notifications"].keys() == notes.keys()
    for note_id, note in notes.items():
        kept = after["notifications"][note_id]
        if note["status"] == "pending":
            assert kept == note
        else:
            assert kept == {**note, "payload": {}}
    kept_for = {"dead", "pending"}
    assert after["attempts"] == [a for a in before["attempts"]
                                 if notes[a[1]]["status"] in kept_for]
    assert any(notes[a[1]]["status"] == "dead" for a in after["attempts"])
    # Inbound: handled messages keep everything but their bytes; the waiting one keeps them.
    assert after["inbound"].keys() == before["inbound"].keys()
    for message_id, message in before["inbound"].items():
        if message_id in handled:
            assert after["inbound"][message_id] == {**message, "raw": b""}
            assert message["size"] == len(message["raw"]) > 0
        else:
            assert after["inbound"][message_id] == message
    with app.app_context():
        unread = db.session.get(InboundMessageRow, waiting.id)
        assert unread is not None
        assert unread.raw == late  # its game is not known yet: it is left as it is
        db.session.remove()
    # Every read answers as before: the export lists the same emails, the game the same.
    assert _export(client, app) == exported
    assert _reads(client, game_id) == reads

    with app.app_context():
        # A late duplicate of a handled message is still recognized (its raw bytes are gone).
        first = before["inbound"][handled[0]]
        again = inbound.store(first["raw"], "smtp", ANN, first["rcpt_to"])
        assert again.duplicate
        assert again.id == handled[0]
        # The pending webhook is still delivered, with its whole payload.
        post.clock = utcnow() + timedelta(hours=1)
        post.deliver_due()
        # The reply that waited is answered: the game is over.
        assert inbound.process(waiting.id) == "rejected"
        db.session.remove()
    assert post.hooks[-1]["type"] == "game.game_over"
    assert post.hooks[-1] == notes[pending[0]]["payload"]
    final = _rows(app, game_id)
    assert final["notifications"][pending[0]]["status"] == "sent"
    assert final["notifications"][pending[0]]["payload"] == notes[pending[0]]["payload"]
    assert len(final["inbound"]) == len(before["inbound"]) + 1  # the one that waited


def test_archiving_a_mailed_game_twice_changes_nothing(mail_app: tuple[Flask, Post]) -> None:
    app, post = mail_app
    game_id = _finished_by_mail(app, post)
    assert _archive(app) == 0  # its game_over webhook is still due
    with app.app_context():
        post.deliver_all()
        db.session.remove()
    assert _archive(app) == 1
    archived = _rows(app, game_id)
    assert {n["status"] for n in archived["notifications"].values()} == {"sent", "dead"}
    assert all(n["payload"] == {} for n in archived["notifications"].values())
    assert all(m["raw"] == b"" for m in archived["inbound"].values())
    assert _archive(app) == 0
    with app.app_context():
        game = db.session.execute(sa.select(GameRow).where(GameRow.id == game_id)
                                  .with_for_update()).scalar_one()
        assert archive.archive_game(game) is False
        db.session.commit()
        db.session.remove()
    assert _rows(app, game_id) == archived
