"""Reading table talk (services/chat.py writes it): the pages of messages a viewer sees, and
what a seat's emails list of it. Imports nothing that notifies, so that the notifications can
list what was said."""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select

from dos_server.extensions import db
from dos_server.models import GameRow, MessageRow, SeatRow, as_utc
from dos_server.services.access import Viewer, seat_of
from dos_server.services.words import _

SINCE_LOOK = 20  # a your-turn email or digest shows at most this many messages


def email_line(message: MessageRow) -> dict[str, Any]:
    """A message as an email lists it (the name in the current language)."""
    return {"id": message.id, "name": shown_name(message), "text": message.body,
            "at": as_utc(message.created_at).isoformat()}


def shown_name(message: MessageRow) -> str:
    """The author as readers see it (the host and spectators in the reader's language)."""
    if message.author_kind == "host":
        return _("the host")
    if message.author_kind == "spectator":
        return _("a spectator")
    return message.author_name


def message_out(message: MessageRow) -> dict[str, Any]:
    return {"id": message.id, "seat": message.seat, "author": message.author_kind,
            "name": shown_name(message), "text": message.body,
            "created_at": as_utc(message.created_at).isoformat()}


def _visible(query: Any, game: GameRow, viewer: Viewer) -> Any:
    if viewer.seat is None:
        return query
    hidden = seat_of(game, viewer.seat).chat_hidden or []
    if hidden:
        query = query.where(or_(MessageRow.seat.is_(None), MessageRow.seat.not_in(hidden)))
    return query


def messages_body(game: GameRow, viewer: Viewer, after: int, limit: int,
                  before: int | None = None) -> dict[str, Any]:
    """Messages after ``after`` (an id), oldest first, at most ``limit``; with ``before``
    (and ``after`` 0), the newest ``limit`` before that id: a page further back.

    ``next_after`` is the ``after`` of the next page, ``last`` the game's newest message id.
    The viewer's hidden seats are left out.
    """
    query = _visible(select(MessageRow).where(MessageRow.game_id == game.id), game, viewer)
    if before is not None:
        rows = list(reversed(db.session.execute(
            query.where(MessageRow.id > after, MessageRow.id < before)
            .order_by(MessageRow.id.desc()).limit(limit)).scalars().all()))
    else:
        rows = list(db.session.execute(
            query.where(MessageRow.id > after).order_by(MessageRow.id).limit(limit)
        ).scalars().all())
    return {"messages": [message_out(m) for m in rows],
            "next_after": rows[-1].id if rows and before is None else after,
            "more": len(rows) == limit, "last": game.last_message_id}


def recent(game: GameRow, viewer: Viewer, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` messages the viewer sees, oldest first."""
    query = _visible(select(MessageRow).where(MessageRow.game_id == game.id), game, viewer)
    rows = db.session.execute(query.order_by(MessageRow.id.desc()).limit(limit)).scalars()
    return [message_out(m) for m in reversed(list(rows))]


def since_look(game: GameRow, seat: SeatRow, limit: int = SINCE_LOOK) -> list[dict[str, Any]]:
    """What others said since ``seat`` last looked at the game (all, if it never did), as an
    email lists it: oldest first, at most ``limit`` (the newest), in the current language."""
    query = select(MessageRow).where(MessageRow.game_id == game.id,
                                     or_(MessageRow.seat.is_(None),
                                         MessageRow.seat != seat.index))
    if seat.chat_hidden:
        query = query.where(or_(MessageRow.seat.is_(None),
                                MessageRow.seat.not_in(seat.chat_hidden)))
    if seat.owner_key:
        query = query.where(or_(MessageRow.author_key.is_(None),
                                MessageRow.author_key != seat.owner_key))
    if seat.last_seen_at is not None:
        query = query.where(MessageRow.created_at > seat.last_seen_at)
    rows = db.session.execute(query.order_by(MessageRow.id.desc()).limit(limit)).scalars()
    return [email_line(m) for m in reversed(list(rows))]


__all__ = ["SINCE_LOOK", "email_line", "message_out", "messages_body", "recent", "shown_name",
           "since_look"]
