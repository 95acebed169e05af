"""Your private notes on a game: ``note`` shows them, ``note "TEXT"`` replaces them,
``--append`` adds a line and ``--clear`` empties them. Nobody else ever reads them (the
server's ``/api/games/<id>/seats/<n>/notes`` answers only the seat's own token)."""

from __future__ import annotations

import click

from dos_client.context import Settings, pass_settings
from dos_client.i18n import N_, _


@click.command(help=N_("Your private notes on GAME, seen by you alone: without TEXT, shows "
                       "them;\nwith TEXT, replaces them (plain text, up to 10,000 "
                       "characters)."))
@click.argument("text", required=False)
@click.argument("game", required=False)
@click.option("--append", "line", metavar="TEXT",
              help=N_("Add TEXT as a new line at the end of your notes."))
@click.option("--clear", is_flag=True, help=N_("Empty your notes."))
@pass_settings
def note(settings: Settings, text: str | None, game: str | None, line: str | None,
         clear: bool) -> None:
    if line is not None and clear:
        raise click.UsageError(_("use --append or --clear, not both"))
    if (line is not None or clear) and text is not None:
        if game is not None:
            raise click.UsageError(_("with --append or --clear, give no TEXT: only the GAME"))
        text, game = None, text  # ``note --clear g``: the one argument names the game
    saved = settings.saved_game(game)
    seat = saved.seat()
    api = saved.api
    if clear:
        done = api.set_notes(saved.game_id, seat, "")
        settings.emit(done, _("Your notes on {game} are cleared.").format(game=saved.name))
        return
    if line is not None:
        held = api.notes(saved.game_id, seat)["text"]
        text = f"{held}\n{line}" if held else line
    if text is None:
        shown = api.notes(saved.game_id, seat)

        def human() -> None:
            if not shown["text"]:
                click.echo(_("You have no notes on {game}. Write some: {command} note "
                             "\"...\"").format(game=saved.name, command=settings.command()))
            else:
                click.echo(shown["text"])

        settings.emit(shown, human)
        return
    done = api.set_notes(saved.game_id, seat, text)
    settings.emit(done, _("Your notes on {game} are saved ({count} characters); nobody "
                          "else sees them.").format(game=saved.name, count=len(done["text"])))


COMMANDS = (note,)
