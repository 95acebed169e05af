"""Serialization, records and fairness: to_dict/from_dict, malformed states, GameRecord,
replay and determinism (RULES.md 7), and the documented shuffle re-derived from scratch (rng.py).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import random
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dos_engine import (
    DosError,
    Event,
    EventKind,
    Game,
    GameRecord,
    InvalidStateError,
    Options,
    RandomStrategy,
    greedy,
    new_deck,
    parse_action,
    play_game,
    replay,
    round_seed,
    seed_commitment,
    start_game,
    verify_commitments,
)

Mutation = Callable[[dict[str, Any]], None]


def play_random(game: Game, steps: int, chooser: random.Random) -> list[tuple[int, str]]:
    """Play ``steps`` random legal actions (catching missed DOS calls now and then)."""
    played: list[tuple[int, str]] = []
    count = len(game.players)
    for _ in range(steps):
        if game.is_over:
            break
        seat = game.current
        if game.options.dos_call and chooser.random() < 0.3:
            seat = (seat + chooser.randrange(1, count)) % count
        legal = game.legal_actions(seat)
        if not legal:
            seat = game.current
            legal = game.legal_actions(seat)
        action = legal[chooser.randrange(len(legal))]
        game.play(action, seat)
        played.append((seat, action.text()))
    return played


options_strategy = st.builds(
    Options,
    after_draw=st.sampled_from(["drawn_card", "any"]),
    dos_call=st.booleans(),
    target_score=st.sampled_from([200, 50, 1]),
    bonus_placement=st.sampled_from(["optional", "mandatory"]),
    dos_rule=st.sampled_from(["printed", "printed", "v1"]),
)


@st.composite
def games(draw: st.DrawFn) -> tuple[Game, GameRecord]:
    count = draw(st.integers(2, 4))
    players = tuple(f"player {i}" for i in range(count))
    seed = draw(st.text(min_size=1, max_size=16))
    options = draw(options_strategy)
    game = Game.new(players, seed, options)
    chooser = random.Random(draw(st.integers(0, 2**32)))
    played = play_random(game, draw(st.integers(0, 250)), chooser)
    return game, GameRecord(players, seed, options, tuple(played))


# -- round trips -------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(games(), st.integers(0, 2**32))
def test_state_round_trips_and_plays_on_identically(game_and_record: tuple[Game, GameRecord],
                                                   later: int) -> None:
    game, record = game_and_record
    state = game.to_dict()
    assert state["schema"] == 1
    text = json.dumps(state)
    loaded = Game.from_dict(json.loads(text))
    assert loaded == game
    assert loaded.to_dict() == state
    assert json.dumps(loaded.to_dict()) == text
    assert replay(record) == game
    # The state holds everything: a reloaded game goes on exactly as the original does.
    first, second = game.copy(), loaded
    for _ in range(40):
        if first.is_over:
            break
        legal = first.legal_actions()
        assert second.legal_actions() == legal
        action = legal[later % len(legal)]
        later = later * 31 + 7
        assert [e.to_dict() for e in first.play(action)] == [
            e.to_dict() for e in second.play(action)
        ]
        assert first == second


def test_game_equality_is_by_state() -> None:
    a = Game.new(["a", "b"], "same")
    b = Game.new(["a", "b"], "same")
    assert a == b
    assert a != Game.new(["a", "b"], "other")
    assert a != "not a game"
    a.play(a.legal_actions()[-1])
    assert a != b


def test_copy_is_independent() -> None:
    game = Game.new(["a", "b", "c"], "copy")
    before = game.to_dict()
    trial = game.copy()
    play_random(trial, 100, random.Random(1))
    assert game.to_dict() == before
    assert trial != game


# -- schema and malformed states ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def valid_state() -> dict[str, Any]:
    """A mid-game state with a non-empty discard pile, matched CR cards and a drawn card."""
    game = Game.new(["ann", "ben", "cat"], "a state to break", Options(dos_call=True))
    chooser = random.Random(7)
    for _ in range(500):
        play_random(game, 1, chooser)
        state = game.to_dict()
        if (state["discard_pile"] and state["turn"]["matches"] and state["round"] == 1
                and any(slot["matched_with"] for slot in state["center_row"])):
            return state
    raise AssertionError("no suitable state found")


def setter(path: Sequence[str | int], value: Any) -> Mutation:
    def mutate(state: dict[str, Any]) -> None:
        target: Any = state
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def deleter(path: Sequence[str | int]) -> Mutation:
    def mutate(state: dict[str, Any]) -> None:
        target: Any = state
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


def matched_slot(state: dict[str, Any]) -> int:
    return next(i for i, slot in enumerate(state["center_row"]) if slot["matched_with"])


def drop_one_card(state: dict[str, Any]) -> None:
    state["draw_pile"].pop()


def add_one_card(state: dict[str, Any]) -> None:
    state["draw_pile"].append("R5")


def swap_a_card(state: dict[str, Any]) -> None:
    """Still 108 cards, but a thirteenth Wild DOS."""
    pile = state["draw_pile"]
    pile[next(i for i, code in enumerate(pile) if code != "W2")] = "W2"


def bad_matched_card(state: dict[str, Any]) -> None:
    state["center_row"][matched_slot(state)]["matched_with"] = ["R2"]


def matched_with_a_string(state: dict[str, Any]) -> None:
    slot = state["center_row"][matched_slot(state)]
    slot["matched_with"] = "+".join(slot["matched_with"])


def too_many_hands(state: dict[str, Any]) -> None:
    state["hands"].append([state["draw_pile"].pop()])


MALFORMED: dict[str, Mutation] = {
    # schema
    "schema missing": deleter(["schema"]),
    "schema 0": setter(["schema"], 0),
    "schema 2": setter(["schema"], 2),
    "schema as text": setter(["schema"], "1"),
    "schema null": setter(["schema"], None),
    "schema true": setter(["schema"], True),
    "schema 1.0": setter(["schema"], 1.0),
    # card codes and counts
    "bad card in a hand": setter(["hands", 0, 0], "R2"),
    "bad card in the draw pile": setter(["draw_pile", 0], "X9"),
    "bad card in the discard pile": setter(["discard_pile", 0], "W3"),
    "bad CR card": setter(["center_row", 0, "card"], "G11"),
    "bad matched card": bad_matched_card,
    "bad drawn card": setter(["turn", "drawn"], "B0"),
    "card code as a number": setter(["hands", 0, 0], 5),
    "card code null": setter(["draw_pile", 0], None),
    "107 cards": drop_one_card,
    "109 cards": add_one_card,
    "108 cards, not a deck": swap_a_card,
    # wrong types
    "not a list of players": setter(["players"], "ann,ben,cat"),
    "one player": setter(["players"], ["ann"]),
    "five players": setter(["players"], ["a", "b", "c", "d", "e"]),
    "players not names": setter(["players"], [1, 2, 3]),
    "blank player name": setter(["players", 1], "  "),
    "seed null": setter(["seed"], None),
    "seed empty": setter(["seed"], ""),
    "seed a number": setter(["seed"], 12345),
    "options not a mapping": setter(["options"], "dos_call"),
    "unknown option": setter(["options", "colour_blind"], True),
    "dos_call option 1": setter(["options", "dos_call"], 1),
    "bonus_placement unknown": setter(["options", "bonus_placement"], "never"),
    "dos_rule unknown": setter(["options", "dos_rule"], "v2"),
    "target_score true": setter(["options", "target_score"], True),
    "scores a string": setter(["scores"], "0,0,0"),
    "score negative": setter(["scores", 0], -1),
    "score a float": setter(["scores", 0], 1.5),
    "score true": setter(["scores", 0], True),
    "two scores": setter(["scores"], [0, 0]),
    "round as text": setter(["round"], "1"),
    "round true": setter(["round"], True),
    "dealer out of range": setter(["dealer"], 3),
    "dealer true": setter(["dealer"], True),
    "current negative": setter(["current"], -1),
    "current false": setter(["current"], False),
    "current a float": setter(["current"], 0.0),
    "winner out of range": setter(["winner"], 7),
    "winner true": setter(["winner"], True),
    "hands not a list of lists": setter(["hands"], "R5 R5"),
    "a hand as a string": setter(["hands", 0], "R5"),
    "four hands": too_many_hands,
    "center row of strings": setter(["center_row"], ["R5", "B7"]),
    "matched_with a string": matched_with_a_string,
    "turn a list": setter(["turn"], []),
    "has_drawn as text": setter(["turn", "has_drawn"], "no"),
    "matches negative": setter(["turn", "matches"], -1),
    "matches true": setter(["turn", "matches"], True),
    "bonuses as text": setter(["turn", "bonuses"], "0"),
    "called_dos 0": setter(["turn", "called_dos"], 0),
    "dos_missed of ints": setter(["dos_missed"], [0, 0, 0]),
    "two dos_missed": setter(["dos_missed"], [False, False]),
    "dos_calls of ints": setter(["dos_calls"], [0, 0, 0]),
    "two dos_calls": setter(["dos_calls"], [False, False]),
    "penalty negative": setter(["turn", "penalty"], -2),
    "reshuffles true": setter(["reshuffles"], True),
    "actions_played negative": setter(["actions_played"], -3),
    "actions_played true": setter(["actions_played"], True),
    "turn_no negative": setter(["turn_no"], -1),
    "turn_no as text": setter(["turn_no"], "3"),
}
TOP_LEVEL_KEYS = ["players", "seed", "options", "scores", "round", "dealer", "current", "hands",
                  "draw_pile", "discard_pile", "center_row", "reshuffles", "turn", "dos_missed",
                  "dos_calls", "winner", "actions_played", "turn_no"]
TURN_KEYS = ["drawn", "has_drawn", "matches", "added", "bonuses", "bonus_phase",
             "placements_left", "called_dos", "penalty"]
# States stored before the turn counter existed lack turn_no; before the printed DOS rule,
# dos_calls and the turn's penalty.
OPTIONAL_KEYS = {"turn_no", "dos_calls"}
OPTIONAL_TURN_KEYS = {"penalty"}
for key in TOP_LEVEL_KEYS:
    if key not in OPTIONAL_KEYS:
        MALFORMED[f"{key} missing"] = deleter([key])
for key in TURN_KEYS:
    if key not in OPTIONAL_TURN_KEYS:
        MALFORMED[f"turn {key} missing"] = deleter(["turn", key])
MALFORMED["CR card missing"] = deleter(["center_row", 0, "card"])
MALFORMED["CR matched_with missing"] = deleter(["center_row", 0, "matched_with"])


def test_state_keys_are_the_ones_the_malformed_cases_cover(valid_state: dict[str, Any]) -> None:
    assert set(valid_state) == {"schema", *TOP_LEVEL_KEYS}
    assert set(valid_state["turn"]) == set(TURN_KEYS)
    assert Game.from_dict(valid_state).to_dict() == valid_state


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_state_is_rejected(valid_state: dict[str, Any], name: str) -> None:
    state = copy.deepcopy(valid_state)
    MALFORMED[name](state)
    with pytest.raises(InvalidStateError):
        Game.from_dict(state)


def test_state_without_turn_counter_still_loads_and_counts_on(valid_state: dict[str, Any]) -> None:
    old = {key: value for key, value in valid_state.items() if key != "turn_no"}
    game = Game.from_dict(old)
    assert game.turn_no == 0
    start = game.turn_no
    while game.turn_no == start and not game.is_over:
        game.play(game.legal_actions()[-1])
    assert game.turn_no == start + 1


def test_turn_counter_counts_every_new_turn_and_round() -> None:
    game = Game.new(["ann", "bob"], "turn-counter")
    assert game.turn_no == 1
    turns_ended = 0
    rounds = game.round_no
    while not game.is_over and game.round_no < 3:
        events = game.play(game.legal_actions()[0])
        turns_ended += sum(1 for e in events if e.kind == EventKind.TURN_ENDED)
        if not game.is_over:
            # every ended turn starts the next one (in this round or the next round)
            assert game.turn_no == 1 + turns_ended
        rounds = game.round_no
    assert rounds >= 2


@pytest.mark.parametrize("raw", [None, [], "state", 3, {}], ids=repr)
def test_not_a_state_at_all(raw: Any) -> None:
    with pytest.raises(InvalidStateError):
        Game.from_dict(raw)


def test_wrong_schema_says_which_schema_is_read(valid_state: dict[str, Any]) -> None:
    state = dict(valid_state, schema=2)
    with pytest.raises(InvalidStateError, match="unsupported state schema 2"):
        Game.from_dict(state)


def test_invalid_state_error_is_a_dos_error() -> None:
    assert issubclass(InvalidStateError, DosError)
    assert issubclass(InvalidStateError, ValueError)


@settings(max_examples=500, deadline=None)
@given(data=st.data())
def test_fuzzed_states_raise_only_invalid_state_error(
    valid_state: dict[str, Any], data: st.DataObject
) -> None:
    """Replace any one value anywhere in a valid state by junk: from_dict either accepts the
    result or raises InvalidStateError, never anything else."""
    state = copy.deepcopy(valid_state)
    paths = list(_paths(state))
    path = data.draw(st.sampled_from(paths))
    junk = data.draw(st.one_of(
        st.none(), st.booleans(), st.integers(-3, 200), st.floats(allow_nan=False),
        st.text(max_size=4), st.sampled_from(["R5", "W2", "B#", "r5", "Z9"]),
        st.lists(st.sampled_from(["R5", "W2", "x"]), max_size=3), st.just({}),
    ))
    setter(path, junk)(state)
    with contextlib.suppress(InvalidStateError):
        Game.from_dict(state)


def _paths(node: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(node, dict):
        items: Any = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key))


# -- records, replay and determinism -------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(games())
def test_record_round_trips_and_replays(game_and_record: tuple[Game, GameRecord]) -> None:
    game, record = game_and_record
    raw = record.to_dict()
    assert raw["format"] == "dos-record/1"
    assert GameRecord.from_dict(json.loads(json.dumps(raw))) == record
    assert replay(record) == game
    assert replay(GameRecord.from_dict(raw)) == game


def test_record_with_action_appends() -> None:
    record = GameRecord(("a", "b"), "seed")
    game = Game.new(record.players, record.seed)
    action = game.legal_actions()[0]
    longer = record.with_action(game.current, action)
    assert longer.actions == ((game.current, action.text()),)
    assert record.actions == ()
    game.play(action)
    assert replay(longer) == game


@pytest.mark.parametrize("fmt", [None, "dos-record/2", "dos-record"])
def test_record_of_another_format_is_refused(fmt: str | None) -> None:
    raw = GameRecord(("a", "b"), "seed").to_dict()
    raw["format"] = fmt
    with pytest.raises(ValueError, match="not a dos-record/1 record"):
        GameRecord.from_dict(raw)


def test_replay_of_an_illegal_record_raises() -> None:
    game = Game.new(["a", "b"], "illegal record")
    record = GameRecord(("a", "b"), "illegal record", Options(), ((game.current, "end"),))
    with pytest.raises(DosError):
        replay(record)
    wrong_seat = GameRecord(("a", "b"), "illegal record", Options(),
                            ((1 - game.current, "draw"),))
    with pytest.raises(DosError):
        replay(wrong_seat)


def test_selfplayed_game_replays() -> None:
    game, record = play_game(["a", "b", "c"], "replayed", [greedy, RandomStrategy(1), greedy],
                             Options(dos_call=True, after_draw="any"))
    assert game.is_over
    assert replay(record) == game


@settings(max_examples=25, deadline=None)
@given(games())
def test_same_seed_and_actions_give_the_same_game_and_events(
    game_and_record: tuple[Game, GameRecord],
) -> None:
    _, record = game_and_record
    streams = []
    for _ in range(2):
        game, events = start_game(record.players, record.seed, record.options)
        stream = [e.to_dict() for e in events]
        for seat, text in record.actions:
            stream.extend(e.to_dict() for e in game.play(parse_action(text), seat))
        streams.append((game.to_dict(), stream))
    assert streams[0] == streams[1]


def deal_of(game: Game) -> tuple[Any, ...]:
    state = game.to_dict()
    return (tuple(tuple(sorted(hand)) for hand in state["hands"]),
            tuple(slot["card"] for slot in state["center_row"]), tuple(state["draw_pile"]))


def test_different_seeds_give_different_deals() -> None:
    deals = {deal_of(Game.new(["a", "b", "c"], f"seed {n}")) for n in range(200)}
    assert len(deals) == 200


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=10), st.text(min_size=1, max_size=10))
def test_two_seeds_two_deals(a: str, b: str) -> None:
    if a != b:
        assert deal_of(Game.new(["a", "b"], a)) != deal_of(Game.new(["a", "b"], b))


def test_the_seed_alone_decides_the_deal_not_the_clock_or_global_random() -> None:
    random.seed(1)
    first = Game.new(["a", "b", "c", "d"], "fixed").to_dict()
    random.seed(2)
    random.random()
    assert Game.new(["a", "b", "c", "d"], "fixed").to_dict() == first


# -- the documented shuffle, re-implemented from rng.py's description ---------------------------------


def derive_key(seed: str, *labels: str) -> bytes:
    """Step 1: SHA-256 over b"DOS/1", then for each part its UTF-8 length (4 bytes BE) and bytes."""
    data = b"DOS/1"
    for part in (seed, *labels):
        raw = part.encode("utf-8")
        data += struct.pack(">I", len(raw)) + raw
    return hashlib.sha256(data).digest()


class Stream:
    """Steps 2-3: SHA-256(key || i as 8 bytes BE) blocks, read as 64-bit BE unsigned integers."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.buffer = b""
        self.block = 0

    def u64(self) -> int:
        if len(self.buffer) < 8:
            self.buffer += hashlib.sha256(self.key + struct.pack(">Q", self.block)).digest()
            self.block += 1
        value: int = struct.unpack(">Q", self.buffer[:8])[0]
        self.buffer = self.buffer[8:]
        return value

    def below(self, n: int) -> int:
        while True:
            x = self.u64()
            if x < 2**64 - (2**64 % n):
                return x % n


def fisher_yates(items: list[str], key: bytes) -> list[str]:
    """Step 4: for i from len-1 down to 1, swap items i and randbelow(i + 1)."""
    out = list(items)
    stream = Stream(key)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def documented_deck() -> list[str]:
    """new_deck's documented order: per colour R, G, B, Y the numbers ascending with their
    copies (three of 1, 3, 4, 5; two of 6-10), then its two Wild #; then twelve Wild DOS."""
    deck: list[str] = []
    for colour in "RGBY":
        for number in (1, 3, 4, 5, 6, 7, 8, 9, 10):
            deck += [f"{colour}{number}"] * (3 if number <= 5 else 2)
        deck += [f"{colour}#"] * 2
    return deck + ["W2"] * 12


def dealer_value(code: str) -> int:
    return int(code[1:]) if code[0] in "RGBY" and code[1:].isdigit() else 0


def derive_first_dealer(seed: str, count: int) -> tuple[int, list[dict[str, str]]]:
    """2.2 with deck k keyed derive_key(seed, "dealer", k): contenders in seat order take the top
    card (the end of the list); ties draw again from the same deck, a new deck when it runs out."""
    deck_no = 0
    deck = fisher_yates(documented_deck(), derive_key(seed, "dealer", "0"))
    contenders = list(range(count))
    draws = []
    while True:
        if len(deck) < len(contenders):
            deck_no += 1
            deck = fisher_yates(documented_deck(), derive_key(seed, "dealer", str(deck_no)))
        drawn = {seat: deck.pop() for seat in contenders}
        draws.append({str(seat): code for seat, code in drawn.items()})
        best = max(dealer_value(code) for code in drawn.values())
        contenders = [seat for seat, code in drawn.items() if dealer_value(code) == best]
        if len(contenders) == 1:
            return contenders[0], draws


def test_documented_deck_order() -> None:
    assert [card.code for card in new_deck()] == documented_deck()


def test_round_seed_is_the_documented_derivation() -> None:
    for seed in ("a", "DOS by mail", "ünïcödé ♠", "x" * 300):
        for number in (1, 2, 17):
            expected = derive_key(seed, "round", str(number)).hex()
            assert round_seed(seed, number) == expected
            assert seed_commitment(expected) == hashlib.sha256(expected.encode()).hexdigest()


@settings(max_examples=40, deadline=None)
@given(seed=st.text(min_size=1, max_size=20), count=st.integers(2, 4))
def test_deal_of_round_one_is_re_derivable(seed: str, count: int) -> None:
    game, events = start_game([f"p{i}" for i in range(count)], seed)
    state = game.to_dict()
    dealer, draws = derive_first_dealer(seed, count)
    assert state["dealer"] == dealer
    assert events[0].kind is EventKind.GAME_STARTED
    assert events[0].data["dealer_draws"] == draws
    # 2.3-2.4: deal 7 each, one at a time from the dealer's left, then flip two for the CR.
    deck = fisher_yates(documented_deck(),
                        derive_key(derive_key(seed, "round", "1").hex(), "deal"))
    first = (dealer + 1) % count
    hands: list[list[str]] = [[] for _ in range(count)]
    for _ in range(7):
        for step in range(count):
            hands[(first + step) % count].append(deck.pop())
    center_row = [deck.pop(), deck.pop()]
    assert state["current"] == first
    assert [sorted(hand) for hand in state["hands"]] == [sorted(hand) for hand in hands]
    assert [slot["card"] for slot in state["center_row"]] == center_row
    assert state["draw_pile"] == deck


def test_a_reshuffle_is_re_derivable() -> None:
    """4.4: the k-th reshuffle of round r shuffles the discard pile (in its order) with
    derive_key(round_seed, "reshuffle", k); the top card is drawn from the end."""
    game = Game.new(["a", "b"], "reshuffle")
    state = game.to_dict()
    state["discard_pile"], state["draw_pile"] = state["draw_pile"], []
    game = Game.from_dict(state)
    seat = game.current
    events = game.play(parse_action("draw"), seat)
    assert [e.kind for e in events][:2] == [EventKind.RESHUFFLED, EventKind.DREW]
    expected = fisher_yates(state["discard_pile"],
                            derive_key(round_seed("reshuffle", 1), "reshuffle", "1"))
    assert events[1].secret == {"cards": [expected[-1]]}
    assert game.to_dict()["draw_pile"] == expected[:-1]


# -- commitments ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_game() -> tuple[str, list[Event]]:
    seed = "commitments"
    game, events = start_game(["a", "b", "c"], seed, Options(target_score=150))
    chooser = RandomStrategy(seed)
    while not game.is_over:
        legal = game.legal_actions()
        events.extend(game.play(chooser(game.view(game.current), legal)))
    return seed, events


def test_commitments_are_the_sha256_of_the_round_seeds(
    finished_game: tuple[str, list[Event]],
) -> None:
    seed, events = finished_game
    started = [e.data for e in events if e.kind is EventKind.ROUND_STARTED]
    over = [e.data for e in events if e.kind is EventKind.ROUND_OVER]
    assert len(started) == len(over) >= 2
    for number, (begin, end) in enumerate(zip(started, over, strict=True), start=1):
        assert begin["round"] == end["round"] == number
        revealed = end["round_seed"]
        assert revealed == derive_key(seed, "round", str(number)).hex()
        assert begin["seed_commitment"] == hashlib.sha256(revealed.encode("utf-8")).hexdigest()
    assert events[-1].kind is EventKind.GAME_OVER
    assert events[-1].data["seed"] == seed


def test_verify_commitments(finished_game: tuple[str, list[Event]]) -> None:
    seed, events = finished_game
    commitments = [e.data["seed_commitment"] for e in events if e.kind is EventKind.ROUND_STARTED]
    assert verify_commitments(seed, commitments)
    assert verify_commitments(seed, commitments[:1])
    assert verify_commitments(seed, [])
    assert not verify_commitments(seed + "!", commitments)
    assert not verify_commitments(seed, list(reversed(commitments)))
    tampered = [*commitments[:-1], hashlib.sha256(b"something else").hexdigest()]
    assert not verify_commitments(seed, tampered)


def test_no_round_seed_or_game_seed_before_its_time(
    finished_game: tuple[str, list[Event]],
) -> None:
    """The seeds are only revealed at the end of their round (round seed) or game (seed)."""
    seed, events = finished_game
    revealed: set[str] = set()
    for event in events:
        text = json.dumps([event.for_viewer(v) for v in (0, 1, 2, None)])
        assert json.dumps(seed) not in text or event.kind is EventKind.GAME_OVER
        if event.kind is EventKind.ROUND_OVER:
            revealed.add(event.data["round_seed"])
        for number in range(1, 12):
            hidden = round_seed(seed, number)
            if hidden not in revealed:
                assert hidden not in text
