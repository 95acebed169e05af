"""The ``dos-client`` command. Thin: parse, call ``api``, print with ``render``.

Heavy imports (requests, rich) happen inside the commands, so ``--help`` starts fast.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dos_client.config import DEFAULT_SERVER, Store
from dos_client.errors import (
    EXIT_AUTH,
    EXIT_REFUSED,
    EXIT_STALE,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    ClientError,
    DosApiError,
)

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem
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
        if name is not None:
            from dos_client.account import adopt

            adopt(store, name)  # a game id of the signed-in account: save it first (#14)
        picked, entry = _pick(store, name)
        return SavedGame(self, store, picked, entry)

    def command(self) -> str:
        """How this person calls the client, for hints that can be pasted as they are."""
        return "dos-client" if self.profile == "default" else \
            f"dos-client --profile {shlex.quote(self.profile)}"

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
        """The saved game's server; an explicit --server/DOS_SERVER naming another is an error
        (the saved token belongs to the saved server and is never sent anywhere else)."""
        saved = self.entry.get("server")
        if not saved:
            return self.settings.server_url(self.store)
        saved = str(saved).rstrip("/")
        given = (self.settings.server or "").rstrip("/")
        if given and given != saved:
            raise ClientError(f"{self.name} is saved on {saved}, but --server or DOS_SERVER "
                              f"says {given}; its token belongs to {saved}. Drop --server "
                              "(or unset DOS_SERVER) to use this game.", EXIT_USAGE)
        return saved

    @cached_property
    def api(self) -> DosApi:
        """The API as this game's player (or, holding no seat, as its host)."""
        return _api(self.server, self.entry.get("token") or self.entry.get("host_token"))

    def host_api(self) -> DosApi:
        if not self.entry.get("host_token"):
            raise ClientError("only the host can start a game early", EXIT_AUTH)
        return _api(self.server, self.entry["host_token"])

    def remember(self, **values: Any) -> None:
        """Keep ``values`` in this game's saved entry (e.g. the version of the list printed)."""
        self.entry.update(values)
        self.store.save()

    def draw_table(self, game: dict[str, Any]) -> None:
        """Print the table and its numbered moves, and remember the version of that list."""
        from dos_client import render

        render.table(_out(), game, self.name, self.settings.command())
        self.remember_list(game)

    def remember_list(self, game: dict[str, Any]) -> None:
        view = game.get("view") or {}
        if view.get("legal_actions") and self.entry.get("token"):
            self.remember(listed_version=game["version"])

    def seat(self) -> int:
        """The saved seat, or a ClientError for a game held only as its host."""
        if self.entry.get("seat") is None:
            raise ClientError("you hold no seat in this game")
        return int(self.entry["seat"])


def _out() -> Console:
    """stdout: lines are never wrapped (or padded) by rich; a terminal wraps what is long."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


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
    Global options go before or after the command (`dos-client show --json`).

    \b
    Exit codes: 0 ok, 1 error, 2 usage (wrong command, option or value),
    3 refused (not your turn, game over, illegal, ambiguous or unreadable
    move), 4 stale (the game moved on since your list: nothing was played),
    5 not authorized, 6 server unreachable, 7 `wait` timed out.
    """
    ctx.obj = Settings(server, profile, as_json, debug)


pass_settings = click.make_pass_decorator(Settings)


def _late(field: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A global option given after the command (`dos-client show --json`) sets ``field``."""
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        settings = ctx.find_object(Settings)
        if settings is not None and value not in (None, False):
            setattr(settings, field, value.rstrip("/") if field == "server" else value)
        return value
    return callback


def _global_options() -> list[click.Option]:
    common: dict[str, Any] = {"expose_value": False, "allow_from_autoenv": False}
    return [
        click.Option(["--server"], metavar="URL", callback=_late("server"),
                     help="DOS server (also before the command).", **common),
        click.Option(["--profile"], callback=_late("profile"),
                     help="Saved identity to use (also before the command).", **common),
        click.Option(["--json", "as_json"], is_flag=True, callback=_late("as_json"),
                     help="Print machine-readable JSON.", **common),
        click.Option(["--debug"], is_flag=True, callback=_late("debug"),
                     help="Show tracebacks.", **common),
    ]


def _accept_global_options(group: click.Group) -> None:
    """Every command takes --server, --profile, --json and --debug after its name too."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            _accept_global_options(command)
        else:
            command.params.extend(_global_options())


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
@click.option("--bonus-placement", type=click.Choice(["optional", "mandatory"]),
              default="optional", show_default=True,
              help="Whether earned bonus cards must be placed (RULES 3.5).")
@click.option("--dos-call/--no-dos-call", default=False, show_default=True,
              help="Play with calling DOS and catching (RULES 5).")
@click.option("--target", type=click.IntRange(1, 10_000), default=200, show_default=True,
              help="Score that wins the game.")
@click.option("--turn-limit", metavar="DURATION", help="Time per turn, e.g. 36h or 3d.")
@click.option("--title", metavar="TEXT",
              help="The game's title, shown to every player in emails, lists and pages.")
@click.option("--as", "label", metavar="NAME", help="Short name to save the game under.")
@pass_settings
def new(settings: Settings, seats: Sequence[str], open_seats: int, bots: Sequence[str],
        me: str | None, after_draw: str, bonus_placement: str, dos_call: bool, target: int,
        turn_limit: str | None, title: str | None, label: str | None) -> None:
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
        "options": {"after_draw": after_draw, "bonus_placement": bonus_placement,
                    "dos_call": dos_call, "target_score": target},
        "turn_time_limit": _duration(turn_limit),
        **({"title": title} if title is not None else {}),
    })
    name = store.unique_name(label or created["id"])
    invites = {i["name"]: f"{created['id']}:{i['invite']}" for i in created["invites"]}
    store.games[name] = {"game_id": created["id"], "server": url, "seat": None, "token": None,
                         "host_token": created["host_token"], "invites": dict(invites),
                         "invite_code": created["invite_code"]}
    store.section["current"] = name
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
        lines.append(f"You play as {me}. Next: {settings.command()} show")
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
    try:
        joined = _api(url).join(game_id, invite=token or None, code=code, name=name)
    except DosApiError as error:
        if not token or error.status != 401:
            raise
        try:  # not an invite: perhaps a player token (`token rotate --show`, another device)
            _adopt_token(settings, store, url, game_id, token, label)
        except ClientError:
            raise error from None
        return
    saved = store.unique_name(label or game_id)
    store.games[saved] = {"game_id": game_id, "server": url, "seat": joined["seat"],
                          "token": joined["player_token"], "host_token": None}
    store.section["current"] = saved
    store.save()
    settings.emit({"game": saved, "seat": joined["seat"], "name": joined["name"]},
                  f"You are {joined['name']} (seat {joined['seat']}) in game {game_id}, saved "
                  f"as {saved!r}. Next: {settings.command()} show")


@cli.command()
@pass_settings
def games(settings: Settings) -> None:
    """Every saved game: whose turn, deadline, scores; * marks games waiting on you."""
    from dos_client.account import sync_games

    store = settings.store()
    sync_games(settings, store)  # signed in: the account's games on this server too (#14)
    rows: list[dict[str, Any]] = []
    failed: list[ClientError] = []
    for name, entry in store.games.items():
        try:
            game = SavedGame(settings, store, name, entry).api.game(entry["game_id"])
        except ClientError as error:
            rows.append({"game": name, "error": error.message})
            failed.append(error)
            continue
        view = game.get("view") or {}
        seats = [s.get("name") or "?" for s in game["seats"]]
        mine = (game["status"] == "active" and view.get("current") == entry.get("seat")
                and entry.get("seat") is not None)
        rows.append({
            "game": name, "id": entry["game_id"], "title": game.get("title"),
            "status": game["status"],
            "turn": seats[view["current"]] if view and game["status"] == "active" else None,
            "your_turn": mine, "deadline": game.get("turn_deadline"),
            "scores": dict(zip(seats, view.get("scores", []), strict=False)),
        })
    settings.emit(rows, lambda: _games_table(rows, store.section.get("current")))
    if failed:  # every game was listed; the exit code says that some could not be read
        click.echo(f"Error: {failed[0].message}", err=True)
        click.get_current_context().exit(failed[0].exit_code)


def _games_table(rows: list[dict[str, Any]], current: str | None) -> None:
    from dos_client import render

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
        deadline = f", deadline {render.deadline(row['deadline'])}" if row["deadline"] else ""
        titled = f"“{row['title']}” " if row.get("title") else ""
        click.echo(f"{mark} {row['game']} {titled}{here}· {turn}{deadline} · {scores}")


@cli.command()
@click.argument("game", required=False)
@pass_settings
def show(settings: Settings, game: str | None) -> None:
    """The table as you see it: your hand, the Center Row, scores, whose turn."""
    saved = settings.saved_game(game)
    body = saved.api.game(saved.game_id)
    if settings.as_json:
        saved.remember_list(body)
        settings.emit(body)
        return
    since = _since_last_look(saved, body)
    if since:
        click.echo("Since you last looked:")
        for line in since:
            click.echo(f"  {line.strip()}")
    saved.draw_table(body)


def _since_last_look(saved: SavedGame, game: dict[str, Any]) -> list[str]:
    """What the other seats did since this profile last saw the game (nothing the first time:
    then only where the history ends is remembered)."""
    from dos_client import render

    seen = saved.entry.get("seen_seq")
    after = int(seen or 0)
    events: list[dict[str, Any]] = []
    for _ in range(100):
        page = saved.api.history(saved.game_id, after=after, limit=500)
        events.extend(page["events"])
        after = page["next_after"]
        if not page["more"]:
            break
    if after != seen:
        saved.remember(seen_seq=after)
    if seen is None:
        return []
    you = game.get("you")
    others = [e for e in events if e.get("seat") != you or e["kind"] == "round_started"]
    return render.event_lines(others, render.names_of(game))


@cli.command()
@click.argument("game", required=False)
@pass_settings
def moves(settings: Settings, game: str | None) -> None:
    """Your legal actions, numbered: play one with `dos-client move N`."""
    from dos_client import render

    saved = settings.saved_game(game)
    listing = saved.api.actions(saved.game_id)
    if listing["actions"]:
        saved.remember(listed_version=listing["version"])
    why_not = "" if listing["your_turn"] else _whose_turn(saved)
    settings.emit(listing, lambda: render.moves(_out(), listing, settings.command(), why_not))


def _whose_turn(saved: SavedGame) -> str:
    """Why a seat cannot move now, in words: whose turn it is, or that the game is over."""
    game = saved.api.game(saved.game_id)
    view = game.get("view")
    names = [s.get("name") or f"seat {s['seat']}" for s in game["seats"]]
    if game["status"] == "finished" and view and view.get("winner") is not None:
        return f"the game is over, {names[view['winner']]} won"
    if game["status"] != "active" or not view:
        return f"the game is {game['status']}"
    return (f"it is {names[view['current']]}'s turn; `{saved.settings.command()} wait` tells "
            "you when it is yours")


GAME_ID = re.compile(r"[a-z0-9]{10}")


def _split_game(store: Store, words: Sequence[str]) -> tuple[str | None, str]:
    """``[GAME] MOVE...``: the first word names a game if it is a saved name or a game id."""
    if len(words) >= 2:
        first = words[0]
        if first in store.games or any(e["game_id"] == first for e in store.games.values()):
            return first, " ".join(words[1:])
        if GAME_ID.fullmatch(first) and len(words) == 2 and words[1].isdigit():
            return first, words[1]  # a game id this profile has not saved: _pick says so
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
    return f" Did you mean: {', '.join(close)}?" if close else ""


@cli.command()
@click.argument("words", nargs=-1, required=True, metavar="[GAME] MOVE")
@click.option("--at", "at_version", type=click.IntRange(min=1), metavar="VERSION",
              help="The game version of the list the number comes from (emails print it).")
@pass_settings
def move(settings: Settings, words: Sequence[str], at_version: int | None) -> None:
    """Play a numbered move (`move 3`) or notation (`move "m1 R5; m2 B3+Y4; end"`).

    \b
    A number plays the move of the list you last saw (`moves`, `show`, `wait`
    or an email's `move GAME N --at VERSION`); if the game moved on since,
    nothing is played and the new list is printed (exit 4).
    """
    store = settings.store()
    game, text = _split_game(store, words)
    saved = settings.saved_game(game, store)
    if text.strip().isdigit():
        _play_number(saved, int(text), at_version)
    else:
        _play(saved, text, at_version)


@cli.command()
@click.argument("game", required=False)
@pass_settings
def draw(settings: Settings, game: str | None) -> None:
    """Draw a card (then `move` to match with it or add a card)."""
    _play(settings.saved_game(game), "draw")


@cli.command("dos")
@click.argument("game", required=False)
@pass_settings
def call_dos(settings: Settings, game: str | None) -> None:
    """Call "DOS" on your two cards, in or out of turn (rule 5.1)."""
    _play(settings.saved_game(game), "dos")


@cli.command()
@click.argument("words", nargs=-1, required=True, metavar="[GAME] PLAYER")
@pass_settings
def catch(settings: Settings, words: Sequence[str]) -> None:
    """Catch a player holding two cards without a DOS call (name or seat): they draw two."""
    store = settings.store()
    game, who = _split_game(store, words)
    _play(settings.saved_game(game, store), f"catch {who}")


def _require_token(saved: SavedGame) -> None:
    if saved.entry.get("token") is None:
        raise ClientError("you hold no seat in this game (only the host token); join a seat "
                          "with its invite first")


def _play_number(saved: SavedGame, number: int, at_version: int | None) -> None:
    _require_token(saved)
    version = at_version if at_version is not None else saved.entry.get("listed_version")
    if version is None:
        command = saved.settings.command()
        raise ClientError(f"which list is move {number} from? You have not seen one for "
                          f"{saved.name} yet: `{command} moves` prints it, then "
                          f"`{command} move N` plays its number N", EXIT_REFUSED)
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
            click.echo(f"The game moved on (version {version} → {fresh['version']}), so nothing "
                       "was played. The table now:", err=True)
            saved.draw_table(fresh)
        error.message = (f"the game changed since the list you chose from (version {version}, "
                         f"now {fresh['version']}); nothing was played: look again and choose")
        error.exit_code = EXIT_STALE
    if error.kind == "game-not-active":
        fresh = saved.api.game(saved.game_id)
        view = fresh.get("view") or {}
        if fresh["status"] == "finished":
            names = [s.get("name") or f"seat {s['seat']}" for s in fresh["seats"]]
            won = f": {names[view['winner']]} won" if view.get("winner") is not None else ""
            error.message = (f"the game {saved.name} is over{won}; nothing was played. "
                             f"`{command} history {saved.name}` tells how it went.")
        else:
            error.message = f"the game {saved.name} is {fresh['status']}; nothing was played."
        error.exit_code = EXIT_REFUSED
    elif error.kind == "not-your-turn":
        error.message += f". `{command} wait` tells you when it is your turn."
    return error


def _played(saved: SavedGame, result: dict[str, Any]) -> None:
    from dos_client import render

    console = _out()
    for line in render.event_lines(result["events"], render.names_of(result["game"])):
        console.print(line)
    saved.draw_table(result["game"])
    if result["events"]:
        saved.remember(seen_seq=max(e["seq"] for e in result["events"]))


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
        lines = render.event_lines(events, names, times=True)
        for line in lines if show_all else lines[-30:]:
            click.echo(line)

    settings.emit(events, human)


@cli.command()
@click.argument("games_", nargs=-1, metavar="[GAME]...")
@click.option("--timeout", type=click.FloatRange(min=0), default=3600, show_default=True,
              help="Give up after this many seconds (exit 7).")
@click.option("--interval", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="Polling interval, only against a server without long-polls "
                   "(it backs off up to 60 s).")
@pass_settings
def wait(settings: Settings, games_: Sequence[str], timeout: float, interval: float) -> None:
    """Block until it is your turn in any of the games (default: all saved games).

    The server answers the moment a game changes (a long-poll): no polling."""
    store = settings.store()
    names = list(games_) or list(store.games)
    if not names:
        raise ClientError("no saved games to wait for")
    saved_games = [settings.saved_game(n, store) for n in names]
    deadline = time.monotonic() + timeout
    with _err().status("Waiting for your turn...", spinner="dots"):
        found = _first_ready(saved_games, deadline, interval)
    if found is None:
        raise ClientError(f"still not your turn after {timeout:g} s", EXIT_TIMEOUT)
    saved, body = found
    if body["status"] == "finished":
        settings.emit({"game": saved.name, "id": saved.game_id, "finished": True},
                      f"{saved.name} is over.")
        return

    def human() -> None:
        click.echo(f"Your turn in {saved.name}.")
        saved.draw_table(body)

    if settings.as_json:
        saved.remember_list(body)
    settings.emit({"game": saved.name, "id": saved.game_id, "version": body["version"],
                   "legal_actions": body["view"]["legal_actions"]}, human)


LONG_POLL = 30.0  # seconds per long-poll request; the server grants up to 60
Ready = tuple["SavedGame", dict[str, Any]]


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
    for _ in saved_games:
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


def _email(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
        raise click.BadParameter(f"{value!r} is not an email address (like you@example.org)")
    return value


NOTIFY_EVENTS = ("your_turn", "reminder", "timed_out", "caught", "round_over", "game_over",
                 "invited")


@cli.command()
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
                raise click.BadParameter(
                    f"{item!r}: use CHANNEL:EVENT, CHANNEL being email or webhook and EVENT "
                    f"one of {', '.join(NOTIFY_EVENTS)}", param_hint="--event")
            chosen[channel].append(event)
        changes["events"] = chosen
    if digest is not None:
        changes["digest"] = digest
    result = saved.api.set_notifications(saved.game_id, seat, changes)  # {}: only reads
    events_on = "; ".join(f"{channel}: {', '.join(names) or 'none'}"
                          for channel, names in (result.get("events") or {}).items())
    lines = [f"Notifications for {saved.name}: email {result['email'] or 'off'}, "
             f"webhook {result['webhook_url'] or 'off'}, daily digest "
             f"{'on' if result.get('digest') else 'off'}.", f"Events: {events_on}."]
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


@cli.command()
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


@cli.command()
@click.argument("game", required=False)
@pass_settings
def invite(settings: Settings, game: str | None) -> None:
    """Host: the invites of the seats not yet claimed, and the open seats' invite code."""
    saved = settings.saved_game(game)
    host = saved.host_api()
    if "invites" not in saved.entry:
        raise ClientError(f"the invites of {saved.name} were not saved (it was created by an "
                          "older dos-client); `dos-client token rotate` on the host's "
                          "machine issues new tokens per seat")
    body = host.game(saved.game_id)
    claimed = {s["name"] for s in body["seats"] if s.get("claimed")}
    pending = {name: line for name, line in saved.entry["invites"].items() if name not in claimed}
    open_seats = [s for s in body["seats"] if s.get("open")]
    code = saved.entry.get("invite_code") if open_seats else None
    lines = [f"Invite for {name}: dos-client join {line}" for name, line in pending.items()]
    if code:
        lines.append(f"Open seats ({len(open_seats)}): dos-client join {saved.game_id} --code "
                     f"{code} --name YOUR_NAME")
    if not lines:
        lines.append(f"Every seat of {saved.name} is claimed.")
    settings.emit({"game": saved.name, "id": saved.game_id, "invites": pending,
                   "invite_code": code, "open_seats": len(open_seats)}, "\n".join(lines))


@cli.command()
@click.argument("game_id", metavar="GAME")
@click.option("--timeout", type=click.FloatRange(min=0), default=24 * 3600.0,
              show_default=True, help="Stop after this many seconds (exit 7).")
@click.option("--interval", type=click.FloatRange(min=0.1), default=5.0, show_default=True,
              help="Polling interval, only against a server without long-polls "
                   "(it backs off up to 60 s).")
@pass_settings
def watch(settings: Settings, game_id: str, timeout: float, interval: float) -> None:
    """Spectate GAME (a game id; no seat needed): the table, then each change as it
    happens, until the game is over."""
    from dos_client import render

    store = settings.store()
    api = _api(settings.server_url(store))
    body = api.game(game_id)
    after = 0
    while True:
        page = api.history(game_id, after=after, limit=500)
        events = page["events"]
        after = page["next_after"]
        if not page["more"]:
            break
    if settings.as_json:
        _emit_json(body)
    else:
        render.table(_out(), body, game_id, settings.command())
    deadline = time.monotonic() + timeout
    delay = interval
    long_poll = "last" in page  # else a server without long-polls: poll
    while body["status"] not in ("finished", "cancelled"):
        left = deadline - time.monotonic()
        if left <= 0 or (not long_poll and delay > left):
            raise ClientError(f"stopped watching after {timeout:g} s", EXIT_TIMEOUT)
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
            _emit_json({"events": events, "game": body})
            continue
        console = _out()
        for line in render.event_lines(events, render.names_of(body), times=True):
            console.print(line)
        render.table(console, body, game_id, settings.command())


@cli.group()
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
    _adopt_token(settings, store, url or settings.server_url(store), game_id, player_token,
                 label)


def _adopt_token(settings: Settings, store: Store, url: str, game_id: str, token: str,
                 label: str | None) -> None:
    """Check that ``token`` is a player token of the game, then save it (replacing the seat's
    old one if this profile has the game)."""
    body = _api(url, token).game(game_id)
    if body.get("you") is None:
        raise ClientError(f"that is not a player token of game {game_id} (a host token or an "
                          "invite? join with an invite: dos-client join GAME:INVITE)", EXIT_AUTH)
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
                  f"Token saved: you are {seat_name} (seat {body['you']}) in game {game_id}, "
                  f"saved as {name!r}. Next: {settings.command()} show")


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


@cli.command()
@click.argument("section", required=False)
@pass_settings
def rules(settings: Settings, section: str | None) -> None:
    """The rules of DOS as this server plays them; SECTION (3, 3.6) prints one part."""
    text = rules_text(section)
    settings.emit({"section": section, "text": text}, text.rstrip("\n"))


def rules_text(section: str | None = None) -> str:
    """The players' rules document (package data), or one section of it."""
    from importlib.resources import files

    text = files("dos_client").joinpath("data/rules.md").read_text(encoding="utf-8")
    if section is None:
        return text
    wanted = section.strip().rstrip(".")
    lines = text.splitlines()
    top = re.compile(r"^## (\d+)\. ")
    item = re.compile(r"^(\d+\.\d+) ")
    picked: list[str] = []
    for line in lines:
        heading, numbered = top.match(line), item.match(line)
        if picked and (heading or (numbered and "." in wanted)):
            break
        if (heading and heading.group(1) == wanted) or (numbered and numbered.group(1) == wanted) or picked:
            picked.append(line)
    if not picked:
        known = [m.group(1) for line in lines if (m := top.match(line) or item.match(line))]
        raise click.BadParameter(f"no rule {section!r}; the sections are {', '.join(known)}",
                                 param_hint="SECTION")
    return "\n".join(picked).rstrip() + "\n"


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script: eval "$(dos-client completion bash)"."""
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None
    click.echo(completer(cli, {}, "dos-client", "_DOS_CLIENT_COMPLETE").source())


def _complete_games(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[CompletionItem]:
    """Saved game names (and ids) of the profile on the command line."""
    from click.shell_completion import CompletionItem

    profile = ctx.find_root().params.get("profile") or "default"
    try:
        games = Store(profile).games
    except ClientError:
        return []
    names = [*games, *(str(e["game_id"]) for e in games.values())]
    return [CompletionItem(n) for n in dict.fromkeys(names) if n.startswith(incomplete)]


def _complete_game_arguments(group: click.Group) -> None:
    for command in group.commands.values():
        if isinstance(command, click.Group):
            _complete_game_arguments(command)
            continue
        for param in command.params:
            if isinstance(param, click.Argument) and param.name in ("game", "games_", "words"):
                param._custom_shell_complete = _complete_games


_accept_global_options(cli)
_complete_game_arguments(cli)


def _register_account() -> None:
    from dos_client.account import register

    register(cli)  # login, logout, whoami (issue #14)


_register_account()


def main(argv: Sequence[str] | None = None) -> NoReturn:
    sys.exit(cli.main(args=list(argv) if argv is not None else None, prog_name="dos-client"))


if __name__ == "__main__":
    main()
