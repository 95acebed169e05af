"""Rule options (RULES.md 3.6, 5, 6.4). Options are part of a game's state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

from dos_engine.errors import DosError

AfterDraw = Literal["drawn_card", "any"]
AFTER_DRAW_CHOICES: tuple[AfterDraw, ...] = ("drawn_card", "any")
MAX_TARGET_SCORE = 10_000


class InvalidOptionsError(DosError):
    """Rule options that are not allowed."""


@dataclass(frozen=True, slots=True)
class Options:
    after_draw: AfterDraw = "drawn_card"
    dos_call: bool = False
    target_score: int = 200

    def __post_init__(self) -> None:
        if self.after_draw not in AFTER_DRAW_CHOICES:
            raise InvalidOptionsError(
                f"after_draw must be one of {', '.join(AFTER_DRAW_CHOICES)}, not {self.after_draw!r}"
            )
        if not isinstance(self.dos_call, bool):
            raise InvalidOptionsError("dos_call must be true or false")
        if (
            isinstance(self.target_score, bool)
            or not isinstance(self.target_score, int)
            or not 1 <= self.target_score <= MAX_TARGET_SCORE
        ):
            raise InvalidOptionsError(
                f"target_score must be a whole number from 1 to {MAX_TARGET_SCORE}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Options:
        unknown = set(raw) - {"after_draw", "dos_call", "target_score"}
        if unknown:
            raise InvalidOptionsError(f"unknown rule options: {', '.join(sorted(unknown))}")
        defaults = cls()
        return cls(
            after_draw=cast(AfterDraw, raw.get("after_draw", defaults.after_draw)),
            dos_call=raw.get("dos_call", defaults.dos_call),
            target_score=raw.get("target_score", defaults.target_score),
        )
