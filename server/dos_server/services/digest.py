"""Digest mode: instead of one email per turn, at most one email a day per address that lists
every game waiting on that person (their seats with ``digest`` on)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from dos_server.database import write_transaction
from dos_server.delivery.email import play_line
from dos_server.extensions import db
from dos_server.models import DigestRow, GameRow, SeatRow, as_utc
from dos_server.services.notify import add_row, unsubscribe_urls
from dos_server.tokens import unsubscribe_address
from dos_server.web import links as web_links

DIGEST_EVERY = timedelta(hours=24)


def send_digests(now: datetime) -> int:
    """Queue today's digest for every address that has games waiting and none sent for 24 h."""
    rows = db.session.execute(
        select(SeatRow, GameRow)
        .join(GameRow, SeatRow.game_id == GameRow.id)
        .where(SeatRow.digest.is_(True), SeatRow.email.is_not(None),
               SeatRow.email_unsubscribed.is_(False), GameRow.status == "active")
    ).all()
    waiting: dict[str, list[dict[str, Any]]] = {}
    for seat, game in rows:
        if game.state is None or game.state.get("current") != seat.index:
            continue
        unsubscribe, unsubscribe_page = unsubscribe_urls(game.id, seat.public_id)
        waiting.setdefault((seat.email or "").lower(), []).append({
            "id": game.id,
            "game_title": game.title,
            "seat": seat.index,
            "name": seat.name,
            "deadline": game.turn_deadline.isoformat() if game.turn_deadline else None,
            "opponents": [s.name or f"seat {s.index}" for s in game.seats if s is not seat],
            "line": play_line(game.id, "N", game.version),
            "table": web_links.signin_url(game, seat),  # one press opens the seat's table
            "unsubscribe": unsubscribe,
            "unsubscribe_page": unsubscribe_page,
            "unsubscribe_mailto": unsubscribe_address(game.id, seat.public_id),
        })
    db.session.rollback()
    queued = 0
    for address, games in sorted(waiting.items()):
        with write_transaction():
            last = db.session.get(DigestRow, address)
            if last is not None and as_utc(last.last_sent_at) > now - DIGEST_EVERY:
                continue
            if last is None:
                db.session.add(DigestRow(address=address, last_sent_at=now))
            else:
                last.last_sent_at = now
            add_row(None, [], "email", address, "digest", f"digest:{address}:{now:%Y-%m-%dT%H}",
                    {"event": "digest", "address": address, "games": games,
                     "thread": hashlib.sha256(address.encode()).hexdigest()[:16],
                     "unsubscribe": games[0]["unsubscribe"],
                     "unsubscribe_mailto": games[0]["unsubscribe_mailto"]}, due=now)
            queued += 1
    return queued
