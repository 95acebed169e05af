"""The engine's written-out fast paths say what their plain forms say (RULES.md 7: a game is a
function of its record, so a copy or an options dict that drops a field would change games)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest

import dos_engine.game as game_module
from dos_engine import Game, Options, new_deck
from dos_engine.rng import continue_shuffle, derive_key, shuffle

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


def whole_shuffles(name: str, count: int) -> Iterator[tuple[int, int, bytes, list[int]]]:
    """``count`` shuffles of ``range(size)`` by their own keys, whole: (number, size, key, the
    shuffled list), sizes 2 to 151 (above 128 cards, the path that may reject values)."""
    for number in range(count):
        size = 2 + number % 150
        key = derive_key(f"{name}-{number}", "test")
        whole = list(range(size))
        shuffle(whole, key)
        yield number, size, key, whole


def test_a_shuffle_of_the_top_places_the_top_as_the_whole_shuffle_does() -> None:
    for _, size, key, whole in whole_shuffles("top", 400):
        for top in (0, 1, 4, 16, size - 1, size + 3):
            part = list(range(size))
            shuffle(part, key, top=top)
            placed = min(top, size - 1)
            assert part[size - placed:] == whole[size - placed:], (size, top)
            assert sorted(part) == list(range(size))


def reference_draw_for_dealer(seed: str, count: int) -> tuple[int, list[dict[str, str]]]:
    """2.2 as it reads: whole shuffled decks, cards off the top until one seat is highest."""
    deck_no = 0
    deck = new_deck()
    shuffle(deck, derive_key(seed, "dealer", str(deck_no)))
    contenders = list(range(count))
    draws: list[dict[str, str]] = []
    while True:
        if len(deck) < len(contenders):
            deck_no += 1
            deck = new_deck()
            shuffle(deck, derive_key(seed, "dealer", str(deck_no)))
        drawn = {seat: deck.pop() for seat in contenders}
        draws.append({str(seat): card.code for seat, card in drawn.items()})
        best = max(card.dealer_value for card in drawn.values())
        contenders = [seat for seat, card in drawn.items() if card.dealer_value == best]
        if len(contenders) == 1:
            return contenders[0], draws


@pytest.mark.parametrize("top", [16, 4, 1])  # the engine's depth, and shallower: ties go deeper
def test_the_draw_for_dealer_is_that_of_whole_shuffled_decks(
        top: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(game_module, "_DEALER_TOP", top)
    deepest = 0
    for number in range(2_000):
        for count in (2, 3, 4):
            expected = reference_draw_for_dealer(f"dealer-{number}", count)
            assert game_module._draw_for_dealer(f"dealer-{number}", count) == expected
            deepest = max(deepest, sum(len(draw) for draw in expected[1]))
    if top < 8:  # (no tie in these games goes past 10 cards)
        assert deepest > top  # some draws went deeper than the partly shuffled top


def test_the_hand_counts_kept_by_play_are_those_of_the_hands() -> None:
    """Listing reads each hand's counts by value, which play keeps up to date card by card."""
    for number, options in enumerate((Options(), Options(after_draw="any", dos_call=True),
                                      Options(dos_call=True, dos_rule="v1"))):
        game = Game.new(PLAYERS[:2 + number], f"fast-counts-{number}", options)
        rng = random.Random(number)
        while game.winner is None:
            seat = rng.choice([s for s in range(len(game.players)) if game.legal_actions(s)])
            legal = game.legal_actions(seat)
            game.play(legal[rng.randrange(len(legal))], seat)
            assert game._counts == [game_module._count_hand(hand) for hand in game.hands]
        copy = Game.from_dict(game.to_dict())
        assert copy._counts == game._counts


def test_a_shuffle_made_in_parts_is_the_whole_shuffle() -> None:
    for number, size, key, whole in whole_shuffles("parts", 300):
        parts = list(range(size))
        rng = random.Random(number)
        start, taken = size - 1, 0
        while start > 0:
            steps = min(start, rng.randint(1, 13))
            taken = continue_shuffle(parts, key, start, taken, steps)
            start -= steps
        assert parts == whole, size


def test_a_new_rounds_draw_pile_settles_as_it_is_drawn() -> None:
    for number in range(20):
        lazy = Game.new(PLAYERS[:2 + number % 3], f"fast-pile-{number}")
        settled = lazy.copy()
        assert settled.draw_pile  # reading the pile finishes its shuffle
        rng = random.Random(number)
        while lazy.winner is None:
            legal = lazy.legal_actions()
            action = legal[rng.randrange(len(legal))]
            assert ([event.to_dict() for event in lazy.play(action)]
                    == [event.to_dict() for event in settled.play(action)])
        assert lazy.to_dict() == settled.to_dict()
