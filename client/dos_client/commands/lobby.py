"""Into a game: ``new``, ``join``, ``games``, ``rematch``; the host's ``start`` and
``invite``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import click

from dos_client import system
from dos_client.context import (
    SavedGame,
    Settings,
    adopt_token,
    connect,
    pass_settings,
    sync_games,
)
from dos_client.errors import ClientError, DosApiError
from dos_client.i18n import N_, _


class _Bots(click.Choice[str]):
    """The bots a seat may be (dos_engine.strategies.BOTS, the server's list too), read when a
    command line or its help first needs them: dos_engine is not imported at every start."""

    def __init__(self) -> None:
        self._names: tuple[str, ...] | None = None
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        if self._names is None:
            from dos_engine.strategies import BOTS

            self._names = tuple(BOTS)
        return self._names

    @choices.setter
    def choices(self, names: tuple[str, ...]) -> None:
        self._names = tuple(names)


def _duration(text: str | None) -> int | None:
    if not text:
        return None
    found = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", text.lower())
    if not found:
        raise click.BadParameter(_("use a number with s, m, h or d, e.g. 36h or 3d"))
    return int(found.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[found.group(2)]


@click.command(help=N_("Create a game and print the invites to hand out."))
@click.option("--seat", "seats", multiple=True, metavar="NAME",
              help=N_("A player's seat (repeat; order is seating order)."))
@click.option("--open", "open_seats", type=click.IntRange(0, 3), default=0,
              help=N_("Seats left open, claimed later with the invite code."))
@click.option("--bot", "bots", multiple=True, type=_Bots(),
              help=N_("A bot seat (repeat): random, greedy, or the searching bot at level "
                      "1 (quick) to 3 (strongest)."))
@click.option("--me", metavar="NAME", help=N_("Join the seat NAME yourself right away."))
@click.option("--after-draw", type=click.Choice(["drawn_card", "any"]), default="drawn_card",
              show_default=True, help=N_("What may be matched after drawing (RULES 3.6)."))
@click.option("--bonus-placement", type=click.Choice(["optional", "mandatory"]),
              default="optional", show_default=True,
              help=N_("Whether earned bonus cards must be placed (RULES 3.5)."))
@click.option("--dos-call/--no-dos-call", default=False, show_default=True,
              help=N_("Play with calling DOS and catching (RULES 5)."))
@click.option("--standing-dos/--no-standing-dos", default=True, show_default=True,
              help=N_("Whether standing orders may call DOS and catch for a player."))
@click.option("--target", type=click.IntRange(1, 10_000), default=200, show_default=True,
              help=N_("Score that wins the game."))
@click.option("--turn-limit", metavar="DURATION", help=N_("Time per turn, e.g. 36h or 3d."))
@click.option("--title", metavar="TEXT",
              help=N_("The game's title, shown to every player in emails, lists and pages."))
@click.option("--as", "label", metavar="NAME", help=N_("Short name to save the game under."))
@pass_settings
def new(settings: Settings, seats: Sequence[str], open_seats: int, bots: Sequence[str],
        me: str | None, after_draw: str, bonus_placement: str, dos_call: bool, target: int,
        turn_limit: str | None, title: str | None, label: str | None,
        standing_dos: bool = True) -> None:
    payload_seats: list[dict[str, Any]] = [{"name": name} for name in seats]
    payload_seats += [{} for _seat in range(open_seats)] + [{"bot": bot} for bot in bots]
    if not 2 <= len(payload_seats) <= 4:
        raise click.UsageError(_("a game has 2 to 4 seats: use --seat, --open and --bot"))
    if me and me not in seats:
        raise click.UsageError(_("--me {name!r} must be one of the --seat names").format(name=me))
    store = settings.store()
    url = settings.server_url(store)
    created = connect(url).create_game({
        "seats": payload_seats,
        "options": {"after_draw": after_draw, "bonus_placement": bonus_placement,
                    "dos_call": dos_call, "target_score": target},
        "turn_time_limit": _duration(turn_limit),
        **({"title": title} if title is not None else {}),
        "standing_dos": standing_dos,
    })
    name = store.unique_name(label or created["id"])
    invites = {i["name"]: f"{created['id']}:{i['invite']}" for i in created["invites"]}
    store.games[name] = {"game_id": created["id"], "server": url, "seat": None, "token": None,
                         "host_token": created["host_token"], "invites": dict(invites),
                         "invite_code": created["invite_code"]}
    store.section["current"] = name
    if me:
        joined = connect(url).join(created["id"], invite=invites.pop(me).split(":", 1)[1],
                                   time_zone=system.time_zone(), language=system.language())
        store.games[name].update(seat=joined["seat"], token=joined["player_token"])
    store.save()
    lines = [_("Created game {id} (saved as {name!r}; you hold the host token).").format(
                 id=created["id"], name=name),
             *(_("Invite for {seat}: dos-client join {invite}").format(seat=seat_name,
                                                                        invite=invite)
               for seat_name, invite in invites.items())]
    if open_seats:
        lines.append(_("Open seats: dos-client join {id} --code {code} --name YOUR_NAME").format(
            id=created["id"], code=created["invite_code"]))
    if me:
        lines.append(_("You play as {name}. Next: {command} show").format(
            name=me, command=settings.command()))
    if invites or open_seats or not me:
        lines.append(_("The game starts when everyone has joined; `{command} start` starts it "
                       "sooner (open seats are removed).").format(command=settings.command()))
    settings.emit({"game": name, "id": created["id"], "invites": invites,
                   "invite_code": created["invite_code"] if open_seats else None},
                  "\n".join(lines))


@click.command(
    help=N_("Claim your seat with INVITE (GAME:TOKEN as printed by `new`), or GAME "
            "--code C --name N."))
@click.argument("invite")
@click.option("--code", help=N_("The game's invite code, to take an open seat."))
@click.option("--name", help=N_("Your name, with --code."))
@click.option("--as", "label", metavar="NAME", help=N_("Short name to save the game under."))
@pass_settings
def join(settings: Settings, invite: str, code: str | None, name: str | None,
         label: str | None) -> None:
    store = settings.store()
    url = settings.server_url(store)
    game_id, _colon, token = invite.partition(":")
    if not token and not code:
        raise click.UsageError(_("give the whole invite (GAME:TOKEN), or a game id with --code "
                                 "and --name"))
    try:
        joined = connect(url).join(game_id, invite=token or None, code=code, name=name,
                                   time_zone=system.time_zone(), language=system.language())
    except DosApiError as error:
        if not token or error.status != 401:
            raise
        try:  # not an invite: perhaps a player token (`token rotate --show`, another device)
            adopt_token(settings, store, url, game_id, token, label)
        except ClientError:
            raise error from None
        return
    saved = store.unique_name(label or game_id)
    store.games[saved] = {"game_id": game_id, "server": url, "seat": joined["seat"],
                          "token": joined["player_token"], "host_token": None}
    store.section["current"] = saved
    store.save()
    status = joined["game"]["status"]
    waiting = [s["name"] or _("an open seat") for s in joined["game"]["seats"]
               if not s.get("claimed")] if status == "waiting" else []
    sentence = (N_("You are {name} (seat {seat}) in game {id}, saved as {saved!r}. Still waiting "
                   "for {waiting}: the game starts when everyone has joined, or when the host "
                   "starts it. Next: {command} show") if waiting
                else N_("You are {name} (seat {seat}) in game {id}, saved as {saved!r}. "
                        "Next: {command} show"))
    settings.emit({"game": saved, "seat": joined["seat"], "name": joined["name"],
                   "status": status},
                  _(sentence).format(name=joined["name"], seat=joined["seat"], id=game_id,
                                     saved=saved, waiting=", ".join(waiting),
                                     command=settings.command()))


@click.command(
    help=N_("Every saved game: whose turn, deadline, scores; * marks games waiting on you."))
@pass_settings
def games(settings: Settings) -> None:
    store = settings.store()
    sync_games(store)  # signed in: the account's games on this server too
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
        click.echo(_("Error: {message}").format(message=failed[0].message), err=True)
        click.get_current_context().exit(failed[0].exit_code)


def _games_table(rows: list[dict[str, Any]], current: str | None) -> None:
    from dos_client import render

    if not rows:
        click.echo(_("No saved games. Create one with `dos-client new` or join one."))
    for row in rows:
        if "error" in row:
            click.echo(f"  {row['game']}: {row['error']}")
            continue
        mark = "*" if row["your_turn"] else " "
        here = _("(current)") + " " if row["game"] == current else ""
        scores = ", ".join(f"{k} {v}" for k, v in row["scores"].items())
        turn = (_("{name} to play").format(name=row["turn"]) if row["turn"]
                else render.status(row["status"]))
        deadline = (_(", deadline {when}").format(when=render.deadline(row["deadline"]))
                    if row["deadline"] else "")
        titled = f"“{row['title']}” " if row.get("title") else ""
        click.echo(f"{mark} {row['game']} {titled}{here}· {turn}{deadline} · {scores}")


@click.command(help=N_("Host: start now with the seats filled so far."))
@click.argument("game", required=False)
@pass_settings
def start(settings: Settings, game: str | None) -> None:
    saved = settings.saved_game(game)
    saved.host_api().start(saved.game_id)
    settings.emit({"game": saved.name, "started": True},
                  _("{game} started.").format(game=saved.name))


@click.command(
    help=N_("Host: the invites of the seats not yet claimed, and the open seats' invite code."))
@click.argument("game", required=False)
@pass_settings
def invite(settings: Settings, game: str | None) -> None:
    saved = settings.saved_game(game)
    host = saved.host_api()
    if "invites" not in saved.entry:
        raise ClientError(_("the invites of {game} were not saved (it was created by an older "
                            "dos-client); `dos-client token rotate` on the host's machine issues "
                            "new tokens per seat").format(game=saved.name))
    body = host.game(saved.game_id)
    claimed = {s["name"] for s in body["seats"] if s.get("claimed")}
    pending = {name: line for name, line in saved.entry["invites"].items() if name not in claimed}
    open_seats = [s for s in body["seats"] if s.get("open")]
    code = saved.entry.get("invite_code") if open_seats else None
    lines = [_("Invite for {seat}: dos-client join {invite}").format(seat=name, invite=line)
             for name, line in pending.items()]
    if code:
        lines.append(_("Open seats ({count}): dos-client join {id} --code {code} --name "
                       "YOUR_NAME").format(count=len(open_seats), id=saved.game_id, code=code))
    if not lines:
        lines.append(_("Every seat of {game} is claimed.").format(game=saved.name))
    settings.emit({"game": saved.name, "id": saved.game_id, "invites": pending,
                   "invite_code": code, "open_seats": len(open_seats)}, "\n".join(lines))


@click.command(
    help=N_("After a game: play again with the same players and rules. The first rematch makes "
            "a standing challenge; yours accepts it. It starts when everyone has accepted, or "
            "when its host starts it."))
@click.argument("game", required=False)
@pass_settings
def rematch(settings: Settings, game: str | None) -> None:
    saved = settings.saved_game(game)
    done = saved.api.rematch(saved.game_id)
    new_id = done["game_id"]
    store = saved.store
    name = next((n for n, e in store.games.items() if e.get("game_id") == new_id
                 and str(e.get("server") or "").rstrip("/") == saved.server), None)
    if name is None:
        name = store.unique_name(f"{saved.name}-{done['game']['series']['no']}"
                                 if done["game"].get("series") else new_id)
        store.games[name] = {"game_id": new_id, "server": saved.server, "seat": None,
                             "token": None, "host_token": None}
    entry = store.games[name]
    if done.get("player_token"):
        entry.update(seat=done["seat"], token=done["player_token"])
    if done.get("host_token"):
        entry.update(host_token=done["host_token"], invite_code=done.get("invite_code"))
    store.section["current"] = name
    store.save()
    body = done["game"]
    awaited = [s["name"] for s in body["seats"] if not s.get("claimed")]
    lines = [(_("Rematch {id} of {game} made, saved as {saved!r}.") if done["created"]
              else _("Rematch {id} of {game}, saved as {saved!r}.")).format(
                  id=new_id, game=saved.name, saved=name)]
    if body["status"] == "active":
        lines.append(_("Everyone accepted: the rematch has started. Next: {command} show").format(
            command=settings.command()))
    else:
        lines.append(_("Waiting for {players} to accept (each with `dos-client rematch`, the "
                       "game-over email's link or a reply rematch); it starts when everyone "
                       "has, or when its host starts it ({command} start).").format(
                           players=", ".join(awaited), command=settings.command()))
    settings.emit({"game": name, "id": new_id, "created": done["created"],
                   "seat": done.get("seat"), "status": body["status"],
                   "series": body.get("series")}, "\n".join(lines))


COMMANDS = (new, join, games, start, invite, rematch)
