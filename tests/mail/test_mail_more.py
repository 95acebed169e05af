"""Play by email (issue #6), more: ambiguous notation, a crash between receipt and processing,
LMTP, the other seats' notifications, and a stale email answered by notation."""

from __future__ import annotations

import smtplib
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

import pytest
from mailtest_helpers import (
    MailWorld,
    free_port,
    moves_of,
    reply_to,
    text_of,
    token_version,
    write_reply,
)

from dos_engine import Game
from dos_engine.actions import Draw, End
from dos_engine.errors import AmbiguousActionError, DosError
from dos_server import worker
from dos_server.extensions import db
from dos_server.mailin import make_controller
from dos_server.models import utcnow
from dos_server.services import inbound

ANN, BJORN = "ann@example.org", "bjorn@example.org"
SEATS = [{"name": "Ann", "email": ANN}, {"name": "Bjørn Ødegård", "email": BJORN},
         {"bot": "greedy"}]
TRIES = 60  # games created at most to find a position a test needs


def _new_game(world: MailWorld) -> str:
    game_id = world.create(SEATS)
    world.run_worker()
    return game_id


def _latest(world: MailWorld, address: str) -> EmailMessage:
    messages = [m for m in world.sink.to(address) if m["Reply-To"]]
    assert messages, f"no email with a reply address reached {address}"
    return messages[-1]


def _current(world: MailWorld, game_id: str) -> tuple[int, str, Game]:
    version, _, state = world.game(game_id)
    return version, [ANN, BJORN, ""][state.current], state


def _events(world: MailWorld, address: str, event: str) -> list[EmailMessage]:
    return [m for m in world.sink.to(address) if m["X-DOS-Event"] == event]


def _ambiguous(state: Game) -> tuple[str, list[str]] | None:
    """Shorthand the seat to move could write that fits several legal actions, and those."""
    seat = state.current
    shorthands = sorted({card.code for card in state.hands[seat]})
    shorthands += [f"m{position}" for position in range(1, 9)]
    for text in shorthands:
        try:
            state.parse_turn(text, seat)
        except AmbiguousActionError as error:
            return text, [action.text() for action in error.candidates]
        except DosError:
            continue
    return None


def _keeps_turn(state: Game) -> int | None:
    """The number (1-based) of a listed move after which the same seat is still to move."""
    seat = state.current
    for number, action in enumerate(state.legal_actions(seat), start=1):
        after = state.copy()
        after.play(action, seat)
        if after.current == seat and not after.is_over and after.legal_actions(seat):
            return number
    return None


def _worker_pass_later(world: MailWorld, seconds: float = 3600) -> int:
    """One worker pass with the clock moved on, so rows left 'received' are due for a retry."""
    later = utcnow() + timedelta(seconds=seconds)
    with world.app.app_context():
        delivered = worker.run_once(lambda: later)
        db.session.remove()
    return delivered


# -- 1. ambiguous notation --------------------------------------------------------------------


def test_ambiguous_shorthand_lists_the_candidates_and_changes_nothing(world: MailWorld) -> None:
    for _ in range(TRIES):
        game_id = _new_game(world)
        version, address, state = _current(world, game_id)
        found = _ambiguous(state)
        if address and found:
            break
    else:
        pytest.fail(f"no position with ambiguous shorthand in {TRIES} games")
    shorthand, candidates = found
    assert len(candidates) > 1
    events = world.event_count(game_id)
    email_in = _latest(world, address)
    world.send(write_reply("gmail", email_in, shorthand, address), address, reply_to(email_in))
    assert world.inbound()[-1] == ("rejected", "ambiguous-action")
    world.run_worker()
    answer = world.sink.to(address)[-1]
    assert answer["X-DOS-Event"] == "mail_reply"
    body = text_of(answer)
    assert "Nothing was changed" in body
    assert "It could mean: " + ", ".join(candidates) + "." in body, body
    assert moves_of(answer) == moves_of(email_in)  # the same list: nothing moved
    assert token_version(reply_to(answer)) == version
    assert world.game(game_id)[0] == version
    assert world.event_count(game_id) == events
    # One of the candidates, as written in the answer, is applied.
    world.send(write_reply("outlook", answer, candidates[0], address), address, reply_to(answer))
    assert world.inbound()[-1] == ("processed", "applied")
    world.run_worker()
    assert f"Applied: {candidates[0]}" in text_of(world.sink.to(address)[-1])
    assert world.game(game_id)[0] > version


# -- 2. a crash between receipt and processing ----------------------------------------------------


def test_stored_but_unprocessed_message_is_applied_once_by_the_worker(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address, _ = _current(world, game_id)
    events = world.event_count(game_id)
    email_in = _latest(world, address)
    raw = bytes(write_reply("qp", email_in, "1", address))
    with world.app.app_context():  # received, then the process "crashed" before processing
        stored = inbound.store(raw, "smtp", address, [reply_to(email_in)])
        db.session.remove()
    assert not stored.duplicate
    assert world.inbound() == [("received", None)]
    world.run_worker()  # not due yet: a message being processed right now is left alone
    assert world.inbound() == [("received", None)]
    assert world.game(game_id)[0] == version
    replies_before = len(_events(world, address, "mail_reply"))
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
    answers = _events(world, address, "mail_reply")
    assert len(answers) == replies_before + 1
    assert "Applied: " in text_of(answers[-1])
    # The same message delivered again after all that: a duplicate, not applied again.
    world.send(raw, address, reply_to(email_in))
    assert len(world.inbound()) == 1
    assert world.game(game_id)[0] == applied_version


def test_processing_crash_during_smtp_delivery_is_recovered(
        world: MailWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    game_id = _new_game(world)
    version, address, _ = _current(world, game_id)
    email_in = _latest(world, address)
    real_process = inbound.process
    calls: list[int] = []

    def crash_once(row_id: int, *args: Any) -> str:
        calls.append(row_id)
        if len(calls) == 1:
            raise ConnectionError("the database went away")
        return real_process(row_id, *args)

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
    answers = _events(world, address, "mail_reply")
    assert len(answers) == 1
    assert answers[0]["In-Reply-To"] == message["Message-ID"]
    assert "Applied: " in text_of(answers[0])


# -- 3. LMTP -----------------------------------------------------------------------------------


def test_lmtp_listener_applies_and_answers(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address, _ = _current(world, game_id)
    email_in = _latest(world, address)
    listener = make_controller(world.app, "127.0.0.1", free_port(), lmtp=True)
    listener.start()
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


# -- 4. the other seats' notifications ----------------------------------------------------------


def test_a_turn_by_email_notifies_the_other_human_seat(world: MailWorld) -> None:
    game_id = _new_game(world)
    _, address, _ = _current(world, game_id)
    other = BJORN if address == ANN else ANN
    before = len(_events(world, other, "your_turn"))
    replies = len(_events(world, address, "mail_reply"))
    for _ in range(10):  # draw, then end: one email per action, each to the latest email
        version, now, state = _current(world, game_id)
        if now != address:
            break
        legal = state.legal_actions(state.current)
        action = next((a for a in legal if isinstance(a, End)),
                      next((a for a in legal if isinstance(a, Draw)), legal[0]))
        email_in = _latest(world, address)
        world.send(write_reply("gmail", email_in, action.text(), address), address,
                   reply_to(email_in))
        assert world.inbound()[-1] == ("processed", "applied"), action.text()
        world.run_worker()
    else:
        pytest.fail("the turn did not end")
    version, now, state = _current(world, game_id)
    assert now == other
    assert not state.is_over
    sent = len(world.inbound())
    assert len(_events(world, address, "mail_reply")) == replies + sent
    notified = _events(world, other, "your_turn")
    assert len(notified) == before + 1
    assert token_version(reply_to(notified[-1])) == version
    assert moves_of(notified[-1]) == [a.text() for a in state.legal_actions(state.current)][
        :len(moves_of(notified[-1]))]
    # ... and it can be answered like any other: the other seat plays by email too.
    world.send(write_reply("outlook", notified[-1], "1", other), other, reply_to(notified[-1]))
    assert world.inbound()[-1] == ("processed", "applied")
    assert world.game(game_id)[0] > version


# -- 5. a stale email answered by notation -------------------------------------------------------


def test_stale_email_answered_by_notation_applies_nothing(world: MailWorld) -> None:
    for _ in range(TRIES):
        game_id = _new_game(world)
        version, address, state = _current(world, game_id)
        number = _keeps_turn(state)
        if address and number is not None:
            break
    else:
        pytest.fail(f"no position with a move that keeps the turn in {TRIES} games")
    old = _latest(world, address)
    assert token_version(reply_to(old)) == version
    world.send(write_reply("gmail", old, str(number), address), address, reply_to(old))
    assert world.inbound()[-1] == ("processed", "applied")
    world.run_worker()
    fresh = world.sink.to(address)[-1]
    moved, now, state = _current(world, game_id)
    assert moved > version
    assert now == address
    events = world.event_count(game_id)
    legal_now = state.legal_actions(state.current)
    notation = legal_now[0].text()  # legal now: only the stale token stops it
    world.send(write_reply("html", old, notation, address), address, reply_to(old))
    assert world.inbound()[-1] == ("rejected", "stale")
    world.run_worker()
    answer = world.sink.to(address)[-1]
    body = text_of(answer)
    assert f"showed version {version}" in body, body
    assert f"now at version {moved}" in body
    assert "nothing was applied" in body
    assert "Applied:" not in body
    assert token_version(reply_to(answer)) == moved  # the new list, to answer instead
    assert moves_of(answer) == moves_of(fresh)
    assert moves_of(answer)
    assert world.game(game_id)[0] == moved
    assert world.event_count(game_id) == events
    # Answering the new email with the same notation works.
    world.send(write_reply("gmail", answer, notation, address), address, reply_to(answer))
    assert world.inbound()[-1] == ("processed", "applied")
    assert world.game(game_id)[0] > moved
