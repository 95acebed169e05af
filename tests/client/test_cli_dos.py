"""``dos-client dos``, ``dos-client catch`` and ``new --bonus-placement`` (RULES.md 3.5, 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from dos_call_helpers import waiting_seat_holds_two
from dos_client.cli import cli
from dos_server import create_app
from dos_server.extensions import db

PROFILES = ["default", "bob"]


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def ok(*args: str) -> Result:
    result = run(*args)
    assert result.exit_code == 0, (args, result.output)
    return result


def as_json(*args: str) -> Any:
    return json.loads(ok("--json", *args).stdout)


def _table(url: str, *options: str) -> str:
    ok("server", url)
    ok("--profile", "bob", "server", url)
    created = as_json("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--as", "g",
                      *options)
    as_json("--profile", "bob", "join", created["invites"]["Bob"], "--as", "g")
    return str(created["id"])


def _waiting_holds_two(tmp_path: Path, game_id: str) -> tuple[str, str, str]:
    """Store the game with the waiting seat down to two cards; (waiting, mover, waiting's name)."""
    app = create_app({"TESTING": True, "SECRET_KEY": "client-test-secret",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'dos.sqlite3'}"})
    waiting, _ = waiting_seat_holds_two(app, game_id)
    with app.app_context():
        db.engine.dispose()
    return PROFILES[waiting], PROFILES[1 - waiting], ["Ann", "Bob"][waiting]


def test_new_bonus_placement_and_dos_call(server_url: str, config_file: Path) -> None:
    _table(server_url, "--dos-call", "--bonus-placement", "mandatory")
    options = as_json("show")["options"]
    assert options["bonus_placement"] == "mandatory"
    assert options["dos_call"] is True
    assert options["dos_rule"] == "printed"
    assert run("new", "--seat", "A", "--seat", "B", "--bonus-placement", "never").exit_code == 2


def test_5_dos_and_catch_commands(server_url: str, config_file: Path, tmp_path: Path) -> None:
    game_id = _table(server_url, "--dos-call")
    waiting, mover, name = _waiting_holds_two(tmp_path, game_id)
    listing = as_json("--profile", waiting, "moves")
    assert [a["action"] for a in listing["actions"]] == ["dos"]
    caught = ok("--profile", mover, "catch", name)  # by name, resolved by the server
    assert "caught" in caught.stdout
    assert as_json("show")["view"]["hand_sizes"][PROFILES.index(waiting)] == 4
    waiting, mover, name = _waiting_holds_two(tmp_path, game_id)
    called = ok("--profile", waiting, "dos")  # out of turn
    assert "called DOS" in called.stdout  # the history tells the event, not the action row
    refused = run("--profile", mover, "catch", name)
    assert refused.exit_code == 3
    assert run("--profile", waiting, "dos").exit_code == 3  # called already
