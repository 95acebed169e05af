"""Events: what an action caused, as the history and the notifications need it.

An event has public ``data`` that every viewer may see and, for card identities that only one
seat may know (the cards it drew), ``secret`` data shown to that ``seat`` alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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


class Event:
    """One thing an action caused: its kind, the seat it concerns, public ``data`` and, for
    card identities only that seat may know, ``secret`` data. Treat events as values.

    The engine may make an event whose data is built when first read (:func:`deferred_event`):
    self-play and the search bot make millions of events that nobody reads, and building their
    dicts and lists was a good part of an action's cost. Reading, comparing or printing an
    event gives the same values either way.
    """

    __slots__ = ("_args", "_build", "_data", "_secret", "kind", "seat")
    __match_args__ = ("kind", "seat", "data", "secret")

    kind: EventKind
    seat: int | None
    _data: Mapping[str, Any]
    _secret: Mapping[str, Any] | None
    # Until the data is read: a function of ``_args`` that returns (data, secret).
    _build: Callable[..., tuple[Mapping[str, Any], Mapping[str, Any] | None]] | None
    _args: tuple[Any, ...]

    def __init__(self, kind: EventKind, seat: int | None = None,
                 data: Mapping[str, Any] | None = None,
                 secret: Mapping[str, Any] | None = None) -> None:
        self.kind = kind
        self.seat = seat
        self._data = {} if data is None else data
        self._secret = secret
        self._build = None

    def _made(self) -> None:
        build = self._build
        if build is not None:
            self._data, self._secret = build(*self._args)
            self._build = None
            del self._args

    @property
    def data(self) -> Mapping[str, Any]:
        if self._build is not None:
            self._made()
        return self._data

    @data.setter
    def data(self, value: Mapping[str, Any]) -> None:
        self._made()  # the secret stays as it was made
        self._data = value

    @property
    def secret(self) -> Mapping[str, Any] | None:
        if self._build is not None:
            self._made()
        return self._secret

    @secret.setter
    def secret(self, value: Mapping[str, Any] | None) -> None:
        self._made()
        self._secret = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return ((self.kind, self.seat, self.data, self.secret)
                == (other.kind, other.seat, other.data, other.secret))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Event(kind={self.kind!r}, seat={self.seat!r}, data={self.data!r}, "
                f"secret={self.secret!r})")

    def to_dict(self) -> dict[str, Any]:
        """Everything, for storage: redact with :meth:`for_viewer` before showing it."""
        out: dict[str, Any] = {"kind": self.kind.value, "seat": self.seat, "data": dict(self.data)}
        secret = self.secret
        if secret is not None:
            out["secret"] = dict(secret)
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Event:
        secret = raw.get("secret")
        return cls(EventKind(raw["kind"]), raw.get("seat"), dict(raw.get("data", {})),
                   dict(secret) if secret is not None else None)

    def for_viewer(self, viewer: int | None) -> dict[str, Any]:
        """The event as ``viewer`` (a seat, or None for a spectator) may see it."""
        return redact(self.to_dict(), viewer)


_new_event = object.__new__


def deferred_event(
    kind: EventKind, seat: int | None,
    build: Callable[..., tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    args: tuple[Any, ...],
) -> Event:
    """An event whose (data, secret) are ``build(*args)``, worked out when first read.

    ``args`` must not change afterwards (cards, numbers, strings, lists nobody keeps).
    """
    event: Event = _new_event(Event)
    event.kind = kind
    event.seat = seat
    event._build = build
    event._args = args
    return event


def redact(event: Mapping[str, Any], viewer: int | None) -> dict[str, Any]:
    """Redact a stored event dict for a viewer: secrets go only to their own seat."""
    out = {"kind": event["kind"], "seat": event.get("seat"), "data": dict(event.get("data", {}))}
    secret = event.get("secret")
    if secret is not None and viewer is not None and viewer == event.get("seat"):
        out["data"].update(secret)
    return out
