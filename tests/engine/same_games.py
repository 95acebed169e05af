"""Seeded games digested action by action: what tests/engine/test_same_games.py compares with
the digests of tests/data/engine_digests.json, which tests/engine/make_engine_digests.py wrote
from the engine before its hot paths were rewritten for speed (RULES.md 7: a game is a function
of its record, so a faster engine must play every game as the old one did).

A game's digest is SHA-256 over, in order: every event dict, every legal action list (the
player to move's and, sometimes, another seat's), some views, the answers (events or error
class and message) to actions tried on a copy (legal and illegal ones, equal objects made
elsewhere rather than the listed ones, whole turns as text), a few search bot decisions, and
the final state dict.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from dos_engine import (
    ALL_CARDS,
    DRAW,
    END,
    Action,
    Add,
    CallDos,
    Catch,
    DosError,
    Event,
    Game,
    Match,
    Options,
    Place,
    greedy,
    make_strategy,
    parse_action,
    start_game,
)

GAMES = 300
# Option sets the games cycle through (with 2, 3 and 4 players): every rule option's values.
OPTION_SETS: tuple[dict[str, Any], ...] = (
    {},
    {"after_draw": "any"},
    {"bonus_placement": "mandatory"},
    {"dos_call": True},
    {"dos_call": True, "after_draw": "any", "bonus_placement": "mandatory"},
    {"dos_call": True, "dos_rule": "v1"},
    {"dos_call": True, "dos_rule": "v1", "after_draw": "any", "target_score": 80},
    {"target_score": 60, "bonus_placement": "mandatory", "after_draw": "any"},
)
SEARCH_GAMES = 12  # one game in this many asks a search bot for a few decisions


def asks_search(game_no: int) -> bool:
    """Whether the game asks a search bot for a few decisions."""
    return game_no % SEARCH_GAMES == 5


def game_setup(game_no: int) -> tuple[tuple[str, ...], str, Options]:
    count = 2 + game_no % 3
    options = Options.from_dict(OPTION_SETS[(game_no // 3) % len(OPTION_SETS)])
    players = tuple(f"p{seat}" for seat in range(count))
    return players, f"same-games-{game_no}", options


class Digest:
    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def add(self, value: Any) -> None:
        self._hash.update(json.dumps(value, sort_keys=True, ensure_ascii=True).encode())
        self._hash.update(b"\n")

    def events(self, events: list[Event]) -> None:
        for event in events:
            self.add(event.to_dict())

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def random_action(game: Game, rng: random.Random) -> Action:
    """Any action at all, mostly illegal ones: validation must refuse them as before."""
    kind = rng.randrange(8)
    card = ALL_CARDS[rng.randrange(len(ALL_CARDS))]
    if kind <= 2:
        cards = (card,) if kind == 0 else (card, ALL_CARDS[rng.randrange(len(ALL_CARDS))])
        return Match(rng.randrange(1, len(game.center_row) + 2), cards)
    if kind == 3:
        return Add(card)
    if kind == 4:
        return Place(card)
    if kind == 5:
        return Catch(rng.randrange(len(game.players) + 1))
    return (DRAW, END, CallDos())[rng.randrange(3)]


def try_on_copy(game: Game, action: Action | str, seat: int, digest: Digest) -> None:
    trial = game.copy()
    try:
        if isinstance(action, str):
            actions, events = trial.play_text(action, seat)
            digest.add([a.text() for a in actions])
        else:
            events = trial.play(action, seat)
    except DosError as error:
        digest.add([type(error).__name__, str(error), getattr(error, "rule", None)])
        return
    digest.events(events)
    digest.add(trial.to_dict())


def game_digest(game_no: int) -> str:
    players, seed, options = game_setup(game_no)
    rng = random.Random(seed)
    digest = Digest()
    game, events = start_game(players, seed, options)
    digest.events(events)
    use_greedy = game_no % 4 == 1
    search = make_strategy("search-1", seed) if asks_search(game_no) else None
    searched = 0
    step = 0
    while game.winner is None:
        step += 1
        seat = game.current
        if options.dos_call and rng.random() < 0.3:
            other = rng.randrange(len(players))
            if game.legal_actions(other):
                seat = other
        legal = game.legal_actions(seat)
        digest.add([seat, [a.text() for a in legal]])
        if step % 5 == 0:
            digest.add(game.view(seat).to_dict())
        if step % 7 == 0:
            try_on_copy(game, random_action(game, rng), rng.randrange(len(players)), digest)
        if step % 11 == 0:
            # an equal action made elsewhere (not the listed object): validated, then played
            try_on_copy(game, parse_action(legal[rng.randrange(len(legal))].text()), seat, digest)
        if step % 13 == 0 and seat == game.current:
            texts = [legal[rng.randrange(len(legal))].text(), "end"]
            try_on_copy(game, "; ".join(texts), seat, digest)
        if search is not None and searched < 3 and step % 17 == 0 and seat == game.current:
            searched += 1
            digest.add(search(game.view(seat), legal).text())
        if use_greedy and seat == game.current:
            choice = greedy(game.view(seat), legal)
        else:
            choice = legal[rng.randrange(len(legal))]
        digest.events(game.play(choice, seat))
        if step % 97 == 0:
            game = Game.from_dict(game.to_dict())
    digest.add(game.to_dict())
    return digest.hexdigest()
