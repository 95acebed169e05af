"""Growth with a limit: what the server stops keeping, and when (``RETAIN_*`` settings).

The worker runs :func:`run` on each pass (at most once per ``RETAIN_EVERY_SECONDS``), by its
own clock, in bounded batches (``RETAIN_BATCH`` rows or games a rule and a pass), each batch a
short transaction of its own. A period of 0 or less switches its rule off.

- ``RETAIN_UNSTARTED_DAYS``: a game never started (``waiting``) that has not changed for this
  long is deleted with its seats, their unclaimed invites and its outbox rows.
- ``RETAIN_SIGNIN_DAYS``: sign-in requests (login codes) created this long ago are deleted
  (a code lives minutes; the hourly limit per address counts the last hour's).
- Expired sessions: account sessions whose token can no longer sign anything in (older than
  ``TOKEN_MAX_AGE_DAYS``) and browser sessions past ``expires_at`` are deleted.
- ``RETAIN_MAIL_DAYS``: the payload of a settled outbox row (sent, dead, dropped: the worker
  never sends it again) becomes ``{}`` and the raw bytes of a handled inbound message
  (processed, rejected, ignored: never parsed again) become empty, this long after they
  settled, in every game, still running or not. What the account export and the dedupe read
  stays: each row, its ids, ``dedupe_key``, ``message_id``, status and times.
- ``RETAIN_MAIL_LOG_DAYS``: a game finished or cancelled (and archived, if finished) this
  long ago loses its mail log: its settled outbox rows with their delivery attempts and its
  handled inbound messages are deleted. Until then the export lists them and a late
  duplicate of an emailed move is recognized by its ``dedupe_key``; after it the export no
  longer lists them, and a duplicate (months after a mail server's retries gave up) meets a
  finished game and changes nothing.

Pending outbox rows and inbound messages still ``received`` or ``failed`` are never touched.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import ColumnElement, Text, cast, delete, func, or_, select, update

from dos_server.database import write_transaction
from dos_server.extensions import db
from dos_server.models import (
    AccountSessionRow,
    BrowserSessionRow,
    DeliveryAttemptRow,
    GameRow,
    InboundMessageRow,
    LoginCodeRow,
    NotificationRow,
)
from dos_server.services import account
from dos_server.services.archive import HANDLED, SETTLED

log = logging.getLogger("dos_server.retention")

CLOSED = ("finished", "cancelled")
_ran_at: dict[str, datetime] = {}  # per process: when this worker last ran the rules


def _days(name: str) -> timedelta | None:
    value = current_app.config.get(name)
    if value is None or float(value) <= 0:
        return None
    return timedelta(days=float(value))


def _batch() -> int:
    return max(1, int(current_app.config["RETAIN_BATCH"]))


def due(now: datetime) -> bool:
    """Whether this worker's pass runs the rules now (at most once per
    ``RETAIN_EVERY_SECONDS``; a clock moved back runs them again)."""
    every = timedelta(seconds=float(current_app.config["RETAIN_EVERY_SECONDS"]))
    last = _ran_at.get("at")
    if last is not None and last <= now < last + every:
        return False
    _ran_at["at"] = now
    return True


def run(now: datetime, force: bool = False) -> dict[str, int]:
    """One round of every rule, one batch each; returns how many it removed or slimmed."""
    if not force and not due(now):
        return {}
    done = {
        "unstarted_games": unstarted_games(now),
        "sign_in_codes": sign_in_codes(now),
        "sessions": sessions(now),
        "mail_payloads": mail_payloads(now),
        "mail_logs": mail_logs(now),
    }
    if any(done.values()):
        log.info("retention: %s", ", ".join(f"{k} {v}" for k, v in done.items() if v))
    return done


def run_all(now: datetime) -> dict[str, int]:
    """Every rule until nothing is left to do (``dos-server retention``, the bench)."""
    total: dict[str, int] = {}
    while True:
        done = run(now, force=True)
        for key, value in done.items():
            total[key] = total.get(key, 0) + value
        if not any(done.values()):
            return total


def _count(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)


def unstarted_games(now: datetime) -> int:
    """Delete games never started and unchanged for ``RETAIN_UNSTARTED_DAYS``."""
    period = _days("RETAIN_UNSTARTED_DAYS")
    if period is None:
        return 0
    stale = (GameRow.status == "waiting", GameRow.updated_at < now - period)
    ids = db.session.execute(select(GameRow.id).where(*stale).order_by(GameRow.updated_at)
                             .limit(_batch())).scalars().all()
    db.session.rollback()
    removed = 0
    for game_id in ids:
        with write_transaction():
            # Locked and checked again: a game started or changed meanwhile stays.
            game = db.session.execute(select(GameRow).where(GameRow.id == game_id, *stale)
                                      .with_for_update(skip_locked=True)).scalar_one_or_none()
            if game is None:
                continue
            # Seats, votes, events and outbox rows (with their attempts) go by ON DELETE
            # CASCADE, on both databases (SQLite's foreign keys are on: database.py).
            db.session.execute(delete(GameRow).where(GameRow.id == game.id))
            removed += 1
    return removed


def sign_in_codes(now: datetime) -> int:
    """Delete sign-in requests created more than ``RETAIN_SIGNIN_DAYS`` ago."""
    period = _days("RETAIN_SIGNIN_DAYS")
    if period is None:
        return 0
    # Never within the hour the per-address limit counts, whatever the setting.
    cutoff = now - max(period, timedelta(hours=1))
    return _delete_ids(LoginCodeRow.id, LoginCodeRow.created_at < cutoff)


def sessions(now: datetime) -> int:
    """Delete account sessions whose tokens have expired and browser sessions past their end."""
    max_age = timedelta(days=float(current_app.config["TOKEN_MAX_AGE_DAYS"]))
    expired = AccountSessionRow.created_at < now - max_age
    ids = db.session.execute(select(AccountSessionRow.id).where(expired)
                             .order_by(AccountSessionRow.id).limit(_batch())).scalars().all()
    db.session.rollback()
    removed = 0
    if ids:
        with write_transaction():
            gone = list(db.session.execute(
                select(AccountSessionRow.id).where(AccountSessionRow.id.in_(ids), expired)
                .order_by(AccountSessionRow.id).with_for_update()).scalars())
            db.session.execute(delete(AccountSessionRow).where(AccountSessionRow.id.in_(gone)))
            account._end_browser_sessions(gone)  # a browser signed in with one is signed out
            removed = len(gone)
    return removed + _delete_ids(BrowserSessionRow.id_hash, BrowserSessionRow.expires_at < now)


def _delete_ids(key: Any, *where: ColumnElement[bool]) -> int:
    """Delete up to one batch of the rows of ``key``'s table that match, by key."""
    ids = db.session.execute(select(key).where(*where).limit(_batch())).scalars().all()
    db.session.rollback()
    if not ids:
        return 0
    with write_transaction():
        return _count(db.session.execute(delete(key.class_).where(key.in_(ids), *where)))


def mail_payloads(now: datetime) -> int:
    """Empty the payloads of outbox rows settled and the raw bytes of inbound messages handled
    more than ``RETAIN_MAIL_DAYS`` ago."""
    period = _days("RETAIN_MAIL_DAYS")
    if period is None:
        return 0
    cutoff = now - period
    settled_at = func.coalesce(NotificationRow.sent_at, NotificationRow.created_at)
    # Already slimmed rows are found by a cheap test: an empty payload is "{}" in JSON text.
    outbox = (NotificationRow.status.in_(SETTLED), settled_at < cutoff,
              func.length(cast(NotificationRow.payload, Text)) > 2)
    ids = db.session.execute(select(NotificationRow.id).where(*outbox)
                             .limit(_batch())).scalars().all()
    handled_at = func.coalesce(InboundMessageRow.processed_at, InboundMessageRow.received_at)
    inbound = (InboundMessageRow.status.in_(HANDLED), handled_at < cutoff,
               func.length(InboundMessageRow.raw) > 0)
    messages = db.session.execute(select(InboundMessageRow.id).where(*inbound)
                                  .limit(_batch())).scalars().all()
    db.session.rollback()
    done = 0
    # One transaction per table: none holds rows of both while it waits for the other's
    # (the archive pass slims a game's outbox, then its messages).
    if messages:
        with write_transaction():
            done += _count(db.session.execute(
                update(InboundMessageRow).where(InboundMessageRow.id.in_(messages), *inbound)
                .values(raw=b""), execution_options={"synchronize_session": False}))
    if ids:
        with write_transaction():
            done += _count(db.session.execute(
                update(NotificationRow).where(NotificationRow.id.in_(ids), *outbox)
                .values(payload={}), execution_options={"synchronize_session": False}))
    return done


def mail_logs(now: datetime) -> int:
    """Delete the settled outbox rows and handled inbound messages of games closed more than
    ``RETAIN_MAIL_LOG_DAYS`` ago; returns how many games it cleared."""
    period = _days("RETAIN_MAIL_LOG_DAYS")
    if period is None:
        return 0
    cutoff = now - period
    closed = (GameRow.status.in_(CLOSED), GameRow.updated_at < cutoff,
              or_(GameRow.status != "finished", GameRow.archived_at.is_not(None)))
    has_outbox = select(NotificationRow.id).where(NotificationRow.game_id == GameRow.id,
                                                  NotificationRow.status.in_(SETTLED)).exists()
    has_inbound = select(InboundMessageRow.id).where(
        InboundMessageRow.game_id == GameRow.id, InboundMessageRow.status.in_(HANDLED)).exists()
    ids = db.session.execute(select(GameRow.id).where(*closed, or_(has_outbox, has_inbound))
                             .order_by(GameRow.updated_at).limit(_batch())).scalars().all()
    db.session.rollback()
    for game_id in ids:
        with write_transaction():
            # In services/locks.py's order: the messages, then the game, then its outbox.
            db.session.execute(delete(InboundMessageRow).where(
                InboundMessageRow.game_id == game_id, InboundMessageRow.status.in_(HANDLED),
                InboundMessageRow.game_id.in_(select(GameRow.id).where(*closed))))
            if db.session.execute(select(GameRow.id).where(GameRow.id == game_id, *closed)
                                  .with_for_update()).scalar_one_or_none() is None:
                continue
            settled = select(NotificationRow.id).where(NotificationRow.game_id == game_id,
                                                       NotificationRow.status.in_(SETTLED))
            db.session.execute(delete(DeliveryAttemptRow)
                               .where(DeliveryAttemptRow.notification_id.in_(settled)))
            db.session.execute(delete(NotificationRow).where(
                NotificationRow.game_id == game_id, NotificationRow.status.in_(SETTLED)))
    return len(ids)


__all__ = ["mail_logs", "mail_payloads", "run", "run_all", "sessions", "sign_in_codes",
           "unstarted_games"]
