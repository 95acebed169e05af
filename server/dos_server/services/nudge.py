"""Nudges: a player waiting on another tells them so, at most once a day per game.

The nudged seat gets one email and webhook (kind ``nudge``) naming who waits and since when,
and the history gets a ``nudged`` row. A nudge changes no table: the game's version stays, so
a move the nudged player is writing (or an emailed reply) is not made stale by it.

Transactions: :func:`nudge` and :func:`set_nudges` own theirs; :func:`nudge_seat` works on a
game the caller has locked (play by email), inside the caller's transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from math import ceil
from typing import Any

from dos_server import timefmt
from dos_server.database import write_transaction
from dos_server.errors import (
    AlreadyResigned,
    GameNotActive,
    NothingToNudge,
    NudgesOff,
    NudgeTooSoon,
    PlayersOnly,
)
from dos_server.models import GameRow, SeatRow, as_utc, utcnow
from dos_server.services import notify, play
from dos_server.services.access import engine_state, game_is, locked, seat_of
from dos_server.services.words import _

NUDGE_EVERY = timedelta(hours=24)  # per nudging seat per game


def next_allowed(seat: SeatRow) -> datetime | None:
    """When ``seat`` may nudge again in its game (None: now)."""
    if seat.last_nudged_at is None:
        return None
    return as_utc(seat.last_nudged_at) + NUDGE_EVERY


def nudge(game_id: str, bearer: str | None, now: datetime | None = None) -> dict[str, Any]:
    """The token's seat nudges the seat whose turn it is (own transaction)."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        if viewer.seat is None:
            raise PlayersOnly(_("only a seat's player token can nudge"))
        return nudge_seat(game, viewer.seat, now)


def nudge_seat(game: GameRow, index: int, now: datetime | None = None) -> dict[str, Any]:
    """Seat ``index`` of the locked ``game`` nudges the seat whose turn it is.

    Refused (nothing written) when it is the asker's own turn or a bot's, when the asker
    resigned, when the seat to move takes no nudges, or within a day of the asker's last nudge
    in this game (the refusal says when the next one is allowed).
    """
    now = now or utcnow()
    if game.status != "active":
        raise GameNotActive(game_is(game))
    state = engine_state(game)
    me = seat_of(game, index)
    target = seat_of(game, state.current)
    if not play.seat_plays(me):
        raise AlreadyResigned(_("you have resigned: a bot plays your seat"))
    if target.index == me.index:
        raise NothingToNudge(_("it is your own turn: nobody is waiting on you to nudge"))
    if not play.seat_plays(target):
        raise NothingToNudge(_("a bot plays %(name)s's seat: it does not need a nudge",
                               name=_name(target)))
    if target.nudges_off:
        raise NudgesOff(_("%(name)s has turned nudges off", name=_name(target)))
    allowed = next_allowed(me)
    if allowed is not None and allowed > now:
        raise NudgeTooSoon(
            _("you nudged in this game less than a day ago; your next nudge is allowed at "
              "%(when)s", when=timefmt.when(allowed, notify.reader_zone(me), now)),
            next_allowed_at=allowed.isoformat(), retry_after=ceil((allowed - now).total_seconds()))
    me.last_nudged_at = now
    since = as_utc(game.turn_started_at) if game.turn_started_at else now
    data = {"by": me.index, "by_name": me.name, "target": target.index,
            "waiting_since": since.isoformat(),
            "waiting_seconds": max(0, int((now - since).total_seconds()))}
    play.write_history([play.append_event(game, me.index, "nudged", dict(data))])
    notify.enqueue(game, "nudge", [target], state, data,
                   key=f"nudge-{me.public_id}-{now.isoformat()}")
    return {"nudged": target.index, "name": target.name, "waiting_since": since.isoformat(),
            "next_allowed_at": (now + NUDGE_EVERY).isoformat()}


def _name(seat: SeatRow) -> str:
    return seat.name or _("seat %(number)s", number=seat.index)


__all__ = ["NUDGE_EVERY", "next_allowed", "nudge", "nudge_seat"]
