"""dos_engine.wording: each event in one line, for a reader or for anyone."""

from __future__ import annotations

from dos_engine import Options, start_game
from dos_engine.strategies import greedy
from dos_engine.wording import describe

NAMES = ["ann", "bob"]


def test_an_action_row_is_told_by_its_events_not_twice() -> None:
    row = {"kind": "action", "seat": 0, "data": {"action": "m2 Y5"}}
    matched = {"kind": "matched", "seat": 0,
               "data": {"target": "R5", "position": 2, "cards": ["Y5"], "bonus": None}}
    assert describe(row, NAMES) is None
    assert describe(matched, NAMES) == "ann matched R5 (Center Row card 2) with Y5"


def test_the_reader_is_you() -> None:
    dealt = {"kind": "drew", "seat": 1, "data": {"count": 7, "reason": "deal", "cards": ["R1"]}}
    assert describe(dealt, NAMES, me=1) == "You were dealt 7 cards (R1)"
    assert describe(dealt, {0: "ann", 1: "bob"}, me=0) == "bob was dealt 7 cards (R1)"
    caught = {"kind": "caught", "seat": 1, "data": {"by": 0, "deferred": True}}
    assert describe(caught, NAMES, me=1) == \
        "ann caught you without a DOS call (the two cards come at the end of the turn)"
    ended = {"kind": "turn_ended", "seat": 0, "data": {"next": 1}}
    assert describe(ended, NAMES, me=1) == "ann ended the turn; you are next"


def test_older_events_and_unknown_seats_still_read() -> None:
    assert describe({"kind": "round_over", "seat": 5, "data": {}}, NAMES) == \
        "Round ? is over: someone went out and scored ?"
    assert describe({"kind": "something_new", "seat": 0, "data": {}}, NAMES) is None


def test_every_event_of_a_game_reads_as_words_or_is_left_out_on_purpose() -> None:
    game, events = start_game(NAMES, "wording", Options(dos_call=True, target_score=30))
    while not game.is_over:
        seat = game.current
        events += game.play(greedy(game.view(seat), game.legal_actions(seat)), seat)
    for event in events:
        shown = event.for_viewer(0)
        line = describe(shown, NAMES, me=0)
        # Left out: what goes to the discard pile, and the Center Row a deal turns up.
        silent = shown["kind"] == "discarded" or (
            shown["kind"] == "cr_flipped" and shown["data"].get("reason") == "deal")
        assert (line is None) == silent, shown
        assert line is None or (line[0].isupper() or line.startswith(tuple(NAMES))), line
