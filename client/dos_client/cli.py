"""The ``dos-client`` command. Thin: parse, call ``api``, print with ``render``.

Heavy imports (requests, rich) happen inside the commands, so ``--help`` starts fast.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dos_client.config import DEFAULT_SERVER, Store
from dos_client.errors import (
    EXIT_REFUSED,
    EXIT_STALE,
    EXIT_TIMEOUT,
    ClientError,
    DosApiError,
)

if TYPE_CHECKING:
    from rich.console import Console

    from dos_client.api import DosApi

# The server's bots (dos_server.services.lobby.BOT_STRATEGIES; the client imports no server code).
BOT_CHOICES = ("random", "greedy", "search-1", "search-2", "search-3")


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
        picked, entry = _pick(store, name)
        return SavedGame(self, store, picked, entry)

    def emit(self, value: Any, human: str | Callable[[], object] | None = None) -> None:
        """The one way a command ends well: ``value`` as JSON with --json, else ``human``
        (lines to echo, or a function that prints them)."""
        if self.as_json:
            _emit_json(value)
        elif callable(human):
            human()
        elif human is not None:
            click.echo(human)


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
        return str(self.entry.get("server") or self.settings.server_url(self.store))

    @cached_property
    def api(self) -> DosApi:
        """The API as this game's player (or, holding no seat, as its host)."""
        return _api(self.server, self.entry.get("token") or self.entry.get("host_token"))

    def host_api(self) -> DosApi:
        if not self.entry.get("host_token"):
            raise ClientError("only the host can start a game early")
        return _api(self.server, self.entry["host_token"])

    def seat(self) -> int:
        """The saved seat, or a ClientError for a game held only as its host."""
        if self.entry.get("seat") is None:
            raise ClientError("you hold no seat in this game")
        return int(self.entry["seat"])


def _out() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def _err() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _api(server: str, token: str | None = None) -> DosApi:
    from dos_client.api import DosApi

    return DosApi(server, token)


def _emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=True))


class DosGroup(click.Group):
    """Turns client errors into one line on stderr and a documented exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ClientError as error:
            settings = ctx.obj if isinstance(ctx.obj, Settings) else None
            if settings is not None and settings.debug:
                raise
            if settings is not None and settings.as_json:
                if isinstance(error, DosApiError):
                    _emit_json({"error": error.problem, "status": error.status})
                else:
                    _emit_json({"error": {"detail": error.message}, "status": None})
            click.echo(f"Error: {error.message}", err=True)
            ctx.exit(error.exit_code)


@click.group(cls=DosGroup, context_settings={"auto_envvar_prefix": "DOS",
                                              "help_option_names": ["-h", "--help"]})
@click.option("--server", metavar="URL", help=f"DOS server (default {DEFAULT_SERVER}).")
@click.option("--profile", default="default", show_default=True,
              help="Which saved identity to use (several players on one machine).")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.version_option(package_name="dos-by-mail", prog_name="dos-client")
@click.pass_context
def cli(ctx: click.Context, server: str | None, profile: str, as_json: bool, debug: bool) -> None:
    """Play DOS games on a DOS-by-mail server from your terminal.

    \b
    Exit codes: 0 ok, 1 error, 2 usage, 3 refused (not your turn, illegal or
    ambiguous move), 4 stale (someone moved first), 5 not authorized,
    6 server unreachable, 7 `wait` timed out.
    """
    ctx.obj = Settings(server, profile, as_json, debug)


pass_settings = click.make_pass_decorator(Settings)


# -- saved games ----------------------------------------------------------------------------


def _pick(store: Store, name: str | None) -> tuple[str, dict[str, Any]]:
    games = store.games
    if not games:
        raise ClientError("no saved games: create one with `dos-client new` or join with "
                          "`dos-client join INVITE`")
    if name is None:
        name = store.section.get("current") or next(iter(games))
    if name not in games:
        matches = [n for n in games if n.startswith(name) or games[n]["game_id"] == name]
        if len(matches) != 1:
            raise ClientError(f"no saved game called {name!r}; saved: {', '.join(games)}")
        name = matches[0]
    return name, games[name]


# -- commands -------------------------------------------------------------------------------


@cli.command()
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


def _duration(text: str | None) -> int | None:
    if not text:
        return None
    found = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", text.lower())
    if not found:
        raise click.BadParameter("use a number with s, m, h or d, e.g. 36h or 3d")
    return int(found.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[found.group(2)]


@cli.command()
@click.option("--seat", "seats", multiple=True, metavar="NAME",
              help="A player's seat (repeat; order is seating order).")
@click.option("--open", "open_seats", type=click.IntRange(0, 3), default=0,
              help="Seats left open, claimed later with the invite code.")
@click.option("--bot", "bots", multiple=True, type=click.Choice(BOT_CHOICES),
              help="A bot seat (repeat): random, greedy, or the searching bot at level "
                   "1 (quick) to 3 (strongest).")
@click.option("--me", metavar="NAME", help="Join the seat NAME yourself right away.")
@click.option("--after-draw", type=click.Choice(["drawn_card", "any"]), default="drawn_card",
              show_default=True, help="What may be matched after drawing (RULES 3.6).")
@click.option("--dos-call/--no-dos-call", default=False, show_default=True,
              help="Play with calling DOS and catching (RULES 5).")
@click.option("--target", type=click.IntRange(1, 10_000), default=200, show_default=True,
              help="Score that wins the game.")
@click.option("--turn-limit", metavar="DURATION", help="Time per turn, e.g. 36h or 3d.")
@click.option("--as", "label", metavar="NAME", help="Short name to save the game under.")
@pass_settings
def new(settings: Settings, seats: Sequence[str], open_seats: int, bots: Sequence[str],
        me: str | None, after_draw: str, dos_call: bool, target: int, turn_limit: str | None,
        label: str | None) -> None:
    """Create a game and print the invites to hand out."""
    payload_seats: list[dict[str, Any]] = [{"name": name} for name in seats]
    payload_seats += [{} for _ in range(open_seats)] + [{"bot": bot} for bot in bots]
    if not 2 <= len(payload_seats) <= 4:
        raise click.UsageError("a game has 2 to 4 seats: use --seat, --open and --bot")
    if me and me not in seats:
        raise click.UsageError(f"--me {me!r} must be one of the --seat names")
    store = settings.store()
    url = settings.server_url(store)
    created = _api(url).create_game({
        "seats": payload_seats,
        "options": {"after_draw": after_draw, "dos_call": dos_call, "target_score": target},
        "turn_time_limit": _duration(turn_limit),
    })
    name = store.unique_name(label or created["id"])
    store.games[name] = {"game_id": created["id"], "server": url, "seat": None, "token": None,
                         "host_token": created["host_token"]}
    store.section["current"] = name
    invites = {i["name"]: f"{created['id']}:{i['invite']}" for i in created["invites"]}
    if me:
        joined = _api(url).join(created["id"], invite=invites.pop(me).split(":", 1)[1])
        store.games[name].update(seat=joined["seat"], token=joined["player_token"])
    store.save()
    lines = [f"Created game {created['id']} (saved as {name!r}; you hold the host token).",
             *(f"Invite for {seat_name}: dos-client join {invite}"
               for seat_name, invite in invites.items())]
    if open_seats:
        lines.append(f"Open seats: dos-client join {created['id']} --code "
                     f"{created['invite_code']} --name YOUR_NAME")
    if me:
        lines.append(f"You play as {me}. Next: dos-client show")
    settings.emit({"game": name, "id": created["id"], "invites": invites,
                   "invite_code": created["invite_code"] if open_seats else None},
                  "\n".join(lines))


@cli.command()
@click.argument("invite")
@click.option("--code", help="The game's invite code, to take an open seat.")
@click.option("--name", help="Your name, with --code.")
@click.option("--as", "label", metavar="NAME", help="Short name to save the game under.")
@pass_settings
def join(settings: Settings, invite: str, code: str | None, name: str | None,
         label: str | None) -> None:
    """Claim your seat with INVITE (GAME:TOKEN as printed by `new`), or GAME --code C --name N."""
    store = settings.store()
    url = settings.server_url(store)
    game_id, _, token = invite.partition(":")
    if not token and not code:
        raise click.UsageError("give the whole invite (GAME:TOKEN), or a game id with --code "
                               "and --name")
    joined = _api(url).join(game_id, invite=token or None, code=code, name=name)
    saved = store.unique_name(label or game_id)
    store.games[saved] = {"game_id": game_id, "server": url, "seat": joined["seat"],
                          "token": joined["player_token"], "host_token": None}
    store.section["current"] = saved
    store.save()
    settings.emit({"game": saved, "seat": joined["seat"], "name": joined["name"]},
                  f"You are {joined['name']} (seat {joined['seat']}) in game {game_id}, saved "
                  f"as {saved!r}.")


@cli.command()
@pass_settings
def games(settings: Settings) -> None:
    """Every saved game: whose turn, deadline, scores; * marks games waiting on you."""
    store = settings.store()
    rows: list[dict[str, Any]] = []
    for name, entry in store.games.items():
        try:
            game = SavedGame(settings, store, name, entry).api.game(entry["game_id"])
        except ClientError as error:
            rows.append({"game": name, "error": error.message})
            continue
        view = game.get("view") or {}
        seats = [s.get("name") or "?" for s in game["seats"]]
        mine = (game["status"] == "active" and view.get("current") == entry.get("seat")
                and entry.get("seat") is not None)
        rows.append({
            "game": name, "id": entry["game_id"], "status": game["status"],
            "turn": seats[view["current"]] if view and game["status"] == "active" else None,
            "your_turn": mine, "deadline": game.get("turn_deadline"),
            "scores": dict(zip(seats, view.get("scores", []), strict=False)),
        })
    settings.emit(rows, lambda: _games_table(rows, store.section.get("current")))


def _games_table(rows: list[dict[str, Any]], current: str | None) -> None:
    if not rows:
        click.echo("No saved games. Create one with `dos-client new` or join one.")
    for row in rows:
        if "error" in row:
            click.echo(f"  {row['game']}: {row['error']}")
            continue
        mark = "*" if row["your_turn"] else " "
        here = "(current) " if row["game"] == current else ""
        scores = ", ".join(f"{k} {v}" for k, v in row["scores"].items())
        turn = f"{row['turn']} to play" if row["turn"] else row["status"]
        deadline = f", deadline {row['deadline']}" if row["deadline"] else ""
        click.echo(f"{mark} {row['game']} {here}· {turn}{deadline} · {scores}")


@cli.command()
@click.argument("game", required=False)
@pass_settings
def show(settings: Settings, game: str | None) -> None:
    """The table as you see it: your hand, the Center Row, scores, whose turn."""
    from dos_client import render
    from dos_client.api import DosApi

    _look(settings, game, DosApi.game, render.table)


@cli.command()
@click.argument("game", required=False)
@pass_settings
def moves(settings: Settings, game: str | None) -> None:
    """Your legal actions, numbered: play one with `dos-client move N`."""
    from dos_client import render
    from dos_client.api import DosApi

    _look(settings, game, DosApi.actions, lambda console, listing, _: render.moves(console, listing))


def _look(settings: Settings, game: str | None, fetch: Callable[[DosApi, str], dict[str, Any]],
          draw: Callable[[Console, dict[str, Any], str], None]) -> None:
    """Read-only commands: fetch one body for the saved game, print it as JSON or drawn."""
    saved = settings.saved_game(game)
    body = fetch(saved.api, saved.game_id)
    settings.emit(body, lambda: draw(_out(), body, saved.name))


def _split_game(store: Store, words: Sequence[str]) -> tuple[str | None, str]:
    if len(words) >= 2 and words[0] in store.games:
        return words[0], " ".join(words[1:])
    return None, " ".join(words)


def _choose(listing: dict[str, Any], text: str) -> list[str]:
    """Turn the user's input into action texts, checking what can be checked before sending."""
    listed = [entry["action"] for entry in listing["actions"]]
    stripped = text.strip()
    if not listed:
        raise ClientError("you have no legal action now: it is not your turn "
                          "(`dos-client wait` tells you when it is)", EXIT_REFUSED)
    if stripped.isdigit():
        number = int(stripped)
        if not 1 <= number <= len(listed):
            raise ClientError(f"there are {len(listed)} legal actions; choose 1 to "
                              f"{len(listed)} (see `dos-client moves`)", EXIT_REFUSED)
        return [listed[number - 1]]
    if not listing.get("your_turn") and not any(a.startswith("catch") for a in listed):
        raise ClientError("it is not your turn; `dos-client wait` tells you when it is",
                          EXIT_REFUSED)
    from dos_engine import DosError, parse_turn

    try:
        first = parse_turn(stripped)[0].text()
    except DosError:
        return [stripped]  # shorthand: the server resolves it against the full position
    if first not in listed:
        import difflib

        close = difflib.get_close_matches(first, listed, n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ClientError(f"{first!r} is not a legal action now.{hint} "
                          "See `dos-client moves`.", EXIT_REFUSED)
    return [stripped]


@cli.command()
@click.argument("words", nargs=-1, required=True, metavar="[GAME] MOVE")
@pass_settings
def move(settings: Settings, words: Sequence[str]) -> None:
    """Play a numbered move (`move 3`) or notation (`move "m1 R5; m2 B3+Y4; end"`)."""
    store = settings.store()
    game, text = _split_game(store, words)
    _play(settings.saved_game(game, store), text)


@cli.command()
@click.argument("game", required=False)
@pass_settings
def draw(settings: Settings, game: str | None) -> None:
    """Draw a card (then `move` to match with it or add a card)."""
    _play(settings.saved_game(game), "draw")


def _play(saved: SavedGame, text: str) -> None:
    from dos_client import render

    if saved.entry.get("token") is None:
        raise ClientError("you hold no seat in this game (only the host token); join a seat "
                          "with its invite first")
    listing = saved.api.actions(saved.game_id)
    chosen = _choose(listing, text)
    try:
        result = saved.api.submit(saved.game_id, listing["version"], chosen)
    except DosApiError as error:
        if error.kind != "stale-version":
            raise
        fresh = saved.api.game(saved.game_id)
        if not saved.settings.as_json:
            click.echo("Someone moved first, so nothing was played. The table now:", err=True)
            render.table(_out(), fresh, saved.name)
        raise ClientError("the game changed before your move arrived; look again and choose",
                          EXIT_STALE) from None
    saved.settings.emit(result, lambda: _played(result, saved.name))


def _played(result: dict[str, Any], name: str) -> None:
    from dos_client import render

    console = _out()
    names = render.names_of(result["game"])
    for event in result["events"]:
        line = render.event_line(event, names)
        if line:
            console.print(line)
    render.table(console, result["game"], name)


@cli.command()
@click.argument("game", required=False)
@click.option("--all", "show_all", is_flag=True, help="Every event, not just the last 30.")
@pass_settings
def history(settings: Settings, game: str | None, show_all: bool) -> None:
    """The game's history, as you may see it."""
    from dos_client import render

    saved = settings.saved_game(game)
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = saved.api.history(saved.game_id, after=after, limit=500)
        events.extend(page["events"])
        after = page["next_after"]
        if not page["more"]:
            break

    def human() -> None:
        names = render.names_of(saved.api.game(saved.game_id))
        lines = [line for e in events if (line := render.event_line(e, names))]
        for line in lines if show_all else lines[-30:]:
            click.echo(line)

    settings.emit(events, human)


@cli.command()
@click.argument("games_", nargs=-1, metavar="[GAME]...")
@click.option("--timeout", type=click.FloatRange(min=0), default=3600, show_default=True,
              help="Give up after this many seconds (exit 7).")
@click.option("--interval", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="First polling interval; it backs off up to 60 s.")
@pass_settings
def wait(settings: Settings, games_: Sequence[str], timeout: float, interval: float) -> None:
    """Block until it is your turn in any of the games (default: all saved games)."""
    store = settings.store()
    names = list(games_) or list(store.games)
    if not names:
        raise ClientError("no saved games to wait for")
    saved_games = [settings.saved_game(n, store) for n in names]
    deadline = time.monotonic() + timeout
    delay = interval
    console = _err()
    with console.status("Waiting for your turn...", spinner="dots"):
        while True:
            for saved in saved_games:
                body = saved.api.game(saved.game_id)
                view = body.get("view") or {}
                if body["status"] == "active" and view.get("current") == saved.entry.get("seat"):
                    settings.emit({"game": saved.name, "id": saved.game_id},
                                  f"Your turn in {saved.name}.")
                    return
                if body["status"] == "finished" and len(saved_games) == 1:
                    settings.emit({"game": saved.name, "id": saved.game_id, "finished": True},
                                  f"{saved.name} is over.")
                    return
            if time.monotonic() + delay > deadline:
                raise ClientError(f"still not your turn after {timeout:g} s", EXIT_TIMEOUT)
            time.sleep(delay)
            delay = min(delay * 1.5, 60.0)


@cli.command()
@click.argument("game", required=False)
@click.confirmation_option(prompt="Resign? A random bot plays your seat to the end.")
@pass_settings
def resign(settings: Settings, game: str | None) -> None:
    """Resign: the server's random bot plays your seat from now on."""
    saved = settings.saved_game(game)
    saved.api.resign(saved.game_id)
    settings.emit({"game": saved.name, "resigned": True}, f"You resigned from {saved.name}.")


@cli.command()
@click.argument("game", required=False)
@pass_settings
def start(settings: Settings, game: str | None) -> None:
    """Host: start now with the seats filled so far."""
    saved = settings.saved_game(game)
    saved.host_api().start(saved.game_id)
    settings.emit({"game": saved.name, "started": True}, f"{saved.name} started.")


NOTIFY_EVENTS = ("your_turn", "reminder", "timed_out", "caught", "round_over", "game_over",
                 "invited")


@cli.command()
@click.argument("game", required=False)
@click.option("--email", metavar="ADDRESS", help="Send emails here.")
@click.option("--no-email", is_flag=True, help="Stop emails.")
@click.option("--webhook", metavar="URL", help="POST signed webhooks here.")
@click.option("--no-webhook", is_flag=True, help="Stop webhooks.")
@click.option("--event", "events", multiple=True, metavar="CHANNEL:EVENT",
              help="Only these events, e.g. email:your_turn (repeat). Events: "
                   + ", ".join(NOTIFY_EVENTS) + ".")
@click.option("--all-events", is_flag=True, help="Every event on every channel again.")
@click.option("--digest/--no-digest", default=None,
              help="Your-turn emails as one daily digest of all games waiting on you.")
@pass_settings
def notify(settings: Settings, game: str | None, email: str | None, no_email: bool,
           webhook: str | None, no_webhook: bool, events: Sequence[str],
           all_events: bool, digest: bool | None) -> None:
    """Choose how you hear about a game: email, webhook, and which events."""
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
                raise click.BadParameter(f"{item!r}: use email:EVENT or webhook:EVENT",
                                         param_hint="--event")
            chosen[channel].append(event)
        changes["events"] = chosen
    if digest is not None:
        changes["digest"] = digest
    if not changes:
        raise click.UsageError("say what to change: --email, --webhook, --event, --digest, ...")
    result = saved.api.set_notifications(saved.game_id, seat, changes)
    lines = [f"Notifications for {saved.name}: email {result['email'] or 'off'}, "
             f"webhook {result['webhook_url'] or 'off'}."]
    if result.get("webhook_secret"):
        lines.append(f"Webhook secret (shown once, verify signatures with it): "
                     f"{result['webhook_secret']}")
    settings.emit(result, "\n".join(lines))


@cli.command()
@click.argument("days", type=click.IntRange(1, 60))
@click.argument("game", required=False)
@pass_settings
def vacation(settings: Settings, days: int, game: str | None) -> None:
    """Pause your clock in a game for DAYS days (the game's yearly allowance)."""
    saved = settings.saved_game(game)
    result = saved.api.vacation(saved.game_id, days)
    settings.emit(result, f"On vacation in {saved.name} until {result['vacation_until']}; "
                          f"{result['days_left']} day(s) left this year.")


@cli.group()
def token() -> None:
    """Manage your token for a game."""


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
    settings.emit({"game": saved.name, "rotated": True, **new_token},
                  "\n".join([f"New token saved for {saved.name}; the old one no longer works.",
                             *new_token.values()]))


def main(argv: Sequence[str] | None = None) -> NoReturn:
    sys.exit(cli.main(args=list(argv) if argv is not None else None, prog_name="dos-client"))


if __name__ == "__main__":
    main()
