"""Every hint the client prints can be played as printed.

Hints are whole commands in backquotes (or after "Next:"); these tests take them from the
output and run them, with `--profile` where one is in use.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Table, as_json, ok, run, saved

HINT = re.compile(r"`(dos-client [^`]+)`|Next: (dos-client .+?)$", re.M)


def hints(text: str) -> list[str]:
    return [a or b for a, b in HINT.findall(text)]


def play_hint(hint: str, **replace: str) -> Any:
    words = shlex.split(hint)
    assert words[0] == "dos-client"
    words = [replace.get(word, word) for word in words[1:]]
    return ok(*words)


def test_new_and_join_hints_name_the_profile(server_url: str, config_file: Path) -> None:
    ok("--profile", "ann", "server", server_url)
    ok("--profile", "bob", "server", server_url)
    created = ok("--profile", "ann", "new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann").stdout
    invite = re.search(r"Invite for Bob: (dos-client join \S+)", created)
    assert invite
    next_line, start_hint = hints(created)
    assert next_line == "dos-client --profile ann show"
    assert start_hint == "dos-client --profile ann start"
    assert "Waiting for Bob to join" in play_hint(next_line).stdout
    joined = play_hint(invite.group(1).replace("dos-client", "dos-client --profile bob")).stdout
    (next_bob,) = hints(joined)
    assert next_bob == "dos-client --profile bob show"
    text = play_hint(next_bob).stdout
    assert "Ann 0" in text  # the last one to join deals
    # the list's hints: `move N` and `moves`, with the profile
    for hint in hints(text):
        assert hint.startswith("dos-client --profile bob ")


def _in_bonus_phase(server_url: str, config_file: Path) -> str:
    """A game whose player to move made a colour match and now places bonus cards."""
    for _ in range(40):
        config_file.unlink(missing_ok=True)
        table = Table(server_url, config_file)
        mover = table.to_move()
        colour = [a for a in table.listing(mover)["actions"]
                  if a["action"].startswith("m") and "colour match" in a["description"]]
        if not colour:
            continue
        ok("--profile", mover, "move", colour[0]["action"])
        view = as_json("--profile", mover, "show")["view"]
        if view["phase"] == "bonus" and view["current"] == (0 if mover == "default" else 1):
            return mover
    pytest.fail("no colour match that ends the matching by itself in 40 deals")


@pytest.mark.parametrize("which", ["place", "end"])
def test_bonus_phase_hints_are_playable(server_url: str, config_file: Path, which: str) -> None:
    mover = _in_bonus_phase(server_url, config_file)
    text = ok("--profile", mover, "show").stdout
    assert "then `end`" not in text  # the old, wrong hint
    printed = {h.split(" move ", 1)[1].split()[0].strip("'\""): h
               for h in hints(text) if " move " in h and not h.endswith(" N")}
    assert set(printed) == {"place", "end"}, printed
    before = as_json("--profile", mover, "show")["view"]
    result = play_hint(printed[which])
    after = as_json("--profile", mover, "show")["view"]
    if which == "place":
        assert "placed" in result.stdout or len(after["center_row"]) > len(before["center_row"])
        assert len(after["hand_sizes"]) == 2
    if which == "end" or before["placements_left"] == 1:
        assert after["current"] != before["current"] or after["round"] != before["round"]


def test_error_hints_are_playable(table: Table, config_file: Path) -> None:
    other = table.waiting()
    # a number with no list seen: the hint prints the list, then its number plays
    data = saved(config_file)
    data["profiles"][other]["games"]["g"].pop("listed_version", None)
    config_file.write_text(json.dumps(data))
    refused = run("--profile", other, "move", "1")
    assert refused.exit_code == 3
    moves, move_n = hints(refused.stderr)
    play_hint(moves)
    # not your turn: the hint waits for it
    not_yours = run("--profile", other, "move", "draw")
    (wait,) = hints(not_yours.stderr)
    mover = table.to_move()
    ok("--profile", mover, "move", "draw")
    turn = as_json("--profile", mover, "show")
    while turn["view"]["current"] != (0 if other == "default" else 1):
        ok("--profile", mover, "move", "1")
        turn = as_json("--profile", mover, "show")
    assert "Your turn in g." in play_hint(wait).stdout  # it prints the list, too
    assert ": " in play_hint(move_n, N="1").stdout  # `move 1` from the list `wait` printed
