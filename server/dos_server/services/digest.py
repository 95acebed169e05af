"""Digest mode: instead of one email per turn, at most one email a day per address that lists
every game waiting on that person (their seats with ``digest`` on)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dos_server import i18n, urls
from dos_server.database import write_transaction
from dos_server.extensions import db
from dos_server.models import DigestRow, GameRow, SeatRow, as_utc
from dos_server.services import access, chat_history
from dos_server.services.notify import (
    add_row,
    chosen_language,
    reader_zone,
    seat_names,
    unsubscribe_urls,
)
from dos_server.tokens import unsubscribe_address

DIGEST_EVERY = timedelta(hours=24)
NEVER = datetime(1970, 1, 1, tzinfo=UTC)


def send_digests(now: datetime) -> int:
    """Queue today's digest for every address that has games waiting and none sent for 24 h
    (a transaction of its own per address)."""
    rows = db.session.execute(
        select(SeatRow, GameRow)
        .join(GameRow, SeatRow.game_id == GameRow.id)
        .where(SeatRow.digest.is_(True), SeatRow.email.is_not(None),
               SeatRow.email_unsubscribed.is_(False), GameRow.status == "active")
    ).all()
    waiting: dict[str, list[dict[str, Any]]] = {}
    languages: dict[str, str | None] = {}  # an address's: the first of its seats that chose one
    for seat, game in rows:
        if game.state is None or game.state.get("current") != seat.index:
            continue
        unsubscribe, unsubscribe_page = unsubscribe_urls(game.id, seat.public_id)
        address = (seat.email or "").lower()
        languages[address] = languages.get(address) or chosen_language(seat)
        with i18n.in_language(chosen_language(seat)):
            names = seat_names(game)
            said = chat_history.since_look(game, seat)
        waiting.setdefault(address, []).append({
            "id": game.id,
            "game_title": game.title,
            "seat": seat.index,
            "name": seat.name,
            "deadline": game.turn_deadline.isoformat() if game.turn_deadline else None,
            "time_zone": reader_zone(seat),
            "opponents": [name for index, name in enumerate(names) if index != seat.index],
            "line": urls.play_line(game.id, "N", game.version),
            "chat": said,  # what was said since the seat last looked
            # one press opens the seat's table
            "table": urls.signin_url(game.id, access.seat_token("signin", game, seat)),
            "unsubscribe": unsubscribe,
            "unsubscribe_page": unsubscribe_page,
            "unsubscribe_mailto": unsubscribe_address(game.id, seat.public_id),
        })
    db.session.rollback()
    queued = 0
    for address, games in sorted(waiting.items()):
        with write_transaction():
            if not _claim_digest(address, now):
                continue
            add_row(None, [], "email", address, "digest", f"digest:{address}:{now:%Y-%m-%dT%H}",
                    {"event": "digest", "address": address, "games": games,
                     "language": i18n.language_of(languages.get(address)),
                     "thread": hashlib.sha256(address.encode()).hexdigest()[:16],
                     "unsubscribe": games[0]["unsubscribe"],
                     "unsubscribe_mailto": games[0]["unsubscribe_mailto"]}, due=now)
            queued += 1
    return queued


def _claim_digest(address: str, now: datetime) -> bool:
    """Take today's digest of ``address`` in the caller's transaction; False if it went out
    less than a day ago.

    Two workers may reach the same address at once. The row is created if missing without
    failing on the other worker's new row (the insert waits for its commit, then does
    nothing), then locked: the second worker reads the first one's time and sends nothing.
    """
    dialect = db.session.get_bind().dialect.name
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    db.session.execute(insert(DigestRow).values(address=address, last_sent_at=NEVER)
                       .on_conflict_do_nothing(index_elements=[DigestRow.address]))
    last = db.session.execute(
        select(DigestRow).where(DigestRow.address == address).with_for_update()
        .execution_options(populate_existing=True)
    ).scalar_one()
    if as_utc(last.last_sent_at) > now - DIGEST_EVERY:
        return False
    last.last_sent_at = now
    return True
