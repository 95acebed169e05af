"""How much of a seat's play standing orders take off a person. A measurement, not a test.

Run it from the repository root::

    .venv/bin/python bench/orders.py              # 200 games, 2-4 players, to 200 points
    .venv/bin/python bench/orders.py --quick      # 30 games

Every seat is a person modelled by the ``greedy`` strategy, in games with the printed DOS
call (``dos_call`` on, ``standing_dos`` on). The same games (seeded ``bench-orders:<n>``,
2, 3 and 4 players in turn) are played once per set of orders, every seat holding that set:
none, each order alone, all four. The orders are decided by the server's own function
(``dos_server.services.orders.next_order``), at the same points as in the server (after every
action, the game being at rest between people's moves); people act between them the way
``dos_engine.play_game`` lets them: before each move of the player to move, each other seat
plays what it may out of turn (greedy calls DOS and catches whenever it can), then the mover
plays one action.

Printed per set: the share of a seat's turns that needed the person (they played at least one
action of that turn themselves), the person's own actions per turn, and their out-of-turn
actions (calls and catches) per 100 turns. Nothing is timed or asserted; the figures go to
``bench/results/orders.json``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

from common import RESULTS_DIR
from dos_engine import Game, Options, greedy
from dos_server.services.orders import ORDERS, next_order

RESULTS = RESULTS_DIR / "orders.json"
NAMES = ("north", "east", "south", "west")
SETS: dict[str, tuple[str, ...]] = {"none": (), **{name: (name,) for name in ORDERS},
                                    "all": ORDERS}


@dataclass(frozen=True)
class Person:
    """A seat as ``next_order`` reads it: a person holding ``standing_orders``."""

    index: int
    standing_orders: list[str] | None
    bot: str | None = None
    resigned: bool = False


@dataclass
class Tally:
    turns: int = 0
    needed: int = 0  # turns in which the person played at least one action themselves
    off_turn: int = 0  # the person's own calls and catches outside their turn
    in_turn: int = 0  # the person's own actions in their turn
    by_order: int = 0  # actions the orders played

    def add(self, other: Tally) -> None:
        self.turns += other.turns
        self.needed += other.needed
        self.off_turn += other.off_turn
        self.in_turn += other.in_turn
        self.by_order += other.by_order


def play(seed: str, players: int, orders: tuple[str, ...], target: int) -> Tally:
    state = Game.new(NAMES[:players], seed, Options(dos_call=True, target_score=target))
    seats = [Person(index, list(orders) or None) for index in range(players)]
    tally = Tally()
    seen: set[tuple[int, int]] = set()  # (round, turn) already counted
    needed: set[tuple[int, int]] = set()
    while not state.is_over:
        turn = (state.round_no, state.turn_no)
        if turn not in seen:
            seen.add(turn)
            tally.turns += 1
        due = next_order(state, seats, True, at_rest=True)
        if due is not None:
            state.play(due[1], due[0])
            tally.by_order += 1
            continue
        mover = state.current
        acted = False
        for offset in range(1, players):
            other = (mover + offset) % players
            out_of_turn = state.legal_actions(other)
            if out_of_turn:
                state.play(greedy(state.view(other), out_of_turn), other)
                tally.off_turn += 1
                acted = True
                break  # the orders may answer what this changed
        if acted or state.is_over:
            continue
        state.play(greedy(state.view(mover), state.legal_actions(mover)), mover)
        tally.in_turn += 1
        needed.add(turn)
    tally.needed = len(needed)
    return tally


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--target", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="30 games")
    args = parser.parse_args(argv)
    games = 30 if args.quick else args.games
    results: dict[str, Any] = {"games": games, "target": args.target, "sets": {}}
    print(f"{games} games of 2-4 greedy people to {args.target}, dos_call on, standing_dos on")
    print(f"{'orders':<8} {'turns':>7} {'need a person':>14} {'own actions / turn':>19} "
          f"{'off-turn / 100 turns':>21} {'by order':>9}")
    for label, orders in SETS.items():
        total = Tally()
        for number in range(games):
            total.add(play(f"bench-orders:{number}", 2 + number % 3, orders, args.target))
        share = total.needed / total.turns
        off = 100 * total.off_turn / total.turns
        own = total.in_turn / total.turns
        results["sets"][label] = {"orders": list(orders), "turns": total.turns,
                                  "needed": total.needed, "share_needing_a_person": share,
                                  "own_actions_per_turn": own,
                                  "off_turn_per_100_turns": off, "by_order": total.by_order}
        print(f"{label:<8} {total.turns:>7} {share:>13.1%} {own:>19.2f} {off:>21.1f} "
              f"{total.by_order:>9}")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
