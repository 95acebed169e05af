"""Tables. A game row holds the engine's serialized state (a snapshot) and a version; the
append-only event table holds the history, so loading a game never reads its history."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column, relationship

from dos_server.extensions import db

JsonType = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> datetime:
    return datetime.now(UTC)


SEAT_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz"  # letters only: never mistaken for an index


def new_seat_id() -> str:
    """A seat's public identity: 12 random lowercase letters (54 bits), short enough for a
    reply address. It grants nothing by itself: tokens that name it are signed."""
    return "".join(secrets.choice(SEAT_ID_ALPHABET) for _ in range(12))


def as_utc(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; everything is stored as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that is aware UTC on every backend.

    PostgreSQL keeps the offset; SQLite stores the text without it and gives back naive
    datetimes. Values are converted to UTC on the way in and marked UTC on the way out, so
    every ``isoformat()`` in an answer carries ``+00:00`` whichever database is behind it.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value).astimezone(UTC)

    def process_result_value(self, value: datetime | None,
                             dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value).astimezone(UTC)


class GameRow(db.Model):  # type: ignore[name-defined,misc]
    __tablename__ = "games"
    # The worker's archiving pass looks only at finished games not archived yet.
    __table_args__ = (Index("ix_games_to_archive", "updated_at",
                            postgresql_where=text("status = 'finished' AND archived_at IS NULL"),
                            sqlite_where=text("status = 'finished' AND archived_at IS NULL")),)

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))  # waiting | active | finished | cancelled
    title: Mapped[str | None] = mapped_column(String(80), nullable=True)  # the host's, optional
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    options: Mapped[dict[str, Any]] = mapped_column(JsonType)
    state: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    seed: Mapped[str | None] = mapped_column(String(128), nullable=True)
    invite_code: Mapped[str] = mapped_column(String(32), unique=True)
    host_token_version: Mapped[int] = mapped_column(Integer, default=1)
    turn_time_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)  # seconds
    turn_deadline: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    next_seq: Mapped[int] = mapped_column(Integer, default=1)
    # Deadlines, driven by the worker's clock: when the current turn began, whether
    # its 80% reminder went out, and what happens at expiry.
    turn_started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(),
                                                             nullable=True)
    reminded: Mapped[bool] = mapped_column(default=False)
    timeout_policy: Mapped[str] = mapped_column(String(16), default="random")  # a bot name
    forfeit_after: Mapped[int | None] = mapped_column(Integer, nullable=True)
    vacation_days: Mapped[int] = mapped_column(Integer, default=14)  # per seat per year
    # Whether standing orders may call DOS and catch for a seat (services/orders.py): they make
    # the call a rule instead of a race. Games from before standing orders keep the race.
    standing_dos: Mapped[bool] = mapped_column(default=True)
    # Which of the current seat's reminders (SeatRow.reminders) went out this turn.
    reminders_sent: Mapped[list[str] | None] = mapped_column(JsonType, nullable=True)
    # Set when the worker moved the finished game's history into ``game_archives``: its
    # event rows are gone and every history read decodes the archive instead.
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # When the game ended (status finished): what /me sorts finished games by.
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Whether a finish moves the players' ratings (services/ratings.py); fixed at creation.
    rated: Mapped[bool] = mapped_column(default=False)
    # A rematch series: the first game's id, and this game's number in it (1, 2, ...);
    # ``rematch_id`` is the standing challenge (or game) made from this one, once asked for.
    series_id: Mapped[str | None] = mapped_column(String(16), nullable=True, index=True)
    series_no: Mapped[int | None] = mapped_column(Integer, nullable=True)
    rematch_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # Table talk: whether spectators may write, and the newest message's id (a Core UPDATE
    # that wakes the game's waiters without bumping ``version``).
    chat_spectators: Mapped[bool] = mapped_column(default=False)
    last_message_id: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(
        UTCDateTime(), default=utcnow, onupdate=utcnow
    )

    seats: Mapped[list[SeatRow]] = relationship(
        back_populates="game", order_by="SeatRow.index", cascade="all, delete-orphan"
    )

    # The services bump ``version`` once per committed request; SQLAlchemy checks it on UPDATE
    # (a backstop behind the row lock: a lost update raises StaleDataError).
    __mapper_args__ = {"version_id_col": version, "version_id_generator": False}  # noqa: RUF012


class SeatRow(db.Model):  # type: ignore[name-defined,misc]
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "index", name="uq_seats_game_index"),
                      UniqueConstraint("public_id", name="uq_seats_public_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    index: Mapped[int] = mapped_column(Integer)  # the position at the table: moves before the start
    # What every token names: random, never reused, never changed (see tokens.py).
    public_id: Mapped[str] = mapped_column(String(16), default=new_seat_id)
    # The seat's index when the seat identities were introduced (migration 0005): tokens
    # issued before then name this number. None for seats created since.
    legacy_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    name: Mapped[str | None] = mapped_column(String(40), nullable=True)  # None: open seat
    email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    webhook_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)
    bot: Mapped[str | None] = mapped_column(String(16), nullable=True)  # a bot name (lobby.BOT_STRATEGIES)
    token_version: Mapped[int] = mapped_column(Integer, default=1)
    claimed: Mapped[bool] = mapped_column(default=False)
    resigned: Mapped[bool] = mapped_column(default=False)
    webhook_secret: Mapped[str | None] = mapped_column(String(64), nullable=True)  # whsec_...
    webhook_disabled: Mapped[bool] = mapped_column(default=False)  # the receiver answered 410
    email_unsubscribed: Mapped[bool] = mapped_column(default=False)
    # {"email": [event, ...], "webhook": [...]}; None means every event on every channel.
    notify_events: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    timeouts: Mapped[int] = mapped_column(Integer, default=0)
    digest: Mapped[bool] = mapped_column(default=False)  # one "waiting on you" email a day
    # Vacation: the seat's clock is paused until vacation_until; days used per calendar year.
    vacation_until: Mapped[datetime | None] = mapped_column(UTCDateTime(),
                                                            nullable=True)
    vacation_year: Mapped[int | None] = mapped_column(Integer, nullable=True)
    vacation_used: Mapped[int] = mapped_column(Integer, default=0)
    # One identity for all your games. ``email`` is where notifications go;
    # ``owner_email`` is the address that opens this seat by signing in: set only when the
    # seat was claimed with the invite sent to that address, or when the seat's player
    # confirmed it by the link sent there. The host never sets it. ``owner_key`` is its
    # comparison form (validation.email_key).
    owner_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    owner_key: Mapped[str | None] = mapped_column(String(254), nullable=True, index=True)
    # The player chose digest or per-turn emails for this game: the identity's preference
    # (IdentityRow.digest) no longer applies to it.
    digest_chosen: Mapped[bool] = mapped_column(default=False)
    # How the seat's person reads: an IANA zone (None: UTC) and a shipped language (None: en).
    time_zone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    language: Mapped[str | None] = mapped_column(String(8), nullable=True)
    # Long games (services/orders.py, services/attention.py, services/abandon.py):
    # the standing orders the server plays for the seat (None: none);
    standing_orders: Mapped[list[str] | None] = mapped_column(JsonType, nullable=True)
    # when the seat's page or client last read the game (None: never);
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # when its last "your turn" email or webhook went out, and how many of its turns the
    # deadline played since then;
    turn_notified_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    turns_missed: Mapped[int] = mapped_column(Integer, default=0)
    # its reminders ("50%", "80%", "1h"...; None: the default, 80%);
    reminders: Mapped[list[str] | None] = mapped_column(JsonType, nullable=True)
    # nudges: whether it takes them, and when it last nudged someone in this game.
    nudges_off: Mapped[bool] = mapped_column(default=False)
    last_nudged_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # Friends (services/chat.py, services/notes.py, services/rematch.py): the seat's private
    # notes on the game, seen by it alone;
    notes: Mapped[str | None] = mapped_column(Text, nullable=True)
    # table talk: muted by the host, the seats whose messages it hides for itself, whether it
    # takes an email per message (at most one an hour) and when the last one went out;
    chat_muted: Mapped[bool] = mapped_column(default=False)
    chat_hidden: Mapped[list[int] | None] = mapped_column(JsonType, nullable=True)
    chat_email: Mapped[bool] = mapped_column(default=False)
    chat_emailed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # in a standing rematch challenge (status waiting): when this seat's player accepted.
    rematch_accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    game: Mapped[GameRow] = relationship(back_populates="seats")


class SeatVoteRow(db.Model):  # type: ignore[name-defined,misc]
    """A player's vote on an absent seat (services/abandon.py): hand it to a bot, or end the
    game with the scores as they stand. One vote per voter per absent seat."""

    __tablename__ = "seat_votes"
    __table_args__ = (UniqueConstraint("game_id", "target_seat", "voter_seat",
                                       name="uq_seat_votes_voter"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    target_seat: Mapped[int] = mapped_column(Integer)
    voter_seat: Mapped[int] = mapped_column(Integer)
    choice: Mapped[str] = mapped_column(String(8))  # bot | end
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class MessageRow(db.Model):  # type: ignore[name-defined,misc]
    """One line of table talk (services/chat.py). ``seat`` is the author's seat (None for a
    spectator or the host); ``author_key`` the author's identity when signed in, so that
    forgetting the identity removes its messages."""

    __tablename__ = "game_messages"
    __table_args__ = (Index("ix_game_messages_game_id_id", "game_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    author_kind: Mapped[str] = mapped_column(String(12))  # seat | host | spectator
    author_name: Mapped[str] = mapped_column(String(40))
    author_key: Mapped[str | None] = mapped_column(String(254), nullable=True, index=True)
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RatingRow(db.Model):  # type: ignore[name-defined,misc]
    """An identity's rating on this server (OpenSkill Plackett-Luce: ``mu``, ``sigma``)."""

    __tablename__ = "ratings"

    email_key: Mapped[str] = mapped_column(String(254), primary_key=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RatingChangeRow(db.Model):  # type: ignore[name-defined,misc]
    """What one rated game did to one identity's rating: rebuilt ratings replay these games."""

    __tablename__ = "rating_changes"
    __table_args__ = (UniqueConstraint("game_id", "email_key", name="uq_rating_changes_game_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    email_key: Mapped[str] = mapped_column(String(254), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)  # 1 is first
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu_after: Mapped[float] = mapped_column(Float)
    sigma_after: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class EventRow(db.Model):  # type: ignore[name-defined,misc]
    """One history entry: an action a seat took (kind ``action``) or an engine event."""

    __tablename__ = "game_events"
    __table_args__ = (UniqueConstraint("game_id", "seq", name="uq_game_events_game_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer)  # the game version this event produced
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]] = mapped_column(JsonType)
    secret: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class GameArchiveRow(db.Model):  # type: ignore[name-defined,misc]
    """A finished game's whole history in a few KB (services/archive.py): its record, and
    only what replaying the record does not give back, zlib-compressed JSON."""

    __tablename__ = "game_archives"

    game_id: Mapped[str] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    format: Mapped[int] = mapped_column(Integer)
    events: Mapped[int] = mapped_column(Integer)  # how many history entries it holds
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class IdempotencyRow(db.Model):  # type: ignore[name-defined,misc]
    """The first answer to a POST with an ``Idempotency-Key``, replayed to retries."""

    __tablename__ = "idempotency_keys"

    game_id: Mapped[str] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    status: Mapped[int] = mapped_column(Integer)
    body: Mapped[dict[str, Any]] = mapped_column(JsonType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class NotificationRow(db.Model):  # type: ignore[name-defined,misc]
    """The transactional outbox: written with the change that causes it, sent by the worker."""

    __tablename__ = "notifications"
    __table_args__ = (Index("ix_notifications_due", "status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str | None] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), nullable=True, index=True
    )
    seats: Mapped[list[int]] = mapped_column(JsonType)  # seats this delivery speaks to
    channel: Mapped[str] = mapped_column(String(8))  # email | webhook
    target: Mapped[str] = mapped_column(String(2048))  # address or URL
    event: Mapped[str] = mapped_column(String(32))
    # One delivery per event per endpoint: several seats sharing a URL get one webhook.
    dedupe_key: Mapped[str] = mapped_column(String(512), unique=True)
    message_id: Mapped[str] = mapped_column(String(64))  # webhook-id / Message-ID, kept on retry
    # Everything the message needs; ``{}`` once the row is settled and its game archived
    # (services/archive.py: nothing sends it again).
    payload: Mapped[dict[str, Any]] = mapped_column(JsonType)
    status: Mapped[str] = mapped_column(String(12), default="pending")  # pending|sent|dead|dropped
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # The worker claim holding the lease: only it sends the row and records the result.
    lease_owner: Mapped[str | None] = mapped_column(String(80), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class DeliveryAttemptRow(db.Model):  # type: ignore[name-defined,misc]
    """Every attempt to deliver a notification, successful or not."""

    __tablename__ = "delivery_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    notification_id: Mapped[int] = mapped_column(
        ForeignKey("notifications.id", ondelete="CASCADE"), index=True
    )
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    ok: Mapped[bool] = mapped_column()
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str] = mapped_column(String(64), default="")


class DigestRow(db.Model):  # type: ignore[name-defined,misc]
    """When an address last got its daily digest (digest mode sends at most one a day)."""

    __tablename__ = "digests"

    address: Mapped[str] = mapped_column(String(254), primary_key=True)
    last_sent_at: Mapped[datetime] = mapped_column(UTCDateTime())


class InboundMessageRow(db.Model):  # type: ignore[name-defined,misc]
    """An email received for play by mail, stored before it is processed.

    ``dedupe_key`` is the SHA-256 of the Message-ID (of the raw bytes when there is none), so
    a message delivered twice is handled once. ``status``: received (not processed yet: the
    worker retries these) | processed | rejected (answered with an error, nothing changed) |
    ignored (automatic mail, not answered) | failed (a bug, after every retry: the sender got
    an apology; ``dos-server inbound replay ID`` tries again).
    """

    __tablename__ = "inbound_messages"
    __table_args__ = (Index("ix_inbound_messages_status", "status", "received_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dedupe_key: Mapped[str] = mapped_column(String(64), unique=True)
    message_id: Mapped[str | None] = mapped_column(Text, nullable=True)
    source: Mapped[str] = mapped_column(String(8))  # smtp | http
    mail_from: Mapped[str | None] = mapped_column(String(320), nullable=True)  # envelope sender
    rcpt_to: Mapped[list[str]] = mapped_column(JsonType)  # envelope recipients (smtp)
    # Empty once the message is handled and its game archived (services/archive.py); ``size``
    # keeps the length it had.
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    size: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(12), default="received")
    outcome: Mapped[str | None] = mapped_column(String(32), nullable=True)  # applied, stale...
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    game_id: Mapped[str | None] = mapped_column(String(16), nullable=True, index=True)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # A message whose processing failed on a bug is retried by the worker with backoff.
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


# -- one identity for all your games -------------------------------------------------------


class LoginCodeRow(db.Model):  # type: ignore[name-defined,misc]
    """A sign-in request: the code and link were emailed to ``address``.

    No code is stored: the code is an HMAC of ``nonce`` under the secret key (see
    services/account.py), so the database alone does not give it away. Single use
    (``used_at``), expires (``expires_at``), and dies after a few wrong guesses (``attempts``).
    """

    __tablename__ = "login_codes"
    __table_args__ = (Index("ix_login_codes_key_created", "email_key", "created_at"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    email_key: Mapped[str] = mapped_column(String(254))
    address: Mapped[str] = mapped_column(String(254))
    nonce: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class AccountSessionRow(db.Model):  # type: ignore[name-defined,misc]
    """A signed-in device. Its token names ``id`` and a secret whose SHA-256 is stored here;
    deleting the row revokes the token at once."""

    __tablename__ = "account_sessions"

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    email_key: Mapped[str] = mapped_column(String(254), index=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(8), default="api")  # api | browser
    user_agent: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_used_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class BrowserSessionRow(db.Model):  # type: ignore[name-defined,misc]
    """A browser's session. The cookie holds a random id whose SHA-256 is ``id_hash``, so
    the table does not give out live cookies; ``data`` is what the pages keep for the
    browser (its seats, host controls, account sign-in, CSRF secret). Deleting the row ends
    the session at the browser's next request."""

    __tablename__ = "browser_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    data: Mapped[dict[str, Any]] = mapped_column(JsonType)
    # The account sign-in this browser holds: ending that account session ends this one.
    account_session_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class IdentityRow(db.Model):  # type: ignore[name-defined,misc]
    """What an identity (an address, compared by ``email_key``) chose for all its games."""

    __tablename__ = "identities"
    __table_args__ = (Index("uq_identities_player_name", "player_name", unique=True),)

    email_key: Mapped[str] = mapped_column(String(254), primary_key=True)
    address: Mapped[str] = mapped_column(String(254))  # as last signed in with
    # None: no preference; True/False: digest or per-turn emails in every game whose
    # player has not chosen otherwise for that game (SeatRow.digest_chosen).
    digest: Mapped[bool | None] = mapped_column(nullable=True)
    # The identity's IANA zone and language, for its seats that chose none (None: UTC, en).
    time_zone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    language: Mapped[str | None] = mapped_column(String(8), nullable=True)
    # The name the identity's ratings go by (/players/<name>), and whether it stays off the
    # leaderboard.
    player_name: Mapped[str | None] = mapped_column(String(40), nullable=True)
    leaderboard_hidden: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
