"""Tokens, invites and settings a person can manage."""

from __future__ import annotations

import json
import shlex
import shutil
import threading
import time
from pathlib import Path

import pytest
import requests
from cli_helpers import Table, as_json, ok, run, saved, table_url

from dos_server.services import watch


def test_rotate_show_prints_a_line_another_device_can_use(table: Table, config_file: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    other_device = config_file.with_name("other.json")
    shutil.copy(config_file, other_device)
    shown = ok("--profile", "bob", "token", "rotate", "--show").stdout
    line = shown.strip().splitlines()[-1]
    assert line.startswith(f"To use it on another device: dos-client token set {table.id} ")
    command = shlex.split(line.split(": ", 1)[1])
    monkeypatch.setenv("DOS_CLIENT_CONFIG", str(other_device))
    assert run("--profile", "bob", "show").exit_code == 5  # the old token there is revoked
    result = ok("--profile", "bob", *command[1:])
    assert "you are Bob (seat 1)" in result.stdout
    assert as_json("--profile", "bob", "show")["you"] == 1
    entry = saved(other_device)["profiles"]["bob"]["games"]["g"]  # the same saved game
    assert entry["token"] == command[-1]


def test_join_and_token_set_take_a_player_token(table: Table, config_file: Path) -> None:
    token = saved(config_file)["profiles"]["bob"]["games"]["g"]["token"]
    url = table_url(config_file)
    joined = ok("--profile", "laptop", "--server", url, "join", f"{table.id}:{token}").stdout
    assert "you are Bob (seat 1)" in joined
    assert as_json("--profile", "laptop", "show")["you"] == 1
    fresh = as_json("--profile", "phone", "--server", url, "token", "set", table.id, token,
                    "--as", "mine")
    assert fresh == {"game": "mine", "seat": 1, "name": "Bob"}
    bad = run("--profile", "tablet", "--server", url, "token", "set", table.id, token[:-4] + "AAAA")
    assert bad.exit_code == 5
    host = saved(config_file)["profiles"]["default"]["games"]["g"]["host_token"]
    not_a_player = run("--profile", "tablet", "--server", url, "token", "set", table.id, host)
    assert not_a_player.exit_code == 5
    assert "not a player token" in not_a_player.stderr


def test_invite_shows_the_invites_again(server_url: str, config_file: Path) -> None:
    ok("server", server_url)
    ok("--profile", "bob", "server", server_url)
    ok("new", "--seat", "Ann", "--seat", "Bob", "--open", "1", "--me", "Ann", "--as", "g")
    text = ok("invite").stdout
    bob_line = next(line for line in text.splitlines() if line.startswith("Invite for Bob: "))
    open_line = next(line for line in text.splitlines() if line.startswith("Open seats (1): "))
    assert "Ann" not in text  # claimed by the host
    ok("--profile", "bob", *shlex.split(bob_line.split(": ", 1)[1])[1:])
    ok("--profile", "cid", "server", server_url)
    ok("--profile", "cid", *shlex.split(open_line.split(": ", 1)[1].replace("YOUR_NAME", "Cid"))[1:])
    assert ok("invite").stdout.strip() == "Every seat of g is claimed."
    refused = run("--profile", "bob", "invite")
    assert refused.exit_code == 5
    assert "only the host" in refused.stderr


def test_notify_without_options_shows_the_settings(table: Table) -> None:
    ok("--profile", "bob", "notify", "--email", "bob@example.org", "--event", "email:your_turn")
    text = ok("--profile", "bob", "notify").stdout
    assert "email bob@example.org, webhook off, daily digest off." in text
    assert "Events: email: your_turn; webhook: " in text
    assert "`dos-client --profile bob notify --email ADDRESS`" in text
    body = as_json("--profile", "bob", "notify")
    assert body["events"]["email"] == ["your_turn"]


def test_vacation_end_ends_it_early(table: Table) -> None:
    assert "12 day(s) left" in ok("--profile", "bob", "vacation", "2").stdout
    assert as_json("show")["seats"][1]["vacation_until"] is not None
    back = ok("--profile", "bob", "vacation", "end").stdout
    assert back.startswith("Back from vacation in g: your clock runs again; 13 day(s) left")
    assert as_json("show")["seats"][1]["vacation_until"] is None
    assert as_json("--profile", "bob", "vacation", "0")["days_left"] == 13
    assert run("--profile", "bob", "vacation", "soon").exit_code == 2


def test_watch_a_game_you_have_not_joined(table: Table, config_file: Path) -> None:
    url = table_url(config_file)
    mover = table.to_move()
    token = saved(config_file)["profiles"][mover]["games"]["g"]["token"]

    def someone_moves() -> None:  # once the watcher's long-poll waits (the server is in-process)
        while not watch.parked(table.id):
            time.sleep(0.01)
        version = requests.get(f"{url}/api/games/{table.id}", timeout=10).json()["version"]
        answer = requests.post(f"{url}/api/games/{table.id}/actions",
                               json={"version": version, "actions": ["draw"]},
                               headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200

    player = threading.Thread(target=someone_moves, daemon=True)
    player.start()
    result = run("--profile", "spectator", "--server", url, "watch", table.id,
                 "--timeout", "3", "--interval", "3600")  # no polling: the long-poll wakes it
    player.join(10)
    assert result.exit_code == 7  # still going after the timeout
    name = "Ann" if mover == "default" else "Bob"
    assert result.stdout.count(f"Ann vs Bob ({table.id})") == 2  # the table, twice
    assert f"{name} drew 1 card" in result.stdout
    assert "Your hand" not in result.stdout  # a spectator sees no hand
    assert "stopped watching after 3 s" in result.stderr
    assert not saved(config_file)["profiles"].get("spectator", {}).get("games")
    as_json_result = run("--server", url, "--profile", "spectator", "watch", table.id, "--json",
                         "--timeout", "0")
    first, _ = json.JSONDecoder().raw_decode(as_json_result.stdout)  # one document per change
    assert first["id"] == table.id
