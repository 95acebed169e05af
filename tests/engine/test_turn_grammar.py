"""A whole turn on one line means what it says (docs/rules.md, "Move notation").

A placement written after the matches places the bonus card whether or not ``end`` was typed
before it; a trailing or redundant ``end`` is harmless; a line of legal actions means what
playing them one by one means; and the actions a line returns replay one by one (records).
"""

from __future__ import annotations

import pytest
from test_notation import position

from dos_engine import END, Action, Card, Game, Match, Place, parse_action

C = Card.from_code

# p0 holds R5 G9 B10; R5 on the CR's R5 is a colour match (one bonus card to place), after
# which nothing else matches B7: the matching ends by itself.
CLOSED = (["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
# p0 holds R5 B7 G9: after R5 on R5 (a bonus), B7 on B7 could still be matched.
OPEN = (["R5 B7 G9", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])


def _replayed(start: Game, actions: list[Action]) -> Game:
    """Play ``actions`` one by one, as dos_engine.replay plays a record."""
    game = start.copy()
    for action in actions:
        game.play(action)
    return game


def _placed_g9(game: Game) -> None:
    assert game.current == 1, "the turn ended by itself after the last bonus card"
    assert sorted(game.view(0).hand or ()) == [C("B10")]
    assert C("G9") in [slot.card for slot in game.view(0).center_row]


@pytest.mark.parametrize("line", [
    "m1 R5; end; place G9",  # the `end` the matching had by itself
    "m1 R5; place G9",  # no `end` at all
    "m1 R5; end; place G9; end",  # and a trailing `end` after the turn ended by itself
    "M1 r5 ; e ; p g9 ; done",  # shorthand
    "m1 R5; end; bonus G9",
])
def test_a_placement_after_the_matches_places_the_bonus_card(line: str) -> None:
    game = position(*CLOSED)
    start = game.copy()
    actions, _ = game.play_text(line)
    _placed_g9(game)
    assert _replayed(start, actions) == game  # what the server records replays


@pytest.mark.parametrize("line", ["m1 R5; end; place G9", "m1 R5; place G9"])
def test_placing_while_matching_could_go_on_ends_the_matching(line: str) -> None:
    game = position(*OPEN)
    start = game.copy()
    actions, _ = game.play_text(line)
    assert actions == [Match(1, (C("R5"),)), END, Place(C("G9"))]
    assert game.current == 1
    assert sorted(game.view(0).hand or ()) == [C("B7")]
    assert _replayed(start, actions) == game


def test_place_on_its_own_after_a_match_needs_no_end() -> None:
    """`move "p G9"` in a second request (issue: "say 'end' first")."""
    game = position(*OPEN)
    game.play_text("m1 R5")
    assert game.current == 0  # B7 could still be matched
    actions, _ = game.play_text("p G9")
    assert actions == [END, Place(C("G9"))]
    assert game.current == 1


def test_a_line_of_legal_actions_means_playing_them_one_by_one() -> None:
    """`m1 R5; end` where the match ended the matching by itself: the `end` ends the turn
    (no card placed), exactly as `m1 R5` then `end` in two requests would."""
    one_line = position(*CLOSED)
    actions, _ = one_line.play_text("m1 R5; end")
    step_by_step = position(*CLOSED)
    step_by_step.play_text("m1 R5")
    step_by_step.play_text("end")
    assert one_line == step_by_step
    assert one_line.current == 1
    assert actions == [Match(1, (C("R5"),)), END]


def test_redundant_ends_are_harmless_and_not_recorded() -> None:
    game = position(*CLOSED)
    start = game.copy()
    actions, _ = game.play_text("m1 R5; end; end; end")
    assert game.current == 1
    assert actions == [Match(1, (C("R5"),)), END]  # the ends after the turn ended: not played
    assert _replayed(start, actions) == game


def test_a_turn_ended_by_a_match_records_no_typed_end() -> None:
    """Before, `m1 R5; end` after a match that ended the turn recorded the `end`, and the
    record did not replay."""
    game = position(["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["Y5", "B7"])
    start = game.copy()
    actions, _ = game.play_text("m1 R5; end")
    assert game.current == 1
    assert actions == [parse_action("m1 R5")]
    assert _replayed(start, actions) == game
