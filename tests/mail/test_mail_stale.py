"""The answer to a stale numbered reply (the email's list is out of date): nothing is applied,
and the answer says what to do next. Someone else's turn now: whose, and that an email comes
when it is the reader's (no "reply with your choice" over an email that lists no moves). The
reader's turn still (or again): the new list, to answer instead."""

from __future__ import annotations

import pytest
from mailtest_helpers import (
    ANN,
    BJORN,
    MailWorld,
    current,
    emails,
    latest,
    moves_of,
    new_game,
    reply_to,
    text_of,
    token_version,
    write_reply,
)

from dos_engine import Game

TRIES = 60  # games created at most to find a position a test needs
NAMES = {ANN: "Ann", BJORN: "Bjørn Ødegård"}


def _keeps_turn(state: Game) -> int | None:
    """The number (1-based) of a listed move after which the same seat is still to move."""
    seat = state.current
    for number, action in enumerate(state.legal_actions(seat), start=1):
        after = state.copy()
        after.play(action, seat)
        if after.current == seat and not after.is_over and after.legal_actions(seat):
            return number
    return None


def test_stale_number_when_another_seat_is_to_move_says_whose_turn(world: MailWorld) -> None:
    game_id = new_game(world)
    version, to_move, _state = current(world, game_id)
    waiting = BJORN if to_move == ANN else ANN  # a person whose turn it is not
    invitation = emails(world, waiting, "invited")[-1]  # its version is from before the start
    assert token_version(reply_to(invitation)) < version
    events = world.event_count(game_id)
    world.send(write_reply("gmail", invitation, "1", waiting), waiting, reply_to(invitation))
    assert world.inbound()[-1] == ("rejected", "stale")
    world.run_worker()
    answer = world.sink.to(waiting)[-1]
    body = text_of(answer)
    whose = NAMES.get(to_move, "greedy-bot-2")
    assert "nothing was applied" in body
    assert f"It is {whose}'s turn now: you will get an email when it is yours" in body, body
    assert "reply to THIS email with your choice" not in body
    assert "Your moves:" not in body
    assert moves_of(answer) == []
    assert "Reply to this email with show, moves, history, resign or help." in body
    assert world.game(game_id)[0] == version
    assert world.event_count(game_id) == events


def test_stale_number_when_still_the_readers_turn_gives_the_new_list(world: MailWorld) -> None:
    for _ in range(TRIES):
        game_id = new_game(world)
        version, address, state = current(world, game_id)
        number = _keeps_turn(state)
        if address and number is not None:
            break
    else:
        pytest.fail(f"no position with a move that keeps the turn in {TRIES} games")
    old = latest(world, address)
    assert token_version(reply_to(old)) == version
    world.send(write_reply("outlook", old, str(number), address), address, reply_to(old))
    assert world.inbound()[-1] == ("processed", "applied")
    world.run_worker()
    fresh = world.sink.to(address)[-1]
    moved, now, _state = current(world, game_id)
    assert now == address
    assert moved > version
    world.send(write_reply("gmail", old, "1", address), address, reply_to(old))
    assert world.inbound()[-1] == ("rejected", "stale")
    world.run_worker()
    answer = world.sink.to(address)[-1]
    body = text_of(answer)
    assert "Here is the new table and list: reply to THIS email with your choice." in body
    assert "turn now: you will get an email" not in body
    assert token_version(reply_to(answer)) == moved
    assert moves_of(answer) == moves_of(fresh) != []
    assert world.game(game_id)[0] == moved
