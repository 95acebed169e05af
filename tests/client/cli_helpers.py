"""Helpers of the client tests: run ``dos-client`` through CliRunner, read the config file,
and a two-seat table (Ann on profile ``default``, Bob on ``bob``)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dos_client.cli import cli
from testkit import build_app, dispose, finish_game, serving

CARD = re.compile(r"\[[RGBYW](?:\d+|#)\]")
ANSI = "\x1b"


def run(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:
    result = CliRunner().invoke(cli, list(args), env=env, input=input)
    assert "Traceback" not in result.output, result.output
    if result.exit_code != 0:
        # Handled errors end with SystemExit: never an exception escaping to the user.
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def ok(*args: str, **kwargs: Any) -> Result:
    result = run(*args, **kwargs)
    assert result.exit_code == 0, (args, result.output)
    return result


def as_json(*args: str) -> Any:
    return json.loads(ok("--json", *args).stdout)


def table_url(config_file: Path) -> str:
    return str(saved(config_file)["profiles"]["default"]["server"])


def saved(config_file: Path) -> dict[str, Any]:
    return dict(json.loads(config_file.read_text()))


def tokens_in(config_file: Path) -> list[str]:
    out = []
    for section in saved(config_file)["profiles"].values():
        for entry in section["games"].values():
            out += [t for t in (entry.get("token"), entry.get("host_token")) if t]
    return out


class Table:
    """A two-seat game: Ann (profile ``default``, the host) and Bob (profile ``bob``)."""

    def __init__(self, url: str, config_file: Path, target: int = 30) -> None:
        ok("server", url)
        ok("--profile", "bob", "server", url)
        created = as_json("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--as", "g",
                          "--target", str(target))
        self.id: str = created["id"]
        joined = as_json("--profile", "bob", "join", created["invites"]["Bob"], "--as", "g")
        assert joined == {"game": "g", "seat": 1, "name": "Bob", "status": "active"}
        self.config_file = config_file

    def profile(self, seat: int) -> str:
        return ["default", "bob"][seat]

    def state(self) -> dict[str, Any]:
        return dict(as_json("show"))

    def to_move(self) -> str:
        return self.profile(self.state()["view"]["current"])

    def waiting(self) -> str:
        return self.profile(1 - self.state()["view"]["current"])

    def listing(self, profile: str) -> dict[str, Any]:
        return dict(as_json("--profile", profile, "moves"))


def find_table(server_url: str, config_file: Path,
               fits: Callable[[dict[str, Any]], Any]) -> tuple[Table, Any]:
    """New games until ``fits(listing of the player to move)`` gives something (deals are random)."""
    for _ in range(30):
        config_file.unlink(missing_ok=True)
        game = Table(server_url, config_file)
        found = fits(game.listing(game.to_move()))
        if found:
            return game, found
    pytest.fail("no deal fitted in 30 games")


def matches(listing: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in listing["actions"] if a["action"].startswith("m")]


def serve(database_url: str) -> Iterator[str]:
    """A real server on a free loopback port, on the fresh migrated database at the URL."""
    app = build_app(database_url)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access lines in the output
    try:
        with serving(app) as url:
            yield url
    finally:
        dispose(app)


def finish(database_url: str, game_id: str, winner: int) -> None:
    """End the game in the server's database as a winning move would leave it."""
    app = build_app(database_url, migrate=False)
    try:
        finish_game(app, game_id, winner)
    finally:
        dispose(app)
