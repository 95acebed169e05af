"""``dos-client nudge``, ``notify --nudges off``, ``votes`` and ``vote SEAT bot|end`` against a
real server over HTTP."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cli_helpers import Table, as_json, ok, run


def test_nudge_once_a_day_and_nudges_off(table: Table) -> None:
    waiting, to_move = table.waiting(), table.to_move()
    mover_name = "Ann" if to_move == "default" else "Bob"
    done = ok("--profile", waiting, "nudge")
    assert f"You nudged {mover_name} in g; your next nudge there is allowed" in done.stdout
    again = run("--profile", waiting, "nudge")
    assert again.exit_code == 1  # 429: refused, try later
    assert "your next nudge is allowed at" in again.stderr
    own = run("--profile", to_move, "nudge")
    assert own.exit_code == 3
    assert "your own turn" in own.stderr
    off = ok("--profile", to_move, "notify", "--nudges", "off")
    assert "Nudges from the other players: off." in off.stdout
    assert as_json("--profile", to_move, "notify")["nudges"] is False
    bad = run("--profile", to_move, "notify", "--nudges", "maybe")
    assert bad.exit_code == 2


def test_votes_and_a_vote_that_ends_the_game(table: Table, tmp_path: Path) -> None:
    waiting, to_move = table.waiting(), table.to_move()
    absent = table.state()["view"]["current"]
    assert "Nobody is absent in g" in ok("--profile", waiting, "votes").stdout
    refused = run("--profile", waiting, "vote", str(absent), "bot")
    assert refused.exit_code == 3
    assert "is not absent" in refused.stderr
    assert run("--profile", waiting, "vote", str(absent), "maybe").exit_code == 2
    with sqlite3.connect(tmp_path / "dos.sqlite3") as database:  # the server's: three timeouts
        database.execute("UPDATE seats SET timeouts = 3 WHERE game_id = ? AND \"index\" = ?",
                         (table.id, absent))
    listed = ok("--profile", waiting, "votes").stdout
    assert f"Seat {absent} (" in listed
    assert "(timeouts in a row: 3)" in listed
    decided = as_json("--profile", waiting, "vote", str(absent), "end")
    assert decided["decided"] == "end"
    assert decided["status"] == "finished"
    assert as_json("--profile", to_move, "show")["status"] == "finished"
