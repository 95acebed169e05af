"""At the table: ``show``, ``moves``, and the moves themselves (``move``, ``draw``, ``dos``,
``catch``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import click

from dos_client.config import Store
from dos_client.context import SavedGame, Settings, out, pass_settings, read_history
from dos_client.errors import EXIT_REFUSED, EXIT_STALE, ClientError, DosApiError
from dos_client.i18n import N_, _


@click.command(help=N_("The table as you see it: your hand, the Center Row, scores, whose turn."))
@click.argument("game", required=False)
@pass_settings
def show(settings: Settings, game: str | None) -> None:
    saved = settings.saved_game(game)
    body = saved.api.game(saved.game_id)
    if settings.as_json:
        saved.remember_list(body)
        settings.emit(body)
        return
    since = _since_last_look(saved, body)
    if since:
        click.echo(_("Since you last looked:"))
        for line in since:
            click.echo(f"  {line.strip()}")
    saved.draw_table(body)


def _since_last_look(saved: SavedGame, game: dict[str, Any]) -> list[str]:
    """What the other seats did since this profile last saw the game (nothing the first time:
    then only where the history ends is remembered)."""
    from dos_client import render

    seen = saved.entry.get("seen_seq")
    events, last_page = read_history(saved.api, saved.game_id, after=int(seen or 0), pages=100)
    after = last_page["next_after"]
    if after != seen:
        saved.remember(seen_seq=after)
    if seen is None:
        return []
    you = game.get("you")
    others = [e for e in events if e.get("seat") != you or e["kind"] == "round_started"]
    return render.event_lines(others, render.names_of(game))


@click.command(help=N_("Your legal actions, numbered: play one with `dos-client move N`."))
@click.argument("game", required=False)
@pass_settings
def moves(settings: Settings, game: str | None) -> None:
    from dos_client import render

    saved = settings.saved_game(game)
    listing = saved.api.actions(saved.game_id)
    if listing["actions"]:
        saved.remember(listed_version=listing["version"])
    why_not = "" if listing["your_turn"] else _whose_turn(saved)
    settings.emit(listing, lambda: render.moves(out(), listing, settings.command(), why_not))


def _whose_turn(saved: SavedGame) -> str:
    """Why a seat cannot move now, in words: whose turn it is, or that the game is over."""
    from dos_client import render

    game = saved.api.game(saved.game_id)
    view = game.get("view")
    names = render.names_of(game)
    if game["status"] == "finished" and view and view.get("winner") is not None:
        return _("the game is over, {name} won").format(name=names[view["winner"]])
    if game["status"] != "active" or not view:
        return _("the game is {status}").format(status=render.status(game["status"]))
    return _("it is {name}'s turn; `{command} wait` tells you when it is yours").format(
        name=names[view["current"]], command=saved.settings.command())


GAME_ID = re.compile(r"[a-z0-9]{10}")


def _split_game(store: Store, words: Sequence[str]) -> tuple[str | None, str]:
    """``[GAME] MOVE...``: the first word names a game if it is a saved name or a game id."""
    if len(words) >= 2:
        first = words[0]
        if first in store.games or any(e["game_id"] == first for e in store.games.values()):
            return first, " ".join(words[1:])
        if GAME_ID.fullmatch(first) and len(words) == 2 and words[1].isdigit():
            return first, words[1]  # a game id this profile has not saved: pick says so
    return None, " ".join(words)


def _did_you_mean(text: str, listed: Sequence[str]) -> str:
    """" Did you mean: ...?" for canonical notation close to legal actions, else ""."""
    from dos_engine import DosError, parse_turn

    try:
        first = parse_turn(text)[0].text()
    except DosError:
        return ""
    import difflib

    close = difflib.get_close_matches(first, listed, n=3, cutoff=0.5)
    return " " + _("Did you mean: {moves}?").format(moves=", ".join(close)) if close else ""


@click.command(
    help=N_("Play a numbered move (`move 3`) or notation (`move \"m1 R5; m2 B3+Y4; end\"`).\n"
            "\n"
            "\b\n"
            "A number plays the move of the list you last saw (`moves`, `show`, `wait`\n"
            "or an email's `move GAME N --at VERSION`); if the game moved on since,\n"
            "nothing is played and the new list is printed (exit 4)."))
@click.argument("words", nargs=-1, required=True, metavar="[GAME] MOVE")
@click.option("--at", "at_version", type=click.IntRange(min=1), metavar="VERSION",
              help=N_("The game version of the list the number comes from (emails print it)."))
@pass_settings
def move(settings: Settings, words: Sequence[str], at_version: int | None) -> None:
    store = settings.store()
    game, text = _split_game(store, words)
    saved = settings.saved_game(game, store)
    if text.strip().isdigit():
        _play_number(saved, int(text), at_version)
    else:
        _play(saved, text, at_version)


@click.command(help=N_("Draw a card (then `move` to match with it or add a card)."))
@click.argument("game", required=False)
@pass_settings
def draw(settings: Settings, game: str | None) -> None:
    _play(settings.saved_game(game), "draw")


@click.command("dos", help=N_("Call \"DOS\" on your two cards, in or out of turn (rule 5.1)."))
@click.argument("game", required=False)
@pass_settings
def call_dos(settings: Settings, game: str | None) -> None:
    _play(settings.saved_game(game), "dos")


@click.command(
    help=N_("Catch a player holding two cards without a DOS call (name or seat): "
            "they draw two."))
@click.argument("words", nargs=-1, required=True, metavar="[GAME] PLAYER")
@pass_settings
def catch(settings: Settings, words: Sequence[str]) -> None:
    store = settings.store()
    game, who = _split_game(store, words)
    _play(settings.saved_game(game, store), f"catch {who}")


def _require_token(saved: SavedGame) -> None:
    if saved.entry.get("token") is None:
        raise ClientError(_("you hold no seat in this game (only the host token); join a seat "
                            "with its invite first"))


def _play_number(saved: SavedGame, number: int, at_version: int | None) -> None:
    _require_token(saved)
    version = at_version if at_version is not None else saved.entry.get("listed_version")
    if version is None:
        fresh = saved.api.game(saved.game_id)
        if fresh["status"] != "active":  # no list to choose from, nor ever will be
            raise ClientError(_not_active(saved, fresh), EXIT_REFUSED)
        command = saved.settings.command()
        raise ClientError(_("which list is move {number} from? You have not seen one for {game} "
                            "yet: `{command} moves` prints it, then `{command} move N` plays its "
                            "number N").format(number=number, game=saved.name, command=command),
                          EXIT_REFUSED)
    _submit(saved, int(version), number=number)


def _play(saved: SavedGame, text: str, at_version: int | None = None) -> None:
    """A move in notation (or draw, dos, catch), played on the table as it is now.

    One request in the usual case: it is sent with the version of the last list this profile
    printed, which is the table as it is unless the game moved on since; then the server's
    409 names the current version and the move is sent again with it. Only a profile that has
    seen no list asks for the version first. ``--at VERSION`` binds it to that version.
    """
    _require_token(saved)
    version = at_version if at_version is not None else saved.entry.get("listed_version")
    if version is None:
        version = saved.api.actions(saved.game_id)["version"]
    try:
        _submit(saved, int(version), actions=[text.strip()], on_current=at_version is None)
    except DosApiError as error:
        if error.kind == "illegal-action":  # nothing was played: the list is the one to suggest
            listing = saved.api.actions(saved.game_id)
            error.message += _did_you_mean(text, [a["action"] for a in listing["actions"]])
        raise


def _submit(saved: SavedGame, version: int, actions: list[str] | None = None,
            number: int | None = None, on_current: bool = False) -> None:
    """POST the move; print what happened, or why nothing was played. ``on_current``: a text
    move refused as stale is sent once more with the version the 409 names."""
    try:
        result = saved.api.submit(saved.game_id, version, actions=actions, number=number)
    except DosApiError as error:
        current = error.problem.get("current_version")
        if on_current and error.kind == "stale-version" and isinstance(current, int):
            _submit(saved, current, actions=actions)
            return
        raise _explained(saved, error, version) from None
    if saved.settings.as_json:
        saved.remember_list(result["game"])
    saved.settings.emit(result, lambda: _played(saved, result))


def _explained(saved: SavedGame, error: DosApiError, version: int) -> ClientError:
    """The server's refusal, with what the person can do next."""
    command = saved.settings.command()
    if error.kind == "stale-version":
        fresh = saved.api.game(saved.game_id)
        if not saved.settings.as_json:
            click.echo(_("The game moved on (version {version} → {now}), so nothing was played. "
                         "The table now:").format(version=version, now=fresh["version"]),
                       err=True)
            saved.draw_table(fresh)
        error.message = _("the game changed since the list you chose from (version {version}, "
                          "now {now}); nothing was played: look again and choose").format(
                              version=version, now=fresh["version"])
        error.exit_code = EXIT_STALE
    if error.kind == "game-not-active":
        error.message = _not_active(saved, saved.api.game(saved.game_id))
        error.exit_code = EXIT_REFUSED
    elif error.kind == "not-your-turn":
        error.message += ". " + _("`{command} wait` tells you when it is your turn.").format(
            command=command)
    return error


def _not_active(saved: SavedGame, fresh: dict[str, Any]) -> str:
    """That the game is over (and who won) or not started, so nothing was played."""
    from dos_client import render

    if fresh["status"] != "finished":
        return _("the game {game} is {status}; nothing was played.").format(
            game=saved.name, status=render.status(fresh["status"]))
    winner = (fresh.get("view") or {}).get("winner")
    sentence = (N_("the game {game} is over: {name} won; nothing was played. "
                   "`{command} history {game}` tells how it went.")
                if winner is not None
                else N_("the game {game} is over; nothing was played. "
                        "`{command} history {game}` tells how it went."))
    return _(sentence).format(game=saved.name, command=saved.settings.command(),
                              name="" if winner is None else render.names_of(fresh)[winner])


def _played(saved: SavedGame, result: dict[str, Any]) -> None:
    from dos_client import render

    console = out()
    for line in render.event_lines(result["events"], render.names_of(result["game"])):
        console.print(line)
    saved.draw_table(result["game"])
    if result["events"]:
        saved.remember(seen_seq=max(e["seq"] for e in result["events"]))


COMMANDS = (show, moves, move, draw, call_dos, catch)
