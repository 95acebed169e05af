"""Table talk: ``say`` something at a game's table, and read it with ``chat`` (``--follow``
keeps reading as messages come, by the server's long-poll)."""

from __future__ import annotations

import json
import time
from typing import Any

import click

from dos_client.context import SavedGame, Settings, pass_settings
from dos_client.errors import EXIT_TIMEOUT, ClientError
from dos_client.i18n import N_, _
from dos_client.render import local_time

LONG_POLL = 30.0  # seconds per long-poll request; the server grants up to 60


def message_line(message: dict[str, Any]) -> str:
    """One message as the terminal shows it: when, who, what (plain text: never markup)."""
    name = str(message.get("name") or "?")
    text = str(message.get("text") or "").replace("\n", "\n    ")
    return _("{when}  {name}: {text}").format(when=local_time(message["created_at"]),
                                              name=name, text=text)


@click.command(help=N_("Say TEXT at the table of GAME (plain text, up to 500 characters).\n"
                       "Everyone who reads the game reads it."))
@click.argument("text")
@click.argument("game", required=False)
@pass_settings
def say(settings: Settings, text: str, game: str | None) -> None:
    saved = settings.saved_game(game)
    sent = saved.api.say(saved.game_id, text)
    settings.emit(sent, _("You said in {game}: {text}").format(game=saved.name,
                                                               text=sent["text"]))


def _seat_named(seats: list[dict[str, Any]], given: str) -> int:
    """The seat ``given`` names: its number (as ``show`` and ``vote`` count them) or its
    player's name (any case); a UsageError that lists the seats otherwise."""
    numbers = [int(s["seat"]) for s in seats]
    if given.strip().isdigit() and int(given) in numbers:
        return int(given)
    named = [int(s["seat"]) for s in seats
             if (s.get("name") or "").casefold() == given.strip().casefold()]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(f"{s['seat']} ({s.get('name') or '-'})" for s in seats)
    if named:
        raise click.UsageError(_("several seats are called {name!r}: give the seat's number "
                                 "({seats})").format(name=given, seats=listed))
    raise click.UsageError(_("no seat {name!r} in this game: give a seat's number or name "
                             "({seats})").format(name=given, seats=listed))


def _hide(settings: Settings, saved: SavedGame, hide: tuple[str, ...],
          unhide: tuple[str, ...]) -> None:
    """``chat --hide``/``--unhide``: change which seats' table talk you do not see (for you
    alone: the others still read it), then say whom you hide."""
    saved.seat()  # the host's or a spectator's profile holds no seat to hide for
    api = saved.api
    seats = api.game(saved.game_id)["seats"]
    held = set(api.chat_settings(saved.game_id)["seat"]["hidden"])
    hidden = (held | {_seat_named(seats, h) for h in hide}) - \
        {_seat_named(seats, u) for u in unhide}
    done = api.chat_settings(saved.game_id, hidden=sorted(hidden))
    names = {int(s["seat"]): s.get("name") or _("seat {number}").format(number=s["seat"])
             for s in seats}
    now = done["seat"]["hidden"]
    settings.emit(done, _("In {game} you hide the table talk of: {names}. The others still "
                          "read it.").format(game=saved.name,
                                             names=", ".join(names[i] for i in now))
                  if now else _("In {game} you read everyone's table talk.").format(
                      game=saved.name))


@click.command(help=N_("The table talk of GAME: the last messages, and with --follow each new "
                       "one as it\ncomes (the server answers the moment one is written); "
                       "with --json, one message\na line. --hide a seat's messages (for you "
                       "alone) or --unhide them."))
@click.argument("game", required=False)
@click.option("--last", "count", type=click.IntRange(1, 200), default=20, show_default=True,
              help=N_("How many of the latest messages to show."))
@click.option("--follow", is_flag=True, help=N_("Keep showing new messages until stopped."))
@click.option("--timeout", type=click.FloatRange(min=0), default=24 * 3600.0,
              show_default=True, help=N_("With --follow: stop after this many seconds "
                                         "(exit 7)."))
@click.option("--hide", multiple=True, metavar="NAME_OR_SEAT",
              help=N_("Stop showing you this seat's messages (repeat for more); the others "
                      "still read them."))
@click.option("--unhide", multiple=True, metavar="NAME_OR_SEAT",
              help=N_("Show you this seat's messages again."))
@pass_settings
def chat(settings: Settings, game: str | None, count: int, follow: bool,
         timeout: float, hide: tuple[str, ...] = (), unhide: tuple[str, ...] = ()) -> None:
    saved = settings.saved_game(game)
    if hide or unhide:
        if follow:
            raise click.UsageError(_("--hide and --unhide change a setting: use them without "
                                     "--follow"))
        _hide(settings, saved, hide, unhide)
        return
    api = saved.api
    last = api.messages(saved.game_id, limit=1)["last"]
    page = api.messages(saved.game_id, before=last + 1, limit=count)
    shown = page["messages"]
    if not follow:
        def human() -> None:
            if not shown:
                click.echo(_("Nobody has said anything in {game} yet. Say something: "
                             "{command} say \"hello\"").format(game=saved.name,
                                                               command=settings.command()))
            for message in shown:
                click.echo(message_line(message))

        settings.emit(page, human)
        return
    def show(message: dict[str, Any]) -> None:  # --json: one message a line (JSON Lines)
        click.echo(json.dumps(message, ensure_ascii=False) if settings.as_json
                   else message_line(message))


    for message in shown:
        show(message)
    after = shown[-1]["id"] if shown else last
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ClientError(_("stopped following after {seconds} s").format(
                seconds=f"{timeout:g}"), EXIT_TIMEOUT)
        page = api.messages(saved.game_id, after=after, limit=200,
                            wait=min(LONG_POLL, left))
        for message in page["messages"]:
            show(message)
        after = page["next_after"]


COMMANDS = (say, chat)
