"""What every command stands on: the global settings, the saved games (and the account's games
saved into them), ``pass_settings``, and the ways a command reaches the API and prints.

Heavy imports (requests, rich, dos_engine) happen inside the functions, so ``--help`` starts
fast.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import click

from dos_client.config import DEFAULT_SERVER, Store
from dos_client.errors import EXIT_AUTH, EXIT_USAGE, ClientError, DosApiError
from dos_client.i18n import _

if TYPE_CHECKING:
    from rich.console import Console

    from dos_client.api import DosApi


@dataclass
class Settings:
    server: str | None
    profile: str
    as_json: bool
    debug: bool

    def store(self) -> Store:
        return Store(self.profile)

    def server_url(self, store: Store) -> str:
        return (self.server or store.section.get("server") or DEFAULT_SERVER).rstrip("/")

    def saved_game(self, name: str | None, store: Store | None = None) -> SavedGame:
        """The saved game called ``name`` (default: the current one) and its player's API."""
        store = store or self.store()
        if name is not None:
            adopt(store, name)  # a game id of the signed-in account: save it first
        picked, entry = pick(store, name)
        return SavedGame(self, store, picked, entry)

    def command(self) -> str:
        """How this person calls the client, for hints that can be pasted as they are."""
        return "dos-client" if self.profile == "default" else \
            f"dos-client --profile {shlex.quote(self.profile)}"

    def emit(self, value: Any, human: str | Callable[[], object] | None = None) -> None:
        """The one way a command ends well: ``value`` as JSON with --json, else ``human``
        (lines to echo, or a function that prints them)."""
        if self.as_json:
            emit_json(value)
        elif callable(human):
            human()
        elif human is not None:
            click.echo(human)


pass_settings = click.make_pass_decorator(Settings)


@dataclass
class SavedGame:
    """The (game, saved entry, API) triple most commands start from."""

    settings: Settings
    store: Store
    name: str
    entry: dict[str, Any]

    @property
    def game_id(self) -> str:
        return str(self.entry["game_id"])

    @property
    def server(self) -> str:
        """The saved game's server; an explicit --server/DOS_SERVER naming another is an error
        (the saved token belongs to the saved server and is never sent anywhere else)."""
        saved = self.entry.get("server")
        if not saved:
            return self.settings.server_url(self.store)
        saved = str(saved).rstrip("/")
        given = (self.settings.server or "").rstrip("/")
        if given and given != saved:
            raise ClientError(_("{game} is saved on {saved}, but --server or DOS_SERVER says "
                                "{given}; its token belongs to {saved}. Drop --server (or unset "
                                "DOS_SERVER) to use this game.").format(
                                    game=self.name, saved=saved, given=given), EXIT_USAGE)
        return saved

    @cached_property
    def api(self) -> DosApi:
        """The API as this game's player (or, holding no seat, as its host)."""
        return connect(self.server, self.entry.get("token") or self.entry.get("host_token"))

    def host_api(self) -> DosApi:
        if not self.entry.get("host_token"):
            raise ClientError(_("only the host can start a game early"), EXIT_AUTH)
        return connect(self.server, self.entry["host_token"])

    def remember(self, **values: Any) -> None:
        """Keep ``values`` in this game's saved entry (e.g. the version of the list printed)."""
        self.entry.update(values)
        self.store.save()

    def draw_table(self, game: dict[str, Any]) -> None:
        """Print the table and its numbered moves, and remember the version of that list."""
        from dos_client import render

        render.table(out(), game, self.name, self.settings.command())
        self.remember_list(game)

    def remember_list(self, game: dict[str, Any]) -> None:
        view = game.get("view") or {}
        if view.get("legal_actions") and self.entry.get("token"):
            self.remember(listed_version=game["version"])

    def seat(self) -> int:
        """The saved seat, or a ClientError for a game held only as its host."""
        if self.entry.get("seat") is None:
            raise ClientError(_("you hold no seat in this game"))
        return int(self.entry["seat"])


def out() -> Console:
    """stdout: lines are never wrapped (or padded) by rich; a terminal wraps what is long."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def err() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def connect(server: str, token: str | None = None) -> DosApi:
    """The API on ``server``, as the holder of ``token`` (or anonymous), asking for the reader's
    language (the server's details and descriptions come back in it)."""
    from dos_client import i18n
    from dos_client.api import DosApi

    return DosApi(server, token, language=i18n.language())


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=True))


def read_history(game_api: DosApi, game_id: str, after: int = 0,
                 pages: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events after ``after``, page by page (at most ``pages`` pages), and the last page
    read: its ``next_after`` is where the history read ends."""
    events: list[dict[str, Any]] = []
    read = 0
    while True:
        page = game_api.history(game_id, after=after, limit=500)
        events.extend(page["events"])
        after = page["next_after"]
        read += 1
        if not page["more"] or (pages is not None and read >= pages):
            return events, page


# -- saved games ----------------------------------------------------------------------------


def pick(store: Store, name: str | None) -> tuple[str, dict[str, Any]]:
    games = store.games
    if not games:
        raise ClientError(_("no saved games: create one with `dos-client new` or join with "
                            "`dos-client join INVITE`"))
    if name is None:
        name = store.section.get("current") or next(iter(games))
    if name not in games:
        matches = [n for n in games if n.startswith(name) or games[n]["game_id"] == name]
        if len(matches) != 1:
            raise ClientError(_("no saved game called {name!r}; saved: {saved}").format(
                name=name, saved=", ".join(games)))
        name = matches[0]
    return name, games[name]


def adopt_token(settings: Settings, store: Store, url: str, game_id: str, token: str,
                label: str | None) -> None:
    """Check that ``token`` is a player token of the game, then save it (replacing the seat's
    old one if this profile has the game)."""
    body = connect(url, token).game(game_id)
    if body.get("you") is None:
        raise ClientError(_("that is not a player token of game {id} (a host token or an "
                            "invite? join with an invite: dos-client join GAME:INVITE)").format(
                                id=game_id), EXIT_AUTH)
    name = next((n for n, e in store.games.items() if e["game_id"] == game_id), None)
    if name is None:
        name = store.unique_name(label or game_id)
        store.games[name] = {"game_id": game_id, "server": url, "host_token": None}
    store.games[name].update(seat=body["you"], token=token, server=url)
    store.games[name].pop("listed_version", None)
    store.section["current"] = name
    store.save()
    seat_name = body["seats"][body["you"]].get("name")
    settings.emit({"game": name, "seat": body["you"], "name": seat_name},
                  _("Token saved: you are {name} (seat {seat}) in game {id}, saved as "
                    "{saved!r}. Next: {command} show").format(
                        name=seat_name, seat=body["you"], id=game_id, saved=name,
                        command=settings.command()))


# -- the signed-in account's games ------------------------------------------------------------
# The account token is kept in the profile's section of the config file (``"account"``), beside
# the per-game tokens, which keep working without it. ``games`` saves every game of the account
# that this profile has not saved yet (under its game id, with the seat's player token fetched
# through the account), and naming a game by its id does the same, so any of them can be played
# from any device.

ACCOUNT_GAME_ID = re.compile(r"[a-z0-9]{1,16}")


def saved_account(store: Store) -> dict[str, Any] | None:
    found = store.section.get("account")
    return found if isinstance(found, dict) and found.get("token") else None


def sync_games(store: Store) -> list[str]:
    """Save the account's games this profile does not hold yet; returns their ids.

    Not signed in: nothing. A revoked session or an unreachable server is a warning on
    stderr: the saved games still list.
    """
    account = saved_account(store)
    if account is None:
        return []
    account_api = connect(account["server"], account["token"])
    try:
        listing = account_api.my_games()
    except ClientError as error:
        click.echo(_("Warning: your account's games are not listed: {message}").format(
            message=error.message), err=True)
        return []
    added = []
    for game in listing.get("games", []):
        if _holds(store, game["game_id"], game["seat"]):
            continue
        _save_account_game(store, account_api, account["server"], game["game_id"], game["seat"])
        added.append(game["game_id"])
    if added:
        store.save()
    return added


def adopt(store: Store, name: str) -> None:
    """``name`` is a game id this profile has not saved, but the account holds: save it."""
    account = saved_account(store)
    if (account is None or not ACCOUNT_GAME_ID.fullmatch(name)
            or any(saved.startswith(name) or entry.get("game_id") == name
                   for saved, entry in store.games.items())):  # a saved game (pick finds it)
        return
    try:
        _save_account_game(store, connect(account["server"], account["token"]), account["server"],
                           name, None)
        store.save()
    except DosApiError as error:
        if error.status not in (403, 404, 409):
            raise


def _holds(store: Store, game_id: str, seat: int) -> bool:
    return any(entry.get("game_id") == game_id and entry.get("seat") == seat
               and entry.get("token") for entry in store.games.values())


def _save_account_game(store: Store, account_api: DosApi, server: str, game_id: str,
                       seat: int | None) -> None:
    got = account_api.my_game_token(game_id, seat)
    name = game_id if game_id not in store.games else store.unique_name(game_id)
    store.games[name] = {"game_id": game_id, "server": server, "seat": got["seat"],
                         "token": got["player_token"], "host_token": None}
