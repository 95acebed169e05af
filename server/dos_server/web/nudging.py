"""What the table page shows a player waiting on someone: whom they may nudge and when, and
the seats that look absent with the votes on each (the buttons' routes: pages/waiting.py)."""

from __future__ import annotations

from typing import Any

from dos_server import timefmt
from dos_server.models import GameRow, utcnow
from dos_server.services import abandon, nudge, play
from dos_server.services.access import Viewer, seat_of
from dos_server.web import reader


def panel(game: GameRow, viewer: Viewer, body: dict[str, Any],
          names: list[str]) -> dict[str, Any] | None:
    """What the table shows a player still playing of an active game: whom they may nudge
    and when, and the seats that look absent with their votes (None: nothing to show)."""
    if viewer.seat is None or body["status"] != "active" or body.get("view") is None:
        return None
    me = seat_of(game, viewer.seat)
    if not play.seat_plays(me):
        return None
    now = utcnow()
    current = seat_of(game, body["view"]["current"])
    nudging = None
    if current.index != me.index and play.seat_plays(current):
        allowed = nudge.next_allowed(me)
        nudging = {"name": names[current.index], "off": current.nudges_off,
                   "allowed_at": timefmt.local_time(allowed, reader.zone())
                   if allowed is not None and allowed > now else None}
    absent = [{**tally, "name": names[tally["seat"]]}
              for tally in abandon.page_tallies(game, me.index, now)]
    if nudging is None and not absent:
        return None
    return {"nudge": nudging, "absent": absent}


__all__ = ["panel"]
