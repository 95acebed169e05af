"""Bots: a strategy is a function ``(view, legal_actions) -> action``.

``RandomStrategy(seed)`` picks uniformly (seeded, never the global ``random``); ``greedy`` prefers
colour matches, double matches and getting high-value cards out; ``search-1`` to ``search-3``
search over what their seat cannot see (``dos_engine.search``). ``play_game`` runs self-play.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from dos_engine.actions import Action
from dos_engine.game import Game, View
from dos_engine.options import Options
from dos_engine.record import GameRecord
from dos_engine.search import LEVELS, action_score, make_search

Strategy = Callable[[View, Sequence[Action]], Action]


class RandomStrategy:
    """Uniformly random among the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | str = 0) -> None:
        self._rng = random.Random(str(seed))

    def __call__(self, view: View, legal: Sequence[Action]) -> Action:
        return legal[self._rng.randrange(len(legal))]


def greedy(view: View, legal: Sequence[Action]) -> Action:
    """Highest score wins: DOS calls and catches, then the best match, bonus placements
    (highest points first), adding the highest-value card, drawing, and ending last."""
    row = [slot.card for slot in view.center_row]
    return max(legal, key=lambda action: action_score(row, action))


# The bots a seat (or a game's timeout policy) may be, in the order they are offered, with
# what a person reads: the one list of the API, the pages and dos-client.
BOTS: dict[str, str] = {
    "random": "random bot",
    "greedy": "greedy bot",
    "search-1": "search bot (1 ply)",
    "search-2": "search bot (2 plies)",
    "search-3": "search bot (3 plies)",
}

STRATEGIES: dict[str, Callable[[int | str], Strategy]] = {
    "random": RandomStrategy,
    "greedy": lambda seed: greedy,
    # Determinized search over whole turns (dos_engine.search), by playout budget.
    **{name: make_search(name) for name in LEVELS},
}


def make_strategy(name: str, seed: int | str = 0) -> Strategy:
    try:
        return STRATEGIES[name](seed)
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}: choose from {', '.join(STRATEGIES)}") from None


def play_game(
    players: Sequence[str],
    seed: str,
    strategies: Sequence[Strategy],
    options: Options | None = None,
    max_actions: int = 200_000,
) -> tuple[Game, GameRecord]:
    """Self-play a whole game, one action per request.

    Before each action of the player to move, the other seats play what they may out of turn:
    catch missed DOS calls (and, under the printed DOS rule, call DOS on their own two cards).

    Raises:
        RuntimeError: the game did not end within ``max_actions`` actions.
        IllegalActionError: a strategy chose an action that is not legal.
    """
    options = options or Options()
    game = Game.new(players, seed, options)
    actions: list[tuple[int, str]] = []
    count = len(players)
    while not game.is_over:
        if len(actions) >= max_actions:
            raise RuntimeError(f"game {seed!r} did not end within {max_actions} actions")
        if options.dos_call and (options.printed_dos_rule or any(game.dos_missed)):
            for offset in range(1, count):
                other = (game.current + offset) % count
                out_of_turn = game.legal_actions(other)
                if out_of_turn:
                    choice = strategies[other](game.view(other), out_of_turn)
                    game.play(choice, other)
                    actions.append((other, choice.text()))
        seat = game.current
        legal = game.legal_actions(seat)
        choice = strategies[seat](game.view(seat), legal)
        game.play(choice, seat)
        actions.append((seat, choice.text()))
    return game, GameRecord(tuple(players), seed, options, tuple(actions))
