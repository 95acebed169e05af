"""For the server, client and mail tests of the DOS call (RULES.md 5): a stored two-player game
whose waiting seat is left holding two cards, so that under the printed rule it is exposed."""

from __future__ import annotations

from flask import Flask

from dos_engine import Game
from dos_server.extensions import db
from dos_server.models import GameRow


def waiting_seat_holds_two(app: Flask, game_id: str) -> tuple[int, int]:
    """Store the game with the seat whose turn it is not down to two cards (the rest of its hand
    goes under the draw pile); return (that seat, the player to move)."""
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        assert row.state is not None
        state = dict(row.state)
        waiting = 1 - state["current"]
        hands = [list(hand) for hand in state["hands"]]
        state["draw_pile"] = hands[waiting][2:] + list(state["draw_pile"])
        hands[waiting] = hands[waiting][:2]
        state["hands"] = hands
        row.state = Game.from_dict(state).to_dict()
        db.session.commit()
        db.session.remove()
    return waiting, 1 - waiting
