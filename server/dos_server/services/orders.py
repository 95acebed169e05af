"""Standing orders: moves a person leaves with the server, played the moment they apply.

A seat may hold any of four orders (``SeatRow.standing_orders``):

- ``draw``: at the start of its turn, when nothing in its hand matches (draw is the one thing
  the turn allows), draw. If a choice follows (add a card, or match the drawn card) the
  person makes it: the your-turn notice says what was drawn.
- ``only``: whenever exactly one turn action is legal, play it.
- ``dos``: call DOS the moment the seat holds two cards it has not called on (RULES.md 5.1).
- ``catch``: when another seat is exposed (5.1), catch it (5.2).

``dos`` and ``catch`` play only in games whose options use the DOS call under the printed
rule and whose host allows it (``GameRow.standing_dos``): they turn the call from a race into
a rule. A standing order never makes a choice: ``draw`` and ``only`` play only when a single
turn action is legal, ``dos`` and ``catch`` are the same action whoever sends them.

**When.** The one tail every move goes through (``play.run_bots``) asks :func:`next_order`
after every action it plays. A seat's own ``dos`` is answered at once, after any action (it
protects the seat before a bot's turn could catch it). The other orders play only when the
game is *at rest*, where a person could act: it is a person's turn (or a searching bot's,
which the worker plays later), not in the middle of bots' moves inside one request. Calls come
before catches: a seat that calls is not caught.

**Who catches.** When several seats' ``catch`` apply to one exposed seat, the first of them
after the exposed seat in turn order catches (its left neighbour first, RULES.md 2.1);
exposed seats are taken in turn order from the player to move. Nothing here depends on time
or on which request came first: a game played again with the same moves catches the same
way, and the record (which holds every order-played action as the seat's own) replays it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from dos_engine import Action, Game
from dos_engine.actions import CallDos, Catch, Draw
from dos_server.errors import InvalidInput
from dos_server.services.words import _

# The order names, in the order every list shows them.
ORDERS: tuple[str, ...] = ("draw", "only", "dos", "catch")
DOS_ORDERS = frozenset({"dos", "catch"})

# What the history row of an order-played action carries besides its action.
MARK_KEY = "by"
MARK = "order"
# ... and what the first event it caused carries: that event's line says "by standing order"
# (dos_engine.wording), so the move still reads as one line.
EVENT_MARK = "by_order"


class OrderSeat(Protocol):
    """What deciding needs of a seat: a ``SeatRow``."""

    @property
    def index(self) -> int: ...
    @property
    def bot(self) -> str | None: ...
    @property
    def resigned(self) -> bool: ...
    @property
    def standing_orders(self) -> list[str] | None: ...


def describe(name: str) -> str:
    """What an order does, in the reader's language."""
    return {
        "draw": _("draw for me when nothing matches"),
        "only": _("play my only legal move"),
        "dos": _("call DOS for me the moment I hold two cards"),
        "catch": _("catch for me when another player is exposed"),
    }[name]


def clean(names: Iterable[Any]) -> list[str]:
    """The orders as stored: known names only, each once, in :data:`ORDERS` order.

    Raises InvalidInput naming the first unknown entry (anything from outside is checked).
    """
    wanted: set[str] = set()
    for name in names:
        if not isinstance(name, str) or name not in ORDERS:
            raise InvalidInput(
                _("unknown standing order %(order)s: choose from %(orders)s",
                  order=repr(name)[:40], orders=", ".join(ORDERS)),
                errors={"orders": [_("choose from %(orders)s", orders=", ".join(ORDERS))]})
        wanted.add(name)
    return [name for name in ORDERS if name in wanted]


def held(seat: OrderSeat) -> frozenset[str]:
    """The orders of a seat that a person still plays (bots and resigned seats have none)."""
    if seat.bot or seat.resigned or not seat.standing_orders:
        return frozenset()
    return frozenset(name for name in seat.standing_orders if name in ORDERS)


def dos_orders_apply(state: Game, standing_dos: bool) -> bool:
    """Whether ``dos`` and ``catch`` orders may play in this game at all."""
    options = state.options
    return standing_dos and options.dos_call and options.printed_dos_rule


def turn_actions(state: Game, seat: int) -> list[Action]:
    """The seat's legal actions that belong to its turn (without ``dos`` and ``catch``)."""
    return [action for action in state.legal_actions(seat)
            if not isinstance(action, (CallDos, Catch))]


def next_order(state: Game, seats: Sequence[OrderSeat], standing_dos: bool,
               at_rest: bool) -> tuple[int, Action] | None:
    """The next action a standing order plays, as (seat, action), or None.

    ``at_rest``: nobody but a person (or a waiting searching bot) moves next, so the game
    stands where a person could act (see the module's docstring); otherwise only a seat's own
    ``dos`` order may play.
    """
    if state.is_over:
        return None
    orders = {seat.index: held(seat) for seat in seats}
    if not any(orders.values()):
        return None
    count = len(state.players)
    turn_order = [(state.current + step) % count for step in range(count)]
    calls = dos_orders_apply(state, standing_dos)
    if calls:
        for index in turn_order:
            if "dos" in orders.get(index, ()) and any(
                    isinstance(action, CallDos) for action in state.legal_actions(index)):
                return index, CallDos()
    if not at_rest:
        return None
    if calls:
        for exposed in turn_order:
            if not state.dos_missed[exposed]:
                continue
            for step in range(1, count):
                catcher = (exposed + step) % count
                if "catch" in orders.get(catcher, ()) and state.is_legal(Catch(exposed),
                                                                          catcher):
                    return catcher, Catch(exposed)
    mover = state.current
    mine = orders.get(mover, frozenset())
    if "draw" in mine or "only" in mine:
        actions = turn_actions(state, mover)
        if len(actions) == 1:
            only = actions[0]
            if "only" in mine or (isinstance(only, Draw) and not state.has_drawn):
                return mover, only
    return None


__all__ = ["DOS_ORDERS", "EVENT_MARK", "MARK", "MARK_KEY", "ORDERS", "clean", "describe",
           "dos_orders_apply", "held", "next_order", "turn_actions"]
