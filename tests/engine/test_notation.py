"""Notation: the canonical action/card notation round-trips, and the lenient parser for people
resolves shorthand against a real position (README "Move notation", DESIGN.md dos_engine).
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dos_engine import (
    ALL_CARDS,
    CALL_DOS,
    DRAW,
    END,
    Action,
    Add,
    AmbiguousActionError,
    CallDos,
    Card,
    Catch,
    DosError,
    Draw,
    End,
    Game,
    IllegalActionError,
    InvalidActionError,
    Match,
    Options,
    Place,
    format_turn,
    new_deck,
    parse_action,
    parse_card,
    parse_turn,
)
from dos_engine.cards import parse_card_lenient

C = Card.from_code

# -- strategies ----------------------------------------------------------------------------------

cards = st.sampled_from(ALL_CARDS)
matches = st.builds(
    Match, st.integers(1, 50), st.lists(cards, min_size=1, max_size=2).map(tuple)
)
actions: st.SearchStrategy[Action] = st.one_of(
    matches,
    st.just(DRAW),
    st.just(END),
    st.just(CALL_DOS),
    st.builds(Add, cards),
    st.builds(Place, cards),
    st.builds(Catch, st.integers(0, 3)),
)


@st.composite
def messy_spelling(draw: st.DrawFn, text: str) -> str:
    """The same canonical text with random letter case and spacing (still one action)."""
    out: list[str] = [draw(st.sampled_from(["", " ", "  ", "\t"]))]
    for char in text:
        if char == " ":
            out.append(draw(st.sampled_from([" ", "  ", "\t", " \t  "])))
        elif char == "+":
            out.append(draw(st.sampled_from(["+", " +", "+ ", "  +\t"])))
        else:
            out.append(char.upper() if draw(st.booleans()) else char.lower())
    out.append(draw(st.sampled_from(["", " ", "\t "])))
    return "".join(out)


# -- cards ---------------------------------------------------------------------------------------


def test_there_are_41_distinct_cards_with_unique_codes() -> None:
    assert len(ALL_CARDS) == 41
    assert len({c.code for c in ALL_CARDS}) == 41
    assert sorted(Counter(new_deck())) == sorted(ALL_CARDS)


@pytest.mark.parametrize("card", ALL_CARDS, ids=lambda c: c.code)
def test_card_code_round_trips_to_the_same_object(card: Card) -> None:
    assert Card.from_code(card.code) is card
    assert parse_card(card.code) is card
    assert Card.from_code(card.code.lower()) is card
    assert Card.from_code(f"  {card.code.lower()} ") is card
    assert str(card) == card.code


@pytest.mark.parametrize("card", ALL_CARDS, ids=lambda c: c.code)
def test_card_repr_evaluates_back(card: Card) -> None:
    assert eval(repr(card), {"Card": Card}) is card


@pytest.mark.parametrize("card", ALL_CARDS, ids=lambda c: c.code)
def test_lenient_card_names(card: Card) -> None:
    assert parse_card_lenient(card.name()) is card
    assert parse_card_lenient(card.name().upper()) is card
    assert parse_card_lenient(card.code.lower()) is card


@pytest.mark.parametrize("code", ["R2", "G0", "B11", "W5", "X5", "R", "", "RR5", "W#", "2", "Y 5 5"])
def test_bad_card_codes_are_explained(code: str) -> None:
    with pytest.raises(InvalidActionError, match="is not a card") as info:
        Card.from_code(code)
    assert "W2 for a Wild DOS" in str(info.value)


# -- canonical actions -------------------------------------------------------------------------------


@given(actions)
def test_every_action_round_trips_through_its_text(action: Action) -> None:
    assert parse_action(action.text()) == action
    assert Action.parse(action.text()) == action
    assert str(action) == action.text()


@given(actions)
def test_action_repr_evaluates_back(action: Action) -> None:
    assert eval(repr(action), {"Action": Action, "Card": Card}) == action


@given(actions.flatmap(lambda a: st.tuples(st.just(a), messy_spelling(a.text()))))
def test_case_and_spacing_are_free(pair: tuple[Action, str]) -> None:
    action, text = pair
    assert parse_action(text) == action


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("M1  r5 + y4", Match(1, (C("R5"), C("Y4")))),
        ("m1 Y4+R5", Match(1, (C("R5"), C("Y4")))),
        ("m12 b#", Match(12, (C("B#"),))),
        ("m3 w2+W2", Match(3, (C("W2"), C("W2")))),
        ("DRAW", Draw()),
        ("  End ", End()),
        ("Dos", CallDos()),
        ("ADD g10", Add(C("G10"))),
        ("place   Y9", Place(C("Y9"))),
        ("catch 2", Catch(2)),
        ("CATCH\t0", Catch(0)),
    ],
)
def test_canonical_examples(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


def test_double_match_cards_are_kept_in_canonical_order() -> None:
    a, b = C("Y4"), C("R5")
    assert Match(2, (a, b)) == Match(2, (b, a))
    assert Match(2, (a, b)).text() == "m2 R5+Y4"
    assert hash(Match(2, (a, b))) == hash(Match(2, (b, a)))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Match(0, (C("R5"),)), "positions start at 1"),
        (lambda: Match(1, ()), "one card"),
        (lambda: Match(1, (C("R5"), C("R5"), C("R5"))), "two cards"),
        (lambda: Catch(-1), "seats are numbered from 0"),
    ],
)
def test_impossible_actions_cannot_be_built(build: object, message: str) -> None:
    assert callable(build)
    with pytest.raises(InvalidActionError, match=message):
        build()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Actions are"),
        ("   ", "Actions are"),
        ("x", "'x' is not an action"),
        ("m1", "'m1' is not an action"),
        ("m R5", "Actions are"),
        ("m1 R2", "Actions are"),
        ("m1 R5+Y4+G3", "Actions are"),
        ("m1 R5 Y4", "Actions are"),
        ("m1R5", "Actions are"),
        ("draw 2", "Actions are"),
        ("catch", "Actions are"),
        ("catch -1", "Actions are"),
        ("catch bob", "Actions are"),
        ("add", "Actions are"),
        ("place W3", "Actions are"),
        ("dos dos", "Actions are"),
        ("m1 R5; end", "Actions are"),
        ("m0 R5", "positions start at 1"),
    ],
)
def test_invalid_texts_are_explained(text: str, message: str) -> None:
    with pytest.raises(InvalidActionError, match=message):
        parse_action(text)


@given(st.text(max_size=20))
def test_any_text_parses_or_raises_invalid_action(text: str) -> None:
    try:
        action = parse_action(text)
    except InvalidActionError:
        return
    assert parse_action(action.text()) == action


@pytest.mark.parametrize("text", ["doſ", "DOſ", "ſ", "m1 r5+ſ", "catch ١", "m٣ R5", "ENd\u00a0"])
def test_unicode_lookalikes_parse_or_raise_invalid_action(plain: Game, text: str) -> None:
    """Unicode case folding ('ſ' is an 's' to re.IGNORECASE) and digits must not crash the
    parsers: a text either parses to an action that round-trips or is refused as invalid."""
    for parse in (parse_action, plain.parse_action):
        try:
            action = parse(text)
        except InvalidActionError:
            continue
        except DosError:  # the lenient parser may also find it illegal or ambiguous
            continue
        assert parse_action(action.text()) == action


@given(st.text(alphabet="mM0123456789 +rgbywRGBYW#;adplcehtnosſKı١\u00a0", max_size=24))
def test_notation_like_text_parses_or_raises_invalid_action(text: str) -> None:
    try:
        turn = parse_turn(text)
    except InvalidActionError:
        return
    assert turn
    assert parse_turn(format_turn(turn)) == turn


# -- whole turns ---------------------------------------------------------------------------------------


@given(st.lists(actions, min_size=1, max_size=6))
def test_turn_round_trips(turn: list[Action]) -> None:
    text = format_turn(turn)
    assert parse_turn(text) == turn
    assert parse_turn(text.replace("; ", "\n")) == turn
    assert parse_turn(";" + text.replace("; ", " ;; ") + ";\n") == turn


def test_format_turn_uses_semicolons() -> None:
    turn = [Match(1, (C("R5"),)), Match(2, (C("Y4"), C("B3"))), END]
    assert format_turn(turn) == "m1 R5; m2 B3+Y4; end"


@pytest.mark.parametrize("text", ["", ";", " ; ;\n", "\n"])
def test_empty_turn_is_refused(text: str) -> None:
    with pytest.raises(InvalidActionError, match="no action given"):
        parse_turn(text)


def test_turn_with_one_bad_action_is_refused() -> None:
    with pytest.raises(InvalidActionError, match="'m9' is not an action"):
        parse_turn("m1 R5; m9; end")


# -- positions for the lenient parser --------------------------------------------------------------


def position(
    hands: Sequence[str],
    center_row: Sequence[str],
    *,
    players: Sequence[str] | None = None,
    options: Options | None = None,
    current: int = 0,
) -> Game:
    """A handcrafted position: the given hands and CR, every other card in the draw pile."""
    names = list(players) if players is not None else [f"p{i}" for i in range(len(hands))]
    state = Game.new(names, "handcrafted", options).to_dict()
    pool = Counter(new_deck())
    used = [C(code) for hand in hands for code in hand.split()] + [C(code) for code in center_row]
    pool.subtract(used)
    assert min(pool.values()) >= 0, "more copies than the deck holds"
    rest: list[str] = []
    for card in new_deck():
        if pool[card] > 0:
            pool[card] -= 1
            rest.append(card.code)
    state.update(
        hands=[hand.split() for hand in hands],
        center_row=[{"card": code, "matched_with": None} for code in center_row],
        draw_pile=rest,
        discard_pile=[],
        current=current,
        dos_missed=[False] * len(names),
    )
    return Game.from_dict(state)


def m(position: int, *codes: str) -> Match:
    return Match(position, tuple(C(code) for code in codes))


@pytest.fixture
def plain() -> Game:
    """CR [R5, B7]; p0 holds no wild card: R5 matches only card 1, m2 has one match."""
    return position(["R5 G5 Y3 Y4 G9 B10 R1", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])


@pytest.fixture
def wild() -> Game:
    """CR [R7, B5, G# (a Wild #), W2 (a Wild DOS)]; p0 holds wild cards of both kinds."""
    return position(["R# B3 W2 R1 R1 G9 Y6", "R3 R3 R3 R4 R4 R4 R6"], ["R7", "B5", "G#", "W2"])


def test_plain_position_is_what_the_tests_assume(plain: Game) -> None:
    assert set(plain.legal_actions()) == {
        m(1, "R5"), m(1, "G5"), m(1, "R1", "Y4"), m(2, "Y3", "Y4"), DRAW
    }


@pytest.mark.parametrize("text", ["R5", "r5", "Red 5", "red 5", "  RED   5 ", "red-5", "m1 R5",
                                  "match 1 r5", "on 1: R5", "m1 with red 5", "cr 1 r5"])
def test_single_card_shorthand_resolves_to_its_only_cr_card(plain: Game, text: str) -> None:
    assert plain.parse_action(text) == m(1, "R5")


@pytest.mark.parametrize("text", ["y3 and y4", "Y4+Y3", "y3, y4", "y3 & y4", "y3 y4",
                                  "yellow 3 and yellow 4", "m2 y4 + y3", "match 2 with y3+y4",
                                  "on 2: Y3+Y4", "m2", "M2", "on 2"])
def test_double_match_shorthand(plain: Game, text: str) -> None:
    assert plain.parse_action(text) == m(2, "Y3", "Y4")


def test_cr_position_with_several_matches_is_ambiguous(plain: Game) -> None:
    with pytest.raises(AmbiguousActionError) as info:
        plain.parse_action("m1")
    assert set(info.value.candidates) == {m(1, "R5"), m(1, "G5"), m(1, "R1", "Y4")}
    message = str(info.value)
    assert message.startswith("'m1' could mean any of: ")
    for candidate in ("m1 R5", "m1 G5", "m1 R1+Y4"):
        assert candidate in message
    assert message.endswith("Say which one.")


def test_card_matching_two_cr_cards_is_ambiguous() -> None:
    game = position(["R5 Y9 Y9 Y1 B10 B10 B1", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "G5"])
    with pytest.raises(AmbiguousActionError) as info:
        game.parse_action("R5")
    assert info.value.candidates == (m(1, "R5"), m(2, "R5"))
    assert str(info.value) == "'R5' could mean any of: m1 R5, m2 R5. Say which one."
    assert game.parse_action("m2 r5") == m(2, "R5")


def test_card_with_a_match_and_an_add_is_ambiguous() -> None:
    """With after_draw="any", after a draw R5 may be matched (on card 1) or added."""
    game = position(["R5 Y9 Y9 Y1 B10 B10 B1", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "G7"],
                    options=Options(after_draw="any"))
    game.play(DRAW)
    with pytest.raises(AmbiguousActionError) as info:
        game.parse_action("R5")
    assert set(info.value.candidates) == {m(1, "R5"), Add(C("R5"))}
    assert game.parse_action("a r5") == Add(C("R5"))
    assert game.parse_action("m1 r5") == m(1, "R5")


@pytest.mark.parametrize(
    ("text", "rule"),
    [("R9", "3.1"), ("m3 R5", "2.3"), ("G9", "3.1"), ("m2 r5", "3.1"), ("m1 Y3+Y4", "3.2"),
     ("B10+R1", "3.2"), ("R3", "3.1"), ("m1 R#", "3.1")],
)
def test_text_without_a_legal_match_is_refused_with_its_rule(
    plain: Game, text: str, rule: str
) -> None:
    """Shorthand is refused while parsing; canonical text parses and is refused by play."""
    before = plain.to_dict()
    with pytest.raises(IllegalActionError) as info:
        plain.play(plain.parse_action(text))
    assert info.value.rule == rule
    assert plain.to_dict() == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("d", DRAW), ("D", DRAW), ("draw a card", DRAW), ("pick up", DRAW),
        ("e", END), ("done", END), ("Done", END), ("end turn", END), ("finish", END),
        ("stop", END), ("call", CALL_DOS), ("call dos", CALL_DOS), ("dos!", CALL_DOS),
        ("say DOS", CALL_DOS), ("dos", CALL_DOS),
        ("a R5", Add(C("R5"))), ("add red 5", Add(C("R5"))), ("a blue wild", Add(C("B#"))),
        ("p y9", Place(C("Y9"))), ("place Yellow 9", Place(C("Y9"))),
        ("bonus w2", Place(C("W2"))), ("p dos", Place(C("W2"))),
    ],
)
def test_words(plain: Game, text: str, expected: Action) -> None:
    assert plain.parse_action(text) == expected


def test_empty_text_is_refused(plain: Game) -> None:
    with pytest.raises(InvalidActionError, match="no action given"):
        plain.parse_action("  ")


def test_nonsense_is_refused_with_the_notation(plain: Game) -> None:
    with pytest.raises(InvalidActionError, match=r"^'hello there' is not an action\. Actions are"):
        plain.parse_action("hello there")


LENIENT_ALPHABET = "mM0123456789 +=,&:;rgbywRGBYW#adplcehtnosik-ſKı١\u00a0"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=LENIENT_ALPHABET, max_size=20) | st.text(max_size=12))
def test_lenient_parser_raises_only_dos_errors(text: str) -> None:
    """Whatever a person types, the lenient parser answers with an action or a DosError (the
    server turns those into a 4xx; anything else would be a 500)."""
    game = position(["R5 G5 Y3 Y4 R# W2 R1", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "G#", "W2"])
    before = game.to_dict()
    for parse in (game.parse_action, game.parse_turn):
        with contextlib.suppress(DosError):
            parse(text)
    assert game.to_dict() == before


# -- catch by name -----------------------------------------------------------------------------------


@pytest.fixture
def three() -> Game:
    return position(["R5 G5 Y3", "R3 R3 R3", "R4 R4 R4"], ["R5", "B7"],
                    players=["Alice", "bob", "Bobby"], options=Options(dos_call=True))


@pytest.mark.parametrize(
    ("text", "seat"),
    [("catch alice", 0), ("catch Alice", 0), ("CATCH al", 0), ("catch bob", 1),
     ("catch bobby", 2), ("catch bobb", 2), ("catch 1", 1), ("catch 2", 2)],
)
def test_catch_by_name(three: Game, text: str, seat: int) -> None:
    assert three.parse_action(text, seat=1) == Catch(seat)


def test_catch_by_ambiguous_name_prefix(three: Game) -> None:
    with pytest.raises(AmbiguousActionError) as info:
        three.parse_action("catch bo")
    assert info.value.candidates == (Catch(1), Catch(2))


def test_catch_unknown_name_lists_the_players(three: Game) -> None:
    with pytest.raises(InvalidActionError, match="no player is called 'carol'; the players are "
                                                 "Alice, bob, Bobby"):
        three.parse_action("catch carol")


# -- declarations ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("m1 R#=7", m(1, "R#")),
        ("m1 r#=7", m(1, "R#")),
        ("m1 red wild = 7", m(1, "R#")),
        ("m2 B3+W2=B", m(2, "B3", "W2")),
        ("m2 W2=b+B3", m(2, "B3", "W2")),
        ("m2 B3 + W2=blue", m(2, "B3", "W2")),
        ("m2 B3 + W2=2", m(2, "B3", "W2")),
        ("m2 R#=2+B3", m(2, "R#", "B3")),
        ("m3=9 G9", m(3, "G9")),
        ("m3=7 Y6+R1", m(3, "R1", "Y6")),
        ("m3=10 R#=4+Y6", m(3, "R#", "Y6")),
        ("m4=Y W2", m(4, "W2")),
        ("m4=blue W2", m(4, "W2")),
        ("m4 W2=G", m(4, "W2")),
        ("m4=R R1+R1", m(4, "R1", "R1")),
        ("m4 R1+R1", m(4, "R1", "R1")),
    ],
)
def test_consistent_declarations_are_accepted(wild: Game, text: str, expected: Match) -> None:
    assert wild.parse_action(text) == expected
    wild.copy().play(wild.parse_action(text))


@pytest.mark.parametrize(
    ("text", "rule", "message"),
    [
        ("m1 R#=6", "1.3", "do not make R# match R7"),
        ("m1 R#=11", "1.3", "1 to 10"),
        ("m1 R#=0", "1.3", "1 to 10"),
        ("m2 R#=3+B3", "1.3", "do not make"),
        ("m3=8 G9", "1.5", "do not make G9 match G#"),
        ("m3=11 G9", "1.5", "1 to 10"),
        ("m3=1 Y6+R1", "1.5", "do not make"),
    ],
)
def test_inconsistent_number_declarations_are_refused(
    wild: Game, text: str, rule: str, message: str
) -> None:
    before = wild.to_dict()
    with pytest.raises(IllegalActionError, match=message) as info:
        wild.parse_action(text)
    assert info.value.rule == rule
    assert wild.to_dict() == before


@pytest.mark.parametrize("text", ["m2 B3+W2=R", "m2 W2=yellow+B3", "m4=B R1+R1", "m4=g R1+R1"])
def test_colour_declarations_that_give_up_a_bonus_are_refused(wild: Game, text: str) -> None:
    with pytest.raises(IllegalActionError, match="give up the colour bonus") as info:
        wild.parse_action(text)
    assert info.value.rule == "3.5"
    assert "Leave the colour out: m" in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("m1=5 R#", "it takes no declaration"),
        ("m1=R R#", "it takes no declaration"),
        ("m4=7 W2", r"its colour is declared \(=B\)"),
        ("m3=B G9", r"its number is declared \(=7\)"),
        ("m3 G9=9", "only wild cards take a declaration"),
        ("m4 W2=Q", "'q' is not a colour"),
    ],
)
def test_misplaced_declarations_are_explained(wild: Game, text: str, message: str) -> None:
    with pytest.raises(InvalidActionError, match=message):
        wild.parse_action(text)


def test_declaration_narrows_shorthand_to_the_one_fitting_cr_card() -> None:
    """README: shorthand is accepted when it can mean only one legal action. `R#=7` on a CR
    of [R7, B5] can only be card 1 (a Wild # declared 7 cannot match a 5)."""
    game = position(["R# Y9 Y9 Y1 B10 B10 B1", "R3 R3 R3 R4 R4 R4 R6"], ["R7", "B5"])
    assert game.parse_action("R#=7") == m(1, "R#")
    assert game.parse_action("R#=5") == m(2, "R#")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("R#=7", {m(1, "R#"), m(3, "R#")}),  # a 7, or the Wild # in the CR as 7
        ("R#=5", {m(2, "R#"), m(3, "R#")}),
        ("W2=B", {m(4, "W2")}),  # on the G# it would give up the colour bonus (3.5)
        ("W2=G", {m(3, "W2"), m(4, "W2")}),
        ("W2=2", {m(3, "W2"), m(4, "W2")}),
        ("B3+W2=B", {m(2, "B3", "W2"), m(3, "B3", "W2")}),
    ],
)
def test_declarations_narrow_the_candidates(wild: Game, text: str, expected: set[Match]) -> None:
    expect_resolution(wild, text, expected)


# -- whole turns with the lenient parser --------------------------------------------------------------


def test_turn_resolves_each_action_after_the_ones_before(plain: Game) -> None:
    turn = plain.parse_turn("m2; r5")
    assert turn == [m(2, "Y3", "Y4"), m(1, "R5")]


def test_trailing_end_after_the_turn_ended_by_itself_is_tolerated() -> None:
    """After `m1 G5` nothing else is possible: the turn ends by itself, `end` is ignored."""
    game = position(["G5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
    alone = game.copy()
    alone.play(m(1, "G5"))
    assert alone.current == 1
    turn = game.parse_turn("m1 G5; end")
    assert turn[0] == m(1, "G5")
    assert set(turn[1:]) <= {END}
    assert game.parse_turn("m1 G5; e") == game.parse_turn("m1 g5 ;  done")
    # What was parsed can be played, and it is the same as the turn without the `end`.
    game.play_turn(turn)
    assert game == alone


def test_trailing_end_after_placing_the_last_bonus_card_is_tolerated() -> None:
    game = position(["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
    alone = game.copy()
    alone.play_turn([m(1, "R5"), Place(C("G9"))])
    assert alone.current == 1
    turn = game.parse_turn("m1 R5; p G9; end")
    game.play_turn(turn)
    assert game == alone


def test_end_in_the_bonus_phase_is_a_real_end() -> None:
    game = position(["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
    turn = game.parse_turn("m1 R5; end")
    assert turn == [m(1, "R5"), END]
    game.play_turn(turn)
    assert game.current == 1
    assert sorted(game.view(0).hand or ()) == [C("G9"), C("B10")]


def test_error_in_a_turn_names_the_action() -> None:
    game = position(["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
    with pytest.raises(IllegalActionError, match=r"^action 2 \('m9 R1'\): ") as info:
        game.parse_turn("m1 R5; m9 R1")
    assert info.value.rule == "4.3"
    with pytest.raises(InvalidActionError, match=r"^action 2 \('x'\): 'x' is not an action"):
        game.parse_turn("m1 r5; x")
    before = game.to_dict()
    with pytest.raises(DosError):
        game.parse_turn("m1 R5; p G9; p B10")
    assert game.to_dict() == before, "parsing a turn never changes the game"


def test_a_chosen_legal_action_is_played_as_it_is() -> None:
    """A numbered choice is an Action already: ``play_turn`` takes it without any text, and
    does what ``play_text`` does with its canonical text."""
    game = position(["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
    as_text = game.copy()
    for number in (1, 1, 2, 1):
        chosen = game.legal_actions()[number - 1]
        played, events = as_text.play_text(chosen.text())
        assert played == [chosen]
        assert [e.to_dict() for e in game.play_turn([chosen])] == [e.to_dict() for e in events]
        assert game == as_text


def test_error_in_a_list_of_actions_names_the_action() -> None:
    game = position(["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
    before = game.to_dict()
    with pytest.raises(IllegalActionError, match=r"^action 2 \('m9 R1'\): ") as info:
        game.play_turn([m(1, "R5"), m(9, "R1")])
    assert info.value.rule == "4.3"
    with pytest.raises(IllegalActionError, match=r"^there is no Center Row card 9"):
        game.play_turn([m(9, "R1")])
    assert game.to_dict() == before, "a refused turn changes nothing"


def test_the_lenient_parser_needs_only_a_position_not_a_game() -> None:
    """``dos_engine.notation`` resolves text against anything shaped like a position; the turn
    loop and the playing are ``Game``'s (no import of game.py from notation.py)."""
    import ast
    import inspect

    from dos_engine import notation

    tree = ast.parse(inspect.getsource(notation))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "dos_engine.game" not in imported
    game = position(["R5 G9 B10", "R3 R3 R3 R4 R4 R4 R6"], ["R5", "B7"])
    assert notation.resolve_action(game, "r5", 0) == m(1, "R5")


# -- shorthand against random positions: resolution equals the legal list -------------------------------


def random_position(seed: str, steps: int, after_draw: str, count: int) -> Game:
    game = Game.new([f"p{i}" for i in range(count)], seed,
                    Options(after_draw="any" if after_draw == "any" else "drawn_card"))
    chooser = random.Random(seed)
    for _ in range(steps):
        if game.is_over:
            break
        legal = game.legal_actions()
        game.play(legal[chooser.randrange(len(legal))])
    return game


def expect_resolution(game: Game, text: str, expected: AbstractSet[Action]) -> None:
    assert expected, text
    if len(expected) == 1:
        assert game.parse_action(text) == next(iter(expected)), text
    else:
        with pytest.raises(AmbiguousActionError) as info:
            game.parse_action(text)
        assert set(info.value.candidates) == expected, text


@settings(max_examples=60, deadline=None)
@given(
    seed=st.text(min_size=1, max_size=8),
    steps=st.integers(0, 60),
    after_draw=st.sampled_from(["drawn_card", "any"]),
    count=st.integers(2, 4),
)
def test_shorthand_resolves_exactly_as_the_legal_list_says(
    seed: str, steps: int, after_draw: str, count: int
) -> None:
    game = random_position(seed, steps, after_draw, count)
    legal = game.legal_actions()
    before = game.to_dict()
    listed_matches = [a for a in legal if isinstance(a, Match)]
    for action in legal:
        assert game.parse_action(action.text()) == action
        assert game.parse_action(action.text().upper()) == action
    for match in listed_matches:
        same_cards: set[Action] = {a for a in listed_matches if a.cards == match.cards}
        if len(match.cards) == 1:
            same_cards |= {a for a in legal if isinstance(a, Add | Place) and a.card == match.cards[0]}
        expect_resolution(game, "+".join(c.code for c in match.cards), same_cards)
        expect_resolution(game, " and ".join(c.name() for c in match.cards), same_cards)
        expect_resolution(game, f"m{match.position}",
                          {a for a in listed_matches if a.position == match.position})
    assert game.to_dict() == before
