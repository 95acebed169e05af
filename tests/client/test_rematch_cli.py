"""``dos-client rematch`` against a real server over HTTP: the first makes the standing
challenge and saves the new game with its token, the other player's accepts it (the game
starts), and ``show`` prints the series' score and the finished game's rematch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import Table, as_json, finish, ok, run, saved, serve

from testkit import backend, db_url

__all__ = ["backend", "db_url"]


@pytest.fixture
def server_url(db_url: str) -> Iterator[str]:
    """The server on SQLite and, with TEST_DATABASE_URL, PostgreSQL."""
    yield from serve(db_url)


def test_rematch_made_then_accepted(table: Table, db_url: str, config_file: Path) -> None:
    early = run("rematch")
    assert early.exit_code != 0
    assert "once the game is over" in early.stderr
    finish(db_url, table.id, 1)
    assert "Play again with the same players: `dos-client rematch`." in ok("show").stdout
    made = as_json("rematch")
    assert made["created"] is True
    assert made["status"] == "waiting"
    assert made["game"] == "g-2"
    assert made["series"]["no"] == 2
    new_id = made["id"]
    entry = saved(config_file)["profiles"]["default"]["games"]["g-2"]
    assert entry["game_id"] == new_id
    assert entry["seat"] == 0
    assert entry["token"]
    assert entry["host_token"]
    old = ok("--profile", "bob", "show", "g").stdout
    assert f"Rematch {new_id}: accepted by Ann; not yet: Bob." in old
    assert "Game 1 of the series, wins so far: Ann 0, Bob 1" in old
    accepted = ok("--profile", "bob", "rematch", "g")
    assert "Everyone accepted: the rematch has started." in accepted.stdout
    bob = saved(config_file)["profiles"]["bob"]["games"]["g-2"]
    assert bob["game_id"] == new_id
    assert bob["seat"] == 1
    assert not bob["host_token"]
    shown = ok("--profile", "bob", "show").stdout  # the rematch is now Bob's current game
    assert "Game 2 of the series, wins so far: Ann 0, Bob 1" in shown
    assert as_json("show", "g-2")["status"] == "active"
    again = as_json("rematch", "g")  # a second rematch answers the same game, saved once
    assert again["id"] == new_id
    assert again["created"] is False
    games = saved(config_file)["profiles"]["default"]["games"]
    assert [n for n, e in games.items() if e["game_id"] == new_id] == ["g-2"]
