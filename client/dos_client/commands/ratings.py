"""Ratings: ``rating`` shows your own (signed in), a player's by name, or the leaderboard."""

from __future__ import annotations

from typing import Any

import click

from dos_client.context import Settings, connect, pass_settings, saved_account
from dos_client.errors import EXIT_AUTH, ClientError
from dos_client.i18n import N_, _, ngettext


def _signed(value: float) -> str:
    return f"{value:+.1f}"


def _player_lines(player: dict[str, Any]) -> None:
    if player.get("rating") is None:
        click.echo(_("{name}: no rated game yet.").format(name=player["name"]))
        return
    click.echo(ngettext("{name}: rating {rating} after {num} rated game.",
                        "{name}: rating {rating} after {num} rated games.",
                        player["games"]).format(name=player["name"], rating=player["rating"],
                                                num=player["games"]))
    if not player.get("on_leaderboard"):
        click.echo(_("Not listed on the leaderboard."))
    if player.get("recent"):
        click.echo(_("Latest rated games:"))
        for change in player["recent"]:
            place = _("{rank} of {players}").format(rank=change["rank"],
                                                    players=change["players"])
            click.echo(f"  {change['game_id']}  {place}  {change['after']} "
                       f"({_signed(change['change'])})")


def _board_lines(board: dict[str, Any]) -> None:
    if not board["players"]:
        click.echo(_("Nobody is on the leaderboard yet."))
        return
    width = max(len(p["name"]) for p in board["players"])
    for player in board["players"]:
        games = ngettext("{num} game", "{num} games", player["games"]).format(
            num=player["games"])
        click.echo(f"{player['rank']:>3}. {player['name']:<{width}}  {player['rating']:>6}  "
                   f"({games})")


@click.command(help=N_("Your rating (when signed in), or the player NAME's, with their latest "
                       "rated\ngames; --top N lists the leaderboard's first N players."))
@click.argument("name", required=False)
@click.option("--top", type=click.IntRange(1, 100), metavar="N",
              help=N_("Show the leaderboard's first N players (1 to 100)."))
@pass_settings
def rating(settings: Settings, name: str | None, top: int | None) -> None:
    store = settings.store()
    url = settings.server_url(store)
    if top is not None:
        if name is not None:
            raise click.UsageError(_("give a player's NAME or --top N, not both"))
        board = connect(url).leaderboard(top)
        settings.emit(board, lambda: _board_lines(board))
        return
    if name is None:
        account = saved_account(store)
        if account is None:
            raise ClientError(_("Not signed in: dos-client login you@example.org, or give a "
                                "player's NAME"), EXIT_AUTH)
        me = connect(account["server"], account["token"]).me()
        name = me.get("player_name")
        if name is None:  # no name: the rating alone (the player page is found by the name)
            own = me.get("rating")
            value = {"name": None, "rating": own["rating"] if own else None,
                     "games": own["games"] if own else 0}
            settings.emit(value, (ngettext("Your rating: {rating} after {num} rated game.",
                                           "Your rating: {rating} after {num} rated games.",
                                           own["games"]).format(rating=own["rating"],
                                                                num=own["games"])
                                  if own else _("You have no rated game yet."))
                          + "\n" + _("Choose a player name on the server's page of all your "
                                     "games to have a player page and be on the leaderboard."))
            return
    player = connect(url).player(name)
    settings.emit(player, lambda: _player_lines(player))


COMMANDS = (rating,)
