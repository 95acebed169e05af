"""The operator's tools (``dos-server admin``): look at games, fix a stuck one, resend a dead
letter, forget an address, count what the server holds. No SQL needed, and no hands shown.

Every change to a game is a history row whose ``by`` is ``operator``, so the players (and the
record) see who did it. Each function owns its transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update

from dos_server.database import write_transaction
from dos_server.errors import GameNotActive, InvalidInput
from dos_server.extensions import db
from dos_server.models import (
    EventRow,
    GameRow,
    IdentityRow,
    InboundMessageRow,
    NotificationRow,
    SeatRow,
    as_utc,
    utcnow,
)
from dos_server.services import account, play
from dos_server.services.access import engine_state, get_game, seat_of
from dos_server.services.lobby import BOT_STRATEGIES
from dos_server.validation import clean_email, email_key

OPEN = ("waiting", "active")
OPERATOR = "operator"


class AdminRefused(Exception):
    """What the operator asked for cannot be done to this row as it stands (the CLI says
    why; no HTTP route raises it)."""


@dataclass(frozen=True)
class GameLine:
    id: str
    status: str
    title: str | None
    players: list[str]
    turn_of: str | None
    deadline: datetime | None
    created_at: datetime
    updated_at: datetime


def list_games(status: str | None = None, idle_days: float | None = None,
               limit: int = 50) -> list[GameLine]:
    """Games, the longest untouched first; ``idle_days``: untouched for at least that long."""
    query = select(GameRow).order_by(GameRow.updated_at, GameRow.id).limit(limit)
    if status is not None:
        query = query.where(GameRow.status == status)
    if idle_days is not None:
        query = query.where(GameRow.updated_at <= utcnow() - timedelta(days=idle_days))
    lines = []
    for game in db.session.execute(query).scalars():
        names = [_seat_label(seat) for seat in game.seats]
        turn_of = None
        if game.status == "active" and game.state is not None:
            turn_of = names[int(game.state["current"])]
        lines.append(GameLine(game.id, game.status, game.title, names, turn_of,
                              game.turn_deadline, game.created_at, game.updated_at))
    return lines


def _seat_label(seat: SeatRow) -> str:
    label = seat.name or "(open seat)"
    if seat.bot:
        label += f" [bot {seat.bot}]"
    elif seat.resigned:
        label += " [resigned]"
    return label


def show_game(game_id: str) -> dict[str, Any]:
    """One game for the operator: seats, whose turn, deadline, the outbox rows still to send,
    the last emails received. Never a hand, a draw pile or a token."""
    game = get_game(game_id)
    state = game.state or {}
    seats = [{"index": seat.index, "name": seat.name, "bot": seat.bot, "claimed": seat.claimed,
              "resigned": seat.resigned, "email": seat.email, "webhook": bool(seat.webhook_url),
              "timeouts": seat.timeouts, "last_seen_at": seat.last_seen_at,
              "cards": len(state["hands"][seat.index]) if "hands" in state else None}
             for seat in game.seats]
    pending = db.session.execute(
        select(NotificationRow).where(NotificationRow.game_id == game.id,
                                      NotificationRow.status.in_(("pending", "dead")))
        .order_by(NotificationRow.id)).scalars().all()
    inbound = db.session.execute(
        select(InboundMessageRow).where(InboundMessageRow.game_id == game.id)
        .order_by(InboundMessageRow.id.desc()).limit(5)).scalars().all()
    return {
        "id": game.id, "status": game.status, "title": game.title, "version": game.version,
        "turn_of": state.get("current") if game.status == "active" else None,
        "turn_started_at": game.turn_started_at, "deadline": game.turn_deadline,
        "archived_at": game.archived_at, "seats": seats,
        "outbox": [{"id": row.id, "status": row.status, "channel": row.channel,
                    "event": row.event, "attempts": row.attempts,
                    "next_attempt_at": row.next_attempt_at, "error": row.last_error}
                   for row in pending],
        "inbound": [{"id": row.id, "status": row.status, "outcome": row.outcome,
                     "from": row.mail_from, "received_at": row.received_at}
                    for row in inbound],
    }


def cancel_game(game_id: str, reason: str) -> GameRow:
    """End a waiting or active game without a result; what it had still to send is dropped."""
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status not in OPEN:
            raise AdminRefused(f"game {game.id} is {game.status} already: there is nothing "
                               "to cancel")
        game.status = "cancelled"
        game.turn_deadline = None
        game.turn_started_at = None
        game.version += 1
        play.write_history([play.append_event(game, None, "game_cancelled",
                                              {"by": OPERATOR, "reason": reason})])
        db.session.execute(
            update(NotificationRow)
            .where(NotificationRow.game_id == game.id, NotificationRow.status == "pending",
                   NotificationRow.event.in_(("your_turn", "reminder")))
            .values(status="dropped", last_error="the operator cancelled the game"))
        return game


def hand_seat_to_bot(game_id: str, index: int, bot: str) -> GameRow:
    """A bot plays seat ``index`` for the rest of the game; at once if it is its turn."""
    if bot not in BOT_STRATEGIES:
        raise InvalidInput(f"there is no bot {bot!r}: choose one of {', '.join(BOT_STRATEGIES)}")
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status != "active":
            raise GameNotActive(f"game {game.id} is {game.status}: only a game in play has "
                                "seats a bot can take over")
        seat = seat_of(game, index)
        if seat.bot:
            raise AdminRefused(f"seat {index} is played by the {seat.bot} bot already")
        seat.bot = bot
        game.version += 1
        rows = [play.append_event(game, index, "seat_handed_to_bot", {"bot": bot, "by": OPERATOR})]
        state = engine_state(game)
        play.after_move(game, state, play.TurnMark.of(state), rows, in_worker=True)
        return game


def resend(notification_id: int) -> NotificationRow:
    """Send a dead-lettered notification again, from its first attempt, with its own id (a
    receiver that saw it already drops the copy)."""
    with write_transaction():
        row = db.session.execute(select(NotificationRow).where(
            NotificationRow.id == notification_id).with_for_update()).scalar_one_or_none()
        if row is None:
            raise AdminRefused(f"there is no notification {notification_id}")
        if row.status != "dead":
            raise AdminRefused(f"notification {row.id} is {row.status}, not dead-lettered: "
                               "only a dead letter is resent")
        if not row.payload:
            raise AdminRefused(f"notification {row.id} belongs to an archived game whose "
                               "messages are no longer kept, so it cannot be sent again")
        row.status = "pending"
        row.attempts = 0
        row.next_attempt_at = utcnow()
        row.lease_until = row.lease_owner = None
        if row.game_id is not None:
            game = get_game(row.game_id, for_update=True)
            if game.archived_at is None:
                game.version += 1
                play.write_history([play.append_event(
                    game, None, "notification_resent",
                    {"by": OPERATOR, "notification": row.id, "event": row.event})])
        return row


def forget_address(address: str) -> dict[str, Any]:
    """The account deletion, for a person who asked the operator: as ``DELETE /api/me``."""
    try:
        key = email_key(clean_email(address.strip()))
    except ValueError as error:
        raise InvalidInput(str(error)) from None
    return account.forget_key(key)


def stats(now: datetime | None = None) -> dict[str, Any]:
    """Games by status, the people who play, and the turns played since midnight (UTC)."""
    now = now or utcnow()
    midnight = as_utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    by_status = {status: count for status, count in db.session.execute(
        select(GameRow.status, func.count()).group_by(GameRow.status))}
    people = db.session.execute(select(func.count(func.distinct(func.lower(SeatRow.email))))
                                .where(SeatRow.email.is_not(None))).scalar_one()
    # A turn ends in one turn_ended event (archived games keep none: they ended before today
    # or the worker has not archived them yet).
    turns = db.session.execute(select(func.count()).select_from(EventRow).where(
        EventRow.kind == "turn_ended", EventRow.created_at >= midnight)).scalar_one()
    outbox = {status: count for status, count in db.session.execute(
        select(NotificationRow.status, func.count()).group_by(NotificationRow.status))}
    return {"games": by_status, "addresses": people,
            "identities": db.session.execute(select(func.count()).select_from(IdentityRow))
            .scalar_one(),
            "turns_today": turns, "outbox": outbox}
