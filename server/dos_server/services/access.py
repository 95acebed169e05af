"""Who is asking, and the game they ask about: loading, locking and authenticating.

Read-only requests load the game with :func:`get_game` and authenticate with
:func:`authenticate`. Writes call :func:`locked` inside their transaction, so that the game
and its seats are read after the lock is held and the token is checked against those fresh
rows (a token revoked by the request before them is refused).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from dos_engine import Game
from dos_server import tokens
from dos_server.extensions import db
from dos_server.models import GameRow, SeatRow
from dos_server.problems import Problem
from dos_server.validation import email_key


@dataclass(frozen=True)
class Viewer:
    """Who is asking: a seat (player token), the host, or a spectator (both None/False)."""

    seat: int | None = None
    host: bool = False


def get_game(game_id: str, *, for_update: bool = False) -> GameRow:
    """The game with its seats; ``for_update`` locks its row first (the caller's transaction).

    The lock is taken by a statement of its own: on PostgreSQL a ``SELECT ... FOR UPDATE``
    that waited for another writer re-reads only the locked row, so seats joined into that
    same statement would be the ones from before the other writer's commit.
    """
    if for_update:
        found = db.session.execute(
            select(GameRow.id).where(GameRow.id == game_id).with_for_update()
        ).scalar_one_or_none()
        if found is None:
            raise _not_found(game_id)
    # Seats come with the game in the same SELECT, not lazily later (a lazy load would
    # autoflush a half-made change and cost a second UPDATE of the game row).
    query = (select(GameRow).where(GameRow.id == game_id)
             .options(joinedload(GameRow.seats)).execution_options(populate_existing=True))
    row = db.session.execute(query).unique().scalar_one_or_none()
    if row is None:
        raise _not_found(game_id)
    return row


def _not_found(game_id: str) -> Problem:
    return Problem(404, "game-not-found", "No such game",
                   f"there is no game {game_id!r} on this server; check the game id")


def locked(game_id: str, bearer: str | None, *, allow_host: bool = True) -> tuple[GameRow, Viewer]:
    """Lock the game, then read it and authenticate ``bearer`` against what was read."""
    game = get_game(game_id, for_update=True)
    return game, authenticate(game, bearer, allow_host=allow_host)


def authenticate(game: GameRow, bearer: str | None, *, allow_host: bool = True) -> Viewer:
    """Map an ``Authorization: Bearer`` token to a viewer of this game (401/403 on failure)."""
    if not bearer:
        return Viewer()
    claims = None
    for purpose in ("player", "host") if allow_host else ("player",):
        try:
            claims = tokens.read(purpose, bearer)
        except Problem:
            continue
        if purpose == "host":
            check_game(game, claims.game_id)
            if claims.version != game.host_token_version:
                raise tokens.unauthorized("this host token was replaced; use the newest one")
            return Viewer(host=True)
        break
    if claims is None or not claims.names_a_seat:
        raise tokens.unauthorized(
            "this is not a valid token for this server (it may be for another server, or cut "
            "short when copied)"
        )
    check_game(game, claims.game_id)
    seat = seat_named_by(game, claims)
    if seat.token_version != claims.version:
        raise tokens.unauthorized(
            "this token was revoked (the seat's token was rotated); use the newest token"
        )
    return Viewer(seat=seat.index)


def seat_named_by(game: GameRow, claims: tokens.TokenClaims) -> SeatRow:
    """The seat a token names, by its identity (never by its position); 401 if it is gone."""
    seat = find_seat(game, claims.seat_id, claims.legacy_index)
    if seat is None:
        raise tokens.unauthorized("the seat this token was for is no longer in this game; "
                                  "ask the host for a new invite")
    return seat


def find_seat(game: GameRow, seat_id: str | None, legacy_index: int | None) -> SeatRow | None:
    """The seat with this public_id, or (tokens from before seat ids) this legacy index."""
    for seat in game.seats:
        if seat_id is not None and seat.public_id == seat_id:
            return seat
        if seat_id is None and legacy_index is not None and seat.legacy_index == legacy_index:
            return seat
    return None


def seat_token(purpose: str, game: GameRow, seat: SeatRow) -> str:
    """A ``purpose`` token for ``seat``: it names the seat's identity and token version.

    An invite also carries a digest of the seat's address at the time (issue #14): claiming
    the seat with it makes that address the one that opens the seat by signing in.
    """
    if purpose == "invite" and seat.email:
        return tokens.issue(purpose, game.id, seat.public_id, seat.token_version,
                            e=tokens.address_digest(email_key(seat.email)))
    return tokens.issue(purpose, game.id, seat.public_id, seat.token_version)


def check_game(game: GameRow, token_game: str) -> None:
    if token_game != game.id:
        raise Problem(403, "wrong-game", "Token for another game",
                      f"this token belongs to game {token_game}, not to game {game.id}")


def seat_of(game: GameRow, index: int) -> SeatRow:
    for seat in game.seats:
        if seat.index == index:
            return seat
    raise Problem(403, "no-such-seat", "No such seat", f"game {game.id} has no seat {index}")


def require_host(viewer: Viewer) -> None:
    if not viewer.host:
        raise Problem(403, "host-only", "Host only", "only the game's host token can do this")


def require_player(viewer: Viewer, doing: str) -> int:
    """The viewer's seat; a 403 naming what only a player may do (``doing``) otherwise."""
    if viewer.seat is None:
        raise Problem(403, "not-a-player", "Players only",
                      f"only a seat's player token can {doing}")
    return viewer.seat


def require_in_play(game: GameRow) -> None:
    """409 unless the game is waiting for players or being played."""
    if game.status not in ("waiting", "active"):
        raise Problem(409, "game-not-active", "Game not in play",
                      f"game {game.id} is {game.status}")


def require_seat_or_host(viewer: Viewer, index: int, doing: str) -> None:
    if not viewer.host and viewer.seat != index:
        raise Problem(403, "not-your-seat", "Not your seat",
                      f"only the host or the seat's own player can {doing}")


def engine_state(game: GameRow) -> Game:
    if game.state is None:
        raise Problem(409, "game-not-started", "Game not started",
                      "the game has not started yet: it starts when every seat is filled, "
                      "or when the host starts it")
    return Game.from_dict(game.state)


__all__ = [
    "Viewer",
    "authenticate",
    "check_game",
    "engine_state",
    "find_seat",
    "get_game",
    "locked",
    "require_host",
    "require_in_play",
    "require_player",
    "require_seat_or_host",
    "seat_named_by",
    "seat_of",
    "seat_token",
]
