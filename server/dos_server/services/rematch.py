"""A rematch: a new game with the same seats and options as a finished one.

The person asking (a seat of the finished game, or its host) becomes the new game's host;
the other people get invitations as with any new game (by email where they gave one).
Webhook URLs are not carried over: a new URL gets a new signing secret, shown only once, and
only its owner could see it.
"""

from __future__ import annotations

from dos_server.errors import GameNotFinished, PlayersOnly
from dos_server.services import lobby
from dos_server.services.access import authenticate, get_game
from dos_server.services.words import _


def rematch(game_id: str, bearer: str | None) -> tuple[lobby.Created, int | None]:
    """Create the new game (its own transaction); returns it and the asker's old seat."""
    game = get_game(game_id)
    viewer = authenticate(game, bearer)
    if viewer.seat is None and not viewer.host:
        raise PlayersOnly(_("only a player or the host of this game can start a rematch"))
    if game.status != "finished":
        raise GameNotFinished(_("a rematch can start once the game is over"))
    seats = [lobby.SeatSpec(name=None if seat.bot else seat.name, email=seat.email,
                            bot=seat.bot) for seat in game.seats]
    created = lobby.create_game(lobby.NewGame(
        seats, dict(game.options), game.turn_time_limit, game.timeout_policy,
        game.forfeit_after, game.vacation_days, game.title, game.standing_dos,
        rated=game.rated))
    return created, viewer.seat


__all__ = ["rematch"]
