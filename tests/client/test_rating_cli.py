"""``dos-client rating``: your own rating when signed in, a player's by name, the leaderboard
with ``--top N``, ``--json``, and the refusals (not signed in, no such player, NAME with
--top), against a real server over HTTP."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run
from flask import Flask

from rating_kit import ask_code, bearer, new_game, people, play_out, sign_in
from testkit import backend, build_app, db_url, dispose, serving

__all__ = ["backend", "db_url"]


@pytest.fixture
def rated_server(db_url: str, config_file: Path) -> Iterator[tuple[Flask, str]]:
    """A real server where ann, bob and cid played two rated games; bob is named Bob, cid
    Cid (off the leaderboard); ann has no name yet. On SQLite and, with TEST_DATABASE_URL,
    PostgreSQL."""
    app = build_app(db_url)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    client = app.test_client()
    accounts = {name: sign_in(client, app, f"{name}@example.org") for name in ("ann", "bob", "cid")}
    for number, names in enumerate((("ann", "bob"), ("bob", "cid", "ann"))):
        game_id, tokens = new_game(client, people(*names))
        play_out(client, game_id, tokens, seed=number)
    for name, hidden in (("bob", False), ("cid", True)):
        assert client.put("/api/me/settings", headers=bearer(accounts[name]), json={
            "player_name": name.title(), "leaderboard_hidden": hidden}).status_code == 200
    try:
        with serving(app) as url:
            assert run("server", url).exit_code == 0
            yield app, url
    finally:
        dispose(app)


def test_rating_of_a_player_and_the_leaderboard(rated_server: tuple[Flask, str]) -> None:
    app, _url = rated_server
    bob = app.test_client().get("/api/players/bob").get_json()
    shown = run("rating", "bob")
    assert shown.exit_code == 0, shown.output
    assert f"Bob: rating {bob['rating']} after 2 rated games." in shown.stdout
    assert "Latest rated games:" in shown.stdout
    for change in bob["recent"]:
        assert (f"{change['game_id']}  {change['rank']} of {change['players']}  "
                f"{change['after']} ({change['change']:+.1f})") in shown.stdout
    assert json.loads(run("--json", "rating", "Bob").stdout) == bob
    assert "Not listed on the leaderboard." in run("rating", "cid").stdout
    top = run("rating", "--top", "5")
    assert top.exit_code == 0, top.output
    assert top.stdout.splitlines() == [f"  1. Bob  {bob['rating']:>6}  (2 games)"]  # cid hid
    board = json.loads(run("--json", "rating", "--top", "1").stdout)
    assert board["total"] == 1
    assert [p["name"] for p in board["players"]] == ["Bob"]
    missing = run("rating", "nobody")
    assert missing.exit_code == 1
    assert "no player goes by the name nobody" in missing.output
    assert run("rating", "bob", "--top", "3").exit_code == 2
    assert run("rating", "--top", "0").exit_code == 2
    assert run("rating", "--top", "101").exit_code == 2


def test_your_own_rating_when_signed_in(rated_server: tuple[Flask, str],
                                       config_file: Path) -> None:
    app, _url = rated_server
    refused = run("rating")
    assert refused.exit_code == 5
    assert "Not signed in" in refused.output
    code = ask_code(app.test_client(), app, "ann@example.org")
    assert run("login", "ann@example.org", "--code", code).exit_code == 0
    shown = run("rating")
    assert shown.exit_code == 0, shown.output
    assert "Your rating: " in shown.stdout
    assert "after 2 rated games." in shown.stdout
    assert "Choose a player name" in shown.stdout
    # With a name, your own player page.
    token = json.loads(config_file.read_text())["profiles"]["default"]["account"]["token"]
    assert app.test_client().put("/api/me/settings", headers=bearer(token),
                                 json={"player_name": "Ann"}).status_code == 200
    shown = run("rating")
    assert "Ann: rating " in shown.stdout
    assert "Latest rated games:" in shown.stdout
    assert json.loads(run("--json", "rating").stdout)["name"] == "Ann"
