"""Your seat in a game: how you hear about it (``notify``), ``vacation``, its ``token``, and
``resign``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import click

from dos_client.context import Settings, adopt_token, pass_settings

# The server's notification events (dos_server.services.notify.EVENTS; a test compares them).
NOTIFY_EVENTS = ("your_turn", "reminder", "timed_out", "caught", "round_over", "game_over",
                 "invited")


def _email(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
        raise click.BadParameter(f"{value!r} is not an email address (like you@example.org)")
    return value


@click.command()
@click.argument("game", required=False)
@click.option("--email", metavar="ADDRESS", callback=lambda _c, _p, v: _email(v),
              help="Send emails here.")
@click.option("--no-email", is_flag=True, help="Stop emails.")
@click.option("--webhook", metavar="URL", help="POST signed webhooks here.")
@click.option("--no-webhook", is_flag=True, help="Stop webhooks.")
@click.option("--event", "events", multiple=True, metavar="CHANNEL:EVENT",
              help="Only these events, e.g. email:your_turn (repeat). Events: "
                   + ", ".join(NOTIFY_EVENTS) + ".")
@click.option("--all-events", is_flag=True, help="Every event on every channel again.")
@click.option("--digest/--no-digest", default=None,
              help="Your-turn emails as one daily digest of all games waiting on you.")
@click.option("--timezone", "time_zone", metavar="ZONE",
              help="Show times in this IANA zone, e.g. Asia/Vientiane ('' for UTC).")
@click.option("--language", metavar="LANG", help="Emails and pages in this language: en, lo.")
@pass_settings
def notify(settings: Settings, game: str | None, email: str | None, no_email: bool,
           webhook: str | None, no_webhook: bool, events: Sequence[str],
           all_events: bool, digest: bool | None, time_zone: str | None,
           language: str | None) -> None:
    """Choose how you hear about a game: email, webhook, which events, your time zone and
    language."""
    saved = settings.saved_game(game)
    seat = saved.seat()
    changes: dict[str, Any] = {}
    if email or no_email:
        changes["email"] = None if no_email else email
    if webhook or no_webhook:
        changes["webhook_url"] = None if no_webhook else webhook
    if all_events:
        changes["events"] = None
    elif events:
        chosen: dict[str, list[str]] = {"email": [], "webhook": []}
        for item in events:
            channel, _, event = item.partition(":")
            if channel not in chosen or event not in NOTIFY_EVENTS:
                raise click.BadParameter(
                    f"{item!r}: use CHANNEL:EVENT, CHANNEL being email or webhook and EVENT "
                    f"one of {', '.join(NOTIFY_EVENTS)}", param_hint="--event")
            chosen[channel].append(event)
        changes["events"] = chosen
    if digest is not None:
        changes["digest"] = digest
    if time_zone is not None:
        changes["time_zone"] = time_zone or None
    if language is not None:
        changes["language"] = language or None
    result = saved.api.set_notifications(saved.game_id, seat, changes)  # {}: only reads
    events_on = "; ".join(f"{channel}: {', '.join(names) or 'none'}"
                          for channel, names in (result.get("events") or {}).items())
    lines = [f"Notifications for {saved.name}: email {result['email'] or 'off'}, "
             f"webhook {result['webhook_url'] or 'off'}, daily digest "
             f"{'on' if result.get('digest') else 'off'}.", f"Events: {events_on}.",
             f"Times in {result.get('time_zone') or 'UTC'}, language "
             f"{result.get('language') or 'en'}."]
    if not changes:
        lines.append(f"Change them with `{settings.command()} notify --email ADDRESS`, "
                     "--webhook URL, --event CHANNEL:EVENT, --digest (see --help).")
    if result.get("webhook_secret"):
        lines.append(f"Webhook secret (shown once, verify signatures with it): "
                     f"{result['webhook_secret']}")
    settings.emit(result, "\n".join(lines))


def _days(text: str) -> int:
    if text.lower() == "end":
        return 0
    if not text.isdigit() or not 0 <= int(text) <= 60:
        raise click.BadParameter(f"{text!r}: give 1 to 60 days, or `end` (or 0) to come back")
    return int(text)


@click.command()
@click.argument("days", metavar="DAYS|end")
@click.argument("game", required=False)
@pass_settings
def vacation(settings: Settings, days: str, game: str | None) -> None:
    """Pause your clock in a game for DAYS days (the game's yearly allowance); `vacation end`
    (or 0) ends it early, giving back the whole days not taken."""
    count = _days(days)
    saved = settings.saved_game(game)
    result = saved.api.vacation(saved.game_id, count)
    if count == 0:
        settings.emit(result, f"Back from vacation in {saved.name}: your clock runs again; "
                              f"{result['days_left']} day(s) left this year.")
        return
    settings.emit(result, f"On vacation in {saved.name} until {result['vacation_until']}; "
                          f"{result['days_left']} day(s) left this year.")


@click.group()
def token() -> None:
    """Manage your token for a game."""


@token.command("set")
@click.argument("game_id", metavar="GAME")
@click.argument("player_token", metavar="TOKEN")
@click.option("--as", "label", metavar="NAME", help="Short name to save the game under.")
@pass_settings
def token_set(settings: Settings, game_id: str, player_token: str, label: str | None) -> None:
    """Use TOKEN, a player token of GAME (from `token rotate --show` or another device)."""
    store = settings.store()
    known = [e for e in store.games.values() if e["game_id"] == game_id]
    url = str(known[0].get("server") or "") if known else ""
    adopt_token(settings, store, url or settings.server_url(store), game_id, player_token,
                label)


@token.command("rotate")
@click.argument("game", required=False)
@click.option("--show", is_flag=True, help="Print the new token (it is saved either way).")
@pass_settings
def token_rotate(settings: Settings, game: str | None, show: bool) -> None:
    """Revoke your seat's token everywhere and save a new one."""
    saved = settings.saved_game(game)
    rotated = saved.api.rotate_token(saved.game_id, saved.seat())
    saved.entry["token"] = rotated["player_token"]
    saved.store.save()
    new_token = {"player_token": rotated["player_token"]} if show else {}
    use = (f"To use it on another device: dos-client token set {saved.game_id} "
           f"{rotated['player_token']}")
    settings.emit({"game": saved.name, "rotated": True, **new_token},
                  "\n".join([f"New token saved for {saved.name}; the old one no longer works.",
                             *([use] if show else [])]))


@click.command()
@click.argument("game", required=False)
@click.confirmation_option(prompt="Resign? A random bot plays your seat to the end.")
@pass_settings
def resign(settings: Settings, game: str | None) -> None:
    """Resign: the server's random bot plays your seat from now on."""
    saved = settings.saved_game(game)
    saved.api.resign(saved.game_id)
    settings.emit({"game": saved.name, "resigned": True}, f"You resigned from {saved.name}.")


COMMANDS = (notify, vacation, token, resign)
