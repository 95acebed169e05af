"""The config file is shared by every dos-client process of a user: a `wait` in one terminal
and a `new` in another must not lose each other's games and tokens."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from dos_client.config import Store


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "dos-client" / "config.json"
    monkeypatch.setenv("DOS_CLIENT_CONFIG", str(path))
    return path


def test_two_commands_open_at_once_keep_both_changes(config: Path) -> None:
    first = Store("default")
    first.games["old"] = {"game_id": "old", "token": "t0"}
    first.save()
    waiting, creating = Store("default"), Store("default")  # both read the same file
    creating.games["friday"] = {"game_id": "g1", "token": "t1"}
    creating.section["current"] = "friday"
    creating.save()
    waiting.games["old"]["seen_version"] = 7  # e.g. `wait` remembering the list it printed
    waiting.save()
    saved = json.loads(config.read_text())["profiles"]["default"]
    assert saved["games"]["friday"] == {"game_id": "g1", "token": "t1"}
    assert saved["games"]["old"] == {"game_id": "old", "token": "t0", "seen_version": 7}
    assert saved["current"] == "friday"
    assert oct(config.stat().st_mode & 0o777) == "0o600"


def test_one_command_saving_twice_keeps_both(config: Path) -> None:
    """A command keeps a reference to its game's entry across saves (show: seen, then listed)."""
    store = Store("default")
    store.games["g"] = {"token": "t"}
    entry = store.games["g"]
    entry["seen"] = 3
    store.save()
    entry["listed_version"] = 4
    store.save()
    games = json.loads(config.read_text())["profiles"]["default"]["games"]
    assert games == {"g": {"token": "t", "seen": 3, "listed_version": 4}}


def test_a_removal_does_not_undo_another_commands_change(config: Path) -> None:
    setup = Store("default")
    setup.games["a"] = {"token": "t"}
    setup.games["b"] = {"token": "t"}
    setup.save()
    remover, rotator = Store("default"), Store("default")
    rotator.games["a"]["token"] = "rotated"
    rotator.save()
    del remover.games["a"]  # removed here, but changed meanwhile there: the change stays
    del remover.games["b"]  # removed and unchanged elsewhere: gone
    remover.save()
    games = json.loads(config.read_text())["profiles"]["default"]["games"]
    assert games == {"a": {"token": "rotated"}}


def _add_game(index: int, everyone_read: Any) -> None:
    store = Store("default")
    store.games[f"game{index}"] = {"token": f"t{index}"}
    everyone_read.wait(60)  # every process holds the same old file before anyone saves
    store.save()


def test_many_processes_saving_at_once_lose_nothing(config: Path) -> None:
    Store("default").save()
    context = multiprocessing.get_context("spawn")  # fresh processes, like separate commands
    everyone_read = context.Barrier(12)
    processes = [context.Process(target=_add_game, args=(i, everyone_read)) for i in range(12)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    games = json.loads(config.read_text())["profiles"]["default"]["games"]
    assert sorted(games) == sorted(f"game{i}" for i in range(12))
    assert not [p for p in os.listdir(config.parent) if p.endswith(".tmp")]
