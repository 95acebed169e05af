"""One or more tests per section of RULES.md (/work/shared/RULES.md), named after the section.

Positions are built by hand with ``positions.make_position``; ``draw_pile_top`` fixes the next
cards drawn or flipped. A refused action must name the rule that forbids it
(``IllegalActionError.rule``) and leave ``game.to_dict()`` unchanged (``assert_refused``).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from positions import assert_refused, codes, hand_of, legal, make_position, play

from dos_engine import (
    ALL_CARDS,
    Bonus,
    Card,
    CardKind,
    Colour,
    Event,
    EventKind,
    Game,
    IllegalActionError,
    InvalidActionError,
    InvalidStateError,
    NotYourTurnError,
    Options,
    Phase,
    RandomStrategy,
    new_deck,
    parse_action,
    parse_card,
    replay,
    round_seed,
    start_game,
)
from dos_engine.rng import derive_key, shuffle
from dos_engine.strategies import play_game

OTHER = ["G8", "G9", "B9"]  # a harmless hand for seat 1
DOS = {"dos_call": True, "dos_rule": "printed"}  # the printed DOS rule (5)
V1 = {"dos_call": True, "dos_rule": "v1"}  # the first reading, for games stored before it


def kinds(events: Sequence[Event]) -> list[EventKind]:
    return [event.kind for event in events]


def only(events: Sequence[Event], kind: EventKind) -> list[Event]:
    return [event for event in events if event.kind is kind]


def matched_event(events: Sequence[Event]) -> dict[str, Any]:
    found = only(events, EventKind.MATCHED)
    assert len(found) == 1
    return dict(found[0].data)


# -- 1. Cards ------------------------------------------------------------------------------------


def test_1_1_deck_has_88_coloured_number_cards_and_8_wild_number() -> None:
    deck = new_deck()
    assert len(deck) == 108
    assert sum(1 for c in deck if c.kind is CardKind.NUMBER) == 88
    assert sum(1 for c in deck if c.kind is CardKind.WILD_NUMBER) == 8
    expected = {1: 3, 3: 3, 4: 3, 5: 3, 6: 2, 7: 2, 8: 2, 9: 2, 10: 2}
    for colour in Colour:
        of_colour = [c for c in deck if c.colour is colour]
        assert len(of_colour) == 24
        numbers = Counter(c.number for c in of_colour if c.kind is CardKind.NUMBER)
        assert numbers == expected
        assert sum(1 for c in of_colour if c.kind is CardKind.WILD_NUMBER) == 2
    assert {c.colour for c in deck if c.kind is not CardKind.WILD_DOS} == set(Colour)


def test_1_1_there_are_no_coloured_twos() -> None:
    assert not [c for c in new_deck() if c.kind is CardKind.NUMBER and c.number == 2]
    for code in ("R2", "G2", "B2", "Y2", "R0", "R11"):
        with pytest.raises(InvalidActionError):
            parse_card(code)
    with pytest.raises(ValueError, match=r"no coloured 2"):
        Card(CardKind.NUMBER, Colour.RED, 2)


def test_1_2_twelve_wild_dos_have_no_colour_and_count_as_two() -> None:
    wild_dos = [c for c in new_deck() if c.kind is CardKind.WILD_DOS]
    assert len(wild_dos) == 12
    assert all(c.colour is None and c.number == 2 and c.value == 2 for c in wild_dos)
    assert {c.code for c in wild_dos} == {"W2"}
    assert len(ALL_CARDS) == 41  # 4 colours x (9 numbers + Wild #) + Wild DOS


def test_1_3_wild_number_in_hand_takes_declared_number() -> None:
    for number in (1, 3, 4, 5, 6, 7, 8, 9, 10):
        game = make_position([["R#", "G1", "Y9"], OTHER], center_row=[f"B{number}", "Y#"])
        assert "m1 R#" in legal(game)
        data = matched_event(play(game, "m1 R#"))
        assert data["declared"]["numbers"] == [number]
        assert data["declared"]["colours"] == ["R"]  # its printed colour
        assert data["bonus"] == "none"  # red Wild # on a blue card


def test_1_3_wild_number_keeps_its_printed_colour() -> None:
    game = make_position([["R#", "G1", "Y9"], OTHER], center_row=["R7", "B4"])
    data = matched_event(play(game, "m1 R#"))
    assert data["declared"]["numbers"] == [7]
    assert data["bonus"] == Bonus.SINGLE_COLOUR.value


def test_1_3_wild_number_declared_only_1_to_10() -> None:
    game = make_position([["R#", "B10", "Y9"], OTHER], center_row=["B7", "G10"])
    assert game.parse_action("m1 R#=7") == parse_action("m1 R#")
    for text in ("m1 R#=6", "m1 R#=11", "m1 R#=0"):
        before = game.to_dict()
        with pytest.raises(IllegalActionError) as error:
            game.parse_action(text)
        assert error.value.rule == "1.3"
        assert game.to_dict() == before
    # R# + B10 on G10 would need the Wild # to be 0.
    assert_refused(game, "m2 R#+B10", "1.3")
    assert_refused(game, "m1 R#+Y9", "1.3")  # would be -2


def test_1_4_wild_dos_in_hand_is_a_two_of_declared_colour() -> None:
    game = make_position([["W2", "R3", "G8"], OTHER], center_row=["R5", "B10"])
    data = matched_event(play(game, "m1 R3+W2"))
    assert data["declared"]["numbers"] == [3, 2]
    assert data["declared"]["colours"] == ["R", "R"]  # declared red: a double colour match
    assert data["bonus"] == Bonus.DOUBLE_COLOUR.value
    game = make_position([["W2", "R3", "G8"], OTHER], center_row=["R5", "B10"])
    data = matched_event(play(game, "m2 G8+W2"))
    assert data["declared"]["numbers"] == [8, 2]
    assert data["bonus"] == "none"  # G8 is not blue, whatever the Wild DOS is


def test_1_4_wild_dos_in_hand_is_always_two() -> None:
    game = make_position([["W2", "R3", "G8"], OTHER], center_row=["R5", "B10"])
    assert_refused(game, "m1 W2", "3.1")
    assert_refused(game, "m2 W2", "3.1")
    # A colour declaration that gives up the bonus is refused (the engine declares wilds).
    with pytest.raises(IllegalActionError) as error:
        game.parse_action("m1 R3+W2=B")
    assert error.value.rule == "3.5"
    assert game.parse_action("m1 R3+W2=R") == parse_action("m1 R3+W2")


def test_1_5_wild_number_in_center_row_takes_declared_number() -> None:
    game = make_position([["B3", "Y4", "R6", "G5"], OTHER], center_row=["R#", "G9"])
    data = matched_event(play(game, "m1 B3+Y4"))
    assert data["declared"]["target_number"] == 7
    assert data["declared"]["target_colour"] == "R"  # the printed colour stays
    assert data["bonus"] == "none"


def test_1_5_wild_number_in_center_row_keeps_printed_colour() -> None:
    game = make_position([["B3", "Y4", "R6", "G5"], OTHER], center_row=["R#", "G9"])
    data = matched_event(play(game, "m1 R6"))
    assert data["declared"]["target_number"] == 6
    assert data["bonus"] == Bonus.SINGLE_COLOUR.value
    game = make_position([["B3", "Y4", "R6", "G5"], OTHER], center_row=["R#", "G9"])
    assert matched_event(play(game, "m1 G5"))["bonus"] == "none"


def test_1_5_wild_number_in_center_row_is_1_to_10() -> None:
    game = make_position([["B3", "Y4", "R6", "G5"], OTHER], center_row=["R#", "G9"])
    assert_refused(game, "m1 R6+G5", "1.5")  # 11
    assert game.parse_action("m1=6 R6") == parse_action("m1 R6")
    for text in ("m1=5 R6", "m1=11 R6"):
        with pytest.raises(IllegalActionError) as error:
            game.parse_action(text)
        assert error.value.rule == "1.5"


def test_1_6_wild_dos_in_center_row_is_a_two_of_declared_colour() -> None:
    hands = [["B1", "B1", "G1", "R#"], OTHER]
    game = make_position(hands, center_row=["W2", "G9"])
    data = matched_event(play(game, "m1 B1+B1"))
    assert data["declared"]["target_number"] == 2
    assert data["declared"]["target_colour"] == "B"
    assert data["bonus"] == Bonus.DOUBLE_COLOUR.value
    game = make_position(hands, center_row=["W2", "G9"])
    assert matched_event(play(game, "m1 G1+B1"))["bonus"] == "none"
    game = make_position(hands, center_row=["W2", "G9"])
    data = matched_event(play(game, "m1 R#"))
    assert data["declared"]["numbers"] == [2]
    assert data["declared"]["target_colour"] == "R"
    assert data["bonus"] == Bonus.SINGLE_COLOUR.value


def test_1_6_wild_dos_on_wild_dos_is_a_colour_match() -> None:
    game = make_position([["W2", "G3", "Y9"], OTHER], center_row=["W2", "B8"])
    data = matched_event(play(game, "m1 W2"))
    assert data["declared"]["target_number"] == 2
    assert data["declared"]["target_colour"] == data["declared"]["colours"][0]
    assert data["bonus"] == Bonus.SINGLE_COLOUR.value


def test_1_6_wild_dos_in_center_row_is_always_two() -> None:
    game = make_position([["B1", "B1", "G1", "R3", "W2"], OTHER], center_row=["W2", "G9"])
    assert_refused(game, "m1 R3", "3.1")
    assert_refused(game, "m1 G1", "3.1")
    assert_refused(game, "m1 R3+W2", "3.2")
    with pytest.raises(IllegalActionError) as error:
        game.parse_action("m1=Y B1+B1")  # yellow would give up the double colour match
    assert error.value.rule == "3.5"
    assert game.parse_action("m1=B B1+B1") == parse_action("m1 B1+B1")


def test_1_7_points_number_face_value_wild_dos_20_wild_number_40() -> None:
    for card in ALL_CARDS:
        if card.kind is CardKind.WILD_DOS:
            assert card.points == 20
        elif card.kind is CardKind.WILD_NUMBER:
            assert card.points == 40
        else:
            assert card.points == card.number
    # 4 x (3 x (1+3+4+5) + 2 x (6+7+8+9+10)) + 8 x 40 + 12 x 20
    assert sum(card.points for card in new_deck()) == 4 * 119 + 320 + 240


# -- 2. Set-up -----------------------------------------------------------------------------------


def test_2_1_two_to_four_players() -> None:
    for count in (1, 5):
        with pytest.raises(ValueError, match=r"2 to 4"):
            Game.new([f"p{i}" for i in range(count)], "seed")
    for count in (2, 3, 4):
        game = Game.new([f"p{i}" for i in range(count)], "seed")
        assert len(game.hands) == count
        assert game.players == tuple(f"p{i}" for i in range(count))


def test_2_1_turns_go_left_to_the_next_seat() -> None:
    game = make_position(
        [["G8", "B9"], ["Y8", "Y9"], ["R5", "G1", "Y3"]], center_row=["B5", "B10"], current=2
    )
    events = play(game, "m1 R5")
    assert only(events, EventKind.TURN_ENDED)[0].data["next"] == 0
    assert game.current == 0  # after the last seat comes seat 0
    play(game, "draw")
    assert game.current == 0
    with pytest.raises(NotYourTurnError):
        game.play(parse_action("draw"), 1)


def test_2_1_a_seat_that_does_not_exist_has_no_legal_actions() -> None:
    game = make_position([["G8", "B9"], ["R5", "G7", "Y1"], ["B1", "B3", "B4"]],
                         center_row=["Y5", "R10"], current=1, dos_missed=[True, False, False],
                         options=DOS)
    assert legal(game, 2) == ["catch 0"]
    for seat in (3, 7):
        try:
            listed = legal(game, seat)
        except ValueError:
            listed = []
        assert listed == [], f"seat {seat} is not in the game but may {listed}"


def _dealer_draws(seed: str, count: int) -> tuple[list[dict[str, str]], int]:
    _, events = start_game([f"p{i}" for i in range(count)], seed)
    data = events[0].data
    assert events[0].kind is EventKind.GAME_STARTED
    return list(data["dealer_draws"]), int(data["dealer"])


def test_2_2_highest_draw_deals_and_wild_cards_count_zero() -> None:
    assert parse_card("R#").dealer_value == 0
    assert parse_card("W2").dealer_value == 0
    assert parse_card("G10").dealer_value == 10
    for index in range(20):
        draws, dealer = _dealer_draws(f"dealer-{index}", 3)
        last = {int(seat): parse_card(code).dealer_value for seat, code in draws[-1].items()}
        best = max(last.values())
        assert [seat for seat, value in last.items() if value == best] == [dealer]
        game = Game.new(["p0", "p1", "p2"], f"dealer-{index}")
        assert game.dealer == dealer


def test_2_2_dealer_ties_redraw_among_tied() -> None:
    found = 0
    for index in range(300):
        draws, dealer = _dealer_draws(f"tie-{index}", 4)
        if len(draws) == 1:
            continue
        found += 1
        for before, after in itertools.pairwise(draws):
            values = {int(s): parse_card(c).dealer_value for s, c in before.items()}
            best = max(values.values())
            tied = sorted(seat for seat, value in values.items() if value == best)
            assert len(tied) > 1
            assert sorted(int(s) for s in after) == tied  # only the tied players draw again
        last = {int(s): parse_card(c).dealer_value for s, c in draws[-1].items()}
        assert max(last, key=lambda seat: last[seat]) == dealer
        assert sorted(last.values()).count(last[dealer]) == 1
        if found >= 3:
            break
    assert found >= 3, "no seed with a tie found"


def test_2_2_cards_go_back_and_the_deck_is_reshuffled() -> None:
    game = Game.new(["p0", "p1", "p2", "p3"], "tie-36")  # a seed with two rounds of ties
    assert game.card_count() == 108
    assert Counter(_all_cards(game)) == Counter(new_deck())


def test_2_3_deal_seven_each_and_two_center_row_cards() -> None:
    for count in (2, 3, 4):
        game, events = start_game([f"p{i}" for i in range(count)], f"deal-{count}")
        assert [len(hand) for hand in game.hands] == [7] * count
        assert len(game.center_row) == 2
        assert game.cr_matched == [None, None]
        assert len(game.draw_pile) == 108 - 7 * count - 2
        assert game.discard_pile == []
        flipped = only(events, EventKind.CR_FLIPPED)
        assert flipped[0].data["cards"] == codes(game.center_row)
        dealt = only(events, EventKind.DREW)
        assert [e.data["count"] for e in dealt] == [7] * count


def test_2_4_player_left_of_dealer_starts() -> None:
    for count in (2, 3, 4):
        for index in range(5):
            game = Game.new([f"p{i}" for i in range(count)], f"first-{index}")
            assert game.current == (game.dealer + 1) % count
            assert game.phase is Phase.START


def test_2_4_deal_passes_left_each_round() -> None:
    game = make_position(
        [["R5"], ["G8", "G9"], ["B8", "B9"]], center_row=["G5", "B7"], current=0, dealer=2
    )
    events = play(game, "m1 R5")
    assert EventKind.ROUND_OVER in kinds(events)
    assert game.round_no == 2
    assert game.dealer == 0
    assert game.current == 1
    started = only(events, EventKind.ROUND_STARTED)[0].data
    assert (started["dealer"], started["first"]) == (0, 1)


# -- 3. A turn -----------------------------------------------------------------------------------


def test_3_1_single_match_number_equals_cr_number() -> None:
    game = make_position([["R5", "G6", "Y1", "Y9"], OTHER], center_row=["B5", "Y9", "G3"])
    events = play(game, "m1 R5")
    assert kinds(events) == [EventKind.MATCHED]
    assert matched_event(events)["cards"] == ["R5"]
    assert game.cr_matched[0] == (parse_card("R5"),)
    assert hand_of(game, 0) == ["G6", "Y1", "Y9"]
    assert game.phase is Phase.MATCHING
    assert_refused(game, "m2 G6", "3.1")
    assert_refused(game, "m2 G9", "3.1")  # not held
    assert_refused(game, "m3 Y1", "3.1")


def test_3_2_double_match_two_cards_add_up() -> None:
    game = make_position([["R3", "G4", "B5", "Y1", "Y4"], OTHER], center_row=["R7", "B9"])
    assert_refused(game, "m2 R3+B5", "3.2")  # 8, not 9
    assert_refused(game, "m1 G4+G4", "3.2")  # one G4 only (4+4 would not be 7 either)
    data = matched_event(play(game, "m1 R3+G4"))
    assert data["cards"] == ["R3", "G4"]
    assert game.cr_matched[0] == (parse_card("R3"), parse_card("G4"))
    with pytest.raises(InvalidActionError):
        parse_action("m2 R1+R3+B5")  # exactly two cards


def test_3_2_same_card_twice_needs_two_copies() -> None:
    game = make_position([["R4", "Y1", "B5"], OTHER], center_row=["R8", "B9"])
    assert_refused(game, "m1 R4+R4", "3.2")
    game = make_position([["R4", "R4", "B5"], OTHER], center_row=["R8", "B9"])
    play(game, "m1 R4+R4")
    assert hand_of(game, 0) == ["B5"]


def test_3_3_each_cr_card_matched_at_most_once() -> None:
    game = make_position([["R5", "G5", "B3", "Y4", "G9"], OTHER], center_row=["B5", "Y7"])
    play(game, "m1 R5")
    assert_refused(game, "m1 G5", "3.3")
    assert "m1 G5" not in legal(game)
    play(game, "m2 B3+Y4")
    assert game.current == 1  # nothing left to match: the turn ended by itself


def test_3_3_several_matches_in_any_order_cr_fixed_during_turn() -> None:
    game = make_position(
        [["R5", "B3", "Y4", "Y9", "R1"], OTHER],
        center_row=["B5", "Y7", "G9"],
        draw_pile_top=["G10", "Y10"],
    )
    row = codes(game.center_row)
    play(game, "m3 Y9")
    assert codes(game.center_row) == row  # positions do not move
    play(game, "m1 R5")
    assert codes(game.center_row) == row
    assert [m is not None for m in game.cr_matched] == [True, False, True]
    assert legal(game) == ["m2 B3+Y4", "end"]
    events = play(game, "end")  # may end after any match
    assert kinds(events)[:2] == [EventKind.DISCARDED, EventKind.CR_FLIPPED]
    assert codes(game.center_row) == ["Y7", "G10"]
    assert game.current == 1


def test_3_4_colour_does_not_decide_whether_a_match_is_legal() -> None:
    for colour in "RGBY":
        game = make_position([[f"{colour}5", "G9"], OTHER], center_row=["B5", "R8"])
        data = matched_event(play(game, f"m1 {colour}5"))
        assert data["bonus"] == ("single_colour" if colour == "B" else "none")
    game = make_position([["R3", "G5", "G9"], OTHER], center_row=["Y8", "B4"])
    assert "m1 R3+G5" in legal(game)


def test_3_5_single_colour_match_earns_a_placement() -> None:
    game = make_position([["R5", "G9", "Y1", "B6"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["Y10"])
    hand_sizes = [len(hand) for hand in game.hands]
    data = matched_event(play(game, "m1 R5"))
    assert data["bonus"] == Bonus.SINGLE_COLOUR.value
    assert game.bonuses == 1
    assert game.view(0).phase is Phase.MATCHING  # m2 B6+Y1 is still possible
    play(game, "end")
    assert [n - 1 for n in hand_sizes[:1]] + hand_sizes[1:] == [len(h) for h in game.hands]
    assert game.phase is Phase.BONUS
    assert sorted(legal(game)) == ["end", "place B6", "place G9", "place Y1"]
    events = play(game, "place G9")
    assert EventKind.PLACED in kinds(events)
    assert codes(game.center_row) == ["B7", "Y10", "G9"]
    assert game.current == 1  # one bonus, one placement: the turn ended by itself


def test_3_5_double_colour_match_makes_others_draw_at_once() -> None:
    game = make_position(
        [["R3", "R4", "G1", "G9", "Y5"], ["B8", "B9"], ["Y8", "Y9"]],
        center_row=["R7", "B10"],
        draw_pile_top=["Y6", "B6"],
    )
    events = play(game, "m1 R3+R4")
    assert kinds(events) == [EventKind.MATCHED, EventKind.DREW, EventKind.DREW]
    assert matched_event(events)["bonus"] == Bonus.DOUBLE_COLOUR.value
    drew = only(events, EventKind.DREW)
    assert [(e.seat, e.data["reason"], e.data["count"]) for e in drew] == [
        (1, "double_colour", 1),
        (2, "double_colour", 1),
    ]
    assert drew[0].secret == {"cards": ["Y6"]}
    assert drew[1].secret == {"cards": ["B6"]}
    assert hand_of(game, 1) == ["B8", "B9", "Y6"]  # at once, before the turn ends
    assert hand_of(game, 2) == ["B6", "Y8", "Y9"]
    assert game.current == 0
    assert game.view(0).phase is Phase.MATCHING
    play(game, "m2 G1+G9")
    assert game.phase is Phase.BONUS
    assert game.placements_left == 1


def test_3_5_placing_a_bonus_card_is_optional() -> None:
    game = make_position([["R5", "G9", "Y1", "B6"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["Y10"])
    play(game, "m1 R5; end")
    assert game.phase is Phase.BONUS
    events = play(game, "end")
    assert EventKind.PLACED not in kinds(events)
    assert game.current == 1
    assert codes(game.center_row) == ["B7", "Y10"]
    assert hand_of(game, 0) == ["B6", "G9", "Y1"]


def test_3_5_one_placement_per_bonus() -> None:
    game = make_position([["R5", "B7", "G1", "Y1", "Y3"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["G3", "G4"])
    play(game, "m1 R5; m2 B7")  # two single colour matches; nothing left: matching ends
    assert game.phase is Phase.BONUS
    assert game.placements_left == 2
    play(game, "place G1")
    assert game.placements_left == 1
    assert "place Y1" in legal(game)
    play(game, "place Y1")
    assert game.current == 1  # both placements made: the turn ended by itself
    assert codes(game.center_row) == ["G3", "G4", "G1", "Y1"]
    assert hand_of(game, 0) == ["Y3"]


MANDATORY = {"bonus_placement": "mandatory"}


def test_3_5_placing_is_optional_by_default() -> None:
    assert Options().bonus_placement == "optional"
    assert Options.from_dict({}).bonus_placement == "optional"
    assert Options.from_stored({"dos_call": True}).bonus_placement == "optional"


def test_3_5_mandatory_placement_no_end_while_a_card_can_be_placed() -> None:
    game = make_position([["R5", "G9", "Y1", "B6"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["Y10"], options=MANDATORY)
    play(game, "m1 R5")
    assert "end" in legal(game)  # ending the matching is still free ...
    play(game, "end")
    assert game.phase is Phase.BONUS
    assert sorted(legal(game)) == ["place B6", "place G9", "place Y1"]  # ... placing is not
    error = assert_refused(game, "end", "3.5")
    assert "bonus_placement" in str(error)
    play(game, "place B6")
    assert game.current == 1
    assert codes(game.center_row) == ["B7", "Y10", "B6"]


def test_3_5_mandatory_placement_one_card_per_bonus() -> None:
    game = make_position([["R5", "B7", "G1", "Y1", "Y3"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["G3", "G4"], options=MANDATORY)
    play(game, "m1 R5; m2 B7")
    assert game.placements_left == 2
    assert_refused(game, "end", "3.5")
    play(game, "place G1")
    assert_refused(game, "end", "3.5")
    play(game, "place Y1")
    assert game.current == 1
    assert hand_of(game, 0) == ["Y3"]


def test_3_5_mandatory_placement_ends_with_the_hand() -> None:
    game = make_position([["R5", "B7", "G1"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["G3", "G4"], options=MANDATORY)
    play(game, "m1 R5; m2 B7")
    assert game.placements_left == 2
    events = play(game, "place G1")  # two bonuses, one card: the hand is empty, the round over
    assert only(events, EventKind.ROUND_OVER)[0].seat == 0


def test_3_5_mandatory_placement_in_the_lenient_turn() -> None:
    game = make_position([["R5", "G9", "Y1", "B6"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["Y10"], options=MANDATORY)
    with pytest.raises(IllegalActionError) as error:
        game.play_text("m1 R5; end; end")
    assert error.value.rule == "3.5"
    game.play_text("m1 R5; end; place g9")
    assert game.current == 1


def test_3_5_no_placement_without_a_bonus() -> None:
    game = make_position([["R5", "G9", "Y1", "G7"], OTHER], center_row=["B5", "B7"])
    assert_refused(game, "place G9", "3.5")
    play(game, "m1 R5")
    assert_refused(game, "place G9", "3.5")
    game = make_position([["R5", "G9", "Y1", "B7"], OTHER], center_row=["R5", "B7"])
    play(game, "m1 R5")
    assert_refused(game, "place G9", "4.3")  # earned, but placed only at the end of the turn


def test_3_6_after_draw_match_must_use_drawn_card() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"],
                         draw_pile_top=["B3"])
    events = play(game, "draw")
    drew = only(events, EventKind.DREW)[0]
    assert (drew.seat, drew.data["count"], drew.data["reason"]) == (0, 1, "draw")
    assert drew.secret == {"cards": ["B3"]}
    assert game.drawn == parse_card("B3")
    assert_refused(game, "m1 R5", "3.6")
    assert sorted(legal(game)) == ["add B3", "add G3", "add R5", "add Y9", "m2 R5+B3"]
    events = play(game, "m2 R5+B3")
    assert game.current == 1  # one match after a draw: the turn ended by itself
    assert EventKind.TURN_ENDED in kinds(events)
    assert hand_of(game, 0) == ["G3", "Y9"]


def test_3_6_match_with_drawn_card_earns_bonuses_as_usual() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["G5", "R8"],
                         draw_pile_top=["G5", "B10"])
    play(game, "draw")
    data = matched_event(play(game, "m1 G5"))
    assert data["bonus"] == Bonus.SINGLE_COLOUR.value
    assert game.phase is Phase.BONUS
    assert game.current == 0
    play(game, "place Y9")
    assert codes(game.center_row) == ["R8", "B10", "Y9"]
    assert game.current == 1


def test_3_6_after_draw_without_match_must_add_a_card() -> None:
    game = make_position([["R1", "G3"], OTHER], center_row=["B10", "Y9"], draw_pile_top=["Y4"])
    play(game, "draw")
    assert sorted(legal(game)) == ["add G3", "add R1", "add Y4"]
    assert_refused(game, "end", "3.6")
    assert_refused(game, "draw", "3.6")
    assert_refused(game, "m1 G3+Y4", "3.2")
    events = play(game, "add Y4")  # the drawn card itself may be added
    assert kinds(events)[0] is EventKind.ADDED
    assert only(events, EventKind.ADDED)[0].data == {"card": "Y4", "position": 3}
    assert codes(game.center_row) == ["B10", "Y9", "Y4"]
    assert game.current == 1


def test_3_6_drawn_card_option_allows_one_match_only() -> None:
    game = make_position([["R5", "G3", "B4"], OTHER], center_row=["B5", "Y7"],
                         draw_pile_top=["Y5"])
    play(game, "draw")
    assert sorted(legal(game)) == ["add B4", "add G3", "add R5", "add Y5", "m1 Y5"]
    play(game, "m1 Y5")
    assert game.current == 1  # m2 G3+B4 would fit, but after a draw only one match is allowed
    assert hand_of(game, 0) == ["B4", "G3", "R5"]


def test_3_6_any_option_allows_any_matches_after_draw() -> None:
    game = make_position([["R5", "G3", "B4", "G9", "Y8"], OTHER], center_row=["B5", "Y7", "R10"],
                         draw_pile_top=["Y1"], options={"after_draw": "any"})
    play(game, "draw")
    assert "m1 R5" in legal(game)  # R5 is not the drawn card
    play(game, "m1 R5")
    assert sorted(legal(game)) == ["end", "m2 G3+B4", "m3 G9+Y1"]
    assert_refused(game, "add G9", "3.6")  # a match was made: no card is added
    play(game, "m2 G3+B4")
    play(game, "m3 G9+Y1")
    assert game.current == 1
    assert len(game.discard_pile) == 8
    assert hand_of(game, 0) == ["Y8"]


def test_3_6_any_option_without_match_must_add() -> None:
    game = make_position([["R1", "G3"], OTHER], center_row=["B10", "Y9"], draw_pile_top=["Y4"],
                         options={"after_draw": "any"})
    play(game, "draw")
    assert sorted(legal(game)) == ["add G3", "add R1", "add Y4"]
    assert_refused(game, "end", "3.6")
    play(game, "add R1")
    assert game.current == 1


def test_3_6_add_only_after_drawing() -> None:
    game = make_position([["R5", "G3", "B4"], OTHER], center_row=["B5", "Y7"])
    assert_refused(game, "add G3", "3.6")
    play(game, "m1 R5")
    assert_refused(game, "add G3", "3.6")


def test_3_7_no_draw_after_match() -> None:
    game = make_position([["R5", "G3", "Y6"], OTHER], center_row=["B5", "Y9"])
    play(game, "m1 R5")
    assert game.current == 0
    assert "draw" not in legal(game)
    error = assert_refused(game, "draw", "3.7")
    assert "(rule 3.7)" in str(error)


def test_3_8_turn_cannot_end_empty() -> None:
    game = make_position([["R5", "G3", "Y6"], OTHER], center_row=["B5", "Y9"], draw_pile_top=["G1"])
    assert_refused(game, "end", "3.8")
    play(game, "draw")
    assert_refused(game, "end", "3.6")  # drawn, but neither matched nor added
    game = make_position([["R5", "G3", "Y6"], OTHER], center_row=["B5", "Y9"])
    play(game, "m1 R5")
    assert game.is_legal(parse_action("end"))  # after a match the turn may end at any time
    play(game, "end")
    assert game.current == 1


def test_3_8_turn_ends_by_itself_when_end_is_the_only_action() -> None:
    game = make_position([["R5", "G3"], OTHER], center_row=["B5", "Y9"])
    events = play(game, "m1 R5")
    assert kinds(events)[-1] is EventKind.TURN_ENDED
    assert game.current == 1
    with pytest.raises(NotYourTurnError):
        game.play(parse_action("end"), 0)


def test_3_8_turn_ends_by_itself_after_a_catch_by_a_waiting_player() -> None:
    """README: "The turn ends by itself when `end` is the only thing left to do".

    Seat 1 drew and added: ``end`` and ``catch 0`` are left. Seat 2 catches seat 0; now seat 1
    has nothing but ``end`` left, so its turn should end by itself.
    """
    game = make_position(
        [["G8", "B9"], ["R1", "G1", "Y3"], ["B1", "B3", "B4"]],
        center_row=["Y5", "R10"],
        current=1,
        dos_missed=[True, False, False],
        options=V1,
        draw_pile_top=["Y4"],
    )
    play(game, "draw; add Y4", 1)
    assert legal(game, 1) == ["end", "catch 0"]
    play(game, "catch 0", 2)
    assert game.current == 2, f"seat 1 still to play with only {legal(game, 1)} left"


def test_3_8_calls_and_catches_keep_no_turn_open_under_the_printed_dos_rule() -> None:
    game = make_position([["G8", "B9"], ["R1", "G1", "Y3"], ["B1", "B3", "B4"]],
                         center_row=["Y5", "R10"], current=1, options=DOS,
                         draw_pile_top=["Y4"])
    play(game, "draw; add Y4", 1)  # "catch 0" is still possible, but out of turn as well
    assert game.current == 2
    assert legal(game, 1) == ["catch 0"]


# -- 4. End of turn ------------------------------------------------------------------------------


def test_4_1_matched_cards_go_to_discard_unmatched_stay() -> None:
    game = make_position([["R5", "G3", "Y4", "B9"], OTHER], center_row=["B5", "Y7", "G9"],
                         draw_pile_top=["R10"])
    play(game, "m1 R5; m2 G3+Y4")
    assert game.discard_pile == []  # nothing moves before the end of the turn (3.3)
    events = play(game, "end")
    discarded = only(events, EventKind.DISCARDED)[0].data["cards"]
    assert sorted(discarded) == sorted(["B5", "R5", "Y7", "G3", "Y4"])
    assert sorted(codes(game.discard_pile)) == sorted(discarded)
    assert codes(game.center_row) == ["G9", "R10"]
    assert game.cr_matched == [None, None]


def test_4_2_refill_center_row_to_two() -> None:
    game = make_position([["R5", "Y7", "B1"], OTHER], center_row=["B5", "G7"],
                         draw_pile_top=["Y10", "G1", "R9"])
    events = play(game, "m1 R5; m2 Y7")  # nothing left to match: the turn ends by itself
    flipped = only(events, EventKind.CR_FLIPPED)
    assert [e.data["cards"] for e in flipped] == [["Y10", "G1"]]
    assert codes(game.center_row) == ["Y10", "G1"]
    assert game.draw_pile[-1] == parse_card("R9")


def test_4_2_no_flip_when_two_cards_remain() -> None:
    game = make_position([["R5", "G9"], OTHER], center_row=["B5", "Y7", "G10"],
                         draw_pile_top=["Y10"])
    events = play(game, "m1 R5")
    assert game.current == 1
    assert EventKind.CR_FLIPPED not in kinds(events)
    assert codes(game.center_row) == ["Y7", "G10"]


def test_4_3_bonus_placement_after_flip() -> None:
    game = make_position([["R5", "B7", "G1", "Y3", "B10"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["Y10", "G4"])
    events = play(game, "m1 R5; m2 B7")
    order = kinds(events)
    assert order.index(EventKind.DISCARDED) < order.index(EventKind.CR_FLIPPED)
    assert codes(game.center_row) == ["Y10", "G4"]  # flipped first (4.2) ...
    assert game.phase is Phase.BONUS
    assert sorted(legal(game)) == ["end", "place B10", "place G1", "place Y3"]
    play(game, "place G1")  # ... then the bonus cards (4.3)
    assert codes(game.center_row) == ["Y10", "G4", "G1"]
    play(game, "place Y3")
    assert codes(game.center_row) == ["Y10", "G4", "G1", "Y3"]  # no maximum
    assert game.current == 1
    assert len(game.center_row) == 4


def test_4_3_matching_is_over_in_the_bonus_phase() -> None:
    game = make_position([["R5", "B7", "G1", "G4", "B10"], OTHER], center_row=["R5", "Y7"],
                         draw_pile_top=["Y10", "G4"])
    play(game, "m1 R5; end")
    assert game.phase is Phase.BONUS
    assert codes(game.center_row) == ["Y7", "Y10"]
    assert_refused(game, "m1 B7", "4.3")  # B7 fits Y7, but the matching is over
    assert_refused(game, "draw", "4.3")


def test_4_4_reshuffle_discard_when_draw_pile_empty() -> None:
    game = make_position([["R1", "G1"], OTHER], center_row=["B10", "Y9"], rest="discard")
    assert game.draw_pile == []
    old_discard = Counter(codes(game.discard_pile))
    events = play(game, "draw")
    assert kinds(events)[:2] == [EventKind.RESHUFFLED, EventKind.DREW]
    assert only(events, EventKind.RESHUFFLED)[0].data == {"count": sum(old_discard.values())}
    assert game.discard_pile == []
    assert game.reshuffles == 1
    assert game.drawn is not None
    assert Counter([*codes(game.draw_pile), game.drawn.code]) == old_discard
    assert game.card_count() == 108
    # the reshuffle is derived from the round seed (replayable, RULES 7)
    again = make_position([["R1", "G1"], OTHER], center_row=["B10", "Y9"], rest="discard")
    play(again, "draw")
    assert again == game


def test_4_4_reshuffle_when_a_card_must_be_flipped() -> None:
    game = make_position([["R5", "G7", "B1"], OTHER], center_row=["B5", "Y7"],
                         draw_pile_top=["Y10"], rest="discard")
    events = play(game, "m1 R5; m2 G7")
    order = kinds(events)
    assert EventKind.RESHUFFLED in order
    assert len(game.center_row) == 2
    assert game.center_row[0] == parse_card("Y10")
    assert game.card_count() == 108


def test_4_4_both_piles_empty_nothing_drawn() -> None:
    game = make_position([["R1", "G1"], []], center_row=["B10", "Y9"], rest=1)
    assert game.draw_pile == []
    assert game.discard_pile == []
    before = hand_of(game, 0)
    events = play(game, "draw")
    assert kinds(events) == [EventKind.DREW]
    assert only(events, EventKind.DREW)[0].data["count"] == 0
    assert hand_of(game, 0) == before
    assert game.drawn is None
    assert sorted(legal(game)) == ["add G1", "add R1"]  # play continues: add a card
    play(game, "add R1")
    assert game.current == 1
    assert codes(game.center_row) == ["B10", "Y9", "R1"]


def test_4_4_both_piles_empty_double_colour_draws_nothing() -> None:
    game = make_position([["R3", "R4", "G9"], []], center_row=["R7", "B10"], rest=1)
    size = len(game.hands[1])
    events = play(game, "m1 R3+R4")
    assert [e.data["count"] for e in only(events, EventKind.DREW)] == [0]
    assert len(game.hands[1]) == size


# -- 5. Calling "DOS" ----------------------------------------------------------------------------
#
# The printed DOS rule (option dos_call, dos_rule "printed", every new game). Each call of
# ``play`` (the helper plays one action per call) is one request; ``play_text``/``play_turn``
# submit a whole turn as one request (5.3).


def test_5_1_holding_two_cards_without_a_call_exposes_the_player() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"], options=DOS)
    events = play(game, "m1 R5")
    assert game.current == 1  # end was all that was left: calls keep no turn open (5.1)
    assert EventKind.DOS_MISSED not in kinds(events)
    assert game.dos_missed == [True, False]
    assert game.view(1).dos_missed == (True, False)
    assert legal(game, 0) == ["dos"]  # the call may come out of turn
    assert "catch 0" in legal(game, 1)


def test_5_1_exposed_by_a_double_colour_match_draw() -> None:
    game = make_position([["R3", "R4", "G1", "Y5", "B9"], ["B8"], ["Y8", "Y9"]],
                         center_row=["R7", "B10"], draw_pile_top=["Y6", "B6"], options=DOS)
    play(game, "m1 R3+R4")  # everyone else draws one: seat 1 now holds two, seat 2 three
    assert hand_of(game, 1) == ["B8", "Y6"]
    assert game.current == 0
    assert game.phase is Phase.MATCHING
    assert game.dos_missed == [False, True, False]
    assert legal(game, 1) == ["dos"]
    assert legal(game, 2) == ["catch 1"]
    assert "catch 1" in legal(game, 0)  # the player to move may catch too, between actions
    events = play(game, "catch 1", 0)
    assert [(e.kind, e.seat) for e in events] == [(EventKind.CAUGHT, 1), (EventKind.DREW, 1)]
    assert events[0].data == {"by": 0, "deferred": False}
    assert len(game.hands[1]) == 4
    assert game.dos_missed == [False, False, False]
    assert game.current == 0  # the catch is not a turn


def test_5_1_exposed_after_an_add_and_after_a_placement() -> None:
    game = make_position([["R1", "G1"], ["B8", "B9", "B10"]], center_row=["B10", "Y9"],
                         draw_pile_top=["Y4"], options=DOS)
    play(game, "draw; add G1")  # 2 -> 3 -> 2 cards
    assert game.current == 1
    assert game.dos_missed == [True, False]
    game = make_position([["R5", "G9", "Y1", "B6"], OTHER], center_row=["R5", "B7"],
                         draw_pile_top=["Y10"], options=DOS)
    play(game, "m1 R5; end")
    assert game.dos_missed == [False, False]  # three cards
    play(game, "place G9")
    assert game.dos_missed == [True, False]


def test_5_1_called_out_of_turn() -> None:
    game = make_position([["R5", "G3", "Y9"], ["B8", "B9", "Y1"]], center_row=["B5", "R8"],
                         options=DOS)
    play(game, "m1 R5")
    assert game.current == 1
    events = play(game, "dos", 0)
    assert [(e.kind, e.seat) for e in events] == [(EventKind.DOS_CALLED, 0)]
    assert game.dos_missed == [False, False]
    assert game.dos_calls == [True, False]
    assert game.current == 1  # a call out of turn changes no turn
    assert legal(game, 0) == []
    assert_refused(game, "catch 0", "5.3", seat=1)
    assert_refused(game, "dos", "5.1", seat=0)  # one call per holding of two cards


def test_5_1_call_in_the_same_request_as_the_match() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"], options=DOS)
    game.play_text("m1 R5; dos")  # the turn ends by itself after m1; the call follows it
    assert game.current == 1
    assert game.dos_missed == [False, False]
    assert_refused(game, "catch 0", "5.3", seat=1)


def test_5_1_a_call_protects_until_the_hand_size_changes() -> None:
    game = make_position([["R3", "R4", "G1", "Y5"], ["B8", "Y1"]], center_row=["R7", "R1"],
                         draw_pile_top=["Y6", "Y9"], options=DOS)
    assert game.dos_missed == [False, True]
    play(game, "dos", 1)  # out of turn
    assert (game.dos_calls, game.dos_missed) == ([False, True], [False, False])
    play(game, "m1 R3+R4")  # double colour match: seat 1 draws a third card
    assert hand_of(game, 1) == ["B8", "Y1", "Y6"]
    assert game.dos_calls == [False, False]  # the call was for the two cards it held
    play(game, "end")
    play(game, "end")  # no bonus card placed
    assert game.current == 1
    play(game, "m1 Y1", 1)  # two cards again: a new holding, a new call is needed
    assert game.dos_missed[1]
    assert "dos" in legal(game, 1)
    assert "catch 1" in legal(game, 0)


def test_5_1_no_exposure_when_the_option_is_off() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"],
                         options={"dos_rule": "printed"})
    play(game, "m1 R5")
    assert game.dos_missed == [False, False]
    assert legal(game, 0) == []
    assert_refused(game, "dos", "5", seat=0)
    assert_refused(game, "catch 0", "5", seat=1)


def test_5_2_caught_out_of_turn_draws_two_at_once() -> None:
    game = make_position([["R5", "G3", "Y9"], ["B8", "B9", "Y1"], ["Y8", "Y9", "Y10"]],
                         center_row=["B5", "R8"], draw_pile_top=["Y4", "R10", "G10"],
                         options=DOS)
    play(game, "m1 R5")  # Y4 is flipped into the Center Row
    assert game.current == 1
    events = play(game, "catch 0", 2)  # a waiting player catches a waiting player
    assert [(e.kind, e.seat) for e in events] == [(EventKind.CAUGHT, 0), (EventKind.DREW, 0)]
    assert events[0].data == {"by": 2, "deferred": False}
    assert (events[1].data["count"], events[1].data["reason"]) == (2, "caught")
    assert hand_of(game, 0) == ["G10", "G3", "R10", "Y9"]
    assert game.dos_missed == [False, False, False]
    assert_refused(game, "catch 0", "5.3", seat=1)


def _exposed_in_own_turn(options: dict[str, Any] | None = None) -> Game:
    """Seat 0 single-colour-matches down to two cards with its turn still open, in one request."""
    game = make_position([["R5", "G7", "Y9"], ["B8", "B9", "B10"], ["Y8", "Y10", "B1"]],
                         center_row=["R5", "G7"], draw_pile_top=["R10", "G10", "B3", "B4"],
                         options=options or DOS)
    play(game, "m1 R5")
    assert game.current == 0
    assert game.phase is Phase.MATCHING
    assert game.dos_missed == [True, False, False]
    return game


def test_5_2_caught_between_two_actions_of_the_own_turn_draws_at_its_end() -> None:
    game = _exposed_in_own_turn()
    events = play(game, "catch 0", 1)
    assert [(e.kind, e.seat) for e in events] == [(EventKind.CAUGHT, 0)]
    assert events[0].data == {"by": 1, "deferred": True}
    assert hand_of(game, 0) == ["G7", "Y9"]  # not yet: at the end of the turn
    assert game.penalty == 2
    assert game.view(2).dos_penalty == 2
    assert game.dos_missed == [False, False, False]
    assert legal(game, 0) == ["m2 G7", "end"]  # no call any more, no second catch
    assert_refused(game, "dos", "5.2", seat=0)
    assert_refused(game, "catch 0", "5.3", seat=2)
    play(game, "m2 G7")  # a second colour bonus; matching is over
    assert game.phase is Phase.BONUS
    assert game.placements_left == 2
    events = play(game, "place Y9")  # the hand is empty ...
    assert kinds(events) == [EventKind.PLACED, EventKind.DREW, EventKind.TURN_ENDED]
    assert (events[1].seat, events[1].data["reason"], events[1].data["count"]) == (0, "caught", 2)
    assert codes(game.center_row) == ["R10", "G10", "Y9"]  # placed before the penalty (4.3)
    assert hand_of(game, 0) == ["B3", "B4"]  # ... but the penalty came first: no going out
    assert (game.round_no, game.scores, game.current) == (1, [0, 0, 0], 1)
    assert game.penalty == 0
    assert game.dos_missed == [True, False, False]  # two new cards, no call yet
    assert legal(game, 0) == ["dos"]


def test_5_2_caught_in_own_turn_by_the_player_himself_is_refused() -> None:
    game = _exposed_in_own_turn()
    assert_refused(game, "catch 0", "5.2", seat=0)


def test_5_2_any_other_player_may_catch_in_or_out_of_turn() -> None:
    for catcher in (1, 2):
        game = _exposed_in_own_turn()
        assert "catch 0" in legal(game, catcher)
        play(game, "catch 0", catcher)
        assert game.penalty == 2
    game = _exposed_in_own_turn()
    play(game, "m2 G7", 0)  # seat 0 now holds one card: no longer exposed
    assert game.dos_missed == [False, False, False]
    assert legal(game, 1) == []


def test_5_2_a_player_caught_in_own_turn_draws_at_its_end() -> None:
    game = _exposed_in_own_turn()
    play(game, "catch 0", 2)
    play(game, "end")  # the CR is refilled (R10), then the bonus phase
    assert hand_of(game, 0) == ["G7", "Y9"]
    events = play(game, "end")  # no placement
    assert kinds(events) == [EventKind.DREW, EventKind.TURN_ENDED]
    assert hand_of(game, 0) == ["B3", "G10", "G7", "Y9"]
    assert game.current == 1


def test_5_3_illegal_call_rejected_no_penalty() -> None:
    game = make_position([["R5", "G7", "B1"], ["B8", "B9", "Y1"]], center_row=["B5", "Y9"],
                         options=DOS)
    error = assert_refused(game, "dos", "5.3")
    assert "two cards" in str(error)
    assert_refused(game, "dos", "5.3", seat=1)  # out of turn as well
    assert [len(h) for h in game.hands] == [3, 3]


def test_5_3_illegal_catch_rejected_no_penalty() -> None:
    game = make_position([["R5", "G3", "Y9"], ["B8", "B9", "Y1"]], center_row=["B5", "R8"],
                         options=DOS)
    assert_refused(game, "catch 0", "5.3", seat=1)  # three cards
    assert_refused(game, "catch 5", None, seat=1)
    play(game, "m1 R5")
    assert_refused(game, "catch 0", "5.2", seat=0)  # nobody catches themselves
    assert_refused(game, "catch 1", "5.3", seat=0)
    play(game, "dos", 0)
    error = assert_refused(game, "catch 0", "5.3", seat=1)
    assert "called DOS" in str(error)


def test_5_3_a_whole_turn_submitted_at_once_exposes_only_its_end_state() -> None:
    hands = [["R5", "B7", "G1", "Y3"], ["B8", "B9", "Y1"]]
    one_by_one = make_position(hands, center_row=["B5", "G7", "R1"], options=DOS)
    play(one_by_one, "m1 R5")
    play(one_by_one, "m2 B7")
    assert one_by_one.dos_missed == [True, False]  # between two requests: exposed
    at_once = make_position(hands, center_row=["B5", "G7", "R1"], options=DOS)
    at_once.play_text("m1 R5; m2 B7; m3 G1")
    assert at_once.dos_missed == [False, False]  # two cards only in between: one card left
    play(one_by_one, "m3 G1")
    assert one_by_one.dos_missed == [False, False]
    # the same through play_turn, with Action objects
    listed = make_position(hands, center_row=["B5", "G7", "R1"], options=DOS)
    listed.play_turn([parse_action("m1 R5"), parse_action("m2 B7"), parse_action("m3 G1")])
    assert listed == at_once


def test_5_3_a_catch_waits_for_the_request_that_exposed_the_player() -> None:
    game = make_position([["R3", "R4", "G1", "Y5"], ["B8"]], center_row=["R7", "B10"],
                         draw_pile_top=["Y6"], options=DOS)
    with pytest.raises(IllegalActionError) as error:
        game.play_text("m1 R3+R4; catch 1")  # seat 1 reached two cards within this request
    assert error.value.rule == "5.3"
    assert "during this request" in str(error.value)
    assert len(game.hands[1]) == 1  # all or nothing
    game.play_text("m1 R3+R4")
    game.play_text("catch 1")
    assert len(game.hands[1]) == 4


def test_5_4_a_catch_in_the_turn_that_ends_the_round_is_scored() -> None:
    game = make_position([["R5", "G3"], ["R10", "Y#"]], center_row=["B5", "G3"],
                         draw_pile_top=["Y1", "B1"], options=DOS)
    assert game.dos_missed == [True, True]
    _, events = game.play_text("catch 1; m1 R5; m2 G3")
    assert only(events, EventKind.CAUGHT)[0].data == {"by": 0, "deferred": False}
    over = only(events, EventKind.ROUND_OVER)[0].data
    assert sorted(over["hands"][1]) == ["B1", "R10", "Y#", "Y1"]
    assert over["points"] == [0, 10 + 40 + 1 + 1]
    assert game.scores == [52, 0]


# The first reading of the DOS rule (dos_rule "v1": games stored before the printed rule).


def test_5_v1_ending_on_two_cards_without_calling_is_a_missed_call() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"], options=V1)
    play(game, "m1 R5")
    assert game.current == 0  # the turn stays open: DOS may still be called
    assert legal(game) == ["end", "dos"]
    events = play(game, "end")
    assert EventKind.DOS_MISSED in kinds(events)
    assert game.dos_missed == [True, False]
    assert game.current == 1


def test_5_v1_calling_dos_before_ending_on_two_cards() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"], options=V1)
    play(game, "m1 R5")
    events = play(game, "dos")
    assert kinds(events)[0] is EventKind.DOS_CALLED
    assert EventKind.DOS_MISSED not in kinds(events)
    assert game.current == 1  # after the call only 'end' was left
    assert game.dos_missed == [False, False]
    assert legal(game, 0) == []


def test_5_v1_dos_after_placing_down_to_two_cards() -> None:
    game = make_position([["R5", "G3", "Y9", "B1"], OTHER], center_row=["R5", "B8"],
                         options=V1, draw_pile_top=["G10"])
    play(game, "m1 R5")
    assert game.phase is Phase.BONUS
    play(game, "place B1")
    assert game.current == 0
    assert legal(game) == ["end", "dos"]
    play(game, "dos")
    assert game.current == 1
    assert game.dos_missed == [False, False]


def test_5_v1_no_missed_call_when_option_is_off() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"])
    events = play(game, "m1 R5")
    assert game.current == 1
    assert EventKind.DOS_MISSED not in kinds(events)
    assert game.dos_missed == [False, False]
    assert_refused(game, "dos", "5")


def test_5_v1_dos_called_only_once_per_turn() -> None:
    game = make_position([["R5", "G7"], OTHER], center_row=["B5", "Y9"], options=V1)
    play(game, "dos")
    assert game.called_dos
    assert_refused(game, "dos", "5.1")


def _v1_missed_game(count: int = 2) -> Game:
    others = [["Y8", "Y9", "Y10"], ["B8", "B9", "B10"]][: count - 1]
    game = make_position([["R5", "G3", "Y1"], *others], center_row=["B5", "R8"], options=V1,
                         draw_pile_top=["Y10", "B1", "R10", "G10"])
    play(game, "m1 R5; end")
    assert game.dos_missed[0]
    return game


def test_5_v1_catch_missed_call_caught_player_draws_two() -> None:
    game = _v1_missed_game()
    assert "catch 0" in legal(game, 1)
    events = play(game, "catch 0", 1)
    assert kinds(events) == [EventKind.CAUGHT, EventKind.DREW]
    assert events[0].seat == 0
    assert events[0].data == {"by": 1}
    assert (events[1].seat, events[1].data["count"], events[1].data["reason"]) == (0, 2, "caught")
    assert hand_of(game, 0) == ["B1", "G3", "R10", "Y1"]
    assert game.dos_missed == [False, False]
    assert game.current == 1  # the catch is not a turn
    assert "catch 0" not in legal(game, 1)


def test_5_v1_any_other_player_may_catch() -> None:
    game = _v1_missed_game(3)
    assert legal(game, 2) == ["catch 0"]
    play(game, "catch 0", 2)
    assert len(game.hands[0]) == 4
    assert game.current == 1


def test_5_v1_catch_window_closes_when_their_next_turn_starts() -> None:
    game = _v1_missed_game()
    play(game, "draw", 1)
    assert game.drawn is not None
    play(game, f"add {game.drawn.code}", 1)
    assert game.current == 1  # catch 0 is still possible, so seat 1 says end
    play(game, "end", 1)
    assert game.current == 0
    assert game.dos_missed == [False, False]
    assert_refused(game, "catch 0", "5.3", seat=1)


def test_5_v1_illegal_call_rejected_no_penalty() -> None:
    game = make_position([["R5", "G7", "B1"], OTHER], center_row=["B5", "Y9"], options=V1)
    error = assert_refused(game, "dos", "5.3")
    assert "two cards" in str(error)
    assert len(game.hands[0]) == 3


def test_5_v1_illegal_catch_rejected_no_penalty() -> None:
    # seat 0 called DOS: no catch
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"], options=V1)
    play(game, "m1 R5; dos")
    assert game.current == 1
    assert_refused(game, "catch 0", "5.3", seat=1)
    # seat 0 missed the call but no longer holds two cards
    game = make_position([["G8", "B9", "R4"], ["R5", "G7", "Y1"]], center_row=["Y5", "R10"],
                         current=1, dos_missed=[True, False], options=V1)
    assert_refused(game, "catch 0", "5.3", seat=1)
    # nobody may catch themselves
    game = _v1_missed_game()
    assert_refused(game, "catch 0", "5.2", seat=0)
    assert_refused(game, "catch 1", "5.3", seat=0)  # seat 1 did not miss a call
    # without the option there is nothing to catch
    game = make_position([["G8", "B9"], ["R5", "G7", "Y1"]], center_row=["Y5", "R10"],
                         current=1, dos_missed=[True, False])
    assert_refused(game, "catch 0", "5", seat=1)


def test_5_v1_a_waiting_player_may_only_catch() -> None:
    game = _v1_missed_game(3)
    with pytest.raises(NotYourTurnError):
        game.play(parse_action("draw"), 2)


def test_5_v1_no_call_out_of_turn_and_no_exposure_by_a_double_colour_match() -> None:
    game = make_position([["R3", "R4", "G1", "Y5", "B9"], ["B8"]], center_row=["R7", "B10"],
                         draw_pile_top=["Y6"], options=V1)
    play(game, "m1 R3+R4")
    assert len(game.hands[1]) == 2
    assert game.dos_missed == [False, False]
    assert legal(game, 1) == []
    with pytest.raises(NotYourTurnError):
        game.play(parse_action("dos"), 1)


# -- 6. End of a round and scoring ---------------------------------------------------------------


def test_6_1_round_ends_when_hand_empties_by_matching() -> None:
    game = make_position([["R5"], ["G8", "G9"]], center_row=["G5", "B7"])
    events = play(game, "m1 R5")
    order = kinds(events)
    assert order.index(EventKind.TURN_ENDED) < order.index(EventKind.ROUND_OVER)
    over = only(events, EventKind.ROUND_OVER)[0]
    assert over.seat == 0
    assert over.data["round"] == 1
    assert only(events, EventKind.TURN_ENDED)[0].data["next"] is None


def test_6_1_round_ends_when_hand_empties_by_placing_bonus_cards() -> None:
    game = make_position([["R5", "G9"], ["G8", "B9"]], center_row=["R5", "B7"])
    events = play(game, "m1 R5")
    assert EventKind.ROUND_OVER not in kinds(events)
    assert game.phase is Phase.BONUS
    events = play(game, "place G9")
    assert only(events, EventKind.ROUND_OVER)[0].seat == 0
    assert game.scores == [17, 0]


def test_6_1_round_ends_when_hand_empties_by_adding_after_a_draw() -> None:
    game = make_position([["R1"], []], center_row=["B10", "Y9"], rest=1)
    play(game, "draw")
    events = play(game, "add R1")
    assert only(events, EventKind.ROUND_OVER)[0].seat == 0


def test_6_1_round_ends_when_hand_empties_by_a_match_after_a_draw() -> None:
    game = make_position([["R1"], ["G8", "B9"]], center_row=["B4", "Y9"], draw_pile_top=["G3"])
    play(game, "draw")
    events = play(game, "m1 R1+G3")
    assert only(events, EventKind.ROUND_OVER)[0].seat == 0


def test_6_2_winner_scores_cards_left_including_double_colour_draws() -> None:
    game = make_position(
        [["R3", "R4"], ["G1", "G3"], ["B5"]],
        center_row=["R7", "G10"],
        draw_pile_top=["Y10", "B#"],
    )
    events = play(game, "m1 R3+R4")
    over = only(events, EventKind.ROUND_OVER)[0].data
    assert over["hands"][1] == ["G1", "G3", "Y10"]
    assert over["hands"][2] == ["B5", "B#"]
    assert over["points"] == [0, 14, 45]
    assert over["scored"] == 59
    assert over["scores"] == [59, 0, 0]
    assert game.scores == [59, 0, 0]


def test_6_3_worked_example_72_points() -> None:
    game = make_position([["R5"], ["R3", "G4", "B#"], ["Y1", "B4", "W2"]],
                         center_row=["G5", "B7"])
    events = play(game, "m1 R5")
    over = only(events, EventKind.ROUND_OVER)[0].data
    assert over["points"] == [0, 47, 25]
    assert over["scored"] == 72
    assert game.scores == [72, 0, 0]


def test_6_4_first_to_reach_target_wins() -> None:
    game = make_position([["R5"], ["G10"]], center_row=["G5", "B7"], scores=[50, 195],
                         options={"target_score": 60})
    events = play(game, "m1 R5")
    assert kinds(events)[-1] is EventKind.GAME_OVER
    over = only(events, EventKind.GAME_OVER)[0]
    assert over.seat == 0
    assert over.data["scores"] == [60, 195]
    assert over.data["seed"] == game.seed
    assert game.winner == 0
    assert game.is_over
    assert game.phase is Phase.OVER
    assert game.scores == [60, 195]
    assert legal(game, 0) == []
    assert legal(game, 1) == []
    assert game.view(1).winner == 0
    assert_refused(game, "draw", "6.4", seat=game.current)
    assert_refused(game, "catch 0", "6.4", seat=1)


def test_6_4_below_target_a_new_round_starts() -> None:
    game = make_position([["R5"], ["G10"]], center_row=["G5", "B7"], scores=[40, 0],
                         options={"target_score": 60})
    events = play(game, "m1 R5")
    assert EventKind.GAME_OVER not in kinds(events)
    assert EventKind.ROUND_STARTED in kinds(events)
    assert game.scores == [50, 0]
    assert game.winner is None


def test_6_5_new_round_shuffles_all_cards_and_deal_passes_left() -> None:
    game = make_position([["R5"], ["G10", "Y1"], ["B9"]], center_row=["G5", "B7"],
                         current=0, dealer=2, discard=["R1", "G1"], seed="round-two")
    events = play(game, "m1 R5")
    assert game.round_no == 2
    assert game.dealer == 0
    assert game.current == 1
    assert [len(hand) for hand in game.hands] == [7, 7, 7]
    assert len(game.center_row) == 2
    assert game.discard_pile == []
    assert Counter(_all_cards(game)) == Counter(new_deck())
    assert game.scores == [11 + 9, 0, 0]
    # The documented deal: shuffle the 108 cards with the round's key, deal from the dealer's left.
    deck = new_deck()
    shuffle(deck, derive_key(round_seed("round-two", 2), "deal"))
    hands: list[list[Card]] = [[], [], []]
    for _ in range(7):
        for step in range(3):
            hands[(1 + step) % 3].append(deck.pop())
    assert game.hands == hands
    assert game.center_row == [deck.pop(), deck.pop()]
    started = only(events, EventKind.ROUND_STARTED)[0].data
    assert started["round"] == 2
    assert started["first"] == 1


# -- 7. Invariants -------------------------------------------------------------------------------


def _all_cards(game: Game) -> list[Card]:
    out = [*game.draw_pile, *game.discard_pile, *game.center_row]
    for matched in game.cr_matched:
        out.extend(matched or ())
    for hand in game.hands:
        out.extend(hand)
    return out


def _candidate_actions(game: Game, seat: int) -> list[str]:
    """Legal and illegal actions to compare ``legal_actions`` with ``check``."""
    hand = sorted(set(game.hands[seat]))
    texts = ["draw", "end", "dos", *(f"catch {s}" for s in range(len(game.players)))]
    texts += [f"add {c.code}" for c in hand] + [f"place {c.code}" for c in hand]
    for position in range(1, len(game.center_row) + 2):
        texts += [f"m{position} {c.code}" for c in hand]
        for i, a in enumerate(hand):
            texts += [f"m{position} {a.code}+{b.code}" for b in hand[i:]]
    return texts


def _random_game(seed: str, players: int, options: Options, check_all: bool) -> Game:
    names = [f"p{i}" for i in range(players)]
    bots = [RandomStrategy(f"{seed}-{i}") for i in range(players)]
    game = Game.new(names, seed, options)
    steps = 0
    while not game.is_over and steps < 3000:
        steps += 1
        for seat in range(players):
            if seat != game.current and game.legal_actions(seat) and steps % 2:
                game.play(game.legal_actions(seat)[0], seat)
        seat = game.current
        listed = game.legal_actions(seat)
        assert listed, "the player to move always has something to do"
        assert len(set(listed)) == len(listed)
        if check_all and len(game.hands[seat]) <= 9:
            for text in _candidate_actions(game, seat):
                action = parse_action(text)
                assert game.is_legal(action, seat) == (action in listed), text
        before = game.to_dict()
        action = bots[seat](game.view(seat), listed)
        game.play(action, seat)
        assert game.card_count() == 108
        assert Counter(_all_cards(game)) == Counter(new_deck())
        assert game.to_dict() != before
        assert Game.from_dict(json.loads(json.dumps(game.to_dict()))) == game
    assert game.is_over
    return game


@pytest.mark.parametrize(
    ("seed", "players", "options"),
    [
        ("inv-1", 2, Options(target_score=60)),
        ("inv-2", 3, Options(dos_call=True, target_score=60)),
        ("inv-3", 4, Options(after_draw="any", dos_call=True, target_score=40)),
        ("inv-4", 2, Options(dos_call=True, bonus_placement="mandatory", target_score=60)),
        ("inv-5", 3, Options(dos_call=True, dos_rule="v1", target_score=60)),
        ("inv-6", 4, Options(after_draw="any", bonus_placement="mandatory", target_score=40)),
    ],
)
def test_7_all_108_cards_always_in_exactly_one_place(seed: str, players: int, options: Options) -> None:
    _random_game(seed, players, options, check_all=players == 2)


def test_7_legal_actions_agree_with_check() -> None:
    _random_game("agree", 3, Options(after_draw="any", dos_call=True, target_score=30), True)


def test_7_from_dict_rejects_a_state_without_the_108_cards() -> None:
    state = make_position([["R5", "G7"], OTHER], center_row=["B5", "Y9"]).to_dict()
    state["draw_pile"] = state["draw_pile"][1:]
    with pytest.raises(InvalidStateError):
        Game.from_dict(state)
    state["hands"][0].append("R5")
    state["hands"][0].append("R5")  # one card too many
    with pytest.raises(InvalidStateError):
        Game.from_dict(state)


def test_7_view_never_reveals_draw_pile_or_other_hands() -> None:
    one = make_position([["R5", "G7", "Y1"], ["B3", "B4"]], center_row=["B5", "Y9"],
                        draw_pile_top=["G10", "R1"])
    two = make_position([["Y6", "Y6", "R#"], ["B3", "B4"]], center_row=["B5", "Y9"],
                        draw_pile_top=["R1", "Y5"])
    assert one.view(1).to_dict() == two.view(1).to_dict()  # seat 1 cannot tell them apart
    view = one.view(1)
    assert view.hand == tuple(sorted(one.hands[1]))
    assert view.hand_sizes == (3, 2)
    assert view.draw_pile_size == len(one.draw_pile)
    assert "draw_pile" not in view.to_dict()
    assert "hands" not in view.to_dict()
    assert one.view(None).hand is None
    events = play(one, "draw")
    drew = only(events, EventKind.DREW)[0]
    assert "cards" not in drew.for_viewer(1)["data"]
    assert "cards" not in drew.for_viewer(None)["data"]
    assert drew.for_viewer(0)["data"]["cards"] == ["G10"]
    assert one.view(0).drawn == parse_card("G10")
    assert one.view(1).drawn is None
    assert one.view(1).hand_sizes == (4, 2)


def test_7_game_is_determined_by_seed_and_actions() -> None:
    names = ["a", "b", "c"]
    options = Options(dos_call=True, target_score=80)
    bots = [RandomStrategy("x"), RandomStrategy("y"), RandomStrategy("z")]
    game, record = play_game(names, "replay-me", bots, options)
    assert replay(record) == game
    assert Game.new(names, "replay-me", options) == Game.new(names, "replay-me", options)
    assert Game.new(names, "replay-me", options) != Game.new(names, "replay-you", options)


def test_7_refused_actions_leave_the_state_unchanged() -> None:
    game = make_position([["R5", "G3", "Y9"], OTHER], center_row=["B5", "R8"], options=DOS)
    for text, rule in [("end", "3.8"), ("add R5", "3.6"), ("place R5", "3.5"), ("dos", "5.3"),
                       ("m1 G3", "3.1"), ("m2 G3+Y9", "3.2"), ("m3 R5", "2.3"),
                       ("catch 1", "5.3"), ("m1 B5", "3.1")]:
        assert_refused(game, text, rule)
    with pytest.raises(NotYourTurnError) as error:
        game.play(parse_action("draw"), 1)
    assert error.value.rule is None
