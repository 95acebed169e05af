"""Table talk: short plain-text messages in a game, read by everyone who can read the game.

Who writes: a seat's player (unless the host muted the seat), the host, and spectators when
the host allows them (``GameRow.chat_spectators``). Bots never write. Each author has a rate
limit (``CHAT_PER_MINUTE``). A seat may hide another seat's messages for itself
(``SeatRow.chat_hidden``): they are left out of every answer, email and webhook it gets.

A message changes no table: the game's ``version`` stays (so no move in the making goes
stale, and the game's ETags hold). One Core UPDATE of ``games.last_message_id`` notes the game
as written, which wakes its long-polls (services/watch.py).

A message sends no email of its own unless the seat asked for one (``SeatRow.chat_email``),
and then at most one an hour: later messages of the hour join the one email due at its end.
The your-turn email and the digest show what was said since the seat last looked
(:func:`since_look`). Webhook seats get ``game.message`` for each message.

Transactions: :func:`post` and :func:`set_settings` own theirs; :func:`post_locked` works on
a game the caller has locked (play by email), inside the caller's transaction.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from datetime import datetime, timedelta
from math import ceil
from typing import Any

from flask import current_app
from sqlalchemy import and_, bindparam, delete, or_, select, update
from sqlalchemy.orm.attributes import set_committed_value

from dos_server import i18n
from dos_server.database import write_transaction
from dos_server.errors import (
    ChatMuted,
    GameNotActive,
    HostOnly,
    IdempotencyKeyReused,
    InvalidInput,
    PlayersOnly,
    RateLimited,
)
from dos_server.extensions import db
from dos_server.models import (
    GameRow,
    IdempotencyRow,
    MessageRow,
    NotificationRow,
    SeatRow,
    as_utc,
    utcnow,
)
from dos_server.services import notify, watch
from dos_server.services.access import (
    Viewer,
    authenticate,
    game_is,
    get_game,
    locked,
    seat_of,
)
from dos_server.services.chat_history import (
    email_line,
    message_out,
    messages_body,
    recent,
    since_look,
)
from dos_server.services.words import _

MAX_CHARS = 500
EMAIL_EVERY = timedelta(hours=1)  # per seat that takes an email per message
EMAIL_MESSAGES = 30  # a coalesced email lists at most this many messages
PAGE_LIMIT = 200
_NEWLINES = str.maketrans({"\r": "\n"})

_GAMES = GameRow.__table__
_NOTE_MESSAGE = (update(_GAMES).where(_GAMES.c.id == bindparam("game_id"))
                 .values(last_message_id=bindparam("message_id")))
_NOTE_MESSAGE_NOTIFYING = watch.notifying(_NOTE_MESSAGE)  # PostgreSQL


def clean_text(text: Any) -> str:
    """The message as stored: line breaks as ``\\n``, stripped; InvalidInput (naming what to
    change) for anything that is not 1-500 characters of plain text."""
    if not isinstance(text, str):
        raise InvalidInput(_("a message is text: send it as a string"),
                           errors={"json": {"text": ["not a string"]}})
    cleaned = text.replace("\r\n", "\n").translate(_NEWLINES).strip()
    if not cleaned:
        raise InvalidInput(_("a message needs at least one character besides spaces"),
                           errors={"json": {"text": ["empty"]}})
    if len(cleaned) > MAX_CHARS:
        raise InvalidInput(
            _("a message has at most %(max)s characters; this one has %(count)s",
              max=MAX_CHARS, count=len(cleaned)),
            errors={"json": {"text": ["too long"]}})
    for char in cleaned:
        if char != "\n" and unicodedata.category(char) in ("Cc", "Cs"):
            code = "%04X" % ord(char)  # noqa: UP031 - the catalog extractor reads no f-string
            raise InvalidInput(
                _("a message is plain text: control character U+%(code)s is not allowed "
                  "(line breaks are)", code=code),
                errors={"json": {"text": ["control character"]}})
    return cleaned


def per_minute() -> int:
    return int(current_app.config.get("CHAT_PER_MINUTE", 10))


# -- writing ------------------------------------------------------------------------------------


# Idempotency rows of messages: apart from the moves' (services/play.py) by the key's prefix;
# the host's and the spectators' (who have no seat) under these seat numbers.
_SAY_KEY = "say:"
_HOST_AUTHOR, _SPECTATOR_AUTHOR = -1, -2


def post(game_id: str, bearer: str | None, text: Any, idempotency_key: str | None = None,
         now: datetime | None = None) -> dict[str, Any]:
    """The token's seat (or the host, or a spectator) says ``text`` (own transaction).

    A retry with the same ``idempotency_key`` gets the first answer back and says nothing
    again (a client that lost the answer to a dropped connection asks again)."""
    body = clean_text(text)  # before the lock: bad input is refused without a write
    request_hash = hashlib.sha256(body.encode()).hexdigest()
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        if not idempotency_key:
            return post_locked(game, viewer, body, now)
        author = (viewer.seat if viewer.seat is not None
                  else _HOST_AUTHOR if viewer.host else _SPECTATOR_AUTHOR)
        key = _SAY_KEY + hashlib.sha256(idempotency_key.encode()).hexdigest()
        stored = db.session.get(IdempotencyRow, (game.id, author, key))
        if stored is not None:
            if stored.request_hash != request_hash:
                raise IdempotencyKeyReused(_("this Idempotency-Key was used for a different "
                                             "message; use a new key for a new message"))
            return dict(stored.body)
        said = post_locked(game, viewer, body, now)
        db.session.add(IdempotencyRow(game_id=game.id, seat=author, key=key,
                                      request_hash=request_hash, status=201, body=said))
        return said


def post_locked(game: GameRow, viewer: Viewer, text: str, now: datetime | None = None,
                author_key: str | None = None) -> dict[str, Any]:
    """``viewer`` says ``text`` in the locked ``game``; the message as :func:`message_out`
    shows it. ``author_key``: a spectator's signed-in identity (a seat's is its owner's)."""
    now = now or utcnow()
    text = clean_text(text)
    if game.status == "cancelled":
        raise GameNotActive(game_is(game))
    seat: SeatRow | None = None
    if viewer.seat is not None:
        seat = seat_of(game, viewer.seat)
        if seat.chat_muted:
            raise ChatMuted(_("the host has muted your seat in this game's chat"))
        kind, name, author_key = "seat", seat.name or _("seat %(number)s", number=seat.index), \
            seat.owner_key
    elif viewer.host:
        kind, name = "host", "host"
    else:
        if not game.chat_spectators:
            raise PlayersOnly(_("spectators read this game's chat but do not write in it "
                                "(the host can allow them)"))
        kind, name = "spectator", "spectator"
    _check_rate(game, kind, seat, now)
    message = MessageRow(game_id=game.id, seat=seat.index if seat else None, author_kind=kind,
                         author_name=name[:40], author_key=author_key, body=text,
                         created_at=now)
    db.session.add(message)
    db.session.flush()
    _note_message(game, message.id)
    _notify(game, message, seat, now)
    return message_out(message)


def _check_rate(game: GameRow, kind: str, seat: SeatRow | None, now: datetime) -> None:
    """RateLimited when this author wrote ``CHAT_PER_MINUTE`` messages in the last minute
    (spectators share one allowance per game); it says when the next is allowed."""
    limit = per_minute()
    since = now - timedelta(minutes=1)
    author = (MessageRow.seat == seat.index) if seat is not None else \
        and_(MessageRow.seat.is_(None), MessageRow.author_kind == kind)
    recent = db.session.execute(
        select(MessageRow.created_at).where(MessageRow.game_id == game.id, author,
                                            MessageRow.created_at > since)
        .order_by(MessageRow.created_at.desc()).limit(limit)
    ).scalars().all()
    if len(recent) < limit:
        return
    allowed = as_utc(recent[-1]) + timedelta(minutes=1)
    wait = max(1, ceil((allowed - now).total_seconds()))
    raise RateLimited(_("at most %(count)s messages a minute: wait %(seconds)s seconds before "
                        "the next one", count=limit, seconds=wait), retry_after=wait)


def _note_message(game: GameRow, message_id: int) -> None:
    """The game's newest message id, in one UPDATE that leaves ``version`` alone; the game is
    noted as written, so its long-polls wake at commit."""
    connection = db.session.connection()
    postgres = connection.dialect.name == "postgresql"
    connection.execute(_NOTE_MESSAGE_NOTIFYING if postgres else _NOTE_MESSAGE,
                       {"game_id": game.id, "message_id": message_id})
    set_committed_value(game, "last_message_id", message_id)
    watch.wrote(game.id, notified=postgres)


# -- who hears of it ------------------------------------------------------------------------------


def hides(seat: SeatRow, author_seat: int | None) -> bool:
    """Whether ``seat`` hides messages of seat ``author_seat`` (None: the host or a spectator)."""
    return author_seat is not None and author_seat in (seat.chat_hidden or [])


def _listeners(game: GameRow, message: MessageRow, author: SeatRow | None) -> list[SeatRow]:
    """The seats a message may be sent to: people, not its author, not hiding it."""
    return [s for s in game.seats
            if not s.bot and s.claimed and (author is None or s.index != author.index)
            and not (author is not None and author.owner_key and s.owner_key == author.owner_key)
            and not hides(s, message.seat)]


def _notify(game: GameRow, message: MessageRow, author: SeatRow | None, now: datetime) -> None:
    seats = _listeners(game, message, author)
    data = webhook_data(message)
    notify.enqueue(game, "message", seats, None, data, key=f"message-{message.id}",
                   channels=("webhook",))
    for seat in seats:
        if seat.chat_email and notify.wants(seat, "email", "message"):
            _email(game, seat, message, now)


def webhook_data(message: MessageRow) -> dict[str, Any]:
    return {"id": message.id, "seat": message.seat, "author": message.author_kind,
            "name": message.author_name, "text": message.body,
            "created_at": as_utc(message.created_at).isoformat()}


def _email(game: GameRow, seat: SeatRow, message: MessageRow, now: datetime) -> None:
    """At most one email an hour: now, if the last went out an hour ago or more; else the
    message joins the one email due when the hour is up."""
    last = as_utc(seat.chat_emailed_at) if seat.chat_emailed_at else None
    if last is not None and last > now:  # an email is already due at ``last``: join it
        row = db.session.execute(
            select(NotificationRow).where(
                NotificationRow.game_id == game.id, NotificationRow.event == "message",
                NotificationRow.channel == "email", NotificationRow.status == "pending",
                NotificationRow.next_attempt_at > now)
            .order_by(NotificationRow.id.desc())
        ).scalars().all()
        mine = next((r for r in row if r.seats == [seat.index]), None)
        if mine is not None:
            payload = dict(mine.payload)
            data = dict(payload.get("data") or {})
            with i18n.in_language(notify.reader_language(seat)):
                line = email_line(message)
            lines = [*data.get("messages", []), line][-EMAIL_MESSAGES:]
            payload["data"] = {**data, "messages": lines}
            mine.payload = payload  # a new object: the JSON column sees the change
            return
        due: datetime | None = last
    elif last is not None and now < last + EMAIL_EVERY:
        due = last + EMAIL_EVERY
    else:
        due = None
    with i18n.in_language(notify.reader_language(seat)):
        line = email_line(message)
    notify.enqueue(game, "message", [seat], None, {"messages": [line]},
                   key=f"message-{message.id}", channels=("email",), due=due)
    seat.chat_emailed_at = due or now


def settings_body(game: GameRow, viewer: Viewer) -> dict[str, Any]:
    """The chat's settings as ``viewer`` may see them, and whether it may write."""
    muted = [s.index for s in game.seats if s.chat_muted]
    body: dict[str, Any] = {"spectators": game.chat_spectators, "muted": muted,
                            "last": game.last_message_id, "per_minute": per_minute(),
                            "max_chars": MAX_CHARS, "seat": None}
    if viewer.seat is not None:
        seat = seat_of(game, viewer.seat)
        body["seat"] = {"index": seat.index, "hidden": list(seat.chat_hidden or []),
                        "email": seat.chat_email}
        body["can_write"] = not seat.chat_muted and game.status != "cancelled"
    else:
        body["can_write"] = game.status != "cancelled" and (viewer.host or game.chat_spectators)
    return body


def read_settings(game_id: str, bearer: str | None) -> dict[str, Any]:
    game = get_game(game_id)
    return settings_body(game, authenticate(game, bearer))


def set_settings(game_id: str, bearer: str | None, changes: dict[str, Any]) -> dict[str, Any]:
    """Change the chat's settings (own transaction). The host: ``spectators`` (whether they
    write) and ``muted`` (the seats that may not write, all of them). A seat's player:
    ``hidden`` (the seats whose messages it hides for itself, all of them) and ``email``
    (an email per message, at most one an hour)."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        return _change(game, viewer, changes)


def hide_seat(game_id: str, bearer: str | None, author: int, hide: bool) -> dict[str, Any]:
    """The token's seat hides seat ``author``'s messages for itself (``hide``), or shows them
    again; the other hidden seats stay (own transaction: the list is read under the lock)."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        if viewer.seat is None:
            raise PlayersOnly(_("only a seat's player token can hide seats or choose chat "
                                "emails"))
        held = set(seat_of(game, viewer.seat).chat_hidden or [])
        wanted = held | {author} if hide else held - {author}
        return _change(game, viewer, {"hidden": sorted(wanted)})


def _change(game: GameRow, viewer: Viewer, changes: dict[str, Any]) -> dict[str, Any]:
    """:func:`set_settings` on the locked ``game``."""
    indices = {s.index for s in game.seats}
    host_fields = [k for k in ("spectators", "muted") if k in changes]
    seat_fields = [k for k in ("hidden", "email") if k in changes]
    if host_fields and not viewer.host:
        raise HostOnly(_("only the game's host token can mute seats or let spectators "
                         "write"))
    if seat_fields and viewer.seat is None:
        raise PlayersOnly(_("only a seat's player token can hide seats or choose chat "
                            "emails"))
    for field in ("muted", "hidden"):
        unknown = sorted(set(changes.get(field) or []) - indices)
        if unknown:
            raise InvalidInput(_("game %(game)s has no seat %(seat)s", game=game.id,
                                 seat=unknown[0]), errors={"json": {field: ["no such seat"]}})
    if "spectators" in changes:
        game.chat_spectators = bool(changes["spectators"])
        _set_game_column(game, "chat_spectators", game.chat_spectators)
    if "muted" in changes:
        for seat in game.seats:
            seat.chat_muted = seat.index in set(changes["muted"])
    if viewer.seat is not None:
        seat = seat_of(game, viewer.seat)
        if "hidden" in changes:
            if viewer.seat in changes["hidden"]:
                raise InvalidInput(_("you cannot hide your own messages from yourself"),
                                   errors={"json": {"hidden": ["own seat"]}})
            seat.chat_hidden = sorted(set(changes["hidden"])) or None
        if "email" in changes:
            seat.chat_email = bool(changes["email"])
    db.session.flush()
    return settings_body(game, viewer)


def _set_game_column(game: GameRow, name: str, value: Any) -> None:
    """A game setting written without a version bump (it changes no table)."""
    db.session.execute(update(_GAMES).where(_GAMES.c.id == game.id).values({name: value}))
    set_committed_value(game, name, value)
    watch.wrote(game.id)


# -- an identity's messages -----------------------------------------------------------------


def of_identity(key: str) -> list[dict[str, Any]]:
    """Every message written by ``key`` or by a seat it owns (the account export)."""
    rows = db.session.execute(
        select(MessageRow).where(_written_by(key)).order_by(MessageRow.id)).scalars().all()
    return [{"id": m.id, "game_id": m.game_id, "seat": m.seat, "author": m.author_kind,
             "name": m.author_name, "text": m.body,
             "created_at": as_utc(m.created_at).isoformat()} for m in rows]


def forget_identity(key: str) -> int:
    """Delete every message written by ``key`` or by a seat it owns (in the caller's
    transaction, before the seats forget their owner); how many."""
    result = db.session.execute(delete(MessageRow).where(_written_by(key))
                                .execution_options(synchronize_session=False))
    return int(getattr(result, "rowcount", 0) or 0)


def _written_by(key: str) -> Any:
    owned_seat = select(SeatRow.id).where(SeatRow.game_id == MessageRow.game_id,
                                          SeatRow.index == MessageRow.seat,
                                          SeatRow.owner_key == key).exists()
    return or_(MessageRow.author_key == key, owned_seat)


__all__: Sequence[str] = [
    "MAX_CHARS",
    "clean_text",
    "forget_identity",
    "hide_seat",
    "messages_body",
    "of_identity",
    "post",
    "post_locked",
    "read_settings",
    "recent",
    "set_settings",
    "settings_body",
    "since_look",
]
