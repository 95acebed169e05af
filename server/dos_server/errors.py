"""Domain errors: what a service refuses to do, and why, in words a person can act on.

Services and ``tokens`` raise these and know nothing of HTTP. An error carries its ``detail``
(the sentence the person reads) and, where it has them, structured facts beside it in
``fields`` (the RULES.md section, the game's current version, an ambiguous move's
candidates...). ``kind`` names the error for machines: it ends the problem ``type`` of an API
answer (``problems.PROBLEM_TYPES`` maps each class to its status and title) and is the
outcome of an email move that was refused (services/inbound.py).

This module imports nothing of ours: everything may raise these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar


class DomainError(Exception):
    """A refusal; nothing the request asked for was done."""

    kind: ClassVar[str]
    retry_after: int | None = None  # seconds after which the same request may succeed

    def __init__(self, detail: str, **fields: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fields = {name: value for name, value in fields.items() if value is not None}


# -- who asks -----------------------------------------------------------------------------------


class NotAuthenticated(DomainError):
    """No token, or one that is bad, expired or revoked (or whose seat is gone)."""

    kind = "unauthorized"


class WrongCode(DomainError):
    """A sign-in code that is wrong, used or expired."""

    kind = "invalid-code"


class WrongGame(DomainError):
    """A good token, but for another game."""

    kind = "wrong-game"


class NoSuchSeat(DomainError):
    """A seat position the game does not have."""

    kind = "no-such-seat"


class HostOnly(DomainError):
    kind = "host-only"


class PlayersOnly(DomainError):
    """Only a seat's player may do this (not the host, not a spectator)."""

    kind = "not-a-player"


class NotYourSeat(DomainError):
    """A player (or the host) acting on a seat that is not theirs to change."""

    kind = "not-your-seat"


class WrongInviteCode(DomainError):
    kind = "bad-invite-code"


# -- what they ask about --------------------------------------------------------------------


class GameNotFound(DomainError):
    kind = "game-not-found"


class SessionNotFound(DomainError):
    kind = "session-not-found"


class PlayerNotFound(DomainError):
    """No identity goes by this player name (services/ratings.py)."""

    kind = "player-not-found"


# -- the game is not in the state the request needs -----------------------------------------


class StaleVersion(DomainError):
    """The move was chosen at an older version of the game."""

    kind = "stale-version"

    def __init__(self, detail: str, *, current_version: int) -> None:
        super().__init__(detail, current_version=current_version)
        self.current_version = current_version


class GameNotActive(DomainError):
    kind = "game-not-active"


class GameNotStarted(DomainError):
    kind = "game-not-started"


class GameNotFinished(DomainError):
    kind = "game-not-finished"


class GameClosed(DomainError):
    """Finished or cancelled: nobody joins any more."""

    kind = "game-closed"


class AlreadyStarted(DomainError):
    kind = "already-started"


class AlreadyResigned(DomainError):
    kind = "already-resigned"


class SeatClaimed(DomainError):
    kind = "seat-claimed"


class NoOpenSeat(DomainError):
    kind = "no-open-seat"


class NotEnoughPlayers(DomainError):
    kind = "not-enough-players"


class TooFewSeats(DomainError):
    kind = "too-few-seats"


class NoPersonLeft(DomainError):
    kind = "no-person-left"


class NoVacationLeft(DomainError):
    kind = "no-vacation-left"


class SeveralSeats(DomainError):
    """The identity holds more than one seat of the game: ``seats`` says which."""

    kind = "several-seats"

    def __init__(self, detail: str, *, seats: Sequence[int]) -> None:
        super().__init__(detail, seats=list(seats))
        self.seats = list(seats)


class AddressChanged(DomainError):
    kind = "address-changed"


class PlayerNameTaken(DomainError):
    """Another identity goes by this player name (case does not count)."""

    kind = "player-name-taken"


# -- what was sent ----------------------------------------------------------------------------


class InvalidInput(DomainError):
    """A field's value is not allowed; ``errors`` may name it, by location and field."""

    kind = "invalid-input"

    def __init__(self, detail: str, *, errors: dict[str, Any] | None = None) -> None:
        super().__init__(detail, errors=errors)


class InvalidAction(DomainError):
    """The text is not an action in the notation."""

    kind = "invalid-action"


class IllegalAction(DomainError):
    """The rules forbid the action now; ``rule`` is the RULES.md section, when there is one."""

    kind = "illegal-action"

    def __init__(self, detail: str, *, rule: str | None = None) -> None:
        super().__init__(detail, rule=rule)
        self.rule = rule


class NotYourTurn(IllegalAction):
    kind = "not-your-turn"


class AmbiguousAction(DomainError):
    """Shorthand that fits more than one legal action: ``candidates`` in the notation."""

    kind = "ambiguous-action"

    def __init__(self, detail: str, *, candidates: Sequence[str]) -> None:
        super().__init__(detail, candidates=list(candidates))
        self.candidates = list(candidates)


class NoSuchAction(DomainError):
    """A number outside the list of legal actions."""

    kind = "no-such-action"


class IdempotencyKeyReused(DomainError):
    """An Idempotency-Key sent again with a different request."""

    kind = "idempotency-key-reused"


class RateLimited(DomainError):
    kind = "rate-limited"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


# -- nudges and votes on absent seats (services/nudge.py, services/abandon.py) -----------------


class NothingToNudge(DomainError):
    """Nobody to nudge: it is the asker's own turn, or a bot's."""

    kind = "nothing-to-nudge"


class NudgesOff(DomainError):
    """The seat whose turn it is takes no nudges."""

    kind = "nudges-off"


class NudgeTooSoon(DomainError):
    """This seat nudged in this game less than a day ago: ``next_allowed_at`` says when."""

    kind = "nudge-too-soon"

    def __init__(self, detail: str, *, next_allowed_at: str, retry_after: int) -> None:
        super().__init__(detail, next_allowed_at=next_allowed_at)
        self.retry_after = retry_after


class ChatMuted(DomainError):
    """The host muted this seat in the game's chat."""

    kind = "chat-muted"


class NotAbsent(DomainError):
    """A vote on a seat whose player is not absent (it moved or looked lately)."""

    kind = "not-absent"


class NotAVoter(DomainError):
    """Only the other players still playing vote on an absent seat."""

    kind = "not-a-voter"


__all__ = [
    "AddressChanged",
    "AlreadyResigned",
    "AlreadyStarted",
    "AmbiguousAction",
    "ChatMuted",
    "DomainError",
    "GameClosed",
    "GameNotActive",
    "GameNotFinished",
    "GameNotFound",
    "GameNotStarted",
    "HostOnly",
    "IdempotencyKeyReused",
    "IllegalAction",
    "InvalidAction",
    "InvalidInput",
    "NoOpenSeat",
    "NoPersonLeft",
    "NoSuchAction",
    "NoSuchSeat",
    "NoVacationLeft",
    "NotAVoter",
    "NotAbsent",
    "NotAuthenticated",
    "NotEnoughPlayers",
    "NotYourSeat",
    "NotYourTurn",
    "NothingToNudge",
    "NudgeTooSoon",
    "NudgesOff",
    "PlayerNameTaken",
    "PlayerNotFound",
    "PlayersOnly",
    "RateLimited",
    "SeatClaimed",
    "SessionNotFound",
    "SeveralSeats",
    "StaleVersion",
    "TooFewSeats",
    "WrongCode",
    "WrongGame",
    "WrongInviteCode",
]
