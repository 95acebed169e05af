"""dos_engine: the complete rules of DOS (Mattel, 2017), pure and deterministic.

Quick tour::

    from dos_engine import Game, Options
    game = Game.new(["alice", "bob"], seed="any string")
    view = game.view(game.current)        # what the player to move may know
    for action in view.legal_actions:     # canonical notation: "m1 R5", "draw", ...
        print(action, "-", game.describe(action))
    events = game.play(game.parse_action("m1 r5"))
"""

from dos_engine.actions import (
    CALL_DOS,
    DRAW,
    END,
    Action,
    Add,
    CallDos,
    Catch,
    Draw,
    End,
    Match,
    Place,
    format_turn,
    parse_action,
    parse_turn,
)
from dos_engine.cards import ALL_CARDS, Card, CardKind, Colour, new_deck, parse_card
from dos_engine.errors import (
    AmbiguousActionError,
    DosError,
    IllegalActionError,
    InvalidActionError,
    InvalidStateError,
    NotYourTurnError,
)
from dos_engine.events import Event, EventKind, redact
from dos_engine.game import CenterCard, Game, Phase, View, start_game
from dos_engine.matching import Bonus, Declaration, declare_match
from dos_engine.options import InvalidOptionsError, Options
from dos_engine.record import GameRecord, replay, verify_commitments
from dos_engine.rng import round_seed, seed_commitment
from dos_engine.strategies import RandomStrategy, Strategy, greedy, make_strategy, play_game

__all__ = [
    "ALL_CARDS",
    "CALL_DOS",
    "DRAW",
    "END",
    "Action",
    "Add",
    "AmbiguousActionError",
    "Bonus",
    "CallDos",
    "Card",
    "CardKind",
    "Catch",
    "CenterCard",
    "Colour",
    "Declaration",
    "DosError",
    "Draw",
    "End",
    "Event",
    "EventKind",
    "Game",
    "GameRecord",
    "IllegalActionError",
    "InvalidActionError",
    "InvalidOptionsError",
    "InvalidStateError",
    "Match",
    "NotYourTurnError",
    "Options",
    "Phase",
    "Place",
    "RandomStrategy",
    "Strategy",
    "View",
    "declare_match",
    "format_turn",
    "greedy",
    "make_strategy",
    "new_deck",
    "parse_action",
    "parse_card",
    "parse_turn",
    "play_game",
    "redact",
    "replay",
    "round_seed",
    "seed_commitment",
    "start_game",
    "verify_commitments",
]
