"""Finished games kept compactly: the history as its record plus what is new.

A game to 200 points leaves ~1,200 event rows (~250 KB on PostgreSQL), although its record
(seed, options, actions) replays all of them. After a grace period (``ARCHIVE_AFTER_SECONDS``
since the game last changed) the worker replaces a finished game's rows by one
``game_archives`` row and marks the game ``archived_at``.

The archive (format 1) is zlib-compressed JSON holding:

- ``record``: the game's record, exactly what ``GET /record`` answers;
- ``ops``: the stored history as edits of the history the record *predicts* (the deal's
  events, then each action followed by the events playing it causes): an int copies that many
  predicted entries; ``[n, [entry, ...]]`` skips ``n`` predicted ones and inserts the entries
  as stored. Usually one int: what the server adds itself (``timed_out``, ``resigned``, a
  whole turn's actions listed before its events) is stored as it was;
- ``seq``, ``version``, ``at``: each entry's numbers and time (microseconds), as differences
  from the entry before, which compress to almost nothing;
- ``sha256``: the start of a digest of the history, checked when the archive is read.

Archiving decodes the archive it wrote and compares it with the rows, field by field, before
it deletes anything. Reading an archived game decodes it once per process (a small cache):
every history read (API pages, web table, emails, the record) answers as before.

The prediction is the engine's: an engine whose events change for the same actions would
decode old archives differently; ``sha256`` catches it (logged, the archive still answers).

**The game's mail, slimmed in the same transaction.** People who play by email or webhook
leave more than events: an outbox row per message (its ``payload`` is the whole message: the
seat's table, its moves, links with tokens, a webhook's secret), delivery attempts, and the raw
bytes of every emailed move. After the game ends nothing sends a settled row again (the worker
claims ``pending`` rows only) or parses a handled message again (only ``received`` and
``failed`` ones are processed or replayed). What is still read is kept:

- every outbox row stays, with its ids, channel, target, event, ``dedupe_key`` (one delivery
  per event), ``message_id`` (the ``Message-ID``/``webhook-id`` a player or receiver may quote
  to support), status, attempts, times and ``last_error``: the account export lists the emails
  from them; only a settled (sent, dead, dropped) row's ``payload`` becomes ``{}``;
- a sent row's ``delivery_attempts`` go (the row says when it was sent and after how many
  attempts); a dead or dropped row keeps its attempts: its failures are what support reads;
- every inbound message stays, with its ``dedupe_key`` (a late duplicate of it is still
  recognized and not processed again), Message-ID, sender, status, outcome and times (the
  export lists them); only a handled (processed, rejected, ignored) message's ``raw`` bytes
  become empty (``size`` still says how long it was). A failed one keeps them for replay.

A row still ``pending`` (or leased) is not touched: it is delivered as it was written. The
worker's pass waits for a game's pending rows to settle before it archives the game; a row
that settles, or a late reply that arrives, after the game was archived is left as it is.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from flask import current_app
from sqlalchemy import delete, exists, select, update

from dos_engine import Game, GameRecord, parse_action, start_game
from dos_server import metrics
from dos_server.database import write_transaction
from dos_server.extensions import db
from dos_server.models import (
    DeliveryAttemptRow,
    EventRow,
    GameArchiveRow,
    GameRow,
    IdempotencyRow,
    InboundMessageRow,
    NotificationRow,
    utcnow,
)

log = logging.getLogger("dos_server.archive")

FORMAT = 1
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SETTLED = ("sent", "dead", "dropped")  # outbox rows the worker never sends again
HANDLED = ("processed", "rejected", "ignored")  # inbound messages never parsed again

Entry = tuple[int | None, str, dict[str, Any], dict[str, Any] | None]  # seat, kind, data, secret


@dataclass(frozen=True)
class ArchivedEvent:
    """One history entry decoded from an archive: the fields of an ``EventRow``."""

    seq: int
    version: int
    seat: int | None
    kind: str
    data: dict[str, Any]
    secret: dict[str, Any] | None
    created_at: datetime


HistoryEvent = EventRow | ArchivedEvent


# -- encoding -------------------------------------------------------------------------------


def _canonical(entry: Entry) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"))


def _entry(row: HistoryEvent) -> Entry:
    return (row.seat, row.kind, row.data, row.secret)


def predicted(record: GameRecord) -> list[Entry]:
    """The history a record gives by itself: the deal, then each action and its events.

    Empty if the record does not replay (the archive then stores every entry as it is).
    """
    try:
        state, events = start_game(record.players, record.seed, record.options)
        out: list[Entry] = [_engine_entry(event.to_dict(), event.seat) for event in events]
        for seat, text in record.actions:
            out.append((seat, "action", {"action": text}, None))
            out += [_engine_entry(event.to_dict(), event.seat)
                    for event in state.play(parse_action(text), seat)]
    except ValueError:  # every engine error is one
        return []
    return out


def _engine_entry(stored: dict[str, Any], seat: int | None) -> Entry:
    # Through JSON, as the database gives it back (tuples become lists).
    seat, kind, data, secret = json.loads(
        json.dumps((seat, stored["kind"], stored["data"], stored.get("secret"))))
    return (seat, kind, data, secret)


def _micros(moment: datetime) -> int:
    return (moment.astimezone(UTC) - EPOCH) // timedelta(microseconds=1)


def _deltas(values: Sequence[int]) -> list[int]:
    return [b - a for a, b in zip([0, *values], values, strict=False)]


def _sums(deltas: Sequence[int]) -> list[int]:
    out, total = [], 0
    for delta in deltas:
        total += delta
        out.append(total)
    return out


def _digest(entries: Sequence[Entry]) -> str:
    # 64 bits: enough to notice a decoder that went wrong, a few bytes in every archive.
    return hashlib.sha256("\n".join(map(_canonical, entries)).encode()).hexdigest()[:16]


def encode(record: GameRecord, rows: Sequence[HistoryEvent], predict: bool = True,
           guess: list[Entry] | None = None) -> bytes:
    """The archive of a history (``rows`` in ``seq`` order) whose record is ``record``.

    ``predict=False`` stores every entry as it is (larger, and needs no replay); ``guess``:
    ``predicted(record)`` if the caller has it already.
    """
    stored = [_entry(row) for row in rows]
    if not predict:
        guess = []
    elif guess is None:
        guess = predicted(record)
    ops: list[Any] = []
    if stored == guess:  # the usual case: the record predicts every entry
        ops.append(len(stored))
    else:
        matcher = difflib.SequenceMatcher(None, [_canonical(entry) for entry in guess],
                                          [_canonical(entry) for entry in stored], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                ops.append(i2 - i1)
            else:
                ops.append([i2 - i1, [list(entry) for entry in stored[j1:j2]]])
    body = {
        "format": FORMAT,
        "record": record.to_dict(),
        "ops": ops,
        "seq": _deltas([row.seq for row in rows]),
        "version": _deltas([row.version for row in rows]),
        "at": _deltas([_micros(row.created_at) for row in rows]),
        "sha256": _digest(stored),
    }
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 9)


def decode(blob: bytes, guess: list[Entry] | None = None) -> tuple[GameRecord, list[ArchivedEvent]]:
    """The record and the whole history of an archive (``guess``: its record's
    ``predicted`` entries, if the caller has them)."""
    body = json.loads(zlib.decompress(blob))
    if body.get("format") != FORMAT:
        raise ValueError(f"unknown game archive format {body.get('format')!r}")
    record = GameRecord.from_dict(body["record"])
    if guess is None:
        guess = predicted(record) if any(isinstance(op, int) and op for op in body["ops"]) else []
    entries: list[Entry] = []
    at = 0
    for op in body["ops"]:
        if isinstance(op, int):
            entries += guess[at:at + op]
            at += op
        else:
            skip, inserted = op
            at += skip
            entries += [(seat, kind, data, secret) for seat, kind, data, secret in inserted]
    if _digest(entries) != body["sha256"]:
        log.error("game archive of %s does not decode to the history it was made from "
                  "(has the engine's event output changed?)", record.seed[:8])
    seqs, versions = _sums(body["seq"]), _sums(body["version"])
    times = _sums(body["at"])
    return record, [
        ArchivedEvent(seq=seq, version=version, seat=seat, kind=kind, data=data, secret=secret,
                      created_at=EPOCH + timedelta(microseconds=micros))
        for (seat, kind, data, secret), seq, version, micros
        in zip(entries, seqs, versions, times, strict=True)
    ]


# -- reading --------------------------------------------------------------------------------


def jsonb_order(value: Any) -> Any:
    """``value`` with its objects' keys in PostgreSQL ``jsonb`` order (shorter keys first,
    then bytewise), as a ``jsonb`` column gives them back: text made from a decoded entry
    (an email's history lines) reads exactly as text made from the row did."""
    if isinstance(value, dict):
        return {key: jsonb_order(value[key])
                for key in sorted(value, key=lambda k: (len(k.encode()), k.encode()))}
    if isinstance(value, list):
        return [jsonb_order(item) for item in value]
    return value


@lru_cache(maxsize=16)  # a decoded 1,000-entry history holds ~1 MB
def _decoded(game_id: str, blob: bytes, jsonb: bool) -> tuple[GameRecord, tuple[ArchivedEvent, ...]]:
    # Archives never change: each is decoded (the record replayed) once per process.
    record, rows = decode(blob)
    if jsonb:
        rows = [replace(row, data=jsonb_order(row.data), secret=jsonb_order(row.secret))
                for row in rows]
    return record, tuple(rows)


def archived(game: GameRow) -> tuple[GameRecord, tuple[ArchivedEvent, ...]] | None:
    """The decoded archive of ``game``, or None if its history is still in rows."""
    row = db.session.get(GameArchiveRow, game.id)
    if row is None:
        return None
    return _decoded(game.id, bytes(row.data), db.session.get_bind().dialect.name == "postgresql")


def _archive_if_gone(game: GameRow, found: int, expected: bool) -> tuple[ArchivedEvent, ...] | None:
    """The archived history, if the game is archived, or its rows were just archived after
    the caller read the game row (the rows query found nothing where entries must be)."""
    if game.archived_at is None and (found or not expected or game.status != "finished"):
        return None
    decoded = archived(game)
    return None if decoded is None else decoded[1]


def events_after(game: GameRow, after: int, limit: int) -> Sequence[HistoryEvent]:
    """Up to ``limit`` entries with ``seq > after``, oldest first."""
    return _events(game, after, limit, newest_first=False)


def events_latest(game: GameRow, limit: int, after: int = 0) -> Sequence[HistoryEvent]:
    """Up to the ``limit`` newest entries with ``seq > after``, newest first."""
    return _events(game, after, limit, newest_first=True)


def _events(game: GameRow, after: int, limit: int, newest_first: bool) -> Sequence[HistoryEvent]:
    if game.archived_at is None:
        rows = db.session.execute(
            select(EventRow).where(EventRow.game_id == game.id, EventRow.seq > after)
            .order_by(EventRow.seq.desc() if newest_first else EventRow.seq).limit(limit)
        ).scalars().all()
        kept = _archive_if_gone(game, len(rows), after < game.next_seq - 1)
        if kept is None:
            return rows
    else:
        kept = _archive_if_gone(game, 0, True) or ()
    ordered = reversed(kept) if newest_first else iter(kept)
    return [row for row in ordered if row.seq > after][:limit]


def latest_of(game: GameRow, kind: str, seat: int | None = None) -> HistoryEvent | None:
    """The newest entry of ``kind`` (by ``seat``, if given)."""
    if game.archived_at is None:
        query = select(EventRow).where(EventRow.game_id == game.id, EventRow.kind == kind)
        if seat is not None:
            query = query.where(EventRow.seat == seat)
        row = db.session.execute(query.order_by(EventRow.seq.desc()).limit(1)).scalar_one_or_none()
        kept = _archive_if_gone(game, row is not None, game.next_seq > 1)
        if kept is None:
            return row
    else:
        kept = _archive_if_gone(game, 0, True) or ()
    return next((row for row in reversed(kept)
                 if row.kind == kind and (seat is None or row.seat == seat)), None)


def action_list(game: GameRow) -> list[tuple[int, str]]:
    """Every action played, in order: the record's ``actions``."""
    if game.archived_at is None:
        rows = db.session.execute(
            select(EventRow.seat, EventRow.data)
            .where(EventRow.game_id == game.id, EventRow.kind == "action")
            .order_by(EventRow.seq)
        ).all()
        if rows or game.next_seq <= 1:
            return [(int(seat), str(data["action"])) for seat, data in rows]
    decoded = archived(game)
    return list(decoded[0].actions) if decoded is not None else []


# -- archiving ------------------------------------------------------------------------------


def archive_game(game: GameRow, now: datetime | None = None) -> bool:
    """Archive the locked, finished ``game`` in the caller's transaction; False if it was
    not finished or is archived already (archiving twice changes nothing)."""
    if game.status != "finished" or game.archived_at is not None or game.state is None:
        return False
    now = now or utcnow()
    if db.session.get(GameArchiveRow, game.id) is not None:  # archived, then not marked
        game.archived_at = now
        return False
    rows = db.session.execute(
        select(EventRow).where(EventRow.game_id == game.id).order_by(EventRow.seq)
    ).scalars().all()
    state = Game.from_dict(game.state)
    record = GameRecord(state.players, state.seed, state.options,
                        tuple((row.seat, str(row.data["action"])) for row in rows
                              if row.kind == "action" and row.seat is not None))
    want = [_comparable(row) for row in rows]
    # Nothing is deleted unless the archive gives back every field of every row; if the
    # prediction misleads, every entry is stored as it is.
    guess = predicted(record)
    for predict in (True, False):
        blob = encode(record, rows, predict, guess)
        if [_comparable(row) for row in decode(blob, guess)[1]] == want:
            break
    else:
        log.error("game %s: its archive does not decode to its history; not archived", game.id)
        return False
    db.session.add(GameArchiveRow(game_id=game.id, format=FORMAT, events=len(rows), data=blob,
                                  created_at=now))
    game.archived_at = now
    db.session.flush()
    db.session.execute(delete(EventRow).where(EventRow.game_id == game.id))
    # A retried POST days after the game ended has nothing to replay: the game is over.
    db.session.execute(delete(IdempotencyRow).where(IdempotencyRow.game_id == game.id))
    slim_mail(game.id)
    return True


def slim_mail(game_id: str) -> None:
    """Drop what no read of the finished game needs from its outbox and inbound rows (see
    the module's docstring); pending, leased, received and failed rows are left as they are."""
    settled = (NotificationRow.game_id == game_id, NotificationRow.status.in_(SETTLED))
    sent = select(NotificationRow.id).where(NotificationRow.game_id == game_id,
                                            NotificationRow.status == "sent")
    db.session.execute(delete(DeliveryAttemptRow)
                       .where(DeliveryAttemptRow.notification_id.in_(sent)))
    db.session.execute(update(NotificationRow).where(*settled).values(payload={}),
                       execution_options={"synchronize_session": False})
    db.session.execute(update(InboundMessageRow)
                       .where(InboundMessageRow.game_id == game_id,
                              InboundMessageRow.status.in_(HANDLED))
                       .values(raw=b""), execution_options={"synchronize_session": False})


def _comparable(row: HistoryEvent) -> tuple[Any, ...]:
    return (row.seq, row.version, _canonical(_entry(row)), _micros(row.created_at))


def archive_due(now: datetime, limit: int = 20) -> int:
    """Archive up to ``limit`` games finished before the grace period; returns how many.

    One short transaction per game. Several workers share the work: each locks the game it
    archives and skips games another worker holds (PostgreSQL ``FOR UPDATE SKIP LOCKED``;
    SQLite's write transactions take turns), and a game archived meanwhile is left alone.
    A game whose outbox still has a pending row (a last webhook being retried) waits until
    the row is settled, so that its mail is slimmed with it.
    """
    after = current_app.config["ARCHIVE_AFTER_SECONDS"]
    if after is None or float(after) < 0:  # archiving switched off
        return 0
    cutoff = now - timedelta(seconds=float(after))
    due = (GameRow.status == "finished", GameRow.archived_at.is_(None),
           GameRow.updated_at <= cutoff,
           ~exists().where(NotificationRow.game_id == GameRow.id,
                           NotificationRow.status == "pending"))
    # Read first, without a write transaction: an idle pass costs one indexed query and
    # never takes SQLite's write lock.
    candidates = db.session.execute(
        select(GameRow.id).where(*due).order_by(GameRow.updated_at).limit(limit)
    ).scalars().all()
    db.session.rollback()
    done = 0
    for game_id in candidates:
        with write_transaction():
            game = db.session.execute(
                select(GameRow).where(GameRow.id == game_id, *due)
                .with_for_update(skip_locked=True)
            ).scalar_one_or_none()
            if game is not None and archive_game(game, now):  # None: another worker has it
                metrics.after_commit(metrics.ARCHIVED)
                done += 1
    return done


__all__ = ["ArchivedEvent", "HistoryEvent", "action_list", "archive_due", "archive_game",
           "archived", "decode", "encode", "events_after", "events_latest", "latest_of",
           "predicted", "slim_mail"]
