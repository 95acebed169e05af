"""The worker: delivers the outbox and enforces turn deadlines by its own clock.

``flask --app dos_server worker`` (the Procfile's ``worker``). Each pass:

1. claims due outbox rows in a short transaction (PostgreSQL ``FOR UPDATE SKIP LOCKED``, so
   several workers share the work; SQLite serializes the claim with ``BEGIN IMMEDIATE``) by
   setting a lease;
2. delivers them outside any transaction and records every attempt;
3. on failure schedules the next try on the Standard Webhooks schedule with jitter (or the
   receiver's ``Retry-After`` if longer); after the last it dead-letters the row and tells the
   seat's owner by the other channel;
4. sends the seats' reminders (``50%``, ``80%``, ``1h``...; services/attention.py) and applies
   the timeout policy to turns whose deadline passed;
5. plays the searching bots (``search-1``..) whose turn it is: requests stop before their turn
   so that a person's move returns at once (``play.run_bots``);
6. archives games finished more than ``ARCHIVE_AFTER_SECONDS`` ago (services/archive.py);
7. deletes expired browser sessions (every ``SESSION_PURGE_SECONDS``);
8. applies the retention rules (services/retention.py, every ``RETAIN_EVERY_SECONDS``).

A worker killed mid-batch loses nothing: its leased rows become due again when the lease ends.

A your-turn row held while the player was looking (services/attention.py) is checked again by
its lease owner, under the game's lock and the row's, right before it is sent: it waits again
(``next_attempt_at`` moves, the lease is given back) if the player looked since, or is
``dropped`` if the turn it announced is over; either way it is not sent in this pass.

**The delivery guarantee.** Every row is delivered at least once, and, with any number of
workers, exactly once unless a worker dies (or loses its database) between a successful send
and recording it, or a receiver accepts a message after the sender gave up waiting:

- a claim names its owner (``lease_owner``) and takes only as many rows as half a lease lets
  this worker send at the pace it measures;
- right before each send the worker renews its lease, under the row lock, and skips the row
  if another worker has claimed it since (its own lease ran out);
- a send may take at most 80% of a lease (the SMTP and HTTP timeouts are capped so), so the
  lease cannot run out during a send;
- the result is recorded only by the owner (a success is always recorded, so the row is not
  sent again); a failure seen by a worker that lost the row is logged and left to the owner.

Receivers dedupe by ``webhook-id`` (the row's ``message_id``, the same on every retry) and
email by its ``Message-ID``.
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import signal
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import click
from flask import Flask, current_app
from sqlalchemy import delete, or_, select

from dos_server import metrics
from dos_server.database import write_transaction
from dos_server.delivery import DeliveryError, webhooks
from dos_server.delivery.mail import dispatch, smtp
from dos_server.extensions import db
from dos_server.models import (
    BrowserSessionRow,
    DeliveryAttemptRow,
    GameRow,
    NotificationRow,
    SeatRow,
    as_utc,
    utcnow,
)
from dos_server.services import (
    access,
    archive,
    attention,
    digest,
    inbound,
    locks,
    notify,
    play,
    retention,
)

log = logging.getLogger("dos_server.worker")

Clock = Callable[[], datetime]
SENDERS = {"email": dispatch.send, "webhook": webhooks.send}


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


_OWNER: dict[int, str] = {}


def lease_owner() -> str:
    """This process's name on the leases it holds (a restarted process is a new owner)."""
    pid = os.getpid()
    if pid not in _OWNER:
        _OWNER.clear()
        _OWNER[pid] = f"{worker_name()}:{secrets.token_hex(4)}"
    return _OWNER[pid]


def lease_seconds() -> float:
    return float(current_app.config["WORKER_LEASE_SECONDS"])


class _Pace:
    """How long one send takes here (a moving average), so a claim fits inside its lease."""

    seconds = 0.05

    @classmethod
    def note(cls, elapsed: float) -> None:
        cls.seconds = 0.7 * cls.seconds + 0.3 * max(elapsed, 0.001)

    @classmethod
    def batch(cls) -> int:
        """Claim only as many rows as half a lease can send at the current pace."""
        fits = int(lease_seconds() / 2 / cls.seconds)
        return max(1, min(int(current_app.config["WORKER_BATCH"]), fits))


def claim(now: datetime, limit: int | None = None) -> list[int]:
    """Lease up to ``limit`` due rows to this worker; returns their ids.

    Without ``limit`` the worker claims no more rows than half a lease lets it send at the
    pace it has measured, so rows do not wait out their lease in its queue; and it renews
    the lease of each row just before sending it (:func:`deliver`).
    """
    lease = timedelta(seconds=lease_seconds())
    with write_transaction():
        rows = db.session.execute(
            select(NotificationRow)
            .where(NotificationRow.status == "pending",
                   NotificationRow.next_attempt_at <= now,
                   or_(NotificationRow.lease_until.is_(None), NotificationRow.lease_until < now))
            .order_by(NotificationRow.next_attempt_at, NotificationRow.id)
            .limit(limit or _Pace.batch())
            .with_for_update(skip_locked=True)
        ).scalars().all()
        for row in rows:
            row.lease_until = now + lease
            row.lease_owner = lease_owner()
        return [row.id for row in rows]


def _renew(notification_id: int, now: datetime) -> NotificationRow | None:
    """Renew our lease on a row right before sending it; None if it is not ours any more.

    Another worker may have claimed the row when our lease ran out while we were busy with
    the rows before it: then it is that worker's to send, and we leave it alone.
    """
    with write_transaction():
        row = db.session.execute(
            select(NotificationRow).where(NotificationRow.id == notification_id)
            .with_for_update()
        ).scalar_one_or_none()
        if row is None or row.status != "pending" or row.lease_owner != lease_owner():
            return None
        if attention.held(row) and not _still_due(row, now):
            return None
        row.lease_until = now + timedelta(seconds=lease_seconds())
        db.session.flush()
        db.session.expunge(row)
        return row


def _still_due(row: NotificationRow, now: datetime) -> bool:
    """A held your-turn row (ours, locked): whether it goes out now. If the player looked
    since, it waits again; if the turn it announced is over, it is dropped. The game is
    locked first, as for a failure (services/locks.py), then the row is read again."""
    row_id, game_id = row.id, row.game_id
    if game_id is not None:
        db.session.rollback()
        locks.lock_games([game_id])
        found = db.session.execute(
            select(NotificationRow).where(NotificationRow.id == row_id).with_for_update()
        ).scalar_one_or_none()
        if found is None or found.status != "pending" or found.lease_owner != lease_owner():
            return False
        row = found
    verdict = attention.recheck(row, now)
    if verdict == "send":
        return True
    row.lease_until = row.lease_owner = None
    if verdict == "drop":
        row.status = "dropped"
        row.last_error = "the turn it announced is over"
        attention.dropped(row)
        log.info("%s notification #%s (your_turn): dropped, the turn is over",
                 row.channel, row.id)
    return False


def deliver(notification_id: int, clock: Clock = utcnow) -> bool:
    """One attempt for one claimed row; True if it was delivered.

    The lease is renewed first (and the row skipped if another worker holds it now); the
    send may take at most 80% of a lease (its timeout is capped so), then the result is
    recorded. No transaction stays open while we talk to the outside world.
    """
    row = _renew(notification_id, clock())
    if row is None:
        return False
    started = time.perf_counter()
    error: DeliveryError | None = None
    timeout = 0.8 * lease_seconds()
    try:
        SENDERS[row.channel](row.target, dict(row.payload), row.message_id, timeout)
    except DeliveryError as failure:
        error = failure
    except Exception as failure:  # a bug must not kill the worker or lose the row
        log.exception("delivery of notification #%s crashed", notification_id)
        error = DeliveryError(f"{type(failure).__name__}: {failure}")
    elapsed = time.perf_counter() - started
    _Pace.note(elapsed)
    _record(notification_id, error, int(elapsed * 1000), clock())
    return error is None


def _record(notification_id: int, error: DeliveryError | None, elapsed_ms: int,
            now: datetime) -> None:
    schedule = [float(s) for s in current_app.config["RETRY_SCHEDULE"]]
    with write_transaction():
        if error is not None:  # a failure may change the game's seats: its lock comes first
            game_id = db.session.execute(select(NotificationRow.game_id).where(
                NotificationRow.id == notification_id)).scalar_one_or_none()
            if game_id is not None:
                locks.lock_games([game_id])
        row = db.session.execute(
            select(NotificationRow).where(NotificationRow.id == notification_id)
            .with_for_update()
        ).scalar_one_or_none()
        if row is None:
            return
        db.session.add(DeliveryAttemptRow(
            notification_id=row.id, at=now, ok=error is None,
            status_code=None if error is None else error.status,
            error=None if error is None else str(error)[:2000],
            duration_ms=elapsed_ms, worker=worker_name(),
        ))
        owned = row.lease_owner == lease_owner() and row.status == "pending"
        if error is None:
            if not owned:  # sent all the same: say so, so that nobody sends it again
                log.warning("notification #%s was sent after its lease passed to another "
                            "worker", row.id)
            metrics.after_commit(metrics.DELIVERIES, channel=row.channel, outcome="sent")
            row.attempts += 1
            row.status = "sent"
            row.sent_at = now
            row.last_error = None
            row.lease_until = row.lease_owner = None
            return
        if not owned:  # the row is another worker's now: it decides what happens next
            log.warning("%s notification #%s (%s): attempt failed after its lease passed to "
                        "another worker: %s", row.channel, row.id, row.event, error)
            return
        row.attempts += 1
        row.lease_until = row.lease_owner = None
        row.last_error = str(error)[:2000]
        if error.status == 410:
            metrics.after_commit(metrics.DELIVERIES, channel=row.channel, outcome="dropped")
            row.status = "dropped"
            log.warning("webhook notification #%s (%s): 410 Gone, endpoint disabled",
                        row.id, row.event)
            _disable_webhook(row)
            return
        if error.permanent or row.attempts >= len(schedule):
            metrics.after_commit(metrics.DELIVERIES, channel=row.channel, outcome="dead")
            row.status = "dead"
            log.error("%s notification #%s (%s) failed for good after %d attempt(s): %s",
                      row.channel, row.id, row.event, row.attempts, error)
            _dead_letter(row)
            return
        metrics.after_commit(metrics.DELIVERIES, channel=row.channel, outcome="failed")
        delay = schedule[row.attempts] * random.uniform(0.9, 1.1)
        if error.retry_after is not None:
            delay = max(delay, error.retry_after)
        row.next_attempt_at = now + timedelta(seconds=delay)
        log.warning("%s notification #%s (%s) failed (attempt %d): %s; next try at %s",
                    row.channel, row.id, row.event, row.attempts, error,
                    row.next_attempt_at.isoformat(timespec="seconds"))


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
    with metrics.WORKER_PASS.time():
        return _one_pass(clock)


def _one_pass(clock: Clock) -> int:
    delivered = 0
    ids = claim(clock())
    for notification_id in ids:
        delivered += deliver(notification_id, clock)
    check_deadlines(clock())
    play_bot_turns(clock())
    digest.send_digests(clock())
    inbound.process_pending(clock())  # emailed moves a crash left unprocessed
    archive.archive_due(clock())  # finished games' history, compactly
    purge_sessions(clock())
    retention.run(clock())  # growth with a limit, at most every RETAIN_EVERY_SECONDS
    return delivered


_purged_at: dict[str, datetime] = {}  # per process: when this worker last purged sessions


def purge_sessions(now: datetime) -> int:
    """Delete expired browser sessions, at most once per ``SESSION_PURGE_SECONDS``."""
    every = timedelta(seconds=float(current_app.config.get("SESSION_PURGE_SECONDS", 600)))
    last = _purged_at.get("at")
    if last is not None and last <= now < last + every:
        return 0
    _purged_at["at"] = now
    with write_transaction():
        done = db.session.execute(delete(BrowserSessionRow)
                                  .where(BrowserSessionRow.expires_at < now))
    return int(getattr(done, "rowcount", 0) or 0)


# -- deadlines ------------------------------------------------------------------------------


def check_deadlines(now: datetime) -> int:
    """Send the seats' reminders and time out expired turns; returns how many games it
    changed."""
    changed = 0
    candidates = db.session.execute(
        select(GameRow.id, GameRow.turn_started_at, GameRow.turn_time_limit,
               GameRow.turn_deadline, GameRow.reminders_sent, SeatRow.reminders)
        .join(SeatRow, SeatRow.game_id == GameRow.id)
        .where(GameRow.status == "active", GameRow.turn_deadline.is_not(None),
               SeatRow.index == GameRow.state["current"].as_integer())
        .order_by(GameRow.turn_deadline)
        .limit(200)
    ).all()
    db.session.rollback()
    for game_id, started, limit, deadline, sent, chosen in candidates:
        if deadline is not None and as_utc(deadline) <= now:
            changed += _time_out(game_id, now)
        elif started is not None and limit:
            specs = attention.DEFAULT_REMINDERS if chosen is None else chosen
            if any(spec not in (sent or ()) for spec in
                   attention.due_reminders(specs, as_utc(started), float(limit), now)):
                changed += _remind(game_id, now)
    return changed


def play_bot_turns(now: datetime) -> int:
    """Play the bots whose turn it is; returns how many games moved.

    Requests leave the worker a searching bot's turn, and the rest of a tail of bot turns
    longer than a request plays (services/play.py, REQUEST_BOT_ACTIONS). The database finds the
    games (no state leaves it): an active game whose stored state names as the player to move
    (``state.current``, no winner yet) a bot's or a resigned seat. Each is then locked and
    checked again, so a game another worker has just played is skipped.
    """
    state = GameRow.state
    ids = db.session.execute(
        select(GameRow.id)
        .join(SeatRow, SeatRow.game_id == GameRow.id)
        .where(GameRow.status == "active",
               or_(SeatRow.bot.is_not(None), SeatRow.resigned.is_(True)),
               state["current"].as_integer() == SeatRow.index,
               state["winner"].as_integer().is_(None))
        .order_by(GameRow.updated_at)
        .limit(100)
    ).scalars().all()
    db.session.rollback()
    moved = 0
    for game_id in ids:
        with write_transaction():
            game = access.get_game(game_id, for_update=True)
            if game.status == "active":
                moved += play.play_waiting_bots(game, now)
    return moved


def _remind(game_id: str, now: datetime) -> int:
    """The current seat's reminders that are due: one email (the latest due; those it
    passed are marked sent with it), none if the player looked since the turn began."""
    with write_transaction():
        game = access.get_game(game_id, for_update=True)
        if (game.status != "active" or game.turn_started_at is None
                or not game.turn_time_limit):
            return 0
        state = access.engine_state(game)
        seat = {s.index: s for s in game.seats}[state.current]
        sent = list(game.reminders_sent or [])
        due = [spec for spec in attention.due_reminders(
            attention.reminders_of(seat), as_utc(game.turn_started_at),
            float(game.turn_time_limit), now) if spec not in sent]
        if not due:
            return 0
        game.reminders_sent = sent + due
        if not attention.looked_since_turn_began(seat, game):
            notify.enqueue(game, "reminder", [seat], state,
                           key=f"remind-turn{state.turn_no}-{due[-1]}")
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
    check_relay()
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
    metrics.process_exited(os.getpid())  # its live gauges (connections in use) stop counting
    log.info("worker %s stopped", worker_name())


def check_relay() -> bool:
    """One test connection to the SMTP relay at start, so a misconfigured relay is reported
    at once (with what to change) rather than only in ``delivery_attempts``."""
    if not current_app.config.get("SMTP_HOST"):
        return True
    try:
        with smtp.connect(timeout=min(10.0, float(current_app.config["SMTP_TIMEOUT"]))):
            pass
    except DeliveryError as error:
        message = f"the mail relay does not work, emails will not go out: {error}"
        log.error(message)
        click.echo(f"dos-server worker: {message}", err=True)
        return False
    log.info("mail relay %s:%s answers", current_app.config["SMTP_HOST"],
             current_app.config["SMTP_PORT"])
    return True


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
