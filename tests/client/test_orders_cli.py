"""``dos-client orders``: show and set a seat's standing orders against a real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from dos_client.cli import cli
from dos_client.commands.orders import ORDERS
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
    assert as_json("orders", "all", "off")["orders"] == []
    assert as_json("orders", "all", "on")["orders"] == list(ORDERS)
    for bad in (["draw"], ["draw", "maybe"], ["g", "dance"]):
        refused = run("orders", *bad)
        assert refused.exit_code == 2, refused.output
    assert as_json("orders")["orders"] == list(ORDERS)  # nothing refused changed anything
