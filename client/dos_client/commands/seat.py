"""Your seat in a game: how you hear about it (``notify``), ``vacation``, its ``token``, and
``resign``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import click

from dos_client.context import Settings, adopt_token, pass_settings
from dos_client.i18n import N_, _

# The server's notification events (dos_server.services.notify.EVENTS; a test compares them).
NOTIFY_EVENTS = ("your_turn", "reminder", "timed_out", "caught", "round_over", "game_over",
                 "invited")


def _email(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
        raise click.BadParameter(_("{value!r} is not an email address (like you@example.org)")
                                 .format(value=value))
    return value


@click.command(
    help=N_("Choose how you hear about a game: email, webhook, which events, your "
            "time zone and\n"
            "language."))
@click.argument("game", required=False)
@click.option("--email", metavar="ADDRESS", callback=lambda _c, _p, v: _email(v),
              help=N_("Send emails here."))
@click.option("--no-email", is_flag=True, help=N_("Stop emails."))
@click.option("--webhook", metavar="URL", help=N_("POST signed webhooks here."))
@click.option("--no-webhook", is_flag=True, help=N_("Stop webhooks."))
@click.option("--event", "events", multiple=True, metavar="CHANNEL:EVENT",
              help=N_("Only these events, e.g. email:your_turn (repeat). Events: your_turn, "
                      "reminder, timed_out, caught, round_over, game_over, invited."))
@click.option("--all-events", is_flag=True, help=N_("Every event on every channel again."))
@click.option("--digest/--no-digest", default=None,
              help=N_("Your-turn emails as one daily digest of all games waiting on you."))
@click.option("--timezone", "time_zone", metavar="ZONE",
              help=N_("Show times in this IANA zone, e.g. Asia/Vientiane ('' for UTC)."))
@click.option("--language", metavar="LANG",
              help=N_("Emails and pages in this language: en, lo."))
@click.option("--reminders", metavar="WHEN",
              help=N_("When to remind you of your turn, e.g. 50%,80%,1h: a share of its "
                      "time, or hours (h) or minutes (m) before its deadline; off: never; "
                      "default: the server's (80%)."))
@click.option("--nudges", type=click.Choice(["on", "off"]),
              help=N_("Whether the other players may nudge you (once a day each)."))
@click.option("--chat-email", type=click.Choice(["on", "off"]),
              help=N_("An email for the table talk of this game (at most one an hour)."))
@pass_settings
def notify(settings: Settings, game: str | None, email: str | None, no_email: bool,
           webhook: str | None, no_webhook: bool, events: Sequence[str],
           all_events: bool, digest: bool | None, time_zone: str | None,
           language: str | None, reminders: str | None, nudges: str | None = None,
           chat_email: str | None = None) -> None:
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
            channel, _colon, event = item.partition(":")
            if channel not in chosen or event not in NOTIFY_EVENTS:
                raise click.BadParameter(
                    _("{item!r}: use CHANNEL:EVENT, CHANNEL being email or webhook and EVENT "
                      "one of {events}").format(item=item, events=", ".join(NOTIFY_EVENTS)),
                    param_hint="--event")
            chosen[channel].append(event)
        changes["events"] = chosen
    if digest is not None:
        changes["digest"] = digest
    if time_zone is not None:
        changes["time_zone"] = time_zone or None
    if language is not None:
        changes["language"] = language or None
    if reminders is not None:
        changes["reminders"] = _reminders(reminders)
    if nudges is not None:
        changes["nudges"] = nudges == "on"
    result = saved.api.set_notifications(saved.game_id, seat, changes)  # {}: only reads
    if chat_email is not None:
        chatting = saved.api.chat_settings(saved.game_id, email=chat_email == "on")
        result["chat_email"] = chatting["seat"]["email"]
    none = _("none")
    events_on = "; ".join(f"{channel}: {', '.join(names) or none}"
                          for channel, names in (result.get("events") or {}).items())
    lines = [_("Notifications for {game}: email {email}, webhook {webhook}, daily digest "
               "{digest}.").format(game=saved.name, email=result["email"] or _("off"),
                                   webhook=result["webhook_url"] or _("off"),
                                   digest=_("on") if result.get("digest") else _("off")),
             _("Events: {events}.").format(events=events_on),
             _("Times in {zone}, language {language}.").format(
                 zone=result.get("time_zone") or "UTC", language=result.get("language") or "en")]
    if "reminders" in result:  # a server from before reminders per seat does not say
        lines.append(_("Reminders: {reminders}.").format(
            reminders=", ".join(result["reminders"] or []) or _("off")))
    if "nudges" in result:
        lines.append(_("Nudges from the other players: {state}.").format(
            state=_("on") if result["nudges"] else _("off")))
    if "chat_email" in result:
        lines.append(_("An email for the table talk: {state}.").format(
            state=_("on") if result["chat_email"] else _("off")))
    if not changes:
        lines.append(_("Change them with `{command} notify --email ADDRESS`, --webhook URL, "
                       "--event CHANNEL:EVENT, --digest (see --help).").format(
                           command=settings.command()))
    if result.get("webhook_secret"):
        lines.append(_("Webhook secret (shown once, verify signatures with it): {secret}")
                     .format(secret=result["webhook_secret"]))
    settings.emit(result, "\n".join(lines))


def _reminders(text: str) -> list[str] | None:
    """``--reminders``: a comma list (the server checks each); ``off`` for none, ``default``
    for the server's default."""
    items = [item.strip() for item in text.replace(" ", ",").split(",") if item.strip()]
    if [item.lower() for item in items] == ["default"]:
        return None
    if [item.lower() for item in items] in ([], ["off"], ["none"]):
        return []
    return items


def _days(text: str) -> int:
    if text.lower() == "end":
        return 0
    if not text.isdigit() or not 0 <= int(text) <= 60:
        raise click.BadParameter(_("{text!r}: give 1 to 60 days, or `end` (or 0) to come back")
                                 .format(text=text))
    return int(text)


@click.command(
    help=N_("Pause your clock in a game for DAYS days (the game's yearly allowance); "
            "`vacation end`\n"
            "(or 0) ends it early, giving back the whole days not taken."))
@click.argument("days", metavar="DAYS|end")
@click.argument("game", required=False)
@pass_settings
def vacation(settings: Settings, days: str, game: str | None) -> None:
    count = _days(days)
    saved = settings.saved_game(game)
    result = saved.api.vacation(saved.game_id, count)
    if count == 0:
        settings.emit(result, _("Back from vacation in {game}: your clock runs again; {days} "
                                "day(s) left this year.").format(game=saved.name,
                                                                 days=result["days_left"]))
        return
    settings.emit(result, _("On vacation in {game} until {until}; {days} day(s) left this year.")
                  .format(game=saved.name, until=result["vacation_until"],
                          days=result["days_left"]))


@click.group(help=N_("Manage your token for a game."))
def token() -> None:
    pass


@token.command("set", help=N_("Use TOKEN, a player token of GAME (from `token rotate --show` or "
                             "another device)."))
@click.argument("game_id", metavar="GAME")
@click.argument("player_token", metavar="TOKEN")
@click.option("--as", "label", metavar="NAME", help=N_("Short name to save the game under."))
@pass_settings
def token_set(settings: Settings, game_id: str, player_token: str, label: str | None) -> None:
    store = settings.store()
    known = [e for e in store.games.values() if e["game_id"] == game_id]
    url = str(known[0].get("server") or "") if known else ""
    adopt_token(settings, store, url or settings.server_url(store), game_id, player_token,
                label)


@token.command("rotate", help=N_("Revoke your seat's token everywhere and save a new one."))
@click.argument("game", required=False)
@click.option("--show", is_flag=True, help=N_("Print the new token (it is saved either way)."))
@pass_settings
def token_rotate(settings: Settings, game: str | None, show: bool) -> None:
    saved = settings.saved_game(game)
    rotated = saved.api.rotate_token(saved.game_id, saved.seat())
    saved.entry["token"] = rotated["player_token"]
    saved.store.save()
    new_token = {"player_token": rotated["player_token"]} if show else {}
    use = _("To use it on another device: dos-client token set {id} {token}").format(
        id=saved.game_id, token=rotated["player_token"])
    settings.emit({"game": saved.name, "rotated": True, **new_token},
                  "\n".join([_("New token saved for {game}; the old one no longer works.")
                             .format(game=saved.name), *([use] if show else [])]))


@click.command(help=N_("Resign: the server's random bot plays your seat from now on."))
@click.argument("game", required=False)
@click.confirmation_option(prompt=N_("Resign? A random bot plays your seat to the end."))
@pass_settings
def resign(settings: Settings, game: str | None) -> None:
    saved = settings.saved_game(game)
    saved.api.resign(saved.game_id)
    settings.emit({"game": saved.name, "resigned": True},
                  _("You resigned from {game}.").format(game=saved.name))


COMMANDS = (notify, vacation, token, resign)
