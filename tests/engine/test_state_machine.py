"""A hypothesis state machine over random legal play (RULES.md 7 invariants and more).

Each example starts a game (2-4 players, a random seed and target score; one test per
combination of the rule options ``after_draw``, ``bonus_placement`` and ``dos_call``, the DOS
call both as printed and as first read, for stored games; sometimes from a first position with
few or no cards left to draw, or with short hands) and plays random legal actions for the
current seat, for other seats (to call DOS and catch missed calls) and as whole turns typed on
one line (``parse_turn``/``play_turn``).
After every step it checks:

* all 108 cards are in the state, exactly once each (7);
* the listed legal actions are exactly the legal ones: each listed action is accepted (on a
  copy), and random unlisted actions are refused with a ``DosError``, the game unchanged;
* the listed matches equal a brute-force search over every CR card and every single card and
  pair of cards in hand, checked against an independent oracle for numbers and colour bonuses;
* views reveal nothing hidden (7): no draw pile, only one's own hand, and a view does not change
  when the hidden cards (the draw pile and the other hands) are dealt differently;
* events show drawn cards only to the seat that drew them;
* ``Game.from_dict(game.to_dict()) == game``, also through JSON;
* under the printed DOS rule, between requests a seat is exposed exactly when it holds two cards
  without a call (and was not caught this turn): a whole turn exposes only its end state (5.3);
* with mandatory bonus placement, ``end`` is never listed while a bonus card can be placed;

and at the end of each example that replaying the actions gives the same game and events (from
the seed with ``replay``, when the game was not started from a handcrafted position).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import hypothesis
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from dos_engine import (
    ALL_CARDS,
    CALL_DOS,
    DRAW,
    END,
    Action,
    Add,
    CallDos,
    Card,
    CardKind,
    Catch,
    DosError,
    Event,
    EventKind,
    Game,
    GameRecord,
    Match,
    Options,
    Phase,
    Place,
    new_deck,
    parse_action,
    replay,
    start_game,
)
from dos_engine.game import Bonus, declare_match

NAMES = ("ann", "ben", "cat", "dan")
VIEW_KEYS = {
    "seat", "players", "hand", "hand_sizes", "center_row", "scores", "round", "dealer", "current",
    "phase", "drawn", "placements_left", "dos_called", "dos_missed", "dos_calls", "dos_penalty",
    "draw_pile_size", "discard_pile_size", "options", "winner", "legal_actions",
}
# Every combination of the rule options: (after_draw, bonus_placement, dos_call, dos_rule).
OPTION_COMBINATIONS: list[tuple[str, str, bool, str]] = [
    (after_draw, placement, dos_call, dos_rule)
    for after_draw in ("drawn_card", "any")
    for placement in ("optional", "mandatory")
    for dos_call, dos_rule in ((False, "printed"), (True, "printed"), (True, "v1"))
]
NOTABLE = {EventKind.ROUND_OVER, EventKind.GAME_OVER, EventKind.CAUGHT, EventKind.RESHUFFLED,
           EventKind.DOS_MISSED, EventKind.DOS_CALLED, EventKind.PLACED, EventKind.ADDED}
DECK = Counter(card.code for card in new_deck())


# -- independent oracles ------------------------------------------------------------------------


def values(card: Card) -> range | tuple[int, ...]:
    """The numbers a card can count as (1.3-1.6): a Wild # any of 1-10, a Wild DOS 2."""
    if card.kind is CardKind.WILD_NUMBER:
        return range(1, 11)
    if card.kind is CardKind.WILD_DOS:
        return (2,)
    assert card.number is not None
    return (card.number,)


def can_match(target: Card, cards: Sequence[Card]) -> bool:
    """3.1/3.2: one card equal to the CR card, or two cards adding up to it."""
    if len(cards) == 1:
        return any(v in values(cards[0]) for v in values(target))
    return any(t - a in values(cards[1]) for t in values(target) for a in values(cards[0]))


def bonus_of(target: Card, cards: Sequence[Card]) -> Bonus:
    """3.5: a colour match when every printed colour agrees (a Wild DOS takes any colour)."""
    printed = {c.colour for c in (target, *cards) if c.colour is not None}
    if len(printed) > 1:
        return Bonus.NONE
    return Bonus.SINGLE_COLOUR if len(cards) == 1 else Bonus.DOUBLE_COLOUR


def cards_of(codes: Sequence[str]) -> list[Card]:
    return [Card.from_code(code) for code in codes]


def all_codes(state: Mapping[str, Any]) -> Counter[str]:
    codes: Counter[str] = Counter(state["draw_pile"])
    codes.update(state["discard_pile"])
    for hand in state["hands"]:
        codes.update(hand)
    for slot in state["center_row"]:
        codes[slot["card"]] += 1
        codes.update(slot["matched_with"] or ())
    return codes


@cache
def oracle_checked(target: Card, cards: tuple[Card, ...]) -> bool:
    """Whether ``cards`` match ``target``, the engine's declare_match checked against the oracle."""
    declaration = declare_match(target, cards)
    assert (declaration is not None) == can_match(target, cards), (target, cards)
    if declaration is not None:
        assert declaration.bonus is bonus_of(target, cards), (target, cards)
    return declaration is not None


def brute_force_matches(game: Game) -> set[Match]:
    """Every legal match for the current seat, found by trying every card and every pair of
    cards in hand (pairs of identical cards only when the hand holds two) on every CR card."""
    state = game.to_dict()
    turn = state["turn"]
    if state["winner"] is not None or turn["bonus_phase"] or turn["added"]:
        return set()
    must_use: Card | None = None
    if turn["has_drawn"] and game.options.after_draw == "drawn_card":
        if turn["matches"] or turn["drawn"] is None:
            return set()
        must_use = Card.from_code(turn["drawn"])
    held = Counter(cards_of(state["hands"][state["current"]]))
    distinct = sorted(held)
    tries: list[tuple[Card, ...]] = [(card,) for card in distinct]
    for i, a in enumerate(distinct):
        tries.extend((a, b) for b in distinct[i:] if b is not a or held[a] >= 2)
    found: set[Match] = set()
    for index, slot in enumerate(state["center_row"]):
        if slot["matched_with"] is not None:
            continue
        target = Card.from_code(slot["card"])
        for cards in tries:
            if (must_use is None or must_use in cards) and oracle_checked(target, cards):
                found.add(Match(index + 1, cards))
    return found


# -- checks -------------------------------------------------------------------------------------------


def check_cards(game: Game) -> None:
    assert game.card_count() == 108
    assert all_codes(game.to_dict()) == DECK


def check_events(events: Sequence[Event], seats: int) -> None:
    """Secrets (the cards a seat drew) are shown to that seat only; events round-trip."""
    for event in events:
        assert Event.from_dict(event.to_dict()) == event
        secret = set(event.secret or ())
        assert not secret & set(event.data), "a secret must not also be public"
        if event.kind is EventKind.DREW:
            assert secret == {"cards"}
            assert event.data["count"] == len((event.secret or {})["cards"])
        for viewer in (*range(seats), None):
            shown = event.for_viewer(viewer)
            if viewer is not None and viewer == event.seat:
                assert secret <= set(shown["data"])
            else:
                assert not secret & set(shown["data"]), (event.kind, viewer)
            json.dumps(shown)


def hidden_reshuffled(state: Mapping[str, Any], seat: int | None) -> dict[str, Any]:
    """The same state with the cards ``seat`` cannot see (draw pile, other hands) redealt."""
    out: dict[str, Any] = json.loads(json.dumps(state))
    others = [i for i in range(len(out["hands"])) if i != seat]
    pool = list(out["draw_pile"]) + [code for i in others for code in out["hands"][i]]
    pool.reverse()
    pool = pool[1:] + pool[:1]
    for i in others:
        size = len(out["hands"][i])
        out["hands"][i], pool = pool[:size], pool[size:]
    out["draw_pile"] = pool
    return out


def check_view(game: Game, seat: int | None, redeal: bool) -> None:
    state = game.to_dict()
    view = game.view(seat).to_dict()
    assert set(view) == VIEW_KEYS
    assert "draw_pile" not in view
    if seat is None:
        assert view["hand"] is None
        assert view["legal_actions"] == []
    else:
        assert sorted(cards_of(view["hand"])) == sorted(cards_of(state["hands"][seat]))
        assert view["legal_actions"] == [a.text() for a in game.legal_actions(seat)]
    assert view["hand_sizes"] == [len(hand) for hand in state["hands"]]
    assert view["draw_pile_size"] == len(state["draw_pile"])
    own_turn = seat is not None and seat == state["current"] and state["winner"] is None
    assert view["drawn"] == (state["turn"]["drawn"] if own_turn else None)
    if redeal:
        # The view is a function of what the seat may know: redealing hidden cards changes nothing.
        other = Game.from_dict(hidden_reshuffled(state, seat))
        assert other.view(seat).to_dict() == view


# -- random unlisted actions ---------------------------------------------------------------------------


@st.composite
def plausible_actions(draw: st.DrawFn, game: Game, seat: int) -> Action:
    state = game.to_dict()
    hand = cards_of(state["hands"][seat])
    card = st.sampled_from(hand) | st.sampled_from(ALL_CARDS) if hand else st.sampled_from(ALL_CARDS)
    kind = draw(st.sampled_from(["match", "match", "match", "draw", "end", "add", "place", "dos",
                                 "catch"]))
    if kind == "match":
        position = draw(st.integers(1, len(state["center_row"]) + 2))
        cards = draw(st.lists(card, min_size=1, max_size=2))
        return Match(position, tuple(cards))
    if kind == "add":
        return Add(draw(card))
    if kind == "place":
        return Place(draw(card))
    if kind == "catch":
        return Catch(draw(st.integers(0, 4)))
    return {"draw": DRAW, "end": END, "dos": CALL_DOS}[kind]


# -- the machine -------------------------------------------------------------------------------------


class DosMachine(RuleBasedStateMachine):
    """One machine per combination of rule options (``OPTION_COMBINATIONS``), so that each is
    covered however hypothesis draws."""

    def __init__(self, combination: tuple[str, str, bool, str] = OPTION_COMBINATIONS[0]) -> None:
        super().__init__()
        self.combination = combination
        self.game: Game | None = None
        self.record: list[tuple[int, str]] = []
        self.events: list[dict[str, Any]] = []
        self.start_state: dict[str, Any] = {}

    @property
    def g(self) -> Game:
        assert self.game is not None
        return self.game

    @initialize(
        count=st.integers(2, 4),
        seed=st.text(min_size=1, max_size=12),
        target_score=st.sampled_from([200, 200, 40, 1]),
        piles=st.sampled_from(["dealt", "dealt", "few_left", "none_left", "short_hands"]),
        keep=st.integers(0, 2),
    )
    def start(
        self,
        count: int,
        seed: str,
        target_score: int,
        piles: str,
        keep: int,
    ) -> None:
        """A new game; or, to reach reshuffles (4.4) and empty piles within a few steps, its
        first position with all but ``keep`` cards of the draw pile moved to the discard pile
        ("few_left"), or all of them moved into the hand of the player after the first
        ("none_left"), the first player then drawing from two empty piles. To reach DOS calls
        (5) and round ends (6) quickly, "short_hands" puts all but ``keep + 1`` cards of each
        hand under the draw pile."""
        after_draw, placement, dos_call, dos_rule = self.combination
        options = Options.from_dict({"after_draw": after_draw, "bonus_placement": placement,
                                     "dos_call": dos_call, "dos_rule": dos_rule,
                                     "target_score": target_score})
        game, events = start_game(NAMES[:count], seed, options)
        check_events(events, count)
        self.events = [e.to_dict() for e in events]
        if piles != "dealt":
            state = game.to_dict()
            if piles == "short_hands":
                for hand in state["hands"]:
                    state["draw_pile"][:0], hand[keep + 1 :] = hand[keep + 1 :], []
            elif piles == "few_left":
                moved, state["draw_pile"] = state["draw_pile"][keep:], state["draw_pile"][:keep]
                state["discard_pile"] = moved
            else:
                state["hands"][(state["current"] + 1) % count].extend(state["draw_pile"])
                state["draw_pile"] = []
            game = Game.from_dict(state)
            self.events = []
        self.game = game
        self.start_state = game.to_dict()
        if piles == "none_left":
            self.play(game.current, DRAW)  # from two empty piles: nothing is drawn (4.4)

    def play(self, seat: int, action: Action) -> None:
        events = self.g.play(action, seat)
        self.record.append((seat, action.text()))
        self.events.extend(e.to_dict() for e in events)
        check_events(events, len(self.g.players))
        assert self.g.card_count() == 108
        for event in events:
            if event.kind is EventKind.CAUGHT and event.data.get("deferred"):
                hypothesis.event("caught in their own turn: drawn at its end")
            if event.kind in NOTABLE:
                hypothesis.event(f"reached {event.kind.value}")
            elif event.kind is EventKind.DREW and event.data["count"] == 0:
                hypothesis.event("drew from empty piles")

    @rule(index=st.integers(0, 10_000))
    def play_current(self, index: int) -> None:
        if self.g.is_over:
            self.check_game_over()
            return
        seat = self.g.current
        legal = self.g.legal_actions(seat)
        assert legal, "the player to move always has a legal action"
        self.play(seat, legal[index % len(legal)])

    @rule(index=st.integers(0, 10_000))
    def draw_when_possible(self, index: int) -> None:
        """Drawing is one choice among many; this rule prefers it (3.6, and 4.4 when empty)."""
        if self.g.is_over:
            return
        seat = self.g.current
        legal = self.g.legal_actions(seat)
        self.play(seat, DRAW if DRAW in legal else legal[index % len(legal)])

    @rule(indices=st.lists(st.integers(0, 10_000), min_size=5, max_size=40))
    def play_many(self, indices: list[int]) -> None:
        for index in indices:
            if self.g.is_over:
                break
            seat = self.g.current
            legal = self.g.legal_actions(seat)
            self.play(seat, legal[index % len(legal)])

    @rule(indices=st.lists(st.integers(0, 10_000), min_size=1, max_size=8), upper=st.booleans())
    def play_whole_turn_as_text(self, indices: list[int], upper: bool) -> None:
        """A turn typed on one line ("m1 R5; m2 B3+Y4; end"), parsed with the lenient
        ``parse_turn`` and played all at once with ``play_turn``; once the turn is over, an
        ``end`` typed after it is ignored (README "Move notation")."""
        game = self.g
        if game.is_over:
            return
        seat, round_no = game.current, game.round_no
        trial = game.copy()
        played: list[Action] = []
        events: list[Event] = []
        for index in indices:
            # ``trial`` plays one request per action, so it may list catches of seats that came
            # to two cards within this turn; in one request those wait for the next (5.3).
            legal = [a for a in trial.legal_actions(seat)
                     if not isinstance(a, Catch) or not game.options.printed_dos_rule
                     or (game.dos_missed[a.seat] and trial.hands[a.seat] == game.hands[a.seat])]
            if not legal:  # only catches left, and none of them allowed in this request
                break
            played.append(legal[index % len(legal)])
            events.extend(trial.play(played[-1], seat))
            if trial.current != seat or trial.round_no != round_no or trial.is_over:
                played_text = "; ".join(a.text() for a in played) + "; end"
                break
        else:
            played_text = "; ".join(a.text() for a in played)
        if not played:
            return
        text = played_text.upper() if upper else played_text
        turn = game.parse_turn(text, seat)
        assert turn[: len(played)] == played
        assert [e.to_dict() for e in game.play_turn(turn, seat)] == [e.to_dict() for e in events]
        assert game == trial
        self.record.extend((seat, a.text()) for a in played)
        self.events.extend(e.to_dict() for e in events)
        check_events(events, len(game.players))

    @rule(offset=st.integers(1, 3), index=st.integers(0, 10_000))
    def play_other_seat(self, offset: int, index: int) -> None:
        count = len(self.g.players)
        seat = (self.g.current + offset) % count
        if seat == self.g.current:
            return
        legal = self.g.legal_actions(seat)
        out_of_turn: tuple[type[Action], ...] = (
            (Catch, CallDos) if self.g.options.printed_dos_rule else (Catch,)
        )
        assert all(isinstance(a, out_of_turn) for a in legal), f"out of turn: {legal}"
        if not self.g.options.dos_call:
            assert legal == []
        if legal:
            self.play(seat, legal[index % len(legal)])

    @rule(data=st.data(), other_seat=st.booleans())
    def try_random_action(self, data: st.DataObject, other_seat: bool) -> None:
        game = self.g
        count = len(game.players)
        # Now and then a seat that does not exist: nothing is listed for it, nothing is legal.
        seat = data.draw(st.integers(-1, count)) if other_seat else game.current
        action = data.draw(plausible_actions(game, seat if 0 <= seat < count else 0))
        before = game.to_dict()
        listed = action in game.legal_actions(seat)
        assert game.is_legal(action, seat) == listed, (seat, action.text())
        if listed:
            trial = game.copy()
            trial.play(action, seat)
            check_cards(trial)
        else:
            with pytest.raises(DosError):
                game.play(action, seat)
        assert game.to_dict() == before, "a refused action or a played copy changed the game"

    def check_game_over(self) -> None:
        """6.4: once the game is won nothing is legal any more, for anyone."""
        game = self.g
        assert game.winner is not None
        assert game.scores[game.winner] >= game.options.target_score
        before = game.to_dict()
        for seat in range(len(game.players)):
            assert game.legal_actions(seat) == []
            for action in (DRAW, END, CALL_DOS, Catch(0)):
                with pytest.raises(DosError, match="the game is over"):
                    game.play(action, seat)
        assert game.to_dict() == before

    # -- invariants ---------------------------------------------------------------------------------

    @invariant()
    def all_108_cards(self) -> None:
        if self.game is not None:
            check_cards(self.game)

    @invariant()
    def listed_actions_are_accepted(self) -> None:
        if self.game is None:
            return
        game = self.game
        before = game.to_dict()
        for seat in range(len(game.players)):
            legal = game.legal_actions(seat)
            assert len(set(legal)) == len(legal), "each legal action is listed once"
            assert all(parse_action(action.text()) == action for action in legal)
            # Every non-match action, and a spread of at most 8 of the matches.
            listed_matches = [a for a in legal if isinstance(a, Match)]
            sample = [a for a in legal if not isinstance(a, Match)]
            sample += listed_matches[:: max(1, len(listed_matches) // 8)]
            for action in sample:
                trial = game.copy()
                trial.play(action, seat)
                check_cards(trial)
        assert game.to_dict() == before

    @invariant()
    def dos_exposure_follows_the_state(self) -> None:
        """Between requests (5.1-5.3): exposed exactly when holding two cards without a call."""
        if self.game is None:
            return
        game = self.game
        if not game.options.printed_dos_rule:
            assert not any(game.dos_calls)
            assert game.penalty == 0
            return
        assert game.penalty in (0, 2)
        for seat, hand in enumerate(game.hands):
            exposed = (not game.is_over and len(hand) == 2 and not game.dos_calls[seat]
                       and not (seat == game.current and game.penalty))
            assert game.dos_missed[seat] == exposed, (seat, len(hand), game.dos_calls)
            assert (CALL_DOS in game.legal_actions(seat)) == exposed
            if game.dos_calls[seat]:
                assert len(hand) == 2
            if exposed:
                hypothesis.event("a seat is exposed between requests")
            for other in range(len(game.players)):
                assert (Catch(seat) in game.legal_actions(other)) == (exposed and other != seat)

    @invariant()
    def mandatory_placement_lists_no_end(self) -> None:
        if self.game is None or self.game.options.bonus_placement != "mandatory":
            return
        game = self.game
        if game.phase is Phase.BONUS and game.placements_left and game.hands[game.current]:
            assert END not in game.legal_actions(game.current)
            hypothesis.event("a bonus card must be placed")

    @invariant()
    def listed_matches_equal_brute_force(self) -> None:
        if self.game is None:
            return
        listed = {a for a in self.game.legal_actions() if isinstance(a, Match)}
        assert listed == brute_force_matches(self.game)

    @invariant()
    def views_hide_what_is_hidden(self) -> None:
        if self.game is None:
            return
        viewers = (*range(len(self.game.players)), None)
        # Redealing hidden cards is the costly check: one viewer per step, in turn.
        redeal = viewers[self.game.actions_played % len(viewers)]
        for seat in viewers:
            check_view(self.game, seat, redeal=seat == redeal)

    @invariant()
    def state_round_trips(self) -> None:
        if self.game is None:
            return
        state = self.game.to_dict()
        assert Game.from_dict(state) == self.game
        assert Game.from_dict(state).to_dict() == state
        through_json = json.loads(json.dumps(state))
        assert Game.from_dict(through_json) == self.game

    def teardown(self) -> None:
        if self.game is None:
            return
        game = self.game
        # The same actions from the same position give the same state and events.
        again = Game.from_dict(self.start_state)
        stream: list[dict[str, Any]] = []
        for seat, text in self.record:
            stream.extend(e.to_dict() for e in again.play(parse_action(text), seat))
        assert again == game
        if self.start_state != Game.new(game.players, game.seed, game.options).to_dict():
            return  # a handcrafted start: no record replays it from the seed
        record = GameRecord(game.players, game.seed, game.options, tuple(self.record))
        assert replay(record) == game
        assert GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
        _, events = start_game(record.players, record.seed, record.options)
        assert [e.to_dict() for e in events] + stream == self.events


MACHINE_SETTINGS = settings(
    max_examples=10,  # per combination: 120 examples in all
    stateful_step_count=60,
    derandomize=True,
    deadline=None,
)


@pytest.mark.parametrize(
    "combination", OPTION_COMBINATIONS,
    ids=[f"{a}-{p}-{'dos_' + r if d else 'no_dos'}" for a, p, d, r in OPTION_COMBINATIONS],
)
def test_dos_machine(combination: tuple[str, str, bool, str]) -> None:
    run_state_machine_as_test(lambda: DosMachine(combination), settings=MACHINE_SETTINGS)
