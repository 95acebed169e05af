"""This profile's server and the account it signs in with: ``server``, ``login``, ``logout``,
``whoami``. The account's games are saved into the profile by ``dos_client.context``."""

from __future__ import annotations

import re

import click

from dos_client.context import Settings, connect, pass_settings, saved_account, sync_games
from dos_client.errors import DosApiError


@click.command()
@click.argument("url", required=False)
@pass_settings
def server(settings: Settings, url: str | None) -> None:
    """Show or set the server this profile uses."""
    store = settings.store()
    if url:
        if not re.match(r"^https?://", url):
            raise click.BadParameter("use a full URL such as http://127.0.0.1:5000", param_hint="URL")
        store.section["server"] = url.rstrip("/")
        store.save()
    current = settings.server_url(store)
    settings.emit({"server": current}, current)


@click.command()
@click.argument("email")
@click.option("--code", help="The code from the email (asked for when not given).")
@click.option("--send-only", is_flag=True,
              help="Only email the code; sign in later with --code.")
@pass_settings
def login(settings: Settings, email: str, code: str | None, send_only: bool) -> None:
    """Sign in with your email address: all your games, on any device."""
    store = settings.store()
    url = settings.server_url(store)
    api = connect(url)
    if code is None:
        api.send_login_code(email)
        click.echo(f"A sign-in code is on its way to {email} (it works once, for 15 "
                   "minutes).", err=True)
        if send_only:
            settings.emit({"sent": True, "email": email},
                          f"Then: dos-client login {email} --code CODE")
            return
        code = click.prompt("Code from the email", err=True).strip()
    signed = api.verify_login(email, code)
    store.section["account"] = {"email": signed["email"], "server": url,
                                "token": signed["account_token"],
                                "session": signed["session"]["id"]}
    store.save()
    added = sync_games(store)
    settings.emit({"email": signed["email"], "server": url, "games_added": added},
                  f"Signed in as {signed['email']} on {url}. `dos-client games` lists "
                  "all your games.")


@click.command()
@click.option("--everywhere", is_flag=True, help="Sign out every device of this account.")
@pass_settings
def logout(settings: Settings, everywhere: bool) -> None:
    """Forget (and revoke) this profile's account token; game tokens stay."""
    store = settings.store()
    account = saved_account(store)
    if account is None:
        settings.emit({"signed_out": False}, "You are not signed in.")
        return
    try:
        connect(account["server"], account["token"]).sign_out(
            None if everywhere else account["session"])
    except DosApiError as error:
        if error.status not in (401, 404):  # already revoked: forgetting is enough
            raise
    store.section.pop("account", None)
    store.save()
    settings.emit({"signed_out": True, "everywhere": everywhere},
                  f"Signed out{' everywhere' if everywhere else ''}; saved games keep "
                  "their own tokens.")


@click.command()
@pass_settings
def whoami(settings: Settings) -> None:
    """Who this profile is signed in as."""
    store = settings.store()
    account = saved_account(store)
    if account is None:
        settings.emit({"email": None}, "Not signed in: dos-client login you@example.org")
        return
    me = connect(account["server"], account["token"]).me()
    settings.emit({**me, "server": account["server"]},
                  f"Signed in as {me['email']} on {account['server']}.")


COMMANDS = (server, login, logout, whoami)
