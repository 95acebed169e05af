"""Events: what an action caused, as the history and the notifications need it.

An event has public ``data`` that every viewer may see and, for card identities that only one
seat may know (the cards it drew), ``secret`` data shown to that ``seat`` alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventKind(StrEnum):
    GAME_STARTED = "game_started"  # players, options, dealer draws (2.2)
    ROUND_STARTED = "round_started"  # round, dealer, first player, seed commitment
    DREW = "drew"  # seat drew cards: reason deal | draw | double_colour | caught
    CR_FLIPPED = "cr_flipped"  # cards turned face up into the CR (2.3, 4.2)
    RESHUFFLED = "reshuffled"  # discard pile shuffled into a new draw pile (4.4)
    MATCHED = "matched"  # a single or double match, declarations and bonus (3.1-3.5)
    ADDED = "added"  # a card added to the CR after a draw (3.6)
    PLACED = "placed"  # a colour-bonus card placed (3.5, 4.3)
    DISCARDED = "discarded"  # matched CR cards and the cards on them went to discard (4.1)
    DOS_CALLED = "dos_called"  # 5.1
    DOS_MISSED = "dos_missed"  # dos_rule v1 only: ended a turn on two cards without calling
    CAUGHT = "caught"  # 5.2: by, and (printed rule) deferred: drawn at the end of their turn
    TURN_ENDED = "turn_ended"
    ROUND_OVER = "round_over"  # winner, every hand and its points, scores (6.1-6.3)
    GAME_OVER = "game_over"  # winner, scores, the seed revealed (6.4)


# Not frozen: events are built on the hot path of self-play, and frozen dataclasses pay for
# object.__setattr__ on every field. Treat them as values all the same.
@dataclass(slots=True)
class Event:
    kind: EventKind
    seat: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    secret: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Everything, for storage: redact with :meth:`for_viewer` before showing it."""
        out: dict[str, Any] = {"kind": self.kind.value, "seat": self.seat, "data": dict(self.data)}
        if self.secret is not None:
            out["secret"] = dict(self.secret)
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Event:
        secret = raw.get("secret")
        return cls(EventKind(raw["kind"]), raw.get("seat"), dict(raw.get("data", {})),
                   dict(secret) if secret is not None else None)

    def for_viewer(self, viewer: int | None) -> dict[str, Any]:
        """The event as ``viewer`` (a seat, or None for a spectator) may see it."""
        return redact(self.to_dict(), viewer)


def redact(event: Mapping[str, Any], viewer: int | None) -> dict[str, Any]:
    """Redact a stored event dict for a viewer: secrets go only to their own seat."""
    out = {"kind": event["kind"], "seat": event.get("seat"), "data": dict(event.get("data", {}))}
    secret = event.get("secret")
    if secret is not None and viewer is not None and viewer == event.get("seat"):
        out["data"].update(secret)
    return out
