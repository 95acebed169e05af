"""Who is asking, and the game they ask about: loading, locking and authenticating.

Read-only requests load the game with :func:`get_game` and authenticate with
:func:`authenticate`; the hot API reads (a game, its legal actions) use :func:`read_game`, one
Core statement outside the session. Writes call :func:`locked` inside their transaction, so
that the game and its seats are read by the statement that takes the lock and the token is
checked against those fresh rows (a token revoked by the request before them is refused).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import (
    Dialect,
    Engine,
    Select,
    Text,
    bindparam,
    case,
    cast,
    func,
    literal_column,
    select,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import contains_eager, defer, joinedload, make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.pool import PoolProxiedConnection

from dos_engine import Game
from dos_server import jsoncodec, tokens
from dos_server.database import row_holding
from dos_server.errors import (
    GameNotActive,
    GameNotFound,
    GameNotStarted,
    HostOnly,
    NoSuchSeat,
    NotAuthenticated,
    NotYourSeat,
    PlayersOnly,
    WrongGame,
)
from dos_server.extensions import db
from dos_server.models import GameRow, SeatRow
from dos_server.services.words import N_, _
from dos_server.validation import email_key


@dataclass(frozen=True)
class Viewer:
    """Who is asking: a seat (player token), the host, or a spectator (both None/False)."""

    seat: int | None = None
    host: bool = False


class SeatLike(Protocol):
    """What reading and authenticating need of a seat: a ``SeatRow`` or a :class:`SeatSnapshot`."""

    @property
    def index(self) -> int: ...
    @property
    def public_id(self) -> str: ...
    @property
    def legacy_index(self) -> int | None: ...
    @property
    def token_version(self) -> int: ...
    @property
    def name(self) -> str | None: ...
    @property
    def bot(self) -> str | None: ...
    @property
    def claimed(self) -> bool: ...
    @property
    def resigned(self) -> bool: ...
    @property
    def vacation_until(self) -> datetime | None: ...
    @property
    def standing_orders(self) -> list[str] | None: ...


S_co = TypeVar("S_co", bound=SeatLike, covariant=True)
S = TypeVar("S", bound=SeatLike)


class GameLike(Protocol[S_co]):
    """What reading and authenticating need of a game: a ``GameRow`` or a :class:`GameSnapshot`."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def host_token_version(self) -> int: ...
    @property
    def options(self) -> dict[str, Any]: ...
    @property
    def state(self) -> dict[str, Any] | None: ...
    @property
    def turn_time_limit(self) -> int | None: ...
    @property
    def turn_deadline(self) -> datetime | None: ...
    @property
    def seats(self) -> Sequence[S_co]: ...
    @property
    def standing_dos(self) -> bool: ...
    @property
    def series_id(self) -> str | None: ...
    @property
    def series_no(self) -> int | None: ...
    @property
    def rematch_id(self) -> str | None: ...
    @property
    def rated(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class SeatSnapshot:
    index: int
    public_id: str
    legacy_index: int | None
    token_version: int
    name: str | None
    bot: str | None
    claimed: bool
    resigned: bool
    vacation_until: datetime | None
    standing_orders: list[str] | None = None
    # for recording a look (services/attention.py): when the seat's last one was written
    # and its last your-turn email
    last_seen_at: datetime | None = None
    turn_notified_at: datetime | None = None


@dataclass(slots=True)
class GameSnapshot:
    """A game as one statement read it, for answering a read (nothing here is ever written).

    The options and the state are decoded from their JSON text on first use: a ``304 Not
    Modified``, or an answer the process has already encoded (``read.game_json``), needs
    neither.
    """

    id: str
    title: str | None
    status: str
    version: int
    host_token_version: int
    options_text: str | None
    turn_time_limit: int | None
    turn_deadline: datetime | None
    seats: tuple[SeatSnapshot, ...]
    state_text: str | None
    _options: dict[str, Any] | None = field(default=None, repr=False)
    _state: dict[str, Any] | None = field(default=None, repr=False)
    standing_dos: bool = True
    turn_started_at: datetime | None = None
    # A rematch series (services/rematch.py): its id, this game's number, the challenge made.
    series_id: str | None = None
    series_no: int | None = None
    rematch_id: str | None = None
    rated: bool = False

    @property
    def options(self) -> dict[str, Any]:
        if self._options is None:
            self._options = jsoncodec.loads(self.options_text) if self.options_text else {}
        return self._options

    @property
    def state(self) -> dict[str, Any] | None:
        if self._state is None and self.state_text is not None:
            self._state = jsoncodec.loads(self.state_text)
        return self._state


def snapshot(game: GameRow) -> GameSnapshot:
    """The game as this transaction leaves it, for an answer made after the commit (the
    committed row is expired: reading it then would query again, and could meet a later
    write)."""
    seats = tuple(SeatSnapshot(seat.index, seat.public_id, seat.legacy_index, seat.token_version,
                               seat.name, seat.bot, seat.claimed, seat.resigned,
                               seat.vacation_until, seat.standing_orders, seat.last_seen_at,
                               seat.turn_notified_at)
                  for seat in game.seats)
    return GameSnapshot(game.id, game.title, game.status, game.version, game.host_token_version,
                        None, game.turn_time_limit, game.turn_deadline, seats, None,
                        _options=game.options, _state=game.state,
                        standing_dos=game.standing_dos, turn_started_at=game.turn_started_at,
                        series_id=game.series_id, series_no=game.series_no,
                        rematch_id=game.rematch_id, rated=game.rated)


@dataclass(frozen=True)
class Written:
    """What a write leaves for its answer: the game as it stands after it, and who wrote."""

    game: GameSnapshot  # :func:`snapshot`
    viewer: Viewer


_GAMES = GameRow.__table__
_SEATS = SeatRow.__table__
# One row per seat; the JSON columns come as text, decoded once (not once per seat row). The
# state (about 1.5 KB) is only in the first row: the database converts and sends it once.
_READ = (
    select(_GAMES.c.id, _GAMES.c.title, _GAMES.c.status, _GAMES.c.version,
           _GAMES.c.host_token_version,
           cast(_GAMES.c.options, Text), _GAMES.c.turn_time_limit, _GAMES.c.turn_deadline,
           case((func.row_number().over(order_by=_SEATS.c.index) == literal_column("1"),
                 cast(_GAMES.c.state, Text))),
           _SEATS.c.index, _SEATS.c.public_id, _SEATS.c.legacy_index, _SEATS.c.token_version,
           _SEATS.c.name, _SEATS.c.bot, _SEATS.c.claimed, _SEATS.c.resigned,
           _SEATS.c.vacation_until, _SEATS.c.standing_orders, _SEATS.c.last_seen_at,
           _SEATS.c.turn_notified_at, _GAMES.c.standing_dos, _GAMES.c.turn_started_at,
           _GAMES.c.series_id, _GAMES.c.series_no, _GAMES.c.rematch_id, _GAMES.c.rated)
    .select_from(_GAMES.outerjoin(_SEATS, _SEATS.c.game_id == _GAMES.c.id))
    .where(_GAMES.c.id == bindparam("game_id"))
    .order_by(_SEATS.c.index)
)


@dataclass(frozen=True, slots=True)
class DriverStatement:
    """A Core statement compiled once for a dialect, to run on the driver's own cursor.

    The hottest read skips SQLAlchemy's work per execution (an execution context, result
    metadata built from the cursor's description, row objects): that was about half of the
    read's CPU in this process. What SQLAlchemy would still do is kept: the SQL and the
    parameter order of the dialect, and each column type's result processing (SQLite's text
    datetimes and integer booleans, ``UTCDateTime``'s conversion to UTC).
    """

    sql: str
    bind_order: tuple[str, ...] | None  # positional paramstyles (SQLite's ``?``)
    processors: tuple[tuple[int, Callable[[Any], Any]], ...]  # (column, processor) pairs

    @classmethod
    def compile(cls, statement: Select[Any], dialect: Dialect) -> DriverStatement:
        compiled = statement.compile(dialect=dialect)
        order = tuple(getattr(compiled, "positiontup", None) or ()) if compiled.positional \
            else None
        processors = [column.type.dialect_impl(dialect).result_processor(dialect, None)
                      for column in statement.selected_columns]
        return cls(compiled.string, order,
                   tuple((i, p) for i, p in enumerate(processors) if p is not None))

    def params(self, values: dict[str, Any]) -> dict[str, Any] | tuple[Any, ...]:
        return values if self.bind_order is None else tuple(values[n] for n in self.bind_order)

    def row(self, raw: Sequence[Any]) -> list[Any]:
        row = list(raw)
        for column, process in self.processors:
            if row[column] is not None:
                row[column] = process(row[column])
        return row


_DRIVER_READ: dict[tuple[str, str], DriverStatement] = {}  # by (dialect name, driver)


def read_game(game_id: str) -> GameSnapshot:
    """The game and its seats for a read: one statement, on a pooled connection of its own.

    The session is not used, so nothing of this request's writes (it makes none) could be in
    it. The statement runs in autocommit (:func:`_driver_rows`): alone, it is consistent.
    """
    rows = _driver_rows(_READ, _DRIVER_READ, {"game_id": game_id})
    if not rows:
        raise _not_found(game_id)
    first = rows[0]
    seats = tuple(SeatSnapshot(*row[9:21]) for row in rows if row[9] is not None)
    return GameSnapshot(first[0], first[1], first[2], first[3], first[4], first[5], first[6],
                        first[7], seats, first[8], standing_dos=bool(first[21]),
                        turn_started_at=first[22], series_id=first[23], series_no=first[24],
                        rematch_id=first[25], rated=bool(first[26]))


_ONE: Select[Any] = select(literal_column("1"))
_DRIVER_ONE: dict[tuple[str, str], DriverStatement] = {}


def database_round_trip() -> None:
    """``SELECT 1`` the way :func:`read_game` reads: one round trip on a pooled connection, in
    autocommit, outside the session (the readiness check; any database error propagates)."""
    _driver_rows(_ONE, _DRIVER_ONE, {})


def _driver_rows(statement: Select[Any], compiled: dict[tuple[str, str], DriverStatement],
                 values: dict[str, Any]) -> list[list[Any]]:
    """Run ``statement`` (compiled once per dialect into ``compiled``) on a pooled connection.

    In autocommit: PostgreSQL saves the BEGIN and ROLLBACK round trips of a transaction around
    it (the connection is put back in transaction mode before the pool has it again: writes
    need it); SQLite's driver connections are in autocommit already (we BEGIN ourselves:
    ``database.configure_engine``).
    """
    engine = db.engine
    driver_statement = _compiled(statement, compiled, engine.dialect)
    try:
        return _run_driver_statement(engine, driver_statement, values)
    except DBAPIError:  # only a lost connection comes wrapped (below)
        # A pooled connection the database no longer holds (it restarted, or a proxy closed
        # it): the pool now connects again, and a read is safe to send twice.
        return _run_driver_statement(engine, driver_statement, values)


_CURSOR = "dos_driver_cursor"


def _compiled(statement: Select[Any], compiled: dict[tuple[str, str], DriverStatement],
              dialect: Dialect) -> DriverStatement:
    driver_statement = compiled.get((dialect.name, dialect.driver))
    if driver_statement is None:
        driver_statement = compiled[dialect.name, dialect.driver] = \
            DriverStatement.compile(statement, dialect)
    return driver_statement


def _run_driver_statement(engine: Engine, driver_statement: DriverStatement,
                          values: dict[str, Any]) -> list[list[Any]]:
    dialect = engine.dialect
    pooled = engine.raw_connection()
    try:
        driver = pooled.driver_connection
        autocommit = dialect.name == "postgresql"
        if autocommit:
            driver.autocommit = True  # type: ignore[union-attr]
        try:
            return _cursor_rows(engine, pooled, driver_statement, values)
        finally:
            if autocommit and pooled.is_valid:
                driver.autocommit = False  # type: ignore[union-attr]
    finally:
        pooled.close()


def _cursor_rows(engine: Engine, pooled: PoolProxiedConnection, driver_statement: DriverStatement,
                 values: dict[str, Any]) -> list[list[Any]]:
    """Run ``driver_statement`` on the driver connection of ``pooled``, as it stands (in
    autocommit, or in the caller's transaction)."""
    dialect = engine.dialect
    # One cursor per driver connection, kept in the pool's record of it (cleared when the
    # connection is replaced): a new psycopg cursor sets up its column loaders again on every
    # execution, which cost as much as the rest of a read.
    cursor = pooled.info.get(_CURSOR)
    if cursor is None:
        cursor = pooled.info[_CURSOR] = pooled.cursor()
    try:
        cursor.execute(driver_statement.sql, driver_statement.params(values))
        return [driver_statement.row(raw) for raw in cursor.fetchall()]
    except dialect.loaded_dbapi.Error as error:
        pooled.info.pop(_CURSOR, None)
        if dialect.is_disconnect(error, pooled, cursor):
            # What SQLAlchemy's own execution does (with its private call): this connection is
            # closed, and every other one the pool made before now is replaced at its next
            # checkout.
            engine.pool._invalidate(pooled, error)
            raise DBAPIError.instance(driver_statement.sql, None, error,
                                      dialect.loaded_dbapi.Error,
                                      connection_invalidated=True) from error
        raise


def get_game(game_id: str, *, for_update: bool = False) -> GameRow:
    """The game with its seats; ``for_update`` locks it (the caller's transaction).

    The lock is taken by the statement that reads the game and its seats, and it locks the
    seat rows too: on PostgreSQL a ``SELECT ... FOR UPDATE`` that waited for another writer
    re-reads the rows it locks at their newest version, so the seats are the ones the other
    writer committed (seats joined but not locked would be the ones from before its commit).
    """
    if for_update:
        locked_row = _lock_game(game_id)
        if locked_row is not None:
            return locked_row
        # No such game, or one without seats: lock the game row alone, then read it.
        found = db.session.execute(
            select(GameRow.id).where(GameRow.id == game_id).with_for_update()
        ).scalar_one_or_none()
        if found is None:
            raise _not_found(game_id)
    # Seats come with the game in the same SELECT, not lazily later (a lazy load would
    # autoflush a half-made change and cost a second UPDATE of the game row).
    row = db.session.execute(_GET, {"game_id": game_id}).unique().scalar_one_or_none()
    if row is None:
        raise _not_found(game_id)
    return row


# Every column of the game (its state as JSON text: decoded once, not once per seat row), then
# every column of a seat, one row per seat; it locks the game row and the seat rows. Built
# once, like _READ. (No window function here to send the state once: PostgreSQL refuses them
# with FOR UPDATE.)
_GAME_COLUMNS = tuple(column for column in _GAMES.c if column.key != "state")
_LOCK = (
    select(*_GAME_COLUMNS, cast(_GAMES.c.state, Text), *_SEATS.c)
    .select_from(_GAMES.join(_SEATS, _SEATS.c.game_id == _GAMES.c.id))
    .where(_GAMES.c.id == bindparam("game_id"))
    .order_by(_SEATS.c.index)
    .with_for_update(of=[_GAMES, _SEATS])
)
_DRIVER_LOCK: dict[tuple[str, str], DriverStatement] = {}
_GAME_KEYS = tuple(GameRow.__mapper__.get_property_by_column(c).key for c in _GAME_COLUMNS)
_SEAT_KEYS = tuple(SeatRow.__mapper__.get_property_by_column(c).key for c in _SEATS.c)


def _lock_game(game_id: str) -> GameRow | None:
    """Lock and read the game and its seats in one statement, in the session's transaction;
    None if there is no such row, or a game without seats (an inner join): the caller reads
    it then.

    The statement runs on the driver's cursor (:class:`DriverStatement`), and the rows become
    the session's persistent objects the way SQLAlchemy documents for rows it did not load
    (``make_transient_to_detached``, then ``add``): SQLAlchemy's own execution and loading of
    its 70-odd columns cost a third of the lock-and-read's CPU. A session that holds objects
    already loads through the ORM instead, which refreshes them (``populate_existing``) and
    flushes pending changes first, as any query does.
    """
    session = db.session()
    if session.identity_map or session.new or session.deleted:
        return _lock_game_by_orm(game_id)
    connection = session.connection()  # begins the session's transaction
    rows = _cursor_rows(connection.engine, connection.connection,
                        _compiled(_LOCK, _DRIVER_LOCK, connection.dialect), {"game_id": game_id})
    if not rows:
        return None
    first = rows[0]
    split = len(_GAME_KEYS)
    game = row_holding(GameRow, dict(zip(_GAME_KEYS, first[:split], strict=True)))
    state_text = first[split]
    game.__dict__["state"] = _state_from_text(state_text)
    seats = [row_holding(SeatRow, dict(zip(_SEAT_KEYS, row[split + 1:], strict=True)))
             for row in rows]
    set_committed_value(game, "seats", seats)
    for instance in (game, *seats):
        make_transient_to_detached(instance)
    session.add(game)  # its seats with it (the relationship's cascade)
    return game


# The ORM's statements, built once like the others: building an ORM select with its options
# costs more CPU than running it.
_GET = (select(GameRow).where(GameRow.id == bindparam("game_id"))
        .options(joinedload(GameRow.seats)).execution_options(populate_existing=True))
_LOCK_BY_ORM = (
    select(GameRow, cast(GameRow.state, Text))
    .join(GameRow.seats)
    .where(GameRow.id == bindparam("game_id"))
    .order_by(SeatRow.index)
    .options(contains_eager(GameRow.seats), defer(GameRow.state))
    .with_for_update(of=[GameRow, SeatRow])
    .execution_options(populate_existing=True)
)


def _lock_game_by_orm(game_id: str) -> GameRow | None:
    rows = db.session.execute(_LOCK_BY_ORM, {"game_id": game_id}).unique().all()
    if not rows:
        return None
    game, state_text = rows[0]
    set_committed_value(game, "state", _state_from_text(state_text))
    return game


def _state_from_text(text: str | None) -> Any:
    """A locked game's state, sent as JSON text by the lock-and-read (decoded once, not once
    per seat row)."""
    return jsoncodec.loads(text) if text else None


def _not_found(game_id: str) -> GameNotFound:
    return GameNotFound(_("there is no game %(game)s on this server; check the game id",
                          game=repr(game_id)))


def locked(game_id: str, bearer: str | None, *, allow_host: bool = True) -> tuple[GameRow, Viewer]:
    """Lock the game, then read it and authenticate ``bearer`` against what was read."""
    game = get_game(game_id, for_update=True)
    return game, authenticate(game, bearer, allow_host=allow_host)


def authenticate(game: GameLike[SeatLike], bearer: str | None, *,
                 allow_host: bool = True) -> Viewer:
    """Map an ``Authorization: Bearer`` token to a viewer of this game (or NotAuthenticated,
    WrongGame)."""
    if not bearer:
        return Viewer()
    claims = None
    for purpose in ("player", "host") if allow_host else ("player",):
        try:
            claims = tokens.read(purpose, bearer)
        except NotAuthenticated:
            continue
        if purpose == "host":
            check_game(game, claims.game_id)
            if claims.version != game.host_token_version:
                raise NotAuthenticated(_("this host token was replaced; use the newest one"))
            return Viewer(host=True)
        break
    if claims is None or not claims.names_a_seat:
        raise NotAuthenticated(
            _("this is not a valid token for this server (it may be for another server, or cut "
              "short when copied)"), invalid=True)
    check_game(game, claims.game_id)
    seat = seat_named_by(game, claims)
    if seat.token_version != claims.version:
        raise NotAuthenticated(
            _("this token was revoked (the seat's token was rotated); use the newest token")
        )
    return Viewer(seat=seat.index)


def seat_named_by(game: GameLike[S], claims: tokens.TokenClaims) -> S:
    """The seat a token names, by its identity (never by its position); NotAuthenticated if
    it is gone."""
    seat = find_seat(game, claims.seat_id, claims.legacy_index)
    if seat is None:
        raise NotAuthenticated(_("the seat this token was for is no longer in this game; "
                                 "ask the host for a new invite"))
    return seat


def find_seat(game: GameLike[S], seat_id: str | None, legacy_index: int | None) -> S | None:
    """The seat with this public_id, or (tokens from before seat ids) this legacy index."""
    for seat in game.seats:
        if seat_id is not None and seat.public_id == seat_id:
            return seat
        if seat_id is None and legacy_index is not None and seat.legacy_index == legacy_index:
            return seat
    return None


def seat_token(purpose: str, game: GameRow, seat: SeatRow) -> str:
    """A ``purpose`` token for ``seat``: it names the seat's identity and token version.

    An invite also carries a digest of the seat's address at the time: claiming
    the seat with it makes that address the one that opens the seat by signing in.
    """
    if purpose == "invite" and seat.email:
        return tokens.issue(purpose, game.id, seat.public_id, seat.token_version,
                            e=tokens.address_digest(email_key(seat.email)))
    return tokens.issue(purpose, game.id, seat.public_id, seat.token_version)


def check_game(game: GameLike[SeatLike], token_game: str) -> None:
    if token_game != game.id:
        raise WrongGame(_("this token belongs to game %(token_game)s, not to game %(game)s",
                          token_game=token_game, game=game.id))


def seat_of(game: GameRow, index: int) -> SeatRow:
    for seat in game.seats:
        if seat.index == index:
            return seat
    raise NoSuchSeat(_("game %(game)s has no seat %(seat)s", game=game.id, seat=index))


def require_host(viewer: Viewer) -> None:
    if not viewer.host:
        raise HostOnly(_("only the game's host token can do this"))


# What only a seat's player may do (``require_player``'s ``doing``), said whole.
_PLAYERS_ONLY = {
    "play": N_("only a seat's player token can play"),
    "resign": N_("only a seat's player token can resign"),
    "take a vacation": N_("only a seat's player token can take a vacation"),
    "list that seat's legal actions": N_("only a seat's player token can list that seat's "
                                         "legal actions"),
    "read that seat's settings": N_("only a seat's player token can read that seat's settings"),
}
# What only the host or the seat's own player may do (``require_seat_or_host``'s ``doing``).
_SEAT_OR_HOST = {
    "rotate its token": N_("only the host or the seat's own player can rotate its token"),
    "change its notifications": N_("only the host or the seat's own player can change its "
                                   "notifications"),
}


def require_player(viewer: Viewer, doing: str) -> int:
    """The viewer's seat; PlayersOnly, naming what only a player may do (``doing``, a key of
    ``_PLAYERS_ONLY``), otherwise."""
    if viewer.seat is None:
        raise PlayersOnly(_(_PLAYERS_ONLY[doing]))
    return viewer.seat


def game_is(game: GameLike[SeatLike]) -> str:
    """"game abc is finished": the game's status, said in the reader's language."""
    if game.status == "finished":
        return _("game %(game)s is finished", game=game.id)
    if game.status == "cancelled":
        return _("game %(game)s is cancelled", game=game.id)
    if game.status == "waiting":
        return _("game %(game)s is waiting for its players", game=game.id)
    if game.status == "active":
        return _("game %(game)s is being played", game=game.id)
    return _("game %(game)s is %(status)s", game=game.id, status=game.status)


def require_in_play(game: GameRow) -> None:
    """GameNotActive unless the game is waiting for players or being played."""
    if game.status not in ("waiting", "active"):
        raise GameNotActive(game_is(game))


def require_seat_or_host(viewer: Viewer, index: int, doing: str) -> None:
    """NotYourSeat unless the viewer is the host or seat ``index``'s player (``doing``, a key
    of ``_SEAT_OR_HOST``, says what they asked)."""
    if not viewer.host and viewer.seat != index:
        raise NotYourSeat(_(_SEAT_OR_HOST[doing]))


def engine_state(game: GameLike[SeatLike]) -> Game:
    if game.state is None:
        raise GameNotStarted(_("the game has not started yet: it starts when every seat is "
                               "filled, or when the host starts it"))
    return Game.from_dict(game.state)


__all__ = [
    "GameLike",
    "GameSnapshot",
    "SeatLike",
    "SeatSnapshot",
    "Viewer",
    "Written",
    "authenticate",
    "check_game",
    "database_round_trip",
    "engine_state",
    "find_seat",
    "game_is",
    "get_game",
    "locked",
    "read_game",
    "require_host",
    "require_in_play",
    "require_player",
    "require_seat_or_host",
    "seat_named_by",
    "seat_of",
    "seat_token",
    "snapshot",
]
