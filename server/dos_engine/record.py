"""Game records: (players, seed, options, actions) fully determine a game (RULES.md 7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dos_engine.actions import Action, parse_action
from dos_engine.game import Game
from dos_engine.options import Options
from dos_engine.rng import round_seed, seed_commitment

RECORD_FORMAT = "dos-record/1"


@dataclass(frozen=True)
class GameRecord:
    players: tuple[str, ...]
    seed: str
    options: Options = field(default_factory=Options)
    actions: tuple[tuple[int, str], ...] = ()  # (seat, canonical action text)

    def with_action(self, seat: int, action: Action) -> GameRecord:
        return GameRecord(self.players, self.seed, self.options,
                          (*self.actions, (seat, action.text())))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "players": list(self.players),
            "seed": self.seed,
            "options": self.options.to_dict(),
            "actions": [{"seat": seat, "action": text} for seat, text in self.actions],
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> GameRecord:
        if raw.get("format") != RECORD_FORMAT:
            raise ValueError(f"not a {RECORD_FORMAT} record")
        return cls(
            players=tuple(raw["players"]),
            seed=raw["seed"],
            options=Options.from_stored(raw["options"]),
            actions=tuple((int(a["seat"]), str(a["action"])) for a in raw["actions"]),
        )


def replay(record: GameRecord) -> Game:
    """Rebuild a game by playing its record from the start; raises if any action is illegal."""
    game = Game.new(record.players, record.seed, record.options)
    for seat, text in record.actions:
        game.play(parse_action(text), seat)
    return game


def verify_commitments(seed: str, commitments: Sequence[str]) -> bool:
    """Check published per-round commitments against a revealed game seed."""
    return all(
        seed_commitment(round_seed(seed, number)) == commitment
        for number, commitment in enumerate(commitments, start=1)
    )
