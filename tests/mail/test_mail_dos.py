"""The DOS call and catches by email (RULES.md 5): ``dos`` and ``catch NAME`` in a reply, in or
out of turn, go through the same notation as every other move."""

from __future__ import annotations

from email.message import EmailMessage

from mailtest_helpers import MailWorld, reply_to, text_of, write_reply

from dos_call_helpers import waiting_seat_holds_two

ANN, BJORN = "ann@example.org", "bjorn@example.org"
ADDRESSES = [ANN, BJORN]


def _latest(world: MailWorld, address: str) -> EmailMessage:
    messages = [m for m in world.sink.to(address) if m["Reply-To"]]
    assert messages, f"no email with a reply address reached {address}"
    return messages[-1]


def _reply(world: MailWorld, address: str, command: str) -> str:
    """Reply to the newest email (after asking for the table, so its version is current)."""
    world.send(write_reply("gmail", _latest(world, address), "show", address), address,
               reply_to(_latest(world, address)))
    world.run_worker()
    email_in = _latest(world, address)
    world.send(write_reply("gmail", email_in, command, address), address, reply_to(email_in))
    world.run_worker()
    return text_of(world.sink.to(address)[-1])


def test_5_dos_and_catch_by_email(world: MailWorld) -> None:
    game_id = world.create([{"name": "Ann", "email": ANN}, {"name": "Bjorn", "email": BJORN}],
                           dos_call=True)
    world.run_worker()
    waiting, current = waiting_seat_holds_two(world.app, game_id)
    answer = _reply(world, ADDRESSES[current], f"catch {['Ann', 'Bjorn'][waiting]}")
    assert f"Applied: catch {waiting}" in answer, answer
    assert len(world.game(game_id)[2].hands[waiting]) == 4
    waiting_seat_holds_two(world.app, game_id)
    answer = _reply(world, ADDRESSES[waiting], "DOS!")  # out of turn
    assert "Applied: dos" in answer, answer
    state = world.game(game_id)[2]
    assert state.dos_calls[waiting]
    assert state.current == current
