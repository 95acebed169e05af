"""Play by email, intake: a message stored but not yet processed when the process
stops is applied once, by the worker or at the next start, never twice; and the LMTP listener
applies and answers like the SMTP one."""

from __future__ import annotations

import smtplib
from datetime import datetime, timedelta

import pytest
from mailtest_helpers import (
    MailWorld,
    current,
    emails,
    latest,
    new_game,
    reply_to,
    text_of,
    write_reply,
)

from dos_server import worker
from dos_server.extensions import db
from dos_server.mailin import make_controller
from dos_server.models import utcnow
from dos_server.services import inbound
from testkit import listen


def _worker_pass_later(world: MailWorld, seconds: float = 3600) -> int:
    """One worker pass with the clock moved on, so rows left 'received' are due for a retry."""
    later = utcnow() + timedelta(seconds=seconds)
    with world.app.app_context():
        delivered = worker.run_once(lambda: later)
        db.session.remove()
    return delivered


# -- 1. a crash between receipt and processing ----------------------------------------------------


def test_stored_but_unprocessed_message_is_applied_once_by_the_worker(world: MailWorld) -> None:
    game_id = new_game(world)
    version, address, _ = current(world, game_id)
    events = world.event_count(game_id)
    email_in = latest(world, address)
    raw = bytes(write_reply("qp", email_in, "1", address))
    with world.app.app_context():  # received, then the process "crashed" before processing
        stored = inbound.store(raw, "smtp", address, [reply_to(email_in)])
        db.session.remove()
    assert not stored.duplicate
    assert world.inbound() == [("received", None)]
    world.run_worker()  # not due yet: a message being processed right now is left alone
    assert world.inbound() == [("received", None)]
    assert world.game(game_id)[0] == version
    replies_before = len(emails(world, address, "mail_reply"))
    _worker_pass_later(world)  # processes the row (the answer is queued)
    assert world.inbound() == [("processed", "applied")]
    assert world.game(game_id)[0] > version
    applied_version = world.game(game_id)[0]
    applied_events = world.event_count(game_id)
    assert applied_events > events
    assert world.replies() == 1
    _worker_pass_later(world)  # sends the answer
    _worker_pass_later(world)  # and again: nothing more
    assert world.inbound() == [("processed", "applied")]
    assert world.game(game_id)[0] == applied_version
    assert world.event_count(game_id) == applied_events
    assert world.replies() == 1
    answers = emails(world, address, "mail_reply")
    assert len(answers) == replies_before + 1
    assert "Applied: " in text_of(answers[-1])
    # The same message delivered again after all that: a duplicate, not applied again.
    world.send(raw, address, reply_to(email_in))
    assert len(world.inbound()) == 1
    assert world.game(game_id)[0] == applied_version


def test_processing_crash_during_smtp_delivery_is_recovered(
        world: MailWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    game_id = new_game(world)
    version, address, _ = current(world, game_id)
    email_in = latest(world, address)
    real_process = inbound.process
    calls: list[int] = []

    def crash_once(row_id: int, now: datetime | None = None) -> str:
        calls.append(row_id)
        if len(calls) == 1:
            raise ConnectionError("the database went away")
        return real_process(row_id, now)

    monkeypatch.setattr(inbound, "process", crash_once)
    message = write_reply("gmail", email_in, "1", address)
    world.send(message, address, reply_to(email_in))  # 250: stored, so never bounced
    assert calls
    assert world.inbound() == [("received", None)]
    assert world.game(game_id)[0] == version
    world.send(message, address, reply_to(email_in))  # the sender retries: a duplicate
    assert len(calls) == 1
    assert len(world.inbound()) == 1
    with world.app.app_context():  # what `mail-in` does when it starts again
        assert inbound.process_pending(older_than=0) == 1
        assert inbound.process_pending(older_than=0) == 0
        db.session.remove()
    assert world.inbound() == [("processed", "applied")]
    applied = world.game(game_id)[0]
    assert applied > version
    _worker_pass_later(world)
    _worker_pass_later(world)
    assert world.game(game_id)[0] == applied
    assert world.replies() == 1
    answers = emails(world, address, "mail_reply")
    assert len(answers) == 1
    assert answers[0]["In-Reply-To"] == message["Message-ID"]
    assert "Applied: " in text_of(answers[0])


# -- 2. LMTP -----------------------------------------------------------------------------------


def test_lmtp_listener_applies_and_answers(world: MailWorld) -> None:
    game_id = new_game(world)
    version, address, _ = current(world, game_id)
    email_in = latest(world, address)
    listener = listen(lambda port: make_controller(world.app, "127.0.0.1", port, lmtp=True))
    try:
        with smtplib.LMTP("127.0.0.1", listener.port) as lmtp:
            code, _ = lmtp.ehlo()  # smtplib's LMTP sends LHLO
            assert code == 250
            refused = lmtp.send_message(write_reply("base64", email_in, "1", address), address,
                                        [reply_to(email_in)])
            assert refused == {}
            with pytest.raises(smtplib.SMTPRecipientsRefused):  # not a play+ address
                lmtp.sendmail(address, ["someone@elsewhere.example"], b"Subject: x\r\n\r\n1\r\n")
    finally:
        listener.stop()
    assert world.inbound() == [("processed", "applied")]
    assert world.game(game_id)[0] > version
    world.run_worker()
    answer = world.sink.to(address)[-1]
    assert answer["X-DOS-Event"] == "mail_reply"
    assert "Applied: " in text_of(answer)
