"""A rematch: a standing challenge to play again with the same seats and options, and the
score of a series of such games.

The first Rematch pressed on a finished game (by one of its seats or its host) makes the
challenge: a new waiting game with the same seats and options, whose host is the one who
asked. Every later press, by anyone of the old game, answers the same challenge (unless its
host cancelled it: then the next press asks anew). A seat
accepts by pressing Rematch too ("I'm in"): that joins its seat of the new game, which deals
once every person accepted (bots accept at once); its host can start it earlier with those
who did (``lobby.start_now`` removes the others). Seats of the two games are matched by name:
a finished game's people all have one, each different, and the new game copies them.

Webhook URLs are not carried over: a new URL gets a new signing secret, shown only once, and
only its owner could see it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dos_server import tokens, validation
from dos_server.database import write_transaction
from dos_server.errors import AlreadyStarted, GameClosed, GameNotFinished, PlayersOnly
from dos_server.models import GameRow, SeatRow
from dos_server.services import lobby
from dos_server.services.access import (
    Viewer,
    Written,
    get_game,
    locked,
    seat_token,
    snapshot,
)
from dos_server.services.words import _


@dataclass(frozen=True)
class Rematch(Written):
    """The challenge as one Rematch press left it (``game``: the new game; ``viewer``: who
    pressed, in it), for the one who pressed."""

    old_id: str
    created: bool  # this press made the challenge
    host_token: str | None  # the new game's, shown once: to the one whose press made it
    invite_code: str | None
    seat: int | None  # the presser's seat in the new game (None: the old game's host alone)
    player_token: str | None


def rematch(game_id: str, bearer: str | None) -> Rematch:
    """Make the finished game's challenge, or answer the one it has; a seat that asks accepts.

    One transaction under the old game's lock: two people pressing at once get one challenge.
    """
    with write_transaction():
        old, viewer = locked(game_id, bearer)
        if viewer.seat is None and not viewer.host:
            raise PlayersOnly(_("only a player or the host of this game can start a rematch"))
        return press(old, next((s for s in old.seats if s.index == viewer.seat), None))


def press(old: GameRow, old_seat: SeatRow | None) -> Rematch:
    """Rematch pressed on the finished ``old`` by ``old_seat`` (None: its host), in the
    caller's transaction, which holds ``old``'s lock and checked who presses."""
    if old.status != "finished":
        raise GameNotFinished(_("a rematch can start once the game is over"))
    host_token = invite_code = None
    new = get_game(old.rematch_id, for_update=True) if old.rematch_id else None
    created = new is None or new.status == "cancelled"  # a cancelled one is asked for anew
    if created:
        new = _challenge(old, old_seat)
        host_token = tokens.issue("host", new.id, None, new.host_token_version)
        invite_code = new.invite_code
    assert new is not None
    seat = _accept(new, old_seat) if old_seat is not None else None
    return Rematch(snapshot(new),
                   Viewer(seat=seat.index if seat else None, host=created),
                   old.id, created, host_token, invite_code,
                   seat.index if seat else None,
                   seat_token("player", new, seat) if seat else None)


def _challenge(old: GameRow, asker: SeatRow | None) -> GameRow:
    """The new waiting game of ``old``'s challenge (the caller holds ``old``'s lock)."""
    seats = [lobby.SeatSpec(name=None if seat.bot else seat.name, email=seat.email,
                            bot=seat.bot) for seat in old.seats]
    request = lobby.NewGame(seats, dict(old.options), old.turn_time_limit, old.timeout_policy,
                            old.forfeit_after, old.vacation_days, old.title, old.standing_dos,
                            old.chat_spectators, rated=old.rated)
    parsed, names, emails = lobby.check_new_game(request)
    old.series_id = old.series_id or old.id
    old.series_no = old.series_no or 1
    created = lobby.insert_game(
        request, parsed, names, emails,
        uninvited=frozenset({asker.index}) if asker is not None else frozenset(),
        series=(old.series_id, old.series_no + 1))
    old.rematch_id = created.game.id
    return get_game(created.game.id, for_update=True)


def _accept(new: GameRow, old_seat: SeatRow) -> SeatRow:
    """``old_seat``'s player is in: their seat of the new game joins (idempotent)."""
    seat = _matching(new, old_seat)
    if seat is None:
        if new.status == "waiting":  # the host removed the seat
            raise GameClosed(_("the rematch %(game)s has no seat for you any more",
                               game=new.id))
        raise AlreadyStarted(_("the rematch %(game)s started without you", game=new.id))
    if not seat.claimed:
        if new.status != "waiting":
            raise AlreadyStarted(_("the rematch %(game)s started without you", game=new.id))
        # The same person: the address that opens the old seat opens this one, and they
        # read it as they read the old one.
        seat.owner_email, seat.owner_key = old_seat.owner_email, old_seat.owner_key
        seat.time_zone = seat.time_zone or old_seat.time_zone
        seat.language = seat.language or old_seat.language
        lobby.take_seat(new, seat)
    return seat


def _matching(new: GameRow, old_seat: SeatRow) -> SeatRow | None:
    if old_seat.name is None:
        return None
    key = validation.name_key(old_seat.name)
    return next((s for s in new.seats if s.name and validation.name_key(s.name) == key), None)


__all__ = ["Rematch", "press", "rematch"]
