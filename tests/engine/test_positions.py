"""The fixture file of hand-built positions (tests/data/positions.json), checked like a perft file.

Each position's legal action list was derived by hand from RULES.md and the README decisions.
The engine must list exactly those actions (as a multiset, without repeats), accept each of them
with ``play``, describe each of them, and refuse the listed illegal ones without changing the game.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from positions import position_from_spec

from dos_engine import DosError, IllegalActionError, parse_action

DATA = Path(__file__).resolve().parents[1] / "data" / "positions.json"
RULE_SECTIONS = {
    "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "2.1", "2.2", "2.3", "2.4",
    "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "4.1", "4.2", "4.3", "4.4",
    "5", "5.1", "5.2", "5.3", "5.4", "6.1", "6.2", "6.3", "6.4", "6.5", "7",
}


def _load() -> list[dict[str, Any]]:
    with DATA.open(encoding="utf-8") as handle:
        data = json.load(handle)
    positions: list[dict[str, Any]] = data["positions"]
    return positions


POSITIONS = _load()


def test_fixture_file_is_well_formed() -> None:
    ids = [p["id"] for p in POSITIONS]
    assert len(ids) >= 30
    assert len(ids) == len(set(ids)), "position ids must be unique"
    for position in POSITIONS:
        assert set(position) <= {"id", "description", "rules", "state", "seat", "legal", "illegal"}
        assert position["description"].strip()
        assert position["rules"]
        assert set(position["rules"]) <= RULE_SECTIONS
        for text in [*position["legal"], *position.get("illegal", [])]:
            assert parse_action(text).text() == text, f"{position['id']}: {text!r} is not canonical"


def test_fixture_file_covers_every_wild_card_rule() -> None:
    covered = {rule for position in POSITIONS for rule in position["rules"]}
    assert {"1.3", "1.4", "1.5", "1.6", "3.5", "3.6", "4.3", "5.1", "5.2"} <= covered


@pytest.mark.parametrize("position", POSITIONS, ids=[p["id"] for p in POSITIONS])
def test_position_legal_actions(position: dict[str, Any]) -> None:
    game = position_from_spec(position["state"])
    seat: int = position["seat"]
    listed = [action.text() for action in game.legal_actions(seat)]
    repeated = sorted(text for text, n in Counter(listed).items() if n > 1)
    assert not repeated, f"listed more than once: {repeated}"
    assert sorted(listed) == sorted(position["legal"]), (
        f"missing: {sorted(set(position['legal']) - set(listed))}, "
        f"unexpected: {sorted(set(listed) - set(position['legal']))}"
    )
    assert [a.text() for a in game.view(seat).legal_actions] == listed


@pytest.mark.parametrize("position", POSITIONS, ids=[p["id"] for p in POSITIONS])
def test_position_listed_actions_are_playable(position: dict[str, Any]) -> None:
    game = position_from_spec(position["state"])
    seat: int = position["seat"]
    before = game.to_dict()
    for action in game.legal_actions(seat):
        assert game.describe(action, seat).strip(), f"{action} has no description"
        assert game.is_legal(action, seat)
        trial = game.copy()
        trial.play(action, seat)
        assert trial.card_count() == 108
    assert game.to_dict() == before, "listing, describing or playing a copy changed the game"


@pytest.mark.parametrize(
    "position",
    [p for p in POSITIONS if p.get("illegal")],
    ids=[p["id"] for p in POSITIONS if p.get("illegal")],
)
def test_position_illegal_actions_are_refused(position: dict[str, Any]) -> None:
    game = position_from_spec(position["state"])
    seat: int = position["seat"]
    before = game.to_dict()
    for text in position["illegal"]:
        action = parse_action(text)
        assert not game.is_legal(action, seat), f"{text} is accepted"
        with pytest.raises(IllegalActionError):
            game.play(action, seat)
        assert game.to_dict() == before, f"refused {text} changed the game"


def test_positions_round_trip_through_to_dict() -> None:
    from dos_engine import Game

    for position in POSITIONS:
        game = position_from_spec(position["state"])
        try:
            again = Game.from_dict(json.loads(json.dumps(game.to_dict())))
        except DosError as error:  # pragma: no cover - reported with the position's id
            pytest.fail(f"{position['id']}: {error}")
        assert again == game
