"""``dos-client wait`` rides the server's long-poll (no polling). It waits on the
events of every saved game at once and is woken by a move made by another process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cli_helpers import Table, as_json, ok

from dos_server.services import watch

CLIENT = str(Path(sys.executable).parent / "dos-client")


def parked(game_id: str, count: int = 1) -> None:
    """Until ``count`` long-polls of the game wait in the (in-process) server."""
    while watch.parked(game_id) < count:
        time.sleep(0.01)


def waiting_client(config_file: Path, *args: str) -> subprocess.Popen[str]:
    """``dos-client wait`` in its own process (CliRunner swaps sys.stdout: one at a time), as on
    another device: a copy of the config, so that two processes never write one file."""
    device = config_file.with_name("waiting-device.json")
    shutil.copy(config_file, device)
    return subprocess.Popen([CLIENT, *args], env={**os.environ, "DOS_CLIENT_CONFIG": str(device)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_wait_is_woken_by_a_move_of_another_process(table: Table, config_file: Path) -> None:
    mover, waiter = table.to_move(), table.waiting()
    # --interval would be the polling period against an old server: an hour, so only the
    # long-poll can answer
    client = waiting_client(config_file, "--profile", waiter, "wait", "--interval", "3600")
    parked(table.id)
    assert client.poll() is None  # not its turn: it waits
    while table.to_move() == mover:  # the mover's whole turn, step by step
        table.listing(mover)  # the numbered list `move 1` refers to
        ok("--profile", mover, "move", "1")
    out, err = client.communicate(timeout=120)
    assert client.returncode == 0, err
    assert out.startswith("Your turn in g.")


def current(game: str) -> int:
    return int(as_json("show", game)["view"]["current"])


def finish_turn(table: Table, game: str, seat: int) -> None:
    """``seat`` plays the first listed move until the turn passes."""
    while current(game) == seat:
        as_json("--profile", table.profile(seat), "moves", game)
        ok("--profile", table.profile(seat), "move", game, "1")


def test_wait_follows_several_games_at_once(table: Table, config_file: Path) -> None:
    """Two saved games, neither on the waiter's turn: a move in the second one wakes it."""
    created = as_json("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--as", "h")
    as_json("--profile", "bob", "join", created["invites"]["Bob"], "--as", "h")
    mover = current("h")
    finish_turn(table, "g", 1 - mover)  # the first game waits on the mover too
    client = waiting_client(config_file, "--profile", table.profile(1 - mover), "--json", "wait",
                            "--interval", "3600")
    parked(table.id)
    parked(created["id"])
    finish_turn(table, "h", mover)
    out, err = client.communicate(timeout=120)
    assert client.returncode == 0, err
    answer = json.loads(out)
    assert (answer["game"], answer["id"]) == ("h", created["id"])
