"""A number plays the move that was shown, or nothing.

The client remembers, per game and seat, the version of the last list it printed (`moves`,
`show`, `wait`, the table after a move) and sends it with the number; the email's line
`dos-client move GAME N --at VERSION` carries its own version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import requests
from cli_helpers import Table, as_json, finish, ok, run, saved, table_url


def _raw(table: Table, profile: str, method: str, path: str, **kwargs: Any) -> Any:
    token = saved(table.config_file)["profiles"][profile]["games"]["g"]["token"]
    response = requests.request(method, f"{table_url(table.config_file)}/api/games/{table.id}"
                                f"{path}", headers={"Authorization": f"Bearer {token}"},
                                timeout=10, **kwargs)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_number_without_a_list_seen_is_refused_with_a_hint(table: Table) -> None:
    mover = table.to_move()
    version = table.state()["version"]
    result = run("--profile", "bob", "move", "1") if mover == "bob" else None
    if result is None:  # Ann's profile saw a list in `show` (table.state): use a fresh copy
        data = saved(table.config_file)
        data["profiles"]["default"]["games"]["g"].pop("listed_version")
        table.config_file.write_text(json.dumps(data))
        result = run("move", "1")
    assert result.exit_code == 3
    command = "dos-client --profile bob" if mover == "bob" else "dos-client"
    assert f"`{command} moves` prints it" in result.stderr
    assert f"`{command} move N` plays" in result.stderr
    assert _raw(table, mover, "GET", "")["version"] == version  # nothing was sent


def test_a_number_on_a_game_over_before_any_list_says_it_is_over(
        table: Table, tmp_path: Path) -> None:
    """A seat whose profile never printed a list (the game ended before its turn) is told the
    game is over, not asked which list the number is from."""
    finish(f"sqlite:///{tmp_path / 'dos.sqlite3'}", table.id, 0)  # conftest's server_url
    assert "listed_version" not in saved(table.config_file)["profiles"]["bob"]["games"]["g"]
    result = run("--profile", "bob", "move", "1")
    assert result.exit_code == 3
    assert "the game g is over: Ann won; nothing was played" in result.stderr
    assert "which list" not in result.stderr


def test_a_number_before_the_game_starts_says_it_has_not_started(
        server_url: str, config_file: Path) -> None:
    ok("server", server_url)
    ok("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--as", "g")
    result = run("move", "1")
    assert result.exit_code == 3
    assert "the game g is waiting" in result.stderr, result.stderr
    assert "which list" not in result.stderr


def test_show_remembers_its_list_and_move_n_plays_from_it(table: Table) -> None:
    mover = table.to_move()
    text = ok("--profile", mover, "show").stdout
    assert "Your moves (play one with `" in text
    listed = _raw(table, mover, "GET", "/actions")["actions"]
    first = listed[0]["action"]
    assert f"  1 {first}" in text
    played = as_json("--profile", mover, "move", "1")
    assert played["applied"] == [first]


def test_the_issue_scenario_terminal_b_plays_the_listed_move(table: Table) -> None:
    """A lists `2 m2 B5`; B plays `m2 B5`; A's `move 2` must not play whatever is 2 now."""
    mover = table.to_move()
    listing = table.listing(mover)  # terminal A
    number = len(listing["actions"])  # the last one, `draw`
    assert listing["actions"][-1]["action"] == "draw"
    _raw(table, mover, "POST", "/actions", json={"version": listing["version"],
                                                 "actions": ["draw"]})  # terminal B
    after = _raw(table, mover, "GET", "")
    result = run("--profile", mover, "move", str(number))
    assert result.exit_code == 4
    assert "nothing was played" in result.stderr
    assert _raw(table, mover, "GET", "")["version"] == after["version"]
    assert f"version {after['version']}" in result.stdout


def test_email_line_game_id_number_at_version(table: Table, config_file: Path) -> None:
    """`dos-client move <game id> <n> --at <version>`, exactly as emails print it."""
    mover = table.to_move()
    listing = _raw(table, mover, "GET", "/actions")
    line = f"dos-client move {table.id} 1 --at {listing['version']}".split()[1:]
    result = as_json("--profile", mover, *line)
    assert result["applied"] == [listing["actions"][0]["action"]]
    # the same line again: the game moved on, so nothing is played
    again = run("--profile", mover, *line)
    assert again.exit_code in (3, 4)  # 4 if still this seat's turn, 3 (not your turn) if not
    assert "Error: " in again.stderr
    # by saved name too, and a game id this profile has not saved is named in the error
    unknown = run("--profile", mover, "move", "zzzzzzzzzz", "1", "--at", "3")
    assert unknown.exit_code == 1
    assert "no saved game called 'zzzzzzzzzz'" in unknown.stderr


def test_at_version_with_notation_and_stale(table: Table) -> None:
    mover = table.to_move()
    version = _raw(table, mover, "GET", "")["version"]
    stale = run("--profile", mover, "move", "draw", "--at", str(version + 5))
    assert stale.exit_code == 4
    assert as_json("--profile", mover, "move", "draw", "--at", str(version))["applied"] == ["draw"]


def test_the_table_after_a_move_is_a_list_a_number_refers_to(table: Table) -> None:
    mover = table.to_move()
    table.listing(mover)
    drew = ok("--profile", mover, "move", str(len(table.listing(mover)["actions"])))  # draw
    assert "You drew:" in drew.stdout
    assert "Your moves (play one with" in drew.stdout  # after a draw the turn goes on
    listed = _raw(table, mover, "GET", "/actions")["actions"]
    assert as_json("--profile", mover, "move", "1")["applied"] == [listed[0]["action"]]


def _count_requests(monkeypatch: Any) -> list[tuple[str, str]]:
    """Every HTTP request dos-client sends from now on, as (method, path)."""
    sent: list[tuple[str, str]] = []
    send = requests.Session.request

    def counting(self: requests.Session, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        sent.append((method, url.split("/api/", 1)[-1]))
        return send(self, method, url, *args, **kwargs)

    monkeypatch.setattr(requests.Session, "request", counting)
    return sent


def test_a_text_move_on_the_table_seen_is_one_request(table: Table, monkeypatch: Any) -> None:
    mover = table.to_move()
    version = table.listing(mover)["version"]  # the profile printed this list
    sent = _count_requests(monkeypatch)
    result = as_json("--profile", mover, "draw")
    assert sent == [("POST", f"games/{table.id}/actions")]
    assert result["game"]["version"] == version + 1


def test_a_text_move_after_the_game_moved_on_plays_on_the_current_table(
        table: Table, monkeypatch: Any) -> None:
    """Unlike a number, a text move names what it plays: on a table that changed since the
    list was printed it is played as it is now (the 409 names the version), as before."""
    mover = table.to_move()
    seen = table.listing(mover)["version"]
    drawn = _raw(table, mover, "POST", "/actions", json={"version": seen, "actions": ["draw"]})
    now = _raw(table, mover, "GET", "/actions")  # another device drew: the table changed
    assert now["version"] == drawn["version"] == seen + 1
    text = now["actions"][-1]["action"]
    sent = _count_requests(monkeypatch)
    result = as_json("--profile", mover, "move", text)
    assert sent == [("POST", f"games/{table.id}/actions")] * 2  # stale, then the current one
    assert result["game"]["version"] == now["version"] + 1
    assert text in [e["data"]["action"] for e in result["events"] if e["kind"] == "action"]
    bound = run("--profile", mover, "move", "draw", "--at", str(seen))  # --at binds it
    assert bound.exit_code == 4
