"""The engine plays 300 seeded games exactly as it did before its hot paths were rewritten
(RULES.md 7): every event, legal action list, view, refusal and final state, digested game by
game (tests/engine/same_games.py) and compared with tests/data/engine_digests.json, written by
tests/engine/make_engine_digests.py from the engine of commit 16ee7d2. The 25 games that also ask
the search bot for decisions were rewritten (``--search-games``) when its keeping policy changed
its choices; the other 275 still match the digests of 16ee7d2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from same_games import GAMES, game_digest

DATA = Path(__file__).resolve().parents[1] / "data" / "engine_digests.json"
CHUNKS = 10


def golden() -> list[str]:
    digests: list[str] = json.loads(DATA.read_text(encoding="utf-8"))["digests"]
    return digests


def test_the_golden_file_covers_every_game() -> None:
    assert len(golden()) == GAMES
    assert len(set(golden())) == GAMES  # each game different (a digest of nothing would repeat)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_same_games(chunk: int) -> None:
    expected = golden()
    for game_no in range(chunk, GAMES, CHUNKS):
        assert game_digest(game_no) == expected[game_no], f"game {game_no} plays differently"
