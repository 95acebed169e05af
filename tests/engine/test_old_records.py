"""Games recorded under the first reading of the DOS rule (``dos_rule`` "v1") replay exactly.

``tests/data/records_v1.json`` was written by the engine of commit 5423412 (before the printed
DOS rule and ``bonus_placement`` existed): four self-played games, each with its record, a state
halfway through, the final state and the events of every action. Their options carry no
``dos_rule``, so they are read under the DOS rule as first implemented (``"v1"``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dos_engine import Game, GameRecord, parse_action, replay

DATA = json.loads((Path(__file__).parent.parent / "data" / "records_v1.json").read_text())
GAMES: list[dict[str, Any]] = DATA["games"]


@pytest.mark.parametrize("stored", GAMES, ids=[g["record"]["seed"] for g in GAMES])
def test_5_old_records_replay_exactly(stored: dict[str, Any]) -> None:
    record = GameRecord.from_dict(stored["record"])
    game = replay(record)
    assert game == Game.from_dict(stored["final_state"])
    again = Game.new(record.players, record.seed, record.options)
    for (seat, text), events in zip(record.actions, stored["events"], strict=True):
        assert [e.to_dict() for e in again.play(parse_action(text), seat)] == events, text
    assert again == game


@pytest.mark.parametrize("stored", GAMES, ids=[g["record"]["seed"] for g in GAMES])
def test_5_old_states_play_on_as_before(stored: dict[str, Any]) -> None:
    """A game stored halfway by the old engine goes on under the rules it was started with."""
    record = GameRecord.from_dict(stored["record"])
    game = Game.from_dict(stored["mid_state"])
    for seat, text in record.actions[len(record.actions) // 2 :]:
        game.play(parse_action(text), seat)
    assert game == Game.from_dict(stored["final_state"])
