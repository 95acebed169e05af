"""Signing in with your email address (issue #14): ``login``, ``logout``, ``whoami``, and the
account's games merged into the saved ones.

The account token is kept in the profile's section of the config file (``"account"``), beside
the per-game tokens, which keep working without it. ``games`` saves every game of the account
that this profile has not saved yet (under its game id, with the seat's player token fetched
through the account), and naming a game by its id does the same, so any of them can be played
from any device.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import click

from dos_client.config import Store
from dos_client.errors import ClientError, DosApiError

if TYPE_CHECKING:
    from dos_client.api import DosApi
    from dos_client.cli import Settings

GAME_ID = re.compile(r"[a-z0-9]{1,16}")


def _api(server: str, token: str | None = None) -> DosApi:
    from dos_client.api import DosApi

    return DosApi(server, token)


def _call(api: DosApi, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    return api._call(method, path, **kwargs)


def saved_account(store: Store) -> dict[str, Any] | None:
    found = store.section.get("account")
    return found if isinstance(found, dict) and found.get("token") else None


def register(cli: click.Group) -> None:
    """Add the account commands to the root group."""
    from dos_client.cli import pass_settings

    @cli.command()
    @click.argument("email")
    @click.option("--code", help="The code from the email (asked for when not given).")
    @click.option("--send-only", is_flag=True,
                  help="Only email the code; sign in later with --code.")
    @pass_settings
    def login(settings: Settings, email: str, code: str | None, send_only: bool) -> None:
        """Sign in with your email address: all your games, on any device."""
        store = settings.store()
        server = settings.server_url(store)
        api = _api(server)
        if code is None:
            _call(api, "POST", "/api/login", json={"email": email})
            click.echo(f"A sign-in code is on its way to {email} (it works once, for 15 "
                       "minutes).", err=True)
            if send_only:
                settings.emit({"sent": True, "email": email},
                              f"Then: dos-client login {email} --code CODE")
                return
            code = click.prompt("Code from the email", err=True).strip()
        signed = _call(api, "POST", "/api/login/verify", json={"email": email, "code": code})
        store.section["account"] = {"email": signed["email"], "server": server,
                                    "token": signed["account_token"],
                                    "session": signed["session"]["id"]}
        store.save()
        added = sync_games(settings, store)
        settings.emit({"email": signed["email"], "server": server, "games_added": added},
                      f"Signed in as {signed['email']} on {server}. `dos-client games` lists "
                      "all your games.")

    @cli.command()
    @click.option("--everywhere", is_flag=True, help="Sign out every device of this account.")
    @pass_settings
    def logout(settings: Settings, everywhere: bool) -> None:
        """Forget (and revoke) this profile's account token; game tokens stay."""
        store = settings.store()
        account = saved_account(store)
        if account is None:
            settings.emit({"signed_out": False}, "You are not signed in.")
            return
        api = _api(account["server"], account["token"])
        try:
            if everywhere:
                _call(api, "DELETE", "/api/me/sessions")
            else:
                _call(api, "DELETE", f"/api/me/sessions/{account['session']}")
        except DosApiError as error:
            if error.status not in (401, 404):  # already revoked: forgetting is enough
                raise
        store.section.pop("account", None)
        store.save()
        settings.emit({"signed_out": True, "everywhere": everywhere},
                      f"Signed out{' everywhere' if everywhere else ''}; saved games keep "
                      "their own tokens.")

    @cli.command()
    @pass_settings
    def whoami(settings: Settings) -> None:
        """Who this profile is signed in as."""
        store = settings.store()
        account = saved_account(store)
        if account is None:
            settings.emit({"email": None}, "Not signed in: dos-client login you@example.org")
            return
        me = _call(_api(account["server"], account["token"]), "GET", "/api/me")
        settings.emit({**me, "server": account["server"]},
                      f"Signed in as {me['email']} on {account['server']}.")


def sync_games(settings: Settings, store: Store) -> list[str]:
    """Save the account's games this profile does not hold yet; returns their ids.

    Not signed in: nothing. A revoked session or an unreachable server is a warning on
    stderr: the saved games still list.
    """
    account = saved_account(store)
    if account is None:
        return []
    api = _api(account["server"], account["token"])
    try:
        listing = _call(api, "GET", "/api/me/games")
    except ClientError as error:
        click.echo(f"Warning: your account's games are not listed: {error.message}", err=True)
        return []
    added = []
    for game in listing.get("games", []):
        if _holds(store, game["game_id"], game["seat"]):
            continue
        if _adopt(store, api, account["server"], game["game_id"], game["seat"]):
            added.append(game["game_id"])
    if added:
        store.save()
    return added


def adopt(store: Store, name: str) -> None:
    """``name`` is a game id this profile has not saved, but the account holds: save it."""
    account = saved_account(store)
    if (account is None or not GAME_ID.fullmatch(name)
            or any(saved.startswith(name) or entry.get("game_id") == name
                   for saved, entry in store.games.items())):  # a saved game (_pick finds it)
        return
    api = _api(account["server"], account["token"])
    try:
        if _adopt(store, api, account["server"], name, None):
            store.save()
    except DosApiError as error:
        if error.status not in (403, 404, 409):
            raise


def _holds(store: Store, game_id: str, seat: int) -> bool:
    return any(entry.get("game_id") == game_id and entry.get("seat") == seat
               and entry.get("token") for entry in store.games.values())


def _adopt(store: Store, api: DosApi, server: str, game_id: str, seat: int | None) -> bool:
    body = {} if seat is None else {"seat": seat}
    got = _call(api, "POST", f"/api/me/games/{game_id}/token", json=body)
    name = game_id if game_id not in store.games else store.unique_name(game_id)
    store.games[name] = {"game_id": game_id, "server": server, "seat": got["seat"],
                         "token": got["player_token"], "host_token": None}
    return True
