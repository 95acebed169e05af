"""Self-play: 2,000 complete games to 200 points between seeded random and greedy bots, over
every combination of 2-4 players, ``after_draw``, ``bonus_placement`` and the DOS call (off, as
printed, and as first read for stored games: ``dos_rule="v1"``) (RULES.md 3.5, 3.6, 5, 6.4, 7).

The games are split into 40 chunks of 50 so that pytest-xdist can spread them over workers.
Every game must end with one winner at or above the target, everybody else below it; one game
in five is also replayed from its record and must give the same state.
"""

from __future__ import annotations

import json
from itertools import product

import pytest

from dos_engine import (
    GameRecord,
    Options,
    RandomStrategy,
    Strategy,
    greedy,
    parse_action,
    play_game,
    replay,
)

GAMES = 2_000
CHUNKS = 40
PER_CHUNK = GAMES // CHUNKS
COMBINATIONS: list[tuple[int, str, str, str]] = list(
    product((2, 3, 4), ("drawn_card", "any"), ("optional", "mandatory"), ("off", "printed", "v1"))
)
LINEUPS = ("random", "greedy", "mixed")
REPLAY_EVERY = 5


def strategies(game_no: int, count: int, lineup: str) -> list[Strategy]:
    """Seeded bots for every seat: all random, all greedy, or alternating."""
    out: list[Strategy] = []
    for seat in range(count):
        use_greedy = lineup == "greedy" or (lineup == "mixed" and (seat + game_no) % 2 == 0)
        out.append(greedy if use_greedy else RandomStrategy(f"{game_no}/{seat}"))
    return out


def game_setup(game_no: int) -> tuple[int, Options, str]:
    count, after_draw, placement, dos = COMBINATIONS[game_no % len(COMBINATIONS)]
    options = Options.from_dict({
        "after_draw": after_draw, "bonus_placement": placement, "dos_call": dos != "off",
        "dos_rule": "v1" if dos == "v1" else "printed",
    })
    lineup = LINEUPS[(game_no // len(COMBINATIONS)) % len(LINEUPS)]
    return count, options, lineup


def test_the_games_cover_every_combination() -> None:
    seen = [game_setup(n) for n in range(GAMES)]
    assert CHUNKS * PER_CHUNK == GAMES
    def combination(count: int, o: Options) -> tuple[int, str, str, str]:
        dos = o.dos_rule if o.dos_call else "off"
        return count, o.after_draw, o.bonus_placement, dos

    per_combination = {(combination(count, options), lineup) for count, options, lineup in seen}
    assert len(per_combination) == len(COMBINATIONS) * len(LINEUPS)
    for wanted in COMBINATIONS:
        games = sum(1 for count, o, _ in seen if combination(count, o) == wanted)
        assert games >= GAMES // len(COMBINATIONS)


def check_game(game_no: int) -> None:
    count, options, lineup = game_setup(game_no)
    players = [f"bot{seat}" for seat in range(count)]
    seed = f"selfplay-{game_no}"
    game, record = play_game(players, seed, strategies(game_no, count, lineup), options)
    where = f"game {game_no} ({count} players, {options}, {lineup})"
    assert game.is_over, where
    winner = game.winner
    assert winner is not None, where
    assert options.target_score == 200
    assert game.scores[winner] >= 200, where
    assert all(
        score < options.target_score for seat, score in enumerate(game.scores) if seat != winner
    ), where
    assert game.legal_actions() == [], where
    assert game.card_count() == 108, where
    assert record.actions, where
    if game_no % REPLAY_EVERY == 0:
        assert replay(record) == game, where
        raw = json.loads(json.dumps(record.to_dict()))
        assert GameRecord.from_dict(raw) == record, where
        assert all(parse_action(text).text() == text for _, text in record.actions), where


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_selfplay_chunk(chunk: int) -> None:
    for game_no in range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK):
        check_game(game_no)
