"""Nudges and votes by email: ``nudge``, ``nudges off``/``nudges on`` and ``vote N bot|end``
in a reply, through the real mail-in listener, answered over real SMTP."""

from __future__ import annotations

import sqlalchemy as sa
from mailtest_helpers import (
    ANN,
    BJORN,
    MailWorld,
    current,
    emails,
    latest,
    new_game,
    reply_to,
    text_of,
    write_reply,
)

from dos_server.extensions import db
from dos_server.models import SeatRow


def _say(world: MailWorld, address: str, command: str) -> str:
    """``address`` replies ``command`` to its latest email; returns the answer's text."""
    email_in = latest(world, address)
    world.send(write_reply("gmail", email_in, command, address), address, reply_to(email_in))
    world.run_worker()
    return text_of(world.sink.to(address)[-1])


def test_nudge_by_email_once_a_day_and_nudges_off(world: MailWorld) -> None:
    game_id = new_game(world)
    version, mover, _state = current(world, game_id)
    assert mover  # a person moves first in every deal of this game (the bot plays at once)
    waiter = BJORN if mover == ANN else ANN
    answer = _say(world, waiter, "Nudge")
    assert "You nudged" in answer
    assert "Your next nudge in this game is allowed at" in answer
    [nudged] = emails(world, mover, "nudge")
    assert "is waiting for your move" in str(nudged["Subject"])
    assert "nudged you: they have been waiting for your move since" in text_of(nudged)
    assert world.game(game_id)[0] == version  # the mover's emailed list is still good
    again = _say(world, waiter, "nudge")
    assert "your next nudge is allowed at" in again
    assert world.inbound()[-1] == ("rejected", "nudge-too-soon")
    assert len(emails(world, mover, "nudge")) == 1
    # The mover turns nudges off by email; a day later the waiter's nudge says so.
    assert "can no longer nudge you" in _say(world, mover, "nudges off")
    with world.app.app_context():
        db.session.execute(sa.update(SeatRow).where(SeatRow.game_id == game_id)
                           .values(last_nudged_at=None))
        db.session.commit()
        db.session.remove()
    assert "has turned nudges off" in _say(world, waiter, "nudge")
    assert world.inbound()[-1] == ("rejected", "nudges-off")
    assert "can nudge you again" in _say(world, mover, "nudges on")
    assert "You nudged" in _say(world, waiter, "nudge")
    assert len(emails(world, mover, "nudge")) == 2


def test_vote_by_email_ends_the_game_of_an_absent_player(world: MailWorld) -> None:
    game_id = new_game(world)
    _version, mover, state = current(world, game_id)
    waiter = BJORN if mover == ANN else ANN
    absent = state.current
    refused = _say(world, waiter, f"vote {absent} end")
    assert "is not absent" in refused
    assert world.inbound()[-1] == ("rejected", "not-absent")
    assert "like: vote 2 bot" in _say(world, waiter, "vote somebody maybe")
    with world.app.app_context():
        db.session.execute(sa.update(SeatRow).where(SeatRow.game_id == game_id,
                                                    SeatRow.index == absent).values(timeouts=3))
        db.session.commit()
        db.session.remove()
    name = "ann" if mover == ANN else "bjørn ødegård"
    answer = _say(world, waiter, f"vote {name} end")
    assert "Decided: the game is over" in answer
    assert world.game(game_id)[1] == "finished"
    [told] = emails(world, mover, "abandoned")
    assert "voted to end it now" in text_of(told)
    assert len(emails(world, waiter, "game_over")) == 1
