"""Setting a seat's standing orders (the rules of when they play are in ``services/orders``).

One transaction per call, like the lobby's seat settings: lock the game, authenticate there,
change the seat, and, if an order applies at once (it is the seat's turn and nothing
matches, say), play it through the one tail every move goes through (``play.after_move``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dos_engine import Options
from dos_server.database import write_transaction
from dos_server.errors import NotYourSeat
from dos_server.models import GameRow
from dos_server.services import orders
from dos_server.services.access import (
    Viewer,
    authenticate,
    engine_state,
    get_game,
    locked,
    seat_of,
)
from dos_server.services.play import TurnMark, after_move
from dos_server.services.words import _


def orders_body(game: GameRow, seat: int) -> dict[str, Any]:
    """A seat's orders, what each does, and whether this game lets ``dos``/``catch`` play."""
    held = seat_of(game, seat).standing_orders or []
    options = Options.from_stored(game.options)
    uses_call = options.printed_dos_rule  # the DOS call is in play, as printed (RULES.md 5)
    return {
        "seat": seat,
        "version": game.version,
        "orders": [name for name in orders.ORDERS if name in held],
        "standing_dos": game.standing_dos,
        "available": [
            {"order": name, "description": orders.describe(name), "on": name in held,
             "applies": name not in orders.DOS_ORDERS or (game.standing_dos and uses_call)}
            for name in orders.ORDERS
        ],
    }


def _own_seat(viewer: Viewer, index: int | None) -> int:
    """The viewer's seat, which must be ``index`` (when given): orders are the player's own."""
    if viewer.seat is None or (index is not None and viewer.seat != index):
        raise NotYourSeat(_("only the seat's player can see or change its standing orders"))
    return viewer.seat


def read_orders(game_id: str, bearer: str | None, index: int) -> dict[str, Any]:
    """The seat's orders, for its player only (a read: no lock)."""
    game = get_game(game_id)
    return orders_body(game, _own_seat(authenticate(game, bearer), index))


def set_orders(game_id: str, bearer: str | None, index: int | None,
               names: Iterable[Any] | None = None, *, on: Iterable[Any] = (),
               off: Iterable[Any] = ()) -> dict[str, Any]:
    """Replace the seat's orders by ``names`` (if given), then switch ``on`` and ``off`` ones.

    ``index`` None: the token's own seat. Returns :func:`orders_body` after any order that
    applied at once was played.
    """
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        seat = _own_seat(viewer, index)
        change_orders(game, seat, names, on=on, off=off)
        return orders_body(game, seat)


def change_orders(game: GameRow, index: int, names: Iterable[Any] | None = None, *,
                  on: Iterable[Any] = (), off: Iterable[Any] = ()) -> list[str]:
    """Change seat ``index``'s orders on the locked ``game`` (the caller owns the
    transaction: play by email shares it); returns the orders now held.

    Every name is checked before anything changes. An order that applies now is played at
    once, as a move (the version moves on).
    """
    seat = seat_of(game, index)
    start = orders.clean(names) if names is not None else list(seat.standing_orders or [])
    switched_on, switched_off = orders.clean(on), orders.clean(off)
    wanted = (set(start) | set(switched_on)) - set(switched_off)
    held = [name for name in orders.ORDERS if name in wanted]
    seat.standing_orders = held or None
    if game.status == "active" and game.state is not None:
        state = engine_state(game)
        if orders.next_order(state, game.seats, game.standing_dos, at_rest=True) is not None:
            game.version += 1  # one version per committed request, as for any move
            after_move(game, state, TurnMark.of(state), [])
    return held


__all__ = ["change_orders", "orders_body", "read_orders", "set_orders"]
