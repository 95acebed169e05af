"""Table talk by email: a ``say ...`` line in a reply posts a message, alone or with a move in
the same reply, through the real mail-in listener, answered over real SMTP."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from mailtest_helpers import (
    ANN,
    BJORN,
    STYLES,
    MailWorld,
    current,
    latest,
    new_game,
    reply_to,
    text_of,
    write_reply,
)

from dos_server.extensions import db
from dos_server.models import MessageRow, SeatRow


def _reply(world: MailWorld, address: str, command: str, style: str = "gmail") -> str:
    """``address`` replies ``command`` to its latest email; returns the answer's text."""
    email_in = latest(world, address)
    world.send(write_reply(style, email_in, command, address), address, reply_to(email_in))
    world.run_worker()
    return text_of(world.sink.to(address)[-1])


def _said(world: MailWorld, game_id: str) -> list[tuple[int | None, str]]:
    with world.app.app_context():
        rows = db.session.execute(sa.select(MessageRow.seat, MessageRow.body).where(
            MessageRow.game_id == game_id).order_by(MessageRow.id)).all()
        db.session.remove()
    return [(seat, body) for seat, body in rows]


def test_say_by_email_posts_a_message_and_changes_no_version(world: MailWorld) -> None:
    game_id = new_game(world)
    version, mover, _state = current(world, game_id)
    waiter = BJORN if mover == ANN else ANN
    seat = 0 if waiter == ANN else 1
    answer = _reply(world, waiter, "Say: Good luck, <everyone> & all!")
    assert "Said at the table: Good luck, <everyone> & all!" in answer
    assert world.inbound()[-1] == ("processed", "said")
    assert _said(world, game_id) == [(seat, "Good luck, <everyone> & all!")]
    assert world.game(game_id)[0] == version  # the mover's emailed list is still good
    help_text = _reply(world, waiter, "help")
    assert "say good game" in help_text


def test_a_move_and_a_message_in_one_reply(world: MailWorld) -> None:
    game_id = new_game(world)
    version, mover, _state = current(world, game_id)
    seat = 0 if mover == ANN else 1
    answer = _reply(world, mover, "Hi all,\n1\nsay take that")
    assert "Applied:" in answer
    assert "Said at the table: take that" in answer
    assert world.inbound()[-1] == ("processed", "applied")
    assert world.game(game_id)[0] > version
    assert _said(world, game_id) == [(seat, "take that")]


@pytest.mark.parametrize("style", STYLES)
def test_a_move_and_a_message_in_one_reply_from_every_mail_client(world: MailWorld,
                                                                   style: str) -> None:
    game_id = new_game(world)
    version, mover, _state = current(world, game_id)
    seat = 0 if mover == ANN else 1
    answer = _reply(world, mover, "1\nsay take that, <you> & all", style)
    assert "Applied:" in answer, answer
    assert world.inbound()[-1] == ("processed", "applied")
    assert world.game(game_id)[0] > version
    assert _said(world, game_id) == [(seat, "take that, <you> & all")]


def test_a_refused_move_or_message_applies_nothing_of_the_reply(world: MailWorld) -> None:
    game_id = new_game(world)
    version, mover, _state = current(world, game_id)
    waiter = BJORN if mover == ANN else ANN
    # Not the waiter's turn: the move is refused, and so is the message with it.
    refused = _reply(world, waiter, "1\nsay hello")
    assert "nothing was applied" in refused
    assert world.inbound()[-1][0] == "rejected"
    assert _said(world, game_id) == []
    # A muted seat: its say is refused and its move with it.
    with world.app.app_context():
        db.session.execute(sa.update(SeatRow).where(SeatRow.game_id == game_id)
                           .values(chat_muted=True))
        db.session.commit()
        db.session.remove()
    muted = _reply(world, mover, "1\nsay hello")
    assert "the host has muted your seat" in muted
    assert world.inbound()[-1] == ("rejected", "chat-muted")
    assert world.game(game_id)[0] == version
    assert _said(world, game_id) == []
    too_long = _reply(world, waiter, "say " + "x" * 501)
    assert "at most 500 characters" in too_long
