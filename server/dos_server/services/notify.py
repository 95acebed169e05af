"""Notifications into the outbox, inside the transaction of the change that causes them.

Nothing here talks to SMTP or HTTP: the worker (``dos_server.worker``) delivers the rows.
Each row carries everything its message needs (the seat's view, its numbered moves), so a
message says what was true when the change committed, however late it is delivered.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from flask import current_app

from dos_engine import Game
from dos_server import tokens
from dos_server.extensions import db
from dos_server.models import GameRow, NotificationRow, SeatRow, utcnow

EVENTS = ("your_turn", "reminder", "timed_out", "caught", "round_over", "game_over", "invited")
CHANNELS = ("email", "webhook")
DIGESTED = ("your_turn", "reminder")  # what digest mode gathers into one daily email


def wants(seat: SeatRow, channel: str, event: str) -> bool:
    """Whether ``seat`` receives ``event`` on ``channel`` (bots never do)."""
    if seat.bot:
        return False
    if event == "undeliverable":  # not a choosable event: the other channel just has to exist
        return bool(seat.webhook_url and seat.webhook_secret and not seat.webhook_disabled
                    if channel == "webhook" else seat.email and not seat.email_unsubscribed)
    if channel == "email":
        if not seat.email or seat.email_unsubscribed:
            return False
    elif not seat.webhook_url or seat.webhook_disabled or not seat.webhook_secret:
        return False
    if seat.notify_events is None:
        return True
    return event in seat.notify_events.get(channel, [])


def new_webhook_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and base64 of 24 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def links(game: GameRow) -> dict[str, str]:
    base = current_app.config["PUBLIC_URL"].rstrip("/")
    return {
        "game": f"{base}/api/games/{game.id}",
        "actions": f"{base}/api/games/{game.id}/actions",
        "events": f"{base}/api/games/{game.id}/events",
    }


def enqueue(
    game: GameRow,
    event: str,
    seats: Iterable[SeatRow],
    state: Game | None,
    data: dict[str, Any] | None = None,
    key: str | None = None,
    channels: Sequence[str] = CHANNELS,
) -> int:
    """Write the outbox rows for ``event`` to ``seats``; returns how many.

    ``key`` tells this occurrence of the event apart (default: the game version), so that a
    retried transaction or a second worker never writes the same delivery twice.
    """
    occurrence = key or f"v{game.version}"
    data = data or {}
    chosen = list(seats)
    count = 0
    for seat in chosen:
        if "email" not in channels or not wants(seat, "email", event):
            continue
        if seat.digest and event in DIGESTED:
            continue  # it will be in the seat's daily digest instead
        payload = email_payload(game, seat, state, event, data)
        add_row(game.id, [seat.index], "email", seat.email or "", event,
             f"{game.id}:{occurrence}:{event}:email:{seat.index}", payload)
        count += 1
    by_url: dict[str, list[SeatRow]] = {}
    for seat in chosen:
        if "webhook" in channels and wants(seat, "webhook", event):
            by_url.setdefault(seat.webhook_url or "", []).append(seat)
    for url, group in by_url.items():
        payload = {
            "type": f"game.{event}",
            "game_id": game.id,
            "seat": group[0].index if len(group) == 1 else None,
            "seats": [s.index for s in group],
            "version": game.version,
            "links": links(game),
            "data": data,
            "secret": group[0].webhook_secret,
        }
        add_row(game.id, [s.index for s in group], "webhook", url, event,
             f"{game.id}:{occurrence}:{event}:webhook:{url}", payload)
        count += 1
    return count


def add_row(game_id: str | None, seats: list[int], channel: str, target: str, event: str,
            dedupe_key: str, payload: dict[str, Any], due: datetime | None = None) -> None:
    """One outbox row, due now (or at ``due``), with the id it keeps on every retry."""
    db.session.add(NotificationRow(
        game_id=game_id, seats=seats, channel=channel, target=target, event=event,
        dedupe_key=dedupe_key[:512], message_id="msg_" + secrets.token_hex(12),
        payload=payload, status="pending", attempts=0, next_attempt_at=due or utcnow(),
    ))


def email_payload(game: GameRow, seat: SeatRow, state: Game | None, event: str,
                  data: dict[str, Any]) -> dict[str, Any]:
    names = [s.name or f"seat {s.index}" for s in game.seats]
    payload: dict[str, Any] = {
        "event": event,
        "game_id": game.id,
        "seat": seat.index,
        "name": seat.name,
        "names": names,
        "version": game.version,
        "deadline": game.turn_deadline.isoformat() if game.turn_deadline else None,
        "links": links(game),
        "data": data,
        "unsubscribe": unsubscribe_url(game.id, seat.public_id),
        "view": None,
        "moves": [],
        # Play by email (issue #6): replying to this email plays this seat at this version.
        "reply_to": None if event == "invited" else tokens.reply_address(
            game.id, seat.public_id, game.version, seat.token_version),
    }
    if state is not None:
        view = state.view(seat.index)
        payload["view"] = view.to_dict()
        payload["moves"] = [
            {"number": n, "action": a.text(), "description": state.describe(a, seat.index)}
            for n, a in enumerate(view.legal_actions, start=1)
        ]
    return payload


def unsubscribe_url(game_id: str, seat_id: str) -> str:
    """The seat's one-click unsubscribe link (``seat_id``: its public_id); never revoked."""
    base = current_app.config["PUBLIC_URL"].rstrip("/")
    return f"{base}/api/unsubscribe/{tokens.issue('unsubscribe', game_id, seat_id, 1)}"


def after_change(game: GameRow, state: Game, *, new_turn: bool, just_over: bool,
                 kinds: Sequence[tuple[str, int | None]]) -> None:
    """Notify what a committed change caused: whose turn it is now, catches, round/game end.

    ``new_turn``: a new turn began (the engine's turn counter moved on); ``just_over``: the
    change ended the game; ``kinds``: the ``(kind, seat)`` of the events the change appended.
    """
    seats = {s.index: s for s in game.seats}
    people = [s for s in game.seats if not s.bot]
    for kind, seat in kinds:
        if kind == "caught" and seat is not None:
            enqueue(game, "caught", [seats[seat]], state, {"seat": seat},
                    key=f"v{game.version}-seat{seat}")
    rounds = [k for k, _ in kinds if k == "round_over"]
    if rounds:
        enqueue(game, "round_over", people, state, {"scores": list(state.scores)})
    if state.is_over:
        if just_over:
            enqueue(game, "game_over", people, state,
                    {"winner": state.winner, "scores": list(state.scores)})
        return
    if new_turn:
        current = seats[state.current]
        if not current.resigned:
            enqueue(game, "your_turn", [current], state)
