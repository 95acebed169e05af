"""Show what changed, like lichess does."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from cli_helpers import Table, ok

from dos_client import render


def test_show_starts_with_what_the_others_did_since_you_last_looked(table: Table) -> None:
    mover = table.to_move()
    other = "bob" if mover == "default" else "default"
    first = ok("--profile", other, "show").stdout
    assert "Since you last looked" not in first  # the first look only remembers
    ok("--profile", mover, "move", "draw")
    ok("--profile", mover, "move", "1")  # match with the drawn card, or add one
    name = "Ann" if mover == "default" else "Bob"
    text = ok("--profile", other, "show").stdout
    assert text.startswith("Since you last looked:\n")
    assert f"  {name} drew 1 card\n" in text  # the drawn card itself stays hidden
    assert "Since you last looked" not in ok("--profile", other, "show").stdout  # seen now
    # the mover's own actions are not news to the mover
    assert "Since you last looked" not in ok("--profile", mover, "show").stdout.split("\n")[0]


def test_deadlines_are_relative_and_local() -> None:
    now = datetime(2030, 5, 1, 12, 0, tzinfo=UTC)
    later = (now + timedelta(days=1, hours=4, minutes=2)).isoformat()
    text = render.deadline(later, now=now)
    assert text.startswith("in 1 day 4 h (")
    local = datetime.fromisoformat(later).astimezone()
    assert text.endswith(f"{local:%H:%M} {render.utc_offset(local)})")  # the time and its zone
    assert render.deadline((now + timedelta(minutes=7)).isoformat(), now=now).startswith(
        "in 7 min (")
    assert render.deadline((now - timedelta(hours=1)).isoformat(), now=now).startswith("passed")


def test_a_local_time_names_its_offset() -> None:
    moment = datetime(2030, 1, 15, 12, 0, tzinfo=UTC)
    assert render.utc_offset(moment) == "UTC"
    assert render.utc_offset(moment.astimezone(ZoneInfo("Asia/Vientiane"))) == "UTC+7"
    assert render.utc_offset(moment.astimezone(ZoneInfo("Asia/Kolkata"))) == "UTC+5:30"
    assert render.utc_offset(moment.astimezone(ZoneInfo("America/St_Johns"))) == "UTC-3:30"


def test_titles_marks_and_profile_hints(server_url: str, config_file: Path) -> None:
    ok("--profile", "ann", "server", server_url)
    ok("--profile", "ann", "new", "--seat", "Ann", "--bot", "greedy", "--me", "Ann",
       "--turn-limit", "2d")
    text = ok("--profile", "ann", "show").stdout
    game_id = text.split("(", 1)[1].split(")", 1)[0]
    assert text.startswith(f"Ann vs greedy-bot-1 ({game_id}) · ")  # not the id twice
    assert "greedy-bot-1 (bot) 0" in text
    assert "deadline in 1 day 23 h (" in text or "deadline in 2 days (" in text
    ok("--profile", "ann", "vacation", "1")
    assert "Ann (on vacation until " in ok("--profile", "ann", "show").stdout
    assert "`dos-client --profile ann move N`" in ok("--profile", "ann", "show").stdout


def test_plain_output_has_no_trailing_spaces_and_does_not_wrap(table: Table) -> None:
    mover = table.to_move()
    for args in (["show"], ["moves"], ["history", "--all"], ["games"]):
        text = ok("--profile", mover, *args).stdout
        for line in text.splitlines():
            assert line == line.rstrip(), (args, line)
    hints = ok("--profile", mover, "moves").stdout
    assert "`dos-client" in hints
    # No wrapping at 80 columns: every description stands whole on one line, however long.
    listed = json.loads(ok("--profile", mover, "--json", "moves").stdout)["actions"]
    plain = ok("--profile", mover, "moves").stdout.splitlines()
    for entry in listed:
        assert any(entry["description"] in line for line in plain), entry
