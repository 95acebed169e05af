"""The searching bot (dos_engine.search): honest, deterministic, always legal, registered.

Honesty is tested as a property: two states that differ only in what the bot's seat cannot see
(the other hands, the draw pile's order and the discard pile) give the bot the same view, and
the bot makes the same choice in both. Determinizations are tested to look, to the seat, exactly
like the position they were built from. Strength is not tested here: it is measured by
``bench/bots.py``.
"""

from __future__ import annotations

import random
from itertools import product

import pytest

from dos_engine import (
    Action,
    Add,
    CallDos,
    Card,
    Catch,
    Draw,
    Game,
    GameRecord,
    Match,
    Options,
    Place,
    RandomStrategy,
    Strategy,
    View,
    greedy,
    make_strategy,
    play_game,
    replay,
)
from dos_engine.search import (
    DEFAULT_LEVEL,
    LEVELS,
    Level,
    SearchStrategy,
    action_score,
    candidate_turns,
    determinize,
    keep_score,
    keeping_action,
    rollout_action,
    unseen_cards,
)
from dos_engine.strategies import STRATEGIES

# A tiny budget keeps whole games quick; the real levels differ only in their numbers.
TINY = Level("tiny", playouts=6, max_candidates=6)
COMBINATIONS = list(product((2, 3, 4), ("drawn_card", "any"), (False, True)))


def positions(
    count: int, options: Options, seed: str, every: int = 3, limit: int = 40
) -> list[tuple[Game, int]]:
    """Positions along a greedy/random self-play game (copies), with the seat to move."""
    game = Game.new([f"p{n}" for n in range(count)], seed, options)
    bots: list[Strategy] = [greedy if n % 2 else RandomStrategy(f"{seed}/{n}")
                            for n in range(count)]
    out: list[tuple[Game, int]] = []
    step = 0
    while not game.is_over and len(out) < limit:
        seat = game.current
        legal = game.legal_actions(seat)
        if step % every == 0 and len(legal) > 1:
            out.append((game.copy(), seat))
        game.play(bots[seat](game.view(seat), legal), seat)
        step += 1
    return out


def shuffle_hidden(game: Game, seat: int, rng: random.Random) -> Game:
    """The same position with everything ``seat`` cannot see dealt again at random."""
    raw = game.to_dict()
    others = [n for n in range(len(game.players)) if n != seat]
    pool = [code for n in others for code in raw["hands"][n]]
    pool += raw["draw_pile"] + raw["discard_pile"]
    rng.shuffle(pool)
    for n in others:
        size = len(raw["hands"][n])
        raw["hands"][n], pool = pool[:size], pool[size:]
    draw = len(raw["draw_pile"])
    raw["draw_pile"], raw["discard_pile"] = pool[:draw], pool[draw:]
    return Game.from_dict(raw)


def choice(strategy: Strategy, game: Game, seat: int) -> Action:
    return strategy(game.view(seat), game.legal_actions(seat))


@pytest.mark.parametrize(("count", "after_draw", "dos_call"), COMBINATIONS)
def test_the_choice_depends_only_on_the_view(count: int, after_draw: str, dos_call: bool) -> None:
    options = Options(after_draw="any" if after_draw == "any" else "drawn_card", dos_call=dos_call)
    rng = random.Random(f"honest/{count}/{after_draw}/{dos_call}")
    differed = 0
    for game, seat in positions(count, options, f"honest-{count}-{after_draw}-{dos_call}",
                                limit=16):
        other = shuffle_hidden(game, seat, rng)
        assert other.view(seat) == game.view(seat)
        differed += other.to_dict() != game.to_dict()
        bot = SearchStrategy("same seed", TINY)
        assert choice(bot, game, seat) == choice(bot, other, seat)
    assert differed > 8  # the hidden cards really were different


def test_the_choice_is_the_same_at_a_real_level_with_different_hidden_cards() -> None:
    rng = random.Random("honest-real")
    for game, seat in positions(2, Options(), "honest-real", every=7)[:6]:
        other = shuffle_hidden(game, seat, rng)
        bot = make_strategy("search-1", "seed")
        assert choice(bot, game, seat) == choice(bot, other, seat)


@pytest.mark.parametrize(("count", "after_draw", "dos_call"), COMBINATIONS)
def test_a_determinization_looks_like_the_view(count: int, after_draw: str, dos_call: bool) -> None:
    options = Options(after_draw="any" if after_draw == "any" else "drawn_card", dos_call=dos_call)
    rng = random.Random("worlds")
    for game, seat in positions(count, options, f"worlds-{count}-{after_draw}-{dos_call}", 2):
        view = game.view(seat)
        world = determinize(view, rng)
        assert world.view(seat) == view
        assert world.card_count() == 108
        assert sorted(unseen_cards(view), key=lambda c: c.id) == sorted(
            [c for n, hand in enumerate(world.hands) if n != seat for c in hand]
            + world.draw_pile + world.discard_pile, key=lambda c: c.id)


def test_the_same_seed_and_level_give_the_same_choices() -> None:
    for game, seat in positions(3, Options(), "determinism", every=4)[:10]:
        first = choice(make_strategy("search-1", "seed-a"), game, seat)
        assert choice(make_strategy("search-1", "seed-a"), game, seat) == first
        assert choice(SearchStrategy("seed-a", "search-1"), game.copy(), seat) == first


def test_bot_games_replay() -> None:
    def run() -> tuple[Game, object]:
        bots: list[Strategy] = [SearchStrategy("replay", TINY), greedy, SearchStrategy("r2", TINY)]
        return play_game(["a", "b", "c"], "replay", bots, Options(target_score=15))

    game, record = run()
    again, record_again = run()
    assert record == record_again
    assert replay(record) == game == again  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["search-1", DEFAULT_LEVEL])
def test_a_game_at_a_real_level_replays_from_its_record(level: str) -> None:
    """The same seeds give the same game, action for action, and its record replays to it."""
    def run() -> tuple[Game, GameRecord]:
        bots: list[Strategy] = [make_strategy(level, "replay-real"), greedy]
        return play_game(["a", "b"], f"replay-{level}", bots, Options(target_score=1))

    game, record = run()
    again, record_again = run()
    assert record == record_again
    assert replay(record) == game == again


@pytest.mark.parametrize(("count", "after_draw", "dos_call"), COMBINATIONS)
def test_whole_games_end_with_legal_actions(count: int, after_draw: str, dos_call: bool) -> None:
    """play_game raises on an illegal choice; the bot plays against greedy and random."""
    options = Options(after_draw="any" if after_draw == "any" else "drawn_card", dos_call=dos_call,
                      target_score=40)
    for lineup in range(2):
        bots: list[Strategy] = []
        for seat in range(count):
            if seat == lineup % count:
                bots.append(SearchStrategy(f"legal/{seat}", TINY))
            elif lineup == 0:
                bots.append(greedy)
            else:
                bots.append(RandomStrategy(f"legal/{seat}"))
        game, _ = play_game([f"p{n}" for n in range(count)], f"legal-{lineup}-{count}", bots,
                            options)
        assert game.is_over
        assert game.card_count() == 108


class Checked:
    """A strategy that asserts its choices are among the legal actions it was offered."""

    def __init__(self, inner: Strategy) -> None:
        self.inner = inner
        self.calls = 0

    def __call__(self, view: View, legal: tuple[Action, ...] | list[Action]) -> Action:
        action = self.inner(view, legal)
        assert action in legal
        self.calls += 1
        return action


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_every_level_chooses_legal_actions(level: str) -> None:
    bot = Checked(make_strategy(level, "legal"))
    for game, seat in positions(3, Options(dos_call=True), f"legal-{level}", every=5, limit=4):
        bot(game.view(seat), game.legal_actions(seat))
    assert bot.calls == 4


# 500 games, every level in every one of them, in chunks that pytest-xdist can spread.
LEGAL_GAMES, LEGAL_CHUNKS = 500, 10


@pytest.mark.parametrize("chunk", range(LEGAL_CHUNKS))
def test_every_level_is_legal_over_500_games(chunk: int) -> None:
    """Each game is one round (target 1) of 2-4 players under varied options, every search level
    seated in it (beside greedy or random when there are seats left), so every level meets every
    kind of position. Each level keeps its candidate width (what decides the actions it may
    pick) at the smallest playout budget, one deal per candidate per halving, and playouts cut
    after 12 actions, which keeps the test quick (about 60 s of CPU in all); ``Checked`` and
    ``play_game`` both fail on an illegal choice."""
    levels = [Level(level.name, playouts=1, max_candidates=level.max_candidates,
                    max_round_actions=12)
              for level in LEVELS.values()]
    per_chunk = LEGAL_GAMES // LEGAL_CHUNKS
    decisions = 0
    for number in range(chunk * per_chunk, (chunk + 1) * per_chunk):
        count, after_draw, dos_call = COMBINATIONS[number % len(COMBINATIONS)]
        options = Options(after_draw="any" if after_draw == "any" else "drawn_card",
                          dos_call=dos_call, target_score=1,
                          bonus_placement="mandatory" if number % 5 == 0 else "optional")
        bots: list[Checked] = []
        for seat in range(count):
            slot = (seat + number) % max(count, len(levels))
            if slot < len(levels):
                inner: Strategy = SearchStrategy(f"legal/{number}/{seat}", levels[slot])
            else:
                inner = greedy if number % 2 else RandomStrategy(f"legal/{number}/{seat}")
            bots.append(Checked(inner))
        game, _ = play_game([f"p{n}" for n in range(count)], f"legal-500-{number}", bots, options)
        assert game.is_over
        assert game.card_count() == 108
        decisions += sum(bot.calls for bot in bots)
    assert decisions > per_chunk * 10


def test_trivial_choices_need_no_search() -> None:
    game = Game.new(["a", "b"], "trivial", Options(dos_call=True))
    view = game.view(game.current)
    bot = SearchStrategy("x", TINY)
    assert bot(view, [CallDos(), *view.legal_actions]) == CallDos()
    assert bot(view, [*view.legal_actions, Catch(1 - game.current)]) == Catch(1 - game.current)
    waiting = game.view(1 - game.current)
    assert bot(waiting, [Catch(game.current)]) == Catch(game.current)
    with pytest.raises(ValueError, match="no legal action"):
        bot(view, [])


def test_candidate_turns_start_with_the_keeping_turn() -> None:
    for game, seat in positions(2, Options(), "candidates", every=2)[:20]:
        turns = candidate_turns(game, seat, 12)
        assert 1 <= len(turns) <= 12
        assert len(set(turns)) == len(turns)
        assert turns[0][0] == keeping_action(game)
        for turn in turns:  # each one is playable from the position, as a whole turn or to a draw
            trial = game.copy()
            for action in turn:
                trial.play(action, seat)


def test_levels_are_registered_in_make_strategy() -> None:
    for name in ("search-1", "search-2", "search-3"):
        assert name in STRATEGIES
        bot = make_strategy(name, 7)
        assert isinstance(bot, SearchStrategy)
        assert bot.level is LEVELS[name]
    assert LEVELS["search-1"].playouts < LEVELS["search-2"].playouts < LEVELS["search-3"].playouts
    with pytest.raises(ValueError, match="search-1"):
        make_strategy("search-9")


@pytest.mark.parametrize(("count", "after_draw", "dos_call"), COMBINATIONS)
def test_the_playout_policy_is_greedy(count: int, after_draw: str, dos_call: bool) -> None:
    options = Options(after_draw="any" if after_draw == "any" else "drawn_card", dos_call=dos_call)
    for game, seat in positions(count, options, f"policy-{count}-{after_draw}-{dos_call}", 1):
        assert rollout_action(game) == greedy(game.view(seat), game.legal_actions(seat))


@pytest.mark.parametrize(("count", "after_draw", "dos_call"), COMBINATIONS)
def test_the_keeping_policy_is_greedy_without_wild_cards(
    count: int, after_draw: str, dos_call: bool
) -> None:
    options = Options(after_draw="any" if after_draw == "any" else "drawn_card", dos_call=dos_call)
    differed = 0
    for game, seat in positions(count, options, f"keeping-{count}-{after_draw}-{dos_call}", 1):
        greedy_choice, keeping_choice = rollout_action(game), keeping_action(game)
        if not any(card.is_wild for card in game.hands[seat]):
            assert keeping_choice == greedy_choice
        differed += keeping_choice != greedy_choice
    assert differed < 40


def test_the_keeping_score_spends_wild_cards_last() -> None:
    row = [Card.from_code("R5"), Card.from_code("B7")]
    wild, five, dos = Card.from_code("Y#"), Card.from_code("G5"), Card.from_code("W2")
    by_wild, by_five = Match(1, (wild,)), Match(1, (five,))
    assert action_score(row, by_wild) > action_score(row, by_five)  # greedy sheds the 40 points
    assert keep_score(row, by_wild, 5) < keep_score(row, by_five, 5) < 1_000 + 100
    assert keep_score(row, by_wild, 5) > action_score(row, Draw())  # still better than a draw
    assert keep_score(row, by_wild, 2) == action_score(row, by_wild)  # it takes the hand out
    assert keep_score(row, Add(wild), 3) < keep_score(row, Add(five), 3)
    assert keep_score(row, Place(dos), 3) < keep_score(row, Place(five), 3)
    assert keep_score(row, Place(dos), 1) == action_score(row, Place(dos))
