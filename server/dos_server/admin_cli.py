"""``dos-server admin``: the operator's command line (services/admin.py does the work).

Answers are for a person at a terminal; ``--json`` on the read commands gives them to scripts.
A refusal exits with 1 and says why; nothing was changed then.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any, TypeVar

import click
from flask import Flask

from dos_server.errors import DomainError
from dos_server.services import admin, ratings

T = TypeVar("T")


def _done(call: Callable[[], T]) -> T:
    try:
        return call()
    except (DomainError, admin.AdminRefused) as error:
        raise click.ClickException(str(error)) from None


def _json(value: Any) -> str:
    return json.dumps(value, default=lambda v: v.isoformat() if isinstance(v, datetime) else str(v),
                      indent=2, ensure_ascii=False)


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "-"


def register_cli(app: Flask) -> None:
    @app.cli.group("admin")
    def admin_group() -> None:
        """The operator's tools: games, seats, dead letters, addresses, figures."""

    @admin_group.command("games")
    @click.option("--status", type=click.Choice(["waiting", "active", "finished", "cancelled"]))
    @click.option("--idle-days", type=click.FloatRange(min=0), default=None,
                  help="Only games untouched for at least this many days.")
    @click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
    @click.option("--json", "as_json", is_flag=True)
    def games_command(status: str | None, idle_days: float | None, limit: int,
                      as_json: bool) -> None:
        """List games, the longest untouched first."""
        lines = admin.list_games(status, idle_days, limit)
        if as_json:
            click.echo(_json([asdict(line) for line in lines]))
            return
        for line in lines:
            turn = f"  turn: {line.turn_of}, deadline {_when(line.deadline)}" if line.turn_of else ""
            click.echo(f"{line.id}  {line.status:9}  idle since {_when(line.updated_at)}  "
                       f"{', '.join(line.players)}{turn}")
        if not lines:
            click.echo("no games")

    @admin_group.command("game")
    @click.argument("game_id")
    @click.option("--json", "as_json", is_flag=True)
    def game_command(game_id: str, as_json: bool) -> None:
        """One game: seats, whose turn, deadline, unsent notifications, last emails in."""
        shown = _done(lambda: admin.show_game(game_id))
        if as_json:
            click.echo(_json(shown))
            return
        click.echo(f"game {shown['id']} ({shown['status']}, version {shown['version']})"
                   + (f" \"{shown['title']}\"" if shown["title"] else ""))
        if shown["turn_of"] is not None:
            click.echo(f"turn of seat {shown['turn_of']} since {_when(shown['turn_started_at'])},"
                       f" deadline {_when(shown['deadline'])}")
        for seat in shown["seats"]:
            role = f"bot {seat['bot']}" if seat["bot"] else (
                "resigned" if seat["resigned"] else "claimed" if seat["claimed"] else "unclaimed")
            click.echo(f"  seat {seat['index']}: {seat['name'] or '(open)'} [{role}] "
                       f"cards {seat['cards'] if seat['cards'] is not None else '-'}, "
                       f"timeouts {seat['timeouts']}, last look {_when(seat['last_seen_at'])}, "
                       f"email {seat['email'] or '-'}, webhook {'yes' if seat['webhook'] else 'no'}")
        click.echo(f"outbox rows not sent: {len(shown['outbox'])}")
        for row in shown["outbox"]:
            click.echo(f"  #{row['id']} {row['status']} {row['channel']} {row['event']} "
                       f"attempts {row['attempts']} next {_when(row['next_attempt_at'])}"
                       + (f" ({row['error']})" if row["error"] else ""))
        click.echo(f"last emails received: {len(shown['inbound'])}")
        for row in shown["inbound"]:
            click.echo(f"  #{row['id']} {row['status']} {row['outcome'] or '-'} from "
                       f"{row['from'] or '-'} at {_when(row['received_at'])}")

    @admin_group.command("cancel")
    @click.argument("game_id")
    @click.option("--reason", default="cancelled by the server's operator", show_default=True)
    def cancel_command(game_id: str, reason: str) -> None:
        """Cancel a waiting or active game (no result; its unsent turn emails are dropped)."""
        game = _done(lambda: admin.cancel_game(game_id, reason[:200]))
        click.echo(f"game {game.id} is cancelled")

    @admin_group.command("bot")
    @click.argument("game_id")
    @click.argument("seat", type=click.IntRange(min=0))
    @click.option("--bot", "bot", default="greedy", show_default=True)
    def bot_command(game_id: str, seat: int, bot: str) -> None:
        """Hand a seat to a bot for the rest of the game."""
        game = _done(lambda: admin.hand_seat_to_bot(game_id, seat, bot))
        click.echo(f"seat {seat} of game {game.id} is played by the {bot} bot from now on")

    @admin_group.command("resend")
    @click.argument("notification_id", type=click.IntRange(min=1))
    def resend_command(notification_id: int) -> None:
        """Send a dead-lettered notification again (the worker picks it up)."""
        row = _done(lambda: admin.resend(notification_id))
        click.echo(f"notification {row.id} ({row.channel} {row.event} to {row.target}) is "
                   "queued again")

    @admin_group.command("forget")
    @click.argument("address")
    @click.confirmation_option(prompt="Forget this address in every closed game and delete "
                                      "its identity?")
    def forget_command(address: str) -> None:
        """Forget an email address everywhere (the account deletion, done by the operator)."""
        result = _done(lambda: admin.forget_address(address))
        click.echo(f"forgotten in {len(result['forgotten_in_games'])} closed game(s); kept in "
                   f"{len(result['kept_in_games_in_play'])} game(s) still in play")

    @admin_group.command("stats")
    @click.option("--json", "as_json", is_flag=True)
    def stats_command(as_json: bool) -> None:
        """Games by status, addresses, identities, turns today, the outbox by status."""
        figures = admin.stats()
        if as_json:
            click.echo(_json(figures))
            return
        games = ", ".join(f"{status} {count}" for status, count in sorted(figures["games"].items()))
        outbox = ", ".join(f"{status} {count}" for status, count in
                           sorted(figures["outbox"].items()))
        click.echo(f"games: {games or 'none'}")
        click.echo(f"addresses: {figures['addresses']}, identities: {figures['identities']}")
        click.echo(f"turns today (UTC): {figures['turns_today']}")
        click.echo(f"outbox: {outbox or 'empty'}")

    @app.cli.group("ratings")
    def ratings_group() -> None:
        """The players' ratings (services/ratings.py)."""

    @ratings_group.command("rebuild")
    def rebuild_command() -> None:
        """Recompute every rating from the stored results of the rated games."""
        games = ratings.rebuild()
        click.echo(f"ratings rebuilt from {games} rated game(s)")
