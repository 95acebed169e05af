"""Play by email, turns: ambiguous shorthand is answered with the candidates, an
answer from an email gone stale applies nothing, and a turn by email notifies the next seat."""

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
from dos_engine.actions import Draw, End
from dos_engine.errors import AmbiguousActionError, DosError

TRIES = 60  # games created at most to find a position a test needs


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


# -- 1. ambiguous notation --------------------------------------------------------------------


def test_ambiguous_shorthand_lists_the_candidates_and_changes_nothing(world: MailWorld) -> None:
    for _ in range(TRIES):
        game_id = new_game(world)
        version, address, state = current(world, game_id)
        found = _ambiguous(state)
        if address and found:
            break
    else:
        pytest.fail(f"no position with ambiguous shorthand in {TRIES} games")
    shorthand, candidates = found
    assert len(candidates) > 1
    events = world.event_count(game_id)
    email_in = latest(world, address)
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


# -- 2. the other seats' notifications ----------------------------------------------------------


def test_a_turn_by_email_notifies_the_other_human_seat(world: MailWorld) -> None:
    game_id = new_game(world)
    _, address, _ = current(world, game_id)
    other = BJORN if address == ANN else ANN
    before = len(emails(world, other, "your_turn"))
    replies = len(emails(world, address, "mail_reply"))
    for _ in range(10):  # draw, then end: one email per action, each to the latest email
        version, now, state = current(world, game_id)
        if now != address:
            break
        legal = state.legal_actions(state.current)
        action = next((a for a in legal if isinstance(a, End)),
                      next((a for a in legal if isinstance(a, Draw)), legal[0]))
        email_in = latest(world, address)
        world.send(write_reply("gmail", email_in, action.text(), address), address,
                   reply_to(email_in))
        assert world.inbound()[-1] == ("processed", "applied"), action.text()
        world.run_worker()
    else:
        pytest.fail("the turn did not end")
    version, now, state = current(world, game_id)
    assert now == other
    assert not state.is_over
    sent = len(world.inbound())
    assert len(emails(world, address, "mail_reply")) == replies + sent
    notified = emails(world, other, "your_turn")
    assert len(notified) == before + 1
    assert token_version(reply_to(notified[-1])) == version
    assert moves_of(notified[-1]) == [a.text() for a in state.legal_actions(state.current)][
        :len(moves_of(notified[-1]))]
    # ... and it can be answered like any other: the other seat plays by email too.
    world.send(write_reply("outlook", notified[-1], "1", other), other, reply_to(notified[-1]))
    assert world.inbound()[-1] == ("processed", "applied")
    assert world.game(game_id)[0] > version


# -- 3. a stale email answered by notation -------------------------------------------------------


def test_stale_email_answered_by_notation_applies_nothing(world: MailWorld) -> None:
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
    world.send(write_reply("gmail", old, str(number), address), address, reply_to(old))
    assert world.inbound()[-1] == ("processed", "applied")
    world.run_worker()
    fresh = world.sink.to(address)[-1]
    moved, now, state = current(world, game_id)
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
