"""What the table page's chat panel shows (its routes: pages/chat.py)."""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _

from dos_server import timefmt
from dos_server.models import GameRow
from dos_server.services import access, chat
from dos_server.web import auth, reader

ON_TABLE = 30  # the panel shows this many of the latest messages


def shown(message: dict[str, Any]) -> dict[str, Any]:
    """A message with its time as the page's reader reads it."""
    at = timefmt.parse(message["created_at"])
    return {**message, "when": timefmt.local_time(at, reader.zone()) if at else ""}


def panel(game: GameRow, viewer: access.Viewer) -> dict[str, Any]:
    """What the table's chat panel shows ``viewer``: the latest messages (its hidden seats
    left out), whether it may write, and why not, and for a seat the other people whose
    messages it may hide (or show again) for itself. A browser that hosts the game writes as
    the host where it holds no seat."""
    authors = _authors(game, viewer)
    if viewer.seat is None and auth.host_token(game.id) is not None:
        viewer = access.Viewer(host=True)
    settings = chat.settings_body(game, viewer)
    messages = [shown(m) for m in chat.recent(game, viewer, ON_TABLE)]
    why = None
    if not settings["can_write"]:
        if viewer.seat is not None:
            why = _("The host has muted your seat in this game's chat.")
        else:
            why = _("Spectators read the chat; only the players write in it.")
    return {"messages": messages, "can_write": settings["can_write"], "why_not": why,
            "after": game.last_message_id, "max_chars": chat.MAX_CHARS, "authors": authors}


def _authors(game: GameRow, viewer: access.Viewer) -> list[dict[str, Any]]:
    """The other people at the table, each with whether the viewer's seat hides them (none
    for a spectator or the host: hiding is a seat's, for itself)."""
    if viewer.seat is None:
        return []
    own = access.seat_of(game, viewer.seat)
    hidden = set(own.chat_hidden or [])
    return [{"seat": s.index, "name": s.name or _("seat %(number)s", number=s.index + 1),
             "hidden": s.index in hidden}
            for s in game.seats
            if s.index != viewer.seat and (s.index in hidden or (s.claimed and not s.bot))]


__all__ = ["ON_TABLE", "panel", "shown"]
