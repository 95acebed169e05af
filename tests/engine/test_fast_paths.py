"""The engine's written-out fast paths say what their plain forms say (RULES.md 7: a game is a
function of its record, so a copy or an options dict that drops a field would change games)."""

from __future__ import annotations

import dataclasses
import random

from dos_engine import Game, Options

PLAYERS = ("north", "east", "south", "west")


def test_copy_carries_every_slot_and_shares_no_list() -> None:
    game = Game.new(PLAYERS, "fast-copy")
    rng = random.Random("fast-copy")
    for _ in range(60):  # into the middle of a round, with matches, draws and bonuses behind
        legal = game.legal_actions()
        game.play(legal[rng.randrange(len(legal))])
    other = game.copy()
    for name in Game.__slots__:
        mine, theirs = getattr(game, name), getattr(other, name)
        assert mine == theirs, name
        if isinstance(mine, list):
            assert mine is not theirs, name  # the copy can play on without touching the game
    assert all(a is not b for a, b in zip(game.hands, other.hands, strict=True))
    assert other.to_dict() == game.to_dict()


def test_options_to_dict_is_asdict() -> None:
    for options in (Options(), Options(after_draw="any", dos_call=True, target_score=50,
                                       bonus_placement="mandatory", dos_rule="v1")):
        assert options.to_dict() == dataclasses.asdict(options)
        assert list(options.to_dict()) == [f.name for f in dataclasses.fields(Options)]
