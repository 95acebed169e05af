"""The worker: delivers the outbox and enforces turn deadlines by its own clock.

``flask --app dos_server worker`` (the Procfile's ``worker``). Each pass:

1. claims due outbox rows in a short transaction (PostgreSQL ``FOR UPDATE SKIP LOCKED``, so
   several workers share the work; SQLite serializes the claim with ``BEGIN IMMEDIATE``) by
   setting a lease;
2. delivers them outside any transaction and records every attempt;
3. on failure schedules the next try on the Standard Webhooks schedule with jitter (or the
   receiver's ``Retry-After`` if longer); after the last it dead-letters the row and tells the
   seat's owner by the other channel;
4. sends the 80% reminders and applies the timeout policy to turns whose deadline passed;
5. plays the searching bots (``search-1``..) whose turn it is: requests stop before their turn
   so that a person's move returns at once (``play.run_bots``).

A worker killed mid-batch loses nothing: its leased rows become due again when the lease ends.
Delivery is at least once; receivers dedupe by ``webhook-id`` (the row's ``message_id``).
"""

from __future__ import annotations

import logging
import os
import random
import signal
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import click
from flask import Flask, current_app
from sqlalchemy import or_, select

from dos_engine.search import LEVELS as SEARCH_LEVELS
from dos_server.database import write_transaction
from dos_server.delivery import email, webhooks
from dos_server.delivery.email import DeliveryError
from dos_server.extensions import db
from dos_server.models import (
    DeliveryAttemptRow,
    GameRow,
    NotificationRow,
    SeatRow,
    as_utc,
    utcnow,
)
from dos_server.services import access, digest, inbound, notify, play

log = logging.getLogger("dos_server.worker")

Clock = Callable[[], datetime]
SENDERS = {"email": email.send, "webhook": webhooks.send}


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def claim(now: datetime, limit: int | None = None) -> list[int]:
    """Lease up to ``limit`` due rows to this worker; returns their ids."""
    config = current_app.config
    lease = timedelta(seconds=float(config["WORKER_LEASE_SECONDS"]))
    with write_transaction():
        rows = db.session.execute(
            select(NotificationRow)
            .where(NotificationRow.status == "pending",
                   NotificationRow.next_attempt_at <= now,
                   or_(NotificationRow.lease_until.is_(None), NotificationRow.lease_until < now))
            .order_by(NotificationRow.next_attempt_at, NotificationRow.id)
            .limit(limit or int(config["WORKER_BATCH"]))
            .with_for_update(skip_locked=True)
        ).scalars().all()
        for row in rows:
            row.lease_until = now + lease
        return [row.id for row in rows]


def deliver(notification_id: int, clock: Clock = utcnow) -> bool:
    """One attempt for one claimed row; True if it was delivered."""
    row = db.session.get(NotificationRow, notification_id)
    if row is None or row.status != "pending":
        db.session.rollback()
        return False
    channel, target, payload, message_id = row.channel, row.target, dict(row.payload), \
        row.message_id
    db.session.rollback()  # no transaction stays open while we talk to the outside world
    started = time.perf_counter()
    error: DeliveryError | None = None
    try:
        SENDERS[channel](target, payload, message_id)
    except DeliveryError as failure:
        error = failure
    except Exception as failure:  # a bug must not kill the worker or lose the row
        log.exception("delivery crashed")
        error = DeliveryError(f"{type(failure).__name__}: {failure}")
    elapsed = int((time.perf_counter() - started) * 1000)
    _record(notification_id, error, elapsed, clock())
    return error is None


def _record(notification_id: int, error: DeliveryError | None, elapsed_ms: int,
            now: datetime) -> None:
    schedule = [float(s) for s in current_app.config["RETRY_SCHEDULE"]]
    with write_transaction():
        row = db.session.get(NotificationRow, notification_id)
        if row is None:
            return
        db.session.add(DeliveryAttemptRow(
            notification_id=row.id, at=now, ok=error is None,
            status_code=None if error is None else error.status,
            error=None if error is None else str(error)[:2000],
            duration_ms=elapsed_ms, worker=worker_name(),
        ))
        row.attempts += 1
        row.lease_until = None
        if error is None:
            row.status = "sent"
            row.sent_at = now
            row.last_error = None
            return
        row.last_error = str(error)[:2000]
        if error.status == 410:
            row.status = "dropped"
            _disable_webhook(row)
            return
        if error.permanent or row.attempts >= len(schedule):
            row.status = "dead"
            _dead_letter(row)
            return
        delay = schedule[row.attempts] * random.uniform(0.9, 1.1)
        if error.retry_after is not None:
            delay = max(delay, error.retry_after)
        row.next_attempt_at = now + timedelta(seconds=delay)


def _disable_webhook(row: NotificationRow) -> None:
    if row.game_id is None:
        return
    game = db.session.get(GameRow, row.game_id)
    if game is None:
        return
    for seat in game.seats:
        if seat.webhook_url == row.target:
            seat.webhook_disabled = True


def _dead_letter(row: NotificationRow) -> None:
    """Tell the seat's owner by the other channel that this one does not work."""
    if row.game_id is None or row.event == "undeliverable":
        return
    game = db.session.get(GameRow, row.game_id)
    if game is None:
        return
    # The seats whose channel this is: by address, not by the row's seat numbers, which name
    # other seats once seats were renumbered before the start.
    seats = [s for s in game.seats
             if (s.email if row.channel == "email" else s.webhook_url) == row.target]
    other = "webhook" if row.channel == "email" else "email"  # the broken one cannot tell
    notify.enqueue(game, "undeliverable", seats, None,
                   {"channel": row.channel, "target": row.target, "event": row.event,
                    "error": row.last_error}, key=f"dead{row.id}", channels=(other,))


def run_once(clock: Clock = utcnow) -> int:
    """One pass: deliver what is due, then deadlines. Returns how many rows it delivered."""
    delivered = 0
    ids = claim(clock())
    for notification_id in ids:
        delivered += deliver(notification_id, clock)
    check_deadlines(clock())
    play_bot_turns(clock())
    digest.send_digests(clock())
    inbound.process_pending(clock())  # emailed moves a crash left unprocessed (issue #6)
    return delivered


# -- deadlines ------------------------------------------------------------------------------


def check_deadlines(now: datetime) -> int:
    """Send 80% reminders and time out expired turns; returns how many games it changed."""
    changed = 0
    candidates = db.session.execute(
        select(GameRow.id, GameRow.turn_started_at, GameRow.turn_time_limit,
               GameRow.turn_deadline, GameRow.reminded)
        .where(GameRow.status == "active", GameRow.turn_deadline.is_not(None))
        .order_by(GameRow.turn_deadline)
        .limit(200)
    ).all()
    db.session.rollback()
    for game_id, started, limit, deadline, reminded in candidates:
        if deadline is not None and as_utc(deadline) <= now:
            changed += _time_out(game_id, now)
        elif (not reminded and started is not None and limit
              and as_utc(started) + timedelta(seconds=0.8 * limit) <= now):
            changed += _remind(game_id, now)
    return changed


def play_bot_turns(now: datetime) -> int:
    """Play the searching bots whose turn it is; returns how many games moved.

    Candidates are the active games whose stored state has a searching bot seat to move
    (read without a lock); each is then locked and checked again, so a game another worker
    has just played is skipped. (A column saying "a bot is due" would spare reading states.)
    """
    rows = db.session.execute(
        select(GameRow.id, GameRow.state, SeatRow.index)
        .join(SeatRow, SeatRow.game_id == GameRow.id)
        .where(GameRow.status == "active", SeatRow.bot.in_(sorted(SEARCH_LEVELS)),
               SeatRow.resigned.is_(False))
        .limit(500)
    ).all()
    db.session.rollback()
    candidates = sorted({game_id for game_id, state, index in rows
                         if isinstance(state, dict) and state.get("current") == index
                         and state.get("winner") is None})
    moved = 0
    for game_id in candidates:
        with write_transaction():
            game = access.get_game(game_id, for_update=True)
            if game.status == "active":
                moved += play.play_waiting_bots(game, now)
    return moved


def _remind(game_id: str, now: datetime) -> int:
    with write_transaction():
        game = access.get_game(game_id, for_update=True)
        if game.status != "active" or game.reminded or game.turn_started_at is None:
            return 0
        state = access.engine_state(game)
        game.reminded = True
        seat = {s.index: s for s in game.seats}[state.current]
        notify.enqueue(game, "reminder", [seat], state,
                       key=f"remind-{as_utc(game.turn_started_at).isoformat()}")
        return 1


def _time_out(game_id: str, now: datetime) -> int:
    """The turn's time is up: the game's timeout policy plays it (and may forfeit the seat)."""
    with write_transaction():
        game = access.get_game(game_id, for_update=True)
        if (game.status != "active" or game.turn_deadline is None
                or as_utc(game.turn_deadline) > now):
            return 0
        play.apply_timeout(game, now)
        return 1


# -- the process ----------------------------------------------------------------------------


def run_forever(clock: Clock = utcnow, stop_after: float | None = None) -> None:
    poll = float(current_app.config["WORKER_POLL_SECONDS"])
    stopping = False

    def _stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    log.info("worker %s started", worker_name())
    ends = None if stop_after is None else time.monotonic() + stop_after
    while not stopping and (ends is None or time.monotonic() < ends):
        try:
            delivered = run_once(clock)
        except Exception:
            log.exception("worker pass failed; retrying")
            db.session.rollback()
            delivered = 0
        finally:
            db.session.remove()
        if not delivered:
            time.sleep(poll)
    log.info("worker %s stopped", worker_name())


def register_cli(app: Flask) -> None:
    @app.cli.command("worker")
    @click.option("--once", is_flag=True, help="One pass, then exit.")
    @click.option("--seconds", type=float, default=None, help="Stop after this long.")
    def worker_command(once: bool, seconds: float | None) -> None:
        """Deliver notifications and enforce turn deadlines."""
        if once:
            click.echo(f"delivered {run_once()}")
            return
        run_forever(stop_after=seconds)
