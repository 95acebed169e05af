"""For the standing-order tests: games whose stored position is arranged card by card."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from server_helpers import auth, create, join

from dos_engine import Game
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow


def orders_game(client: FlaskClient, names: Sequence[str] = ("ann", "bob"),
                **body: Any) -> tuple[str, dict[int, str]]:
    """A started game of people (DOS call on unless said), and each seat's player token."""
    options = body.pop("options", {"dos_call": True})
    response = client.post("/api/games", json={
        "seats": [{"name": name} for name in names], "options": options, **body})
    assert response.status_code == 201, response.get_data(as_text=True)
    game = response.get_json()
    tokens = {}
    for invite in game["invites"]:
        tokens[invite["seat"]] = join(client, game["id"], invite=invite["invite"])["player_token"]
    return game["id"], tokens


def arrange(app: Flask, game_id: str, hands: dict[int, list[str]], center: list[str],
            top: Sequence[str] = (), current: int | None = None) -> None:
    """Store the game at the start of a turn with these hands and Center Row; ``top``: the
    next cards drawn (first drawn first); every other card goes to the draw pile."""
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        assert row.state is not None
        state = dict(row.state)
        pool = Counter(card for hand in state["hands"] for card in hand)
        pool.update(state["draw_pile"])
        pool.update(state["discard_pile"])
        for slot in state["center_row"]:
            pool[slot["card"]] += 1
            pool.update(slot["matched_with"] or [])
        wanted = [card for hand in hands.values() for card in hand] + center + list(top)
        pool.subtract(Counter(wanted))
        assert min(pool.values()) >= 0, "more of a card than the deck holds"
        rest = sorted(pool.elements())
        state["hands"] = [list(hands[seat]) for seat in range(len(state["hands"]))]
        state["center_row"] = [{"card": card, "matched_with": None} for card in center]
        state["draw_pile"] = rest + list(reversed(top))  # the last card is drawn first
        state["discard_pile"] = []
        if current is not None:
            state["current"] = current
        state["turn"] = {**state["turn"], "drawn": None, "has_drawn": False, "matches": 0,
                         "added": False, "bonuses": 0, "bonus_phase": False,
                         "placements_left": 0, "called_dos": False, "penalty": 0}
        state["dos_calls"] = [False] * len(state["hands"])
        row.state = Game.from_dict(state).to_dict()
        row.version += 1
        db.session.commit()
        db.session.remove()


def set_orders(client: FlaskClient, game_id: str, seat: int, token: str,
               orders: list[str]) -> dict[str, Any]:
    answer = client.put(f"/api/games/{game_id}/seats/{seat}/orders", headers=auth(token),
                        json={"orders": orders})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


def history(app: Flask, game_id: str) -> list[EventRow]:
    with app.app_context():
        rows = list(db.session.execute(
            db.select(EventRow).where(EventRow.game_id == game_id).order_by(EventRow.seq)
        ).scalars())
        db.session.expunge_all()
        db.session.remove()
    return rows


def marked(rows: Sequence[EventRow]) -> list[tuple[int | None, str]]:
    """(seat, action) of every action a standing order played, in order."""
    return [(row.seat, row.data["action"]) for row in rows
            if row.kind == "action" and row.data.get("by") == "order"]


__all__ = ["arrange", "create", "history", "marked", "orders_game", "set_orders"]
