"""Waiting on someone: ``nudge`` the player to move, and ``vote`` on an absent player's seat
(``votes`` shows the standing tally)."""

from __future__ import annotations

from typing import Any

import click

from dos_client.context import Settings, pass_settings
from dos_client.i18n import N_, _
from dos_client.render import local_time


@click.command(help=N_("Nudge the player whose turn it is: they get one email or webhook "
                       "saying\nyou are waiting. At most once a day per game."))
@click.argument("game", required=False)
@pass_settings
def nudge(settings: Settings, game: str | None) -> None:
    saved = settings.saved_game(game)
    done = saved.api.nudge(saved.game_id)
    name = done.get("name") or _("seat {number}").format(number=done["nudged"])
    settings.emit(done, _("You nudged {name} in {game}; your next nudge there is allowed "
                          "{when}.").format(name=name, game=saved.name,
                                            when=local_time(done["next_allowed_at"])))


def _tally_line(seat: dict[str, Any]) -> str:
    name = seat.get("name") or _("seat {number}").format(number=seat["seat"])
    return _("Seat {seat} ({name}): {bot} for a bot, {end} to end the game, {needed} needed "
             "(timeouts in a row: {timeouts}).").format(
        seat=seat["seat"], name=name, bot=seat["bot"], end=seat["end"], needed=seat["needed"],
        timeouts=seat["timeouts_in_a_row"])


@click.command(help=N_("Vote on an absent player's SEAT: `bot` hands it to a bot for the rest "
                       "of the\ngame, `end` ends the game now with the scores as they stand. "
                       "A majority of\nthe players still playing decides."))
@click.argument("seat", type=click.IntRange(0, 1000))
@click.argument("choice", type=click.Choice(["bot", "end"]))
@click.argument("game", required=False)
@pass_settings
def vote(settings: Settings, seat: int, choice: str, game: str | None) -> None:
    saved = settings.saved_game(game)
    tally = saved.api.vote(saved.game_id, seat, choice)
    if tally.get("decided") == "bot":
        human = _("Decided: a bot plays seat {seat} of {game} from now on.").format(
            seat=seat, game=saved.name)
    elif tally.get("decided") == "end":
        human = _("Decided: {game} is over, with the scores as they stand.").format(
            game=saved.name)
    else:
        human = _("Your vote is in. {tally}").format(tally=_tally_line(tally))
    settings.emit(tally, human)


@click.command(help=N_("The absent players' seats of a game, and the votes on each."))
@click.argument("game", required=False)
@pass_settings
def votes(settings: Settings, game: str | None) -> None:
    saved = settings.saved_game(game)
    standing = saved.api.votes(saved.game_id)
    lines = [_tally_line(seat) for seat in standing["seats"]]
    settings.emit(standing, "\n".join(lines) if lines else
                  _("Nobody is absent in {game}: there is nothing to vote on.").format(
                      game=saved.name))


COMMANDS = (nudge, vote, votes)
