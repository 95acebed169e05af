"""Rule options (RULES.md 3.5, 3.6, 5, 6.4). Options are part of a game's state.

``dos_rule`` is not a choice offered to players but the version of the DOS-call rule (5) a game
was started under: ``"printed"`` (the printed DOS rule, every game started since it was adopted) or
``"v1"`` (the first reading: only a player who *ended* a turn on two cards without calling could
be caught, by the others, until their next turn). Options read back from a stored state or
record (:meth:`Options.from_stored`) that do not name it were written before it existed, so they
mean ``"v1"``; options coming from a person (:meth:`Options.from_dict`) default to
``"printed"``. It only matters when ``dos_call`` is on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dos_engine.errors import DosError
from dos_engine.translation import N_

AfterDraw = Literal["drawn_card", "any"]
AFTER_DRAW_CHOICES: tuple[AfterDraw, ...] = ("drawn_card", "any")
BonusPlacement = Literal["optional", "mandatory"]
BONUS_PLACEMENT_CHOICES: tuple[BonusPlacement, ...] = ("optional", "mandatory")
DosRule = Literal["v1", "printed"]
DOS_RULE_CHOICES: tuple[DosRule, ...] = ("v1", "printed")
MAX_TARGET_SCORE = 10_000
_KNOWN = frozenset({"after_draw", "bonus_placement", "dos_call", "dos_rule", "target_score"})


class InvalidOptionsError(DosError):
    """Rule options that are not allowed."""


@dataclass(frozen=True, slots=True)
class Options:
    after_draw: AfterDraw = "drawn_card"
    dos_call: bool = False
    target_score: int = 200
    bonus_placement: BonusPlacement = "optional"
    dos_rule: DosRule = "printed"

    def __post_init__(self) -> None:
        if self.after_draw not in AFTER_DRAW_CHOICES:
            raise InvalidOptionsError(
                N_("after_draw must be one of {choices}, not {value}"),
                choices=", ".join(AFTER_DRAW_CHOICES), value=repr(self.after_draw),
            )
        if self.bonus_placement not in BONUS_PLACEMENT_CHOICES:
            raise InvalidOptionsError(
                N_("bonus_placement must be one of {choices}, not {value}"),
                choices=", ".join(BONUS_PLACEMENT_CHOICES), value=repr(self.bonus_placement),
            )
        if self.dos_rule not in DOS_RULE_CHOICES:
            raise InvalidOptionsError(
                N_("dos_rule must be one of {choices}, not {value}"),
                choices=", ".join(DOS_RULE_CHOICES), value=repr(self.dos_rule),
            )
        if not isinstance(self.dos_call, bool):
            raise InvalidOptionsError(N_("dos_call must be true or false"))
        if (
            isinstance(self.target_score, bool)
            or not isinstance(self.target_score, int)
            or not 1 <= self.target_score <= MAX_TARGET_SCORE
        ):
            raise InvalidOptionsError(
                N_("target_score must be a whole number from 1 to {maximum}"),
                maximum=MAX_TARGET_SCORE,
            )

    @property
    def printed_dos_rule(self) -> bool:
        """Whether DOS calls follow the printed rule (5.1-5.4): ``dos_call`` on, ``"printed"``."""
        return self.dos_call and self.dos_rule == "printed"

    def to_dict(self) -> dict[str, Any]:
        # Written out (what asdict gives, in field order): every new game calls it.
        return {
            "after_draw": self.after_draw,
            "dos_call": self.dos_call,
            "target_score": self.target_score,
            "bonus_placement": self.bonus_placement,
            "dos_rule": self.dos_rule,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Options:
        """Options as a person gives them: what is left out takes its default (a new game)."""
        return cls._read(raw, default_dos_rule="printed")

    @classmethod
    def from_stored(cls, raw: Mapping[str, Any]) -> Options:
        """Options of a stored state or record: without ``dos_rule`` they predate it (``"v1"``)."""
        return cls._read(raw, default_dos_rule="v1")

    @classmethod
    def _read(cls, raw: Mapping[str, Any], default_dos_rule: DosRule) -> Options:
        unknown = set(raw) - _KNOWN
        if unknown:
            raise InvalidOptionsError(N_("unknown rule options: {names}"),
                                      names=", ".join(sorted(unknown)))
        defaults = cls()
        return cls(
            after_draw=cast(AfterDraw, raw.get("after_draw", defaults.after_draw)),
            dos_call=raw.get("dos_call", defaults.dos_call),
            target_score=raw.get("target_score", defaults.target_score),
            bonus_placement=cast(
                BonusPlacement, raw.get("bonus_placement", defaults.bonus_placement)
            ),
            dos_rule=cast(DosRule, raw.get("dos_rule", default_dos_rule)),
        )
