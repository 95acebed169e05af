"""Notifications that respect attention: looks, held and dropped your-turn rows, one email
until the player comes back, and each seat's reminders.

- **A look** is a read of the game by the seat's own token (the API's game, legal actions and
  history, the seat's table page, and that page's wait for a change while it is open). It
  writes ``SeatRow.last_seen_at``, at most once per ``LOOK_EVERY_SECONDS`` unless the seat
  has been notified or its turn has begun since its last recorded look (then at once, so
  that those comparisons see it). The write is one
  UPDATE of that seat alone, in autocommit, outside the reader's session: it bumps no game
  version (ETags and read caches stay valid), and on PostgreSQL it skips a seat whose row a
  writer holds (the look is then written by a later read) rather than wait behind the move.
  A move by the seat counts as a look too (:func:`moved`).
- **Held.** When a turn begins for a seat that looked within ``ACTIVE_SECONDS``, its your-turn
  rows (email and webhook) are due at its last look + ``ACTIVE_SECONDS``. The worker re-checks
  a held row under the game's lock right before sending it (:func:`recheck`): the player
  looked since, so it waits again; the turn it announced is over, so it is ``dropped``.
- **One email until you come back.** No your-turn email for a seat whose last your-turn email
  is newer than its last look; the next one says how many of its turns the deadline played
  meanwhile (``turns_missed``). Webhooks are for programs: they are sent on every turn.
- **Reminders** (``SeatRow.reminders``, default ``["80%"]``): ``P%`` of the turn's time limit,
  or ``Nh``/``Nm`` before its deadline; never to a seat that looked since its turn began.

Looks and notices are wall-clock times (they compare with each other); the worker's clock
says only when rows are due and deadlines pass.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from flask import current_app
from sqlalchemy import and_, bindparam, or_, select, update
from sqlalchemy.exc import DBAPIError

from dos_server.extensions import db
from dos_server.models import GameRow, NotificationRow, SeatRow, as_utc, utcnow
from dos_server.services.words import _

log = logging.getLogger("dos_server.attention")

DEFAULT_REMINDERS = ("80%",)
MAX_REMINDERS = 6
_SPEC = re.compile(r"^(?:(?P<percent>[1-9][0-9]?)%|(?P<amount>[1-9][0-9]{0,2})(?P<unit>[hm]))$")


# -- reminders: the seat's choice ---------------------------------------------------------


def parse_reminders(text: str | Sequence[str]) -> list[str]:
    """A seat's reminders in their canonical spelling (``50%``, ``80%``, ``1h``, ``30m``),
    sorted by when they come in a day-long turn, duplicates dropped; ValueError with what
    is wrong. ``off``/``none`` (or nothing) is no reminder at all."""
    items = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError("a reminder is a text like 50%, 80% or 1h")
        spec = item.strip().lower().replace(" ", "").removesuffix("before")
        if spec in ("off", "none", ""):
            continue
        match = _SPEC.match(spec)
        if match is None:
            raise ValueError(f"not a reminder: {item[:20]!r} (write 50%, 80%, 1h or 30m)")
        canonical = f"{int(match['percent'])}%" if match["percent"] else \
            f"{int(match['amount'])}{match['unit']}"
        if canonical not in out:
            out.append(canonical)
    if len(out) > MAX_REMINDERS:
        raise ValueError(f"at most {MAX_REMINDERS} reminders")
    return sorted(out, key=lambda spec: _offset(spec, 86400.0))


def reminders_problem() -> str:
    """What a bad list of reminders is told, in the reader's language."""
    return _("each reminder is a share of the turn's time (50%, 80%) or a time before its "
             "deadline in hours or minutes (1h, 30m); at most six")


def reminders_of(seat: SeatRow) -> list[str]:
    return list(DEFAULT_REMINDERS if seat.reminders is None else seat.reminders)


def _offset(spec: str, limit: float) -> float:
    """Seconds after the turn's start when reminder ``spec`` is due in a turn of ``limit``."""
    if spec.endswith("%"):
        return limit * int(spec[:-1]) / 100
    amount = int(spec[:-1]) * (3600 if spec.endswith("h") else 60)
    return limit - amount


def due_reminders(specs: Sequence[str], started: datetime, limit: float,
                  now: datetime) -> list[str]:
    """The reminders whose moment has come by ``now`` (one whose moment falls before the
    turn began, e.g. ``2h`` in a one-hour turn, never comes)."""
    return [spec for spec in specs
            if 0 < _offset(spec, limit) < limit
            and started + timedelta(seconds=_offset(spec, limit)) <= now]


def next_reminder(specs: Sequence[str], sent: Sequence[str], started: datetime,
                  limit: float) -> datetime | None:
    """When the first reminder not yet sent this turn is due (None: none is left)."""
    moments = [started + timedelta(seconds=_offset(spec, limit)) for spec in specs
               if spec not in sent and 0 < _offset(spec, limit) < limit]
    return min(moments) if moments else None


def looked_since_turn_began(seat: SeatRow, game: GameRow) -> bool:
    return (seat.last_seen_at is not None and game.turn_started_at is not None
            and as_utc(seat.last_seen_at) >= as_utc(game.turn_started_at))


# -- looks ----------------------------------------------------------------------------------


class _Seen(Protocol):
    @property
    def index(self) -> int: ...
    @property
    def last_seen_at(self) -> datetime | None: ...
    @property
    def turn_notified_at(self) -> datetime | None: ...


_SEATS = SeatRow.__table__
_STALE = or_(_SEATS.c.last_seen_at.is_(None), _SEATS.c.last_seen_at < bindparam("look_before"))
_LOOK = (update(_SEATS)
         .where(_SEATS.c.game_id == bindparam("look_game"), _SEATS.c.index == bindparam("look_seat"),
                _STALE)
         .values(last_seen_at=bindparam("look_now")))
# PostgreSQL: a seat a writer holds is skipped, not waited for (a later read writes the look).
_LOOK_SKIPPING = (update(_SEATS)
                  .where(_SEATS.c.id == select(_SEATS.c.id).where(
                      _SEATS.c.game_id == bindparam("look_game"),
                      _SEATS.c.index == bindparam("look_seat"), _STALE)
                      .with_for_update(skip_locked=True).scalar_subquery())
                  .values(last_seen_at=bindparam("look_now")))


def look_due(seat: _Seen, turn_started_at: datetime | None, now: datetime) -> datetime | None:
    """The moment before which a recorded look is stale (None: the last one is fresh enough).

    A look is written at most every ``LOOK_EVERY_SECONDS``, and at once after a your-turn
    notice or the start of a turn that the last recorded look is older than."""
    every = timedelta(seconds=float(current_app.config["LOOK_EVERY_SECONDS"]))
    before = now - every
    for mark in (seat.turn_notified_at, turn_started_at):
        if mark is not None and as_utc(mark) <= now:
            before = max(before, as_utc(mark) + timedelta(microseconds=1))
    seen = seat.last_seen_at
    return before if seen is None or as_utc(seen) < before else None


def look(game_id: str, seats: Sequence[_Seen], seat_index: int | None,
         turn_started_at: datetime | None) -> None:
    """The seat ``seat_index`` read its game (``seats`` as the read found them): record it,
    cheaply (see the module's docstring). Spectators and the host make no look."""
    if seat_index is None:
        return
    seat = next((s for s in seats if s.index == seat_index), None)
    if seat is None:
        return
    now = utcnow()
    before = look_due(seat, turn_started_at, now)
    if before is None:
        return
    params = {"look_game": game_id, "look_seat": seat_index, "look_before": before,
              "look_now": now}
    try:
        with db.engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                # One statement alone needs no BEGIN and COMMIT round trips around it.
                connection.execution_options(isolation_level="AUTOCOMMIT")
                connection.execute(_LOOK_SKIPPING, params)
            else:
                connection.execute(_LOOK, params)
                connection.commit()
    except DBAPIError as error:  # a look is not worth failing a read for: the next one writes
        log.warning("a look at game %s was not recorded: %s", game_id, type(error).__name__)


def moved(seat: SeatRow, now: datetime | None = None) -> None:
    """The seat moved (its game locked): a look, if the last recorded one is older than its
    last your-turn notice (so that its next turn is notified again)."""
    if seat.turn_notified_at is not None and (
            seat.last_seen_at is None
            or as_utc(seat.last_seen_at) < as_utc(seat.turn_notified_at)):
        seat.last_seen_at = now or utcnow()


# -- your turn: held, kept back, counted ----------------------------------------------------


def active_seconds() -> float:
    return float(current_app.config["ACTIVE_SECONDS"])


def held_until(seat: SeatRow, now: datetime) -> datetime | None:
    """When the seat's your-turn rows may go out if it is looking now (None: at once)."""
    if seat.last_seen_at is None:
        return None
    due = as_utc(seat.last_seen_at) + timedelta(seconds=active_seconds())
    return due if due > now else None


def emailed_since_look(seat: SeatRow) -> bool:
    """The seat's last your-turn email is newer than its last look: it is not back yet."""
    return seat.turn_notified_at is not None and (
        seat.last_seen_at is None or as_utc(seat.last_seen_at) < as_utc(seat.turn_notified_at))


def timed_out(seat: SeatRow) -> None:
    """The deadline played a turn of ``seat`` (its game locked)."""
    seat.turns_missed = (seat.turns_missed or 0) + 1


def recheck(row: NotificationRow, now: datetime) -> str:
    """A held your-turn row the worker is about to send (its game and the row locked):
    ``send``, ``wait`` (the player looked since: ``row.next_attempt_at`` moved on) or
    ``drop`` (the turn it announced is over)."""
    game = db.session.get(GameRow, row.game_id) if row.game_id is not None else None
    turn = (row.payload.get("data") or {}).get("turn")
    state = game.state if game is not None else None
    if (game is None or state is None or game.status != "active" or turn is None
            or state.get("turn_no") != turn or state.get("current") not in row.seats):
        return "drop"
    seat = next((s for s in game.seats if s.index in row.seats), None)
    if seat is None or seat.resigned:
        return "drop"
    if seat.last_seen_at is not None:
        due = as_utc(seat.last_seen_at) + timedelta(seconds=active_seconds())
        if due > as_utc(row.next_attempt_at):
            row.next_attempt_at = due
            return "wait"
    if row.channel == "email":
        seat.turn_notified_at = utcnow()
    return "send"


def dropped(row: NotificationRow) -> None:
    """A held email dropped: the turns it counted are counted again for the next one."""
    if row.channel != "email" or row.game_id is None:
        return
    missed = int((row.payload.get("data") or {}).get("turns_missed") or 0)
    if missed:
        db.session.execute(update(_SEATS).where(
            and_(_SEATS.c.game_id == row.game_id, _SEATS.c.index.in_(row.seats)))
            .values(turns_missed=_SEATS.c.turns_missed + missed))


def held(row: NotificationRow) -> bool:
    return bool(row.event == "your_turn" and row.attempts == 0
                and (row.payload.get("data") or {}).get("held"))


__all__ = [
    "DEFAULT_REMINDERS",
    "due_reminders",
    "held",
    "look",
    "moved",
    "parse_reminders",
    "recheck",
    "reminders_of",
    "timed_out",
]
