"""``dos-client`` through click's CliRunner against a real server over HTTP (see conftest.py).

Every command, its ``--json`` output, and each documented exit code: 2 usage, 3 refused,
4 stale, 5 not authorized, 6 unreachable, 7 wait timed out.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
import requests
from cli_helpers import (
    ANSI,
    CARD,
    Table,
    as_json,
    find_table,
    matches,
    ok,
    run,
    saved,
    table_url,
    tokens_in,
)
from click.testing import CliRunner

from dos_client.cli import cli
from testkit import free_port

# -- config ---------------------------------------------------------------------------------


def test_server_shows_default_sets_and_validates(config_file: Path, server_url: str) -> None:
    assert ok("server").stdout.strip() == "http://127.0.0.1:5000"
    assert not config_file.exists()  # reading never writes
    assert ok("server", server_url + "/").stdout.strip() == server_url
    assert as_json("server") == {"server": server_url}
    assert saved(config_file)["profiles"]["default"]["server"] == server_url
    bad = run("server", "127.0.0.1:5000")
    assert bad.exit_code == 2
    assert "full URL" in bad.output
    # --server overrides the saved one, profiles are separate
    assert ok("--server", "http://example.test", "server").stdout.strip() == "http://example.test"
    assert ok("--profile", "other", "server").stdout.strip() == "http://127.0.0.1:5000"


def test_config_file_is_private(table: Table, config_file: Path) -> None:
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(config_file.parent.stat().st_mode) == 0o700
    assert not config_file.with_suffix(".tmp").exists()
    data = saved(config_file)
    assert set(data["profiles"]) == {"default", "bob"}
    entry = data["profiles"]["default"]["games"]["g"]
    assert entry["game_id"] == table.id
    assert entry["seat"] == 0
    assert entry["token"]
    assert entry["host_token"]


def test_config_defaults_to_platform_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            server_url: str) -> None:
    monkeypatch.delenv("DOS_CLIENT_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    from platformdirs import user_config_path

    expected = user_config_path("dos-client") / "config.json"
    assert tmp_path in expected.parents
    ok("server", server_url)
    assert expected.exists()
    assert stat.S_IMODE(expected.stat().st_mode) == 0o600
    assert json.loads(expected.read_text())["profiles"]["default"]["server"] == server_url


def test_corrupt_config_is_one_line_error(config_file: Path) -> None:
    config_file.parent.mkdir(parents=True)
    config_file.write_text("{not json")
    result = run("games")
    assert result.exit_code == 1
    assert str(config_file) in result.stderr
    assert result.stderr.count("\n") == 1


# -- new, join, start -----------------------------------------------------------------------


def test_new_prints_invites_not_tokens(config_file: Path, server_url: str) -> None:
    ok("server", server_url)
    result = ok("new", "--seat", "Ann", "--seat", "Bob", "--bot", "greedy", "--turn-limit", "36h")
    game_id = saved(config_file)["profiles"]["default"]["current"]
    assert f"Created game {game_id}" in result.stdout
    assert "Invite for Ann: dos-client join " in result.stdout
    assert "Invite for Bob: dos-client join " in result.stdout
    for token in tokens_in(config_file):
        assert token not in result.output
    entry = saved(config_file)["profiles"]["default"]["games"][game_id]
    assert entry["seat"] is None
    assert entry["token"] is None
    # a host holds no seat: it cannot move
    refused = run("move", "1")
    assert refused.exit_code == 1
    assert "no seat" in refused.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--seat", "Ann"], "2 to 4 seats"),
    (["--seat", "A", "--seat", "B", "--seat", "C", "--open", "2"], "2 to 4 seats"),
    (["--seat", "Ann", "--seat", "Bob", "--me", "Cid"], "--me"),
    (["--seat", "Ann", "--seat", "Bob", "--turn-limit", "soon"], "36h"),
    (["--seat", "Ann", "--seat", "Bob", "--bot", "clever"], "clever"),
    (["--seat", "Ann", "--seat", "Bob", "--target", "0"], "target"),
])
def test_new_usage_errors(config_file: Path, args: list[str], message: str) -> None:
    result = run("new", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert not config_file.exists()


def test_open_seats_join_with_code_and_start(config_file: Path, server_url: str) -> None:
    ok("server", server_url)
    ok("--profile", "bob", "server", server_url)
    created = as_json("new", "--seat", "Ann", "--open", "2", "--me", "Ann", "--as", "host")
    assert created["invite_code"]
    plain = ok("--profile", "bob", "join", created["id"], "--code", created["invite_code"],
               "--name", "Bob")
    assert "You are Bob (seat 1)" in plain.stdout
    waiting = ok("show")
    assert "Waiting for an open seat to join" in waiting.stdout
    not_started = run("moves")
    assert not_started.exit_code == 3  # 409 game-not-started
    assert "not started" in not_started.stderr.lower()
    no_host = run("--profile", "bob", "start")
    assert no_host.exit_code == 5
    assert "only the host" in no_host.stderr
    assert as_json("start") == {"game": "host", "started": True}
    assert as_json("show")["status"] == "active"
    again = run("start")
    assert again.exit_code == 3  # 409 already started
    assert "Error:" in again.stderr


def test_start_plain_text(config_file: Path, server_url: str) -> None:
    ok("server", server_url)
    ok("new", "--seat", "Ann", "--seat", "Bob", "--open", "1", "--as", "h")
    assert ok("start").stdout.strip() == "h started."


def test_join_errors(config_file: Path, server_url: str) -> None:
    ok("server", server_url)
    ok("--profile", "bob", "server", server_url)
    created = as_json("new", "--seat", "Ann", "--seat", "Bob")
    usage = run("--profile", "bob", "join", created["id"])
    assert usage.exit_code == 2
    assert "GAME:TOKEN" in usage.output
    game_id, token = created["invites"]["Bob"].split(":", 1)
    tampered = run("--profile", "bob", "join", f"{game_id}:{token[:-3]}xyz")
    assert tampered.exit_code == 5
    assert "Error:" in tampered.stderr
    missing = run("--profile", "bob", "join", f"nosuchgame:{token}")
    assert missing.exit_code in (1, 5)
    ok("--profile", "bob", "join", created["invites"]["Bob"])
    open_game = as_json("new", "--seat", "Ann", "--open", "1")
    ok("--profile", "bob", "join", open_game["id"], "--code", open_game["invite_code"],
       "--name", "Bob")
    full = run("--profile", "cid", "--server", table_url(config_file), "--json", "join",
               open_game["id"], "--code", open_game["invite_code"], "--name", "Cid")
    assert full.exit_code == 3  # 409: no open seat
    body = json.loads(full.stdout)
    assert body["status"] == 409
    assert body["error"]["detail"]


# -- reading --------------------------------------------------------------------------------


def test_games_lists_and_marks_your_turn(table: Table) -> None:
    mover = table.to_move()
    other = table.waiting()
    mine = ok("--profile", mover, "games").stdout
    assert mine.startswith("* g (current) · ")
    assert "to play" in mine
    assert "Ann 0, Bob 0" in mine
    theirs = ok("--profile", other, "games").stdout
    assert theirs.startswith("  g (current)")
    rows = as_json("--profile", mover, "games")
    assert len(rows) == 1
    assert rows[0]["your_turn"] is True
    assert rows[0]["id"] == table.id
    assert rows[0]["scores"] == {"Ann": 0, "Bob": 0}
    assert as_json("--profile", other, "games")[0]["your_turn"] is False
    assert as_json("--profile", "nobody", "games") == []
    assert "No saved games" in ok("--profile", "nobody", "games").stdout


def test_show_text_json_and_no_colour(table: Table, config_file: Path) -> None:
    text = ok("show").stdout
    assert f"g ({table.id}) · active · version" in text
    assert "Your hand:" in text
    assert "Center Row:" in text
    assert ANSI not in text
    assert len(CARD.findall(text)) >= 9  # 7 cards in hand, 2 in the Center Row
    body = as_json("show")
    assert body["id"] == table.id
    assert body["you"] == 0
    assert len(body["view"]["hand"]) == 7
    for token in tokens_in(config_file):
        assert token not in text
        assert token not in json.dumps(body)
    # by saved name, by id prefix; an unknown name lists the saved ones
    assert as_json("show", "g")["id"] == table.id
    assert as_json("show", table.id)["id"] == table.id
    unknown = run("show", "zzz")
    assert unknown.exit_code == 1
    assert "saved: g" in unknown.stderr
    assert "no saved games" in run("--profile", "nobody", "show").stderr


def test_no_color_on_a_terminal_keeps_cards_readable(table: Table) -> None:
    env = {"NO_COLOR": "1", "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    text = ok("show", env=env).stdout
    assert len(CARD.findall(text)) >= 9
    # NO_COLOR removes colour (SGR 30-37, 38;x, 90-97); the letter in [R5] keeps the meaning.
    assert not re.search(r"\x1b\[[0-9;]*(?:3[0-8]|9[0-7])[;m]", text), repr(text)
    coloured = ok("show", env={"NO_COLOR": "", "FORCE_COLOR": "1", "TERM": "xterm-256color"})
    assert ANSI in coloured.stdout  # the control: colour when asked for


def test_moves_text_and_json(table: Table) -> None:
    mover, other = table.to_move(), table.waiting()
    listing = table.listing(mover)
    assert listing["your_turn"] is True
    assert [a["number"] for a in listing["actions"]] == list(range(1, len(listing["actions"]) + 1))
    assert listing["actions"][-1]["action"] == "draw"
    text = ok("--profile", mover, "moves").stdout
    assert "notation" in text
    assert "draw a card" in text
    assert ANSI not in text
    assert table.listing(other)["actions"] == []
    name = "Ann" if mover == "default" else "Bob"
    # it says whose turn it is, and how to wait for yours
    assert f"No legal actions for you right now: it is {name}'s turn; `dos-client" in \
        ok("--profile", other, "moves").stdout


def test_history_text_json_all(table: Table) -> None:
    mover = table.to_move()
    ok("--profile", mover, "move", "draw")
    events = as_json("history")
    assert events[0]["kind"] == "game_started"
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    text = ok("history").stdout
    name = "Ann" if mover == "default" else "Bob"
    assert f"{name} drew 1 card" in text
    # the round headers, with their local times and offsets
    assert re.search(r"^-- Round 1 began; \w+ played first -- \w{3} \d\d:\d\d UTC\S*$", text, re.M)
    assert ok("history", "--all").stdout.startswith(text.splitlines()[0])


# -- moving ---------------------------------------------------------------------------------


def test_move_by_number(table: Table) -> None:
    mover = table.to_move()
    before = table.state()["version"]
    listing = table.listing(mover)
    chosen = listing["actions"][0]["action"]
    result = ok("--profile", mover, "move", "1")
    assert ("matched" if chosen.startswith("m") else "drew") in result.stdout
    assert "g (" in result.stdout  # the new table
    assert table.state()["version"] == before + 1


def test_move_game_and_number_with_saved_name(table: Table) -> None:
    mover = table.to_move()
    ok("--profile", mover, "move", "g", str(len(table.listing(mover)["actions"])))  # draw
    last = as_json("history")[-1]
    assert last["kind"] in ("drew", "action")
    assert any(e["kind"] == "action" and e["data"]["action"] == "draw" for e in as_json("history"))


def test_move_notation_whole_turn(server_url: str, config_file: Path) -> None:
    def plain_match(listing: dict[str, Any]) -> str | None:
        found = [a["action"] for a in matches(listing) if "colour match" not in a["description"]]
        return found[0] if found else None

    table, action = find_table(server_url, config_file, plain_match)
    mover = table.to_move()
    before = table.state()["version"]
    data = as_json("--profile", mover, "move", f"{action}; end")
    assert data["game"]["version"] == before + 1  # one request, one version
    played = [e["data"]["action"] for e in data["events"] if e["kind"] == "action"]
    assert played in ([action, "end"], [action])  # an end the turn did not need: not recorded
    assert table.to_move() != mover


def test_draw_command(table: Table) -> None:
    mover = table.to_move()
    result = ok("--profile", mover, "draw")
    assert "drew 1 card" in result.stdout
    assert "You drew:" in result.stdout
    again = run("--profile", mover, "--json", "draw")  # one draw per turn
    assert again.exit_code == 3
    assert "you have already drawn this turn" in json.loads(again.stdout)["error"]["detail"]
    assert "(rule 3.6: " in run("--profile", mover, "draw").stderr


def test_not_your_turn_is_refused(table: Table) -> None:
    other = table.waiting()
    version = str(table.state()["version"])
    by_number = run("--profile", other, "move", "1", "--at", version)
    assert by_number.exit_code == 3
    name = "Ann" if other == "bob" else "Bob"
    assert f"it is {name}'s turn" in by_number.stderr
    assert "wait` tells you when it is your turn" in by_number.stderr
    by_text = run("--profile", other, "move", "draw")
    assert by_text.exit_code == 3
    assert f"it is {name}'s turn" in by_text.stderr
    assert run("--profile", other, "draw").exit_code == 3
    as_text = run("--profile", other, "--json", "move", "draw")
    assert json.loads(as_text.stdout)["error"]["detail"]


def test_number_out_of_range_is_refused(table: Table) -> None:
    mover = table.to_move()
    count = len(table.listing(mover)["actions"])
    result = run("--profile", mover, "move", str(count + 1))
    assert result.exit_code == 3
    assert f"choose a number from 1 to {count}" in result.stderr


def test_did_you_mean_for_canonical_action_not_listed(server_url: str, config_file: Path) -> None:
    table, first = find_table(server_url, config_file, matches)
    mover = table.to_move()
    cards = first[0]["action"].split(" ", 1)[1]
    wrong = f"m9 {cards}"  # canonical notation, but there is no 9th Center Row card
    version = table.state()["version"]
    result = run("--profile", mover, "move", wrong)
    assert result.exit_code == 3
    # the engine says why (and which rule), and the client what was probably meant
    assert "there is no Center Row card 9" in result.stderr
    assert "(rule 2.3: `dos-client rules 2.3`)" in result.stderr
    assert "Did you mean:" in result.stderr
    assert first[0]["action"] in result.stderr
    assert table.state()["version"] == version  # nothing was sent


def test_illegal_shorthand_refused_by_server(table: Table) -> None:
    mover = table.to_move()
    hand = set(table.state()["view"]["hand"]) if mover == "default" else None
    if hand is None:
        hand = set(json.loads(ok("--profile", "bob", "--json", "show").stdout)["view"]["hand"])
    missing = next(f"R{n}" for n in (1, 3, 4, 5, 6, 7, 8, 9, 10) if f"R{n}" not in hand)  # no R2
    result = run("--profile", mover, "move", f"red {missing[1:]}")
    assert result.exit_code == 3
    assert "Error:" in result.stderr
    assert "rule" in result.stderr or "hand" in result.stderr.lower()
    body = json.loads(run("--profile", mover, "--json", "move", f"red {missing[1:]}").stdout)
    assert body["status"] == 422
    assert body["error"]["type"].endswith("illegal-action")


def test_ambiguous_shorthand_refused(server_url: str, config_file: Path) -> None:
    def crowded(listing: dict[str, Any]) -> str | None:
        positions = [a["action"].split()[0] for a in matches(listing)]
        return next((p for p in positions if positions.count(p) > 1), None)

    table, position = find_table(server_url, config_file, crowded)
    mover = table.to_move()
    result = run("--profile", mover, "move", position)
    assert result.exit_code == 3
    body = json.loads(run("--profile", mover, "--json", "move", position).stdout)
    assert body["error"]["type"].endswith("ambiguous-action")
    assert len(body["error"]["candidates"]) > 1


def test_stale_version_exits_4_and_shows_the_table(table: Table) -> None:
    """Terminal A lists the moves; the same seat plays elsewhere (terminal B); A's `move 1`
    plays nothing, exits 4 and prints the new table and list, whose numbers then work."""
    mover = table.to_move()
    token = saved(table.config_file)["profiles"][mover]["games"]["g"]["token"]
    listing = table.listing(mover)  # terminal A saw this list
    response = requests.post(f"{table_url(table.config_file)}/api/games/{table.id}/actions",
                             json={"version": listing["version"], "actions": ["draw"]},
                             headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert response.status_code == 200  # terminal B drew: the turn goes on, the list changed
    before = listing["version"] + 1
    assert response.json()["version"] == before
    result = run("--profile", mover, "move", "1")
    assert result.exit_code == 4
    assert f"The game moved on (version {listing['version']} → {before})" in result.stderr
    assert "nothing was played" in result.stderr
    assert f"version {before}" in result.stdout  # the fresh table
    assert "Your moves (play one with" in result.stdout  # and its list
    as_json_result = run("--profile", mover, "--json", "move", "1", "--at", str(listing["version"]))
    assert as_json_result.exit_code == 4
    body = json.loads(as_json_result.stdout)
    assert body["error"]["current_version"] == before
    # the list printed on exit 4 is the one a number now refers to
    fresh = requests.get(f"{table_url(table.config_file)}/api/games/{table.id}/actions",
                         headers={"Authorization": f"Bearer {token}"}, timeout=10).json()
    played = as_json("--profile", mover, "move", "1")
    assert played["applied"] == [fresh["actions"][0]["action"]]


# -- auth, tokens ---------------------------------------------------------------------------


def test_token_rotate_revokes_other_copies(table: Table, config_file: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    copy = config_file.with_name("copy.json")
    shutil.copy(config_file, copy)
    old = tokens_in(config_file)
    result = ok("--profile", "bob", "token", "rotate")
    assert "New token saved for g" in result.stdout
    for token in [*old, *tokens_in(config_file)]:
        assert token not in result.output
    assert as_json("--profile", "bob", "show")["you"] == 1  # the new token works
    monkeypatch.setenv("DOS_CLIENT_CONFIG", str(copy))
    revoked = run("--profile", "bob", "show")
    assert revoked.exit_code == 5
    assert revoked.stderr.startswith("Error: ")
    assert "Traceback" not in revoked.output
    listed = run("--profile", "bob", "--json", "games")  # games reports per game, and exits 5
    assert listed.exit_code == 5
    assert "error" in json.loads(listed.stdout)[0]
    assert run("--profile", "default", "show").exit_code == 0  # Ann's token is untouched


def test_token_rotate_show_and_json(table: Table, config_file: Path) -> None:
    shown = ok("--profile", "bob", "token", "rotate", "--show")
    new = saved(config_file)["profiles"]["bob"]["games"]["g"]["token"]
    assert shown.stdout.strip().splitlines()[-1].endswith(f"token set {table.id} {new}")
    body = as_json("--profile", "bob", "token", "rotate")
    assert body == {"game": "g", "rotated": True}
    assert saved(config_file)["profiles"]["bob"]["games"]["g"]["token"] not in json.dumps(body)
    host_only = run("--profile", "other", "token", "rotate")
    assert host_only.exit_code == 1


def test_tampered_token_exits_5(table: Table, config_file: Path) -> None:
    data = saved(config_file)
    entry = data["profiles"]["bob"]["games"]["g"]
    entry["token"] = entry["token"][:-4] + ("AAAA" if not entry["token"].endswith("AAAA") else "BBBB")
    config_file.write_text(json.dumps(data))
    for args in (["show"], ["moves"], ["move", "1", "--at", "1"], ["history"],
                 ["wait", "--timeout", "1"]):
        result = run("--profile", "bob", *args)
        assert result.exit_code == 5, (args, result.output)
        assert entry["token"] not in result.output


# -- wait, resign ---------------------------------------------------------------------------


def test_wait_returns_on_your_turn(table: Table) -> None:
    mover = table.to_move()
    waited = ok("--profile", mover, "wait", "--interval", "0.1").stdout
    assert waited.startswith("Your turn in g.\ng (")  # then the table and the numbered moves
    assert "Your moves (play one with `dos-client" in waited
    listed = [a["action"] for a in table.listing(mover)["actions"]]
    assert as_json("--profile", mover, "wait", "g", "--interval", "0.1") == {
        "game": "g", "id": table.id, "version": table.state()["version"], "legal_actions": listed}


def test_wait_times_out_with_7(table: Table) -> None:
    other = table.waiting()
    result = run("--profile", other, "wait", "--timeout", "0.3", "--interval", "0.1")
    assert result.exit_code == 7
    assert "still not your turn after 0.3 s" in result.stderr
    assert run("--profile", "nobody", "wait", "--timeout", "0").exit_code == 1
    assert run("--profile", other, "wait", "--interval", "0.01").exit_code == 2


def test_resign(table: Table) -> None:
    declined = run("--profile", "bob", "resign", input="n\n")
    assert declined.exit_code == 1
    assert "Aborted" in declined.output
    assert ok("--profile", "bob", "resign", input="y\n").stdout.endswith("You resigned from g.\n")
    again = run("--profile", "bob", "--json", "resign", "--yes")
    assert again.exit_code == 3
    assert json.loads(again.stdout)["status"] == 409
    # Bob's seat is played by the random bot now: the game goes on for Ann.
    assert table.state()["status"] == "active"


def test_resign_json(table: Table) -> None:
    assert as_json("resign", "g", "--yes") == {"game": "g", "resigned": True}


# -- unreachable, usage, debug --------------------------------------------------------------


def test_unreachable_server_exits_6_naming_the_url(config_file: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    ok("server", url)
    result = run("new", "--seat", "Ann", "--seat", "Bob")
    assert result.exit_code == 6
    assert url in result.stderr
    assert "Is the server running" in result.stderr
    assert "--server" in result.stderr
    assert result.stderr.count("\n") == 1
    as_json_result = run("--json", "new", "--seat", "Ann", "--seat", "Bob")
    assert as_json_result.exit_code == 6
    assert url in json.loads(as_json_result.stdout)["error"]["detail"]


def test_debug_shows_the_exception(config_file: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    result = CliRunner().invoke(cli, ["--debug", "--server", url, "new", "--seat", "A",
                                      "--seat", "B"])
    assert result.exit_code != 0
    assert type(result.exception).__name__ == "ServerUnreachable"


@pytest.mark.parametrize("args", [
    ["nosuchcommand"], ["move"], ["--nosuchoption", "games"], ["token"], ["token", "spin"],
    ["history", "--all", "--bogus"], ["wait", "--timeout", "-1"],
])
def test_usage_errors_exit_2(config_file: Path, args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.output or "Error" in result.output


def test_help_lists_every_command_and_exit_codes() -> None:
    text = ok("--help").stdout
    for command in ("server", "new", "join", "games", "show", "moves", "move", "draw", "history",
                    "wait", "resign", "start", "token"):
        assert re.search(rf"^\s+{command}\b", text, re.M), command
    assert "Exit codes" in text
    assert "6 server unreachable" in text


def test_notify_sets_channels_and_events(table: Table, config_file: Path) -> None:
    result = ok("--profile", "bob", "notify", "--email", "bob@example.org",
                "--webhook", "http://127.0.0.1:9/hook")
    assert "email bob@example.org" in result.stdout
    secret_line = result.stdout.strip().splitlines()[-1]
    assert "whsec_" in secret_line  # shown once, when the URL is set
    body = as_json("--profile", "bob", "notify", "--event", "email:your_turn",
                   "--event", "webhook:game_over")
    assert body["events"] == {"email": ["your_turn"], "webhook": ["game_over"]}
    assert body["webhook_secret"] is None  # not shown again
    off = as_json("--profile", "bob", "notify", "--no-webhook", "--all-events")
    assert off["webhook_url"] is None
    assert off["events"]["email"][0] == "your_turn"
    bad = run("--profile", "bob", "notify", "--event", "sms:your_turn")
    assert bad.exit_code == 2
    assert "your_turn, reminder, timed_out, caught, round_over, game_over, invited" in bad.output
    unchanged = ok("--profile", "bob", "notify")  # no option: shows the settings
    assert "webhook off" in unchanged.stdout


def test_vacation_and_digest(table: Table, config_file: Path) -> None:
    result = ok("--profile", "bob", "vacation", "2")
    assert "On vacation in g until" in result.stdout
    assert "12 day(s) left" in result.stdout
    assert as_json("--profile", "bob", "vacation", "1")["days_left"] == 11
    assert run("--profile", "bob", "vacation", "30").exit_code == 3  # 409: not enough left
    assert run("--profile", "bob", "vacation", "61").exit_code == 2
    assert as_json("--profile", "bob", "notify", "--digest")["digest"] is True


def test_new_with_a_title_shows_it_in_games_and_show(config_file: Path, server_url: str) -> None:
    ok("server", server_url)
    ok("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--title", "Friday cards")
    listing = ok("games")
    assert "“Friday cards”" in listing.stdout
    assert ok("show").stdout.splitlines()[0].startswith("Friday cards (")
    ok("new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann", "--title", "Cards", "--as", "fri")
    assert ok("show").stdout.splitlines()[0].startswith("fri “Cards” (")  # the name and title
    refused = run("new", "--seat", "Ann", "--seat", "Bob", "--title", "x" * 81)
    assert refused.exit_code != 0
    assert "title" in refused.stderr
    assert "80" in refused.stderr
