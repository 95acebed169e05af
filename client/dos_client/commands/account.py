"""This profile's server and the account it signs in with: ``server``, ``login``, ``logout``,
``whoami``. The account's games are saved into the profile by ``dos_client.context``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import click

from dos_client import system
from dos_client.context import Settings, connect, pass_settings, saved_account, sync_games
from dos_client.errors import DosApiError
from dos_client.i18n import N_, _

if TYPE_CHECKING:
    from dos_client.api import DosApi


@click.command(help=N_("Show or set the server this profile uses."))
@click.argument("url", required=False)
@pass_settings
def server(settings: Settings, url: str | None) -> None:
    store = settings.store()
    if url:
        if not re.match(r"^https?://", url):
            raise click.BadParameter(_("use a full URL such as http://127.0.0.1:5000"),
                                     param_hint="URL")
        store.section["server"] = url.rstrip("/")
        store.save()
    current = settings.server_url(store)
    settings.emit({"server": current}, current)


@click.command(help=N_("Sign in with your email address: all your games, on any device."))
@click.argument("email")
@click.option("--code", help=N_("The code from the email (asked for when not given)."))
@click.option("--send-only", is_flag=True,
              help=N_("Only email the code; sign in later with --code."))
@pass_settings
def login(settings: Settings, email: str, code: str | None, send_only: bool) -> None:
    store = settings.store()
    url = settings.server_url(store)
    api = connect(url)
    if code is None:
        api.send_login_code(email)
        click.echo(_("A sign-in code is on its way to {email} (it works once, for 15 "
                     "minutes).").format(email=email), err=True)
        if send_only:
            settings.emit({"sent": True, "email": email},
                          _("Then: dos-client login {email} --code CODE").format(email=email))
            return
        code = click.prompt(_("Code from the email"), err=True).strip()
    signed = api.verify_login(email, code)
    store.section["account"] = {"email": signed["email"], "server": url,
                                "token": signed["account_token"],
                                "session": signed["session"]["id"]}
    store.save()
    _fill_zone_and_language(connect(url, signed["account_token"]))
    added = sync_games(store)
    settings.emit({"email": signed["email"], "server": url, "games_added": added},
                  _("Signed in as {email} on {server}. `dos-client games` lists all your "
                    "games.").format(email=signed["email"], server=url))


def _fill_zone_and_language(api: DosApi) -> None:
    """The first sign-in gives the account this machine's time zone and language; one the
    account has (chosen on another device, or with `notify`) stays."""
    account = api.me()
    missing = {name: value for name, value in (("time_zone", system.time_zone()),
                                               ("language", system.language()))
               if value and not account.get(name)}
    if missing:
        api.set_settings(**missing)


@click.command(help=N_("Forget (and revoke) this profile's account token; game tokens stay."))
@click.option("--everywhere", is_flag=True, help=N_("Sign out every device of this account."))
@pass_settings
def logout(settings: Settings, everywhere: bool) -> None:
    store = settings.store()
    account = saved_account(store)
    if account is None:
        settings.emit({"signed_out": False}, _("You are not signed in."))
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
                  _("Signed out everywhere; saved games keep their own tokens.") if everywhere
                  else _("Signed out; saved games keep their own tokens."))


@click.command(help=N_("Who this profile is signed in as."))
@pass_settings
def whoami(settings: Settings) -> None:
    store = settings.store()
    account = saved_account(store)
    if account is None:
        settings.emit({"email": None}, _("Not signed in: dos-client login you@example.org"))
        return
    me = connect(account["server"], account["token"]).me()
    settings.emit({**me, "server": account["server"]},
                  _("Signed in as {email} on {server}.").format(email=me["email"],
                                                                server=account["server"]))


COMMANDS = (server, login, logout, whoami)
