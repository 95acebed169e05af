"""Following a game over time: its ``history``, ``wait`` for your turn, ``watch`` as a
spectator."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import click

from dos_client.context import (
    SavedGame,
    Settings,
    connect,
    emit_json,
    err,
    out,
    pass_settings,
    read_history,
)
from dos_client.errors import EXIT_TIMEOUT, ClientError
from dos_client.i18n import N_, _

LONG_POLL = 30.0  # seconds per long-poll request; the server grants up to 60
Ready = tuple[SavedGame, dict[str, Any]]


@click.command(help=N_("The game's history, as you may see it."))
@click.argument("game", required=False)
@click.option("--all", "show_all", is_flag=True, help=N_("Every event, not just the last 30."))
@pass_settings
def history(settings: Settings, game: str | None, show_all: bool) -> None:
    from dos_client import render

    saved = settings.saved_game(game)
    events, _page = read_history(saved.api, saved.game_id)

    def human() -> None:
        names = render.names_of(saved.api.game(saved.game_id))
        lines = render.event_lines(events, names, times=True)
        for line in lines if show_all else lines[-30:]:
            click.echo(line)

    settings.emit(events, human)


@click.command(
    help=N_("Block until it is your turn in any of the games (default: all saved games).\n"
            "\n"
            "The server answers the moment a game changes (a long-poll): no polling."))
@click.argument("games_", nargs=-1, metavar="[GAME]...")
@click.option("--timeout", type=click.FloatRange(min=0), default=3600, show_default=True,
              help=N_("Give up after this many seconds (exit 7)."))
@click.option("--interval", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help=N_("Polling interval, only against a server without long-polls "
                      "(it backs off up to 60 s)."))
@pass_settings
def wait(settings: Settings, games_: Sequence[str], timeout: float, interval: float) -> None:
    store = settings.store()
    names = list(games_) or list(store.games)
    if not names:
        raise ClientError(_("no saved games to wait for"))
    saved_games = [settings.saved_game(n, store) for n in names]
    deadline = time.monotonic() + timeout
    with err().status(_("Waiting for your turn..."), spinner="dots"):
        found = _first_ready(saved_games, deadline, interval)
    if found is None:
        raise ClientError(_("still not your turn after {seconds} s").format(
            seconds=f"{timeout:g}"), EXIT_TIMEOUT)
    saved, body = found
    if body["status"] == "finished":
        settings.emit({"game": saved.name, "id": saved.game_id, "finished": True},
                      _("{game} is over.").format(game=saved.name))
        return

    def human() -> None:
        click.echo(_("Your turn in {game}.").format(game=saved.name))
        saved.draw_table(body)

    if settings.as_json:
        saved.remember_list(body)
    settings.emit({"game": saved.name, "id": saved.game_id, "version": body["version"],
                   "legal_actions": body["view"]["legal_actions"]}, human)


def _first_ready(saved_games: Sequence[SavedGame], deadline: float,
                 interval: float) -> Ready | None:
    """The first game where it is the player's turn (or the only game, once it is over), each
    game followed by its own long-poll in a thread; None at the deadline."""
    import queue
    import threading

    answers: queue.Queue[Ready | Exception | None] = queue.Queue()
    alone = len(saved_games) == 1

    def follow(saved: SavedGame) -> None:
        try:
            answers.put(_follow(saved, deadline, interval, alone))
        except Exception as error:  # handed to the main thread, which reports it
            answers.put(error)

    for saved in saved_games:
        threading.Thread(target=follow, args=(saved,), daemon=True).start()
    for _game in saved_games:
        answer = answers.get()
        if isinstance(answer, Exception):
            raise answer
        if answer is not None:
            return answer
    return None


def _follow(saved: SavedGame, deadline: float, interval: float, alone: bool) -> Ready | None:
    """Read the game each time it changes until it is the player's turn (None: never here)."""
    api = saved.api
    # The newest event first, then the game: a change after this read wakes the long-poll.
    last = api.history(saved.game_id, limit=1).get("last")
    delay = interval
    while True:
        body = api.game(saved.game_id)
        view = body.get("view") or {}
        if body["status"] == "active" and view.get("current") == saved.entry.get("seat"):
            return saved, body
        if body["status"] in ("finished", "cancelled"):
            return (saved, body) if alone and body["status"] == "finished" else None
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        if last is None:  # a server without long-polls: poll, backing off
            time.sleep(min(delay, left))
            delay = min(delay * 1.5, 60.0)
            continue
        page = api.history(saved.game_id, after=last, limit=1, wait=min(LONG_POLL, left))
        last = page["last"]


@click.command(
    help=N_("Spectate GAME (a game id; no seat needed): the table, then each change as it\n"
            "happens, until the game is over."))
@click.argument("game_id", metavar="GAME")
@click.option("--timeout", type=click.FloatRange(min=0), default=24 * 3600.0,
              show_default=True, help=N_("Stop after this many seconds (exit 7)."))
@click.option("--interval", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
              help=N_("Polling interval, only against a server without long-polls "
                      "(it backs off up to 60 s)."))
@pass_settings
def watch(settings: Settings, game_id: str, timeout: float, interval: float) -> None:
    from dos_client import render

    api = connect(settings.server_url(settings.store()))
    body = api.game(game_id)
    _events, page = read_history(api, game_id)
    after = page["next_after"]
    if settings.as_json:
        emit_json(body)
    else:
        render.table(out(), body, game_id, settings.command())
    deadline = time.monotonic() + timeout
    delay = interval
    long_poll = "last" in page  # else a server without long-polls: poll
    while body["status"] not in ("finished", "cancelled"):
        left = deadline - time.monotonic()
        if left <= 0 or (not long_poll and delay > left):
            raise ClientError(_("stopped watching after {seconds} s").format(
                seconds=f"{timeout:g}"), EXIT_TIMEOUT)
        if not long_poll:
            time.sleep(delay)
        page = api.history(game_id, after=after, limit=500,
                           wait=min(LONG_POLL, left) if long_poll else 0)
        events = page["events"]
        if not events:
            delay = min(delay * 1.5, 60.0)
            continue
        delay = interval
        after = page["next_after"]
        body = api.game(game_id)
        if settings.as_json:
            emit_json({"events": events, "game": body})
            continue
        console = out()
        for line in render.event_lines(events, render.names_of(body), times=True):
            console.print(line)
        render.table(console, body, game_id, settings.command())


COMMANDS = (history, wait, watch)
