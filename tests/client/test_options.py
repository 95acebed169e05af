"""Options and exit codes work as documented.

Global options after the command, --server/DOS_SERVER never silently ignored, and the exit
codes the README lists: each produced here or in test_cli.py.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from cli_helpers import Table, as_json, ok, run, saved


@pytest.mark.parametrize("args", [
    ["show", "--json"],
    ["show", "g", "--json"],
    ["games", "--json"],
    ["moves", "--json", "--profile", "bob"],
    ["history", "--json", "--debug"],
    ["whoami", "--json"],
    ["whoami", "--json", "--profile", "bob"],
])
def test_global_options_after_the_command(table: Table, args: list[str]) -> None:
    result = ok(*args)
    json.loads(result.stdout)  # --json took effect


def test_profile_and_server_after_the_command(table: Table, config_file: Path) -> None:
    body = json.loads(ok("show", "--json", "--profile", "bob").stdout)
    assert body["you"] == 1
    url = saved(config_file)["profiles"]["default"]["server"]
    assert ok("server", "--server", "http://elsewhere.test").stdout.strip() == \
        "http://elsewhere.test"
    assert json.loads(ok("show", "--server", url + "/", "--json").stdout)["you"] == 0


def test_server_mismatch_for_a_saved_game_is_an_error(table: Table) -> None:
    other = "http://127.0.0.1:9"
    for result in (run("--server", other, "show"), run("show", "--server", other),
                   run("show", env={"DOS_SERVER": other}), run("move", "draw", "--server", other)):
        assert result.exit_code == 2, result.output
        assert f"says {other}" in result.stderr
        assert "g is saved on http://127.0.0.1:" in result.stderr
    assert as_json("moves")["seat"] == 0  # nothing was sent anywhere; the saved server works


def test_an_unparseable_move_exits_3(table: Table) -> None:
    result = run("--profile", table.to_move(), "move", "xyzzy")
    assert result.exit_code == 3
    assert "'xyzzy' is not an action" in result.stderr


def test_invalid_notification_values_exit_2(table: Table) -> None:
    email = run("notify", "--email", "not-an-address")
    assert email.exit_code == 2
    assert "not an email address" in email.output
    webhook = run("notify", "--webhook", "ftp://example.org/x")  # refused by the server
    assert webhook.exit_code == 2, webhook.output
    assert "webhook_url" in webhook.stderr


def test_a_non_host_start_exits_5(table: Table) -> None:
    result = run("--profile", "bob", "start")
    assert result.exit_code == 5
    assert "only the host" in result.stderr


def test_games_with_the_server_down_exits_6(table: Table, config_file: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = saved(config_file)
    data["profiles"]["default"]["games"]["g"]["server"] = f"http://127.0.0.1:{port}"
    config_file.write_text(json.dumps(data))
    result = run("games")
    assert result.exit_code == 6
    assert "could not connect" in result.stdout  # the row
    assert result.stderr.startswith("Error: could not connect")
    as_json_result = run("games", "--json")
    assert as_json_result.exit_code == 6
    assert "error" in json.loads(as_json_result.stdout)[0]
