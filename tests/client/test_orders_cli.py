"""``dos-client orders``: show and set a seat's standing orders against a real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from dos_call_helpers import waiting_seat_holds_two
from dos_client.cli import cli
from dos_client.commands.orders import ORDERS
from dos_server import create_app
from dos_server.extensions import db
from dos_server.services import orders as server_orders


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


def test_the_client_knows_the_servers_orders() -> None:
    assert server_orders.ORDERS == ORDERS


def test_orders_show_and_set(server_url: str, config_file: Path) -> None:
    ok("server", server_url)
    ok("--profile", "bob", "server", server_url)
    created = as_json("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--as", "g",
                      "--dos-call")
    as_json("--profile", "bob", "join", created["invites"]["Bob"], "--as", "g")
    shown = ok("orders").stdout
    assert "Standing orders in g:" in shown
    assert "draw   off" in shown
    assert "orders draw on" in shown
    assert as_json("orders", "dos", "on", "catch", "on")["orders"] == ["dos", "catch"]
    assert as_json("orders", "catch", "OFF", "draw", "on", "g")["orders"] == ["draw", "dos"]
    assert as_json("--profile", "bob", "orders")["orders"] == []  # Bob's own: none
    assert as_json("show")["orders"] == ["draw", "dos"]
    assert "Your standing orders: draw, dos." in ok("show").stdout
    assert as_json("orders", "all", "off")["orders"] == []
    assert as_json("orders", "all", "on")["orders"] == list(ORDERS)
    for bad in (["draw"], ["draw", "maybe"], ["g", "dance"]):
        refused = run("orders", *bad)
        assert refused.exit_code == 2, refused.output
    assert as_json("orders")["orders"] == list(ORDERS)  # nothing refused changed anything


def test_an_order_played_for_you_reads_so_in_the_history(
        server_url: str, config_file: Path, tmp_path: Path) -> None:
    ok("server", server_url)
    ok("--profile", "bob", "server", server_url)
    created = as_json("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--as", "g",
                      "--dos-call")
    as_json("--profile", "bob", "join", created["invites"]["Bob"], "--as", "g")
    app = create_app({"TESTING": True, "SECRET_KEY": "client-test-secret",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'dos.sqlite3'}"})
    waiting, _mover = waiting_seat_holds_two(app, str(created["id"]))
    with app.app_context():
        db.engine.dispose()
    profile = ["default", "bob"][waiting]
    assert as_json("--profile", profile, "orders", "dos", "on")["orders"] == ["dos"]
    told = ok("--profile", profile, "history").stdout
    assert f"{['Ann', 'Bob'][waiting]} called DOS (by standing order)" in told, told


def test_new_game_without_standing_dos(server_url: str, config_file: Path) -> None:
    ok("server", server_url)
    as_json("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--dos-call",
            "--no-standing-dos")
    assert as_json("show")["standing_dos"] is False
    refused = {o["order"]: o["applies"] for o in as_json("orders", "all", "on")["available"]}
    assert refused == {"draw": True, "only": True, "dos": False, "catch": False}
    assert "(not allowed in this game)" in ok("orders").stdout
