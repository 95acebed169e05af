"""Standing orders by email: a reply line ``orders draw on`` (``orders`` alone lists them)."""

from __future__ import annotations

from email.message import EmailMessage

from mailtest_helpers import MailWorld, reply_to, text_of, write_reply

from dos_call_helpers import waiting_seat_holds_two
from dos_server.extensions import db
from dos_server.models import SeatRow

ANN, BJORN = "ann@example.org", "bjorn@example.org"
ADDRESSES = [ANN, BJORN]


def _latest(world: MailWorld, address: str) -> EmailMessage:
    messages = [m for m in world.sink.to(address) if m["Reply-To"]]
    assert messages, f"no email with a reply address reached {address}"
    return messages[-1]


def _reply(world: MailWorld, address: str, command: str) -> str:
    email_in = _latest(world, address)
    world.send(write_reply("gmail", email_in, command, address), address, reply_to(email_in))
    world.run_worker()
    return text_of(world.sink.to(address)[-1])


def _orders(world: MailWorld, game_id: str, seat: int) -> list[str] | None:
    with world.app.app_context():
        row = db.session.execute(db.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.index == seat)).scalar_one()
        held = row.standing_orders
        db.session.remove()
    return held


def test_orders_by_email(world: MailWorld) -> None:
    game_id = world.create([{"name": "Ann", "email": ANN}, {"name": "Bjorn", "email": BJORN}],
                           dos_call=True)
    world.run_worker()
    answer = _reply(world, ANN, "orders")
    assert "You have no standing orders." in answer, answer
    answer = _reply(world, ANN, "Orders draw on only on\nthanks")
    assert "Your standing orders: draw, only." in answer, answer
    assert _orders(world, game_id, 0) == ["draw", "only"]
    answer = _reply(world, ANN, "orders only off dance")
    assert "Nothing was changed" in answer, answer
    assert "orders draw on only off" in answer, answer
    assert _orders(world, game_id, 0) == ["draw", "only"]
    answer = _reply(world, ANN, "orders all off")
    assert "You have no standing orders." in answer, answer
    assert _orders(world, game_id, 0) is None
    assert "orders draw on" in _reply(world, ANN, "help")


def test_an_emailed_dos_order_calls_at_once(world: MailWorld) -> None:
    game_id = world.create([{"name": "Ann", "email": ANN}, {"name": "Bjorn", "email": BJORN}],
                           dos_call=True)
    world.run_worker()
    waiting, _current = waiting_seat_holds_two(world.app, game_id)
    answer = _reply(world, ADDRESSES[waiting], "orders dos on")
    assert "An order applied at once and was played" in answer, answer
    assert world.game(game_id)[2].dos_calls[waiting]
    answer = _reply(world, ADDRESSES[waiting], "history")
    assert "You called DOS (by standing order)" in answer, answer
