"""``dos-client note`` (show, replace, ``--append``, ``--clear``) and ``chat --hide`` /
``--unhide`` against a real server over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cli_helpers import Table, as_json, ok, run, serve

from testkit import backend, db_url

__all__ = ["backend", "db_url"]

@pytest.fixture
def server_url(db_url: str) -> Iterator[str]:
    """The server on SQLite and, with TEST_DATABASE_URL, PostgreSQL."""
    yield from serve(db_url)



def test_note_shows_replaces_appends_and_clears(table: Table) -> None:
    empty = ok("note").stdout
    assert "You have no notes on g" in empty
    assert 'dos-client note "..."' in empty
    saved = ok("note", "Bob keeps his greens")
    assert "Your notes on g are saved (20 characters)" in saved.stdout
    assert ok("note").stdout == "Bob keeps his greens\n"
    ok("note", "--append", "he calls DOS late")
    assert ok("note").stdout == "Bob keeps his greens\nhe calls DOS late\n"
    assert as_json("note")["text"] == "Bob keeps his greens\nhe calls DOS late"
    # The game named as the one argument of --append and --clear, or the second of TEXT.
    ok("note", "--append", "[bold]plain[/bold]", "g")
    assert ok("note").stdout.endswith("\n[bold]plain[/bold]\n")  # plain text, never markup
    # Bob's notes are his own: he sees none of Ann's, and his own are apart.
    assert "You have no notes on g" in ok("--profile", "bob", "note").stdout
    ok("--profile", "bob", "note", "Ann bluffs", "g")
    assert ok("note").stdout.startswith("Bob keeps his greens\n")
    assert "Your notes on g are cleared." in ok("note", "--clear", "g").stdout
    assert "You have no notes on g" in ok("note").stdout
    assert as_json("--profile", "bob", "note")["text"] == "Ann bluffs"
    # --append on no notes starts them.
    ok("note", "--append", "first line")
    assert ok("note").stdout == "first line\n"


def test_bad_notes_are_refused_and_nothing_changes(table: Table) -> None:
    ok("note", "kept")
    too_long = run("note", "x" * 10_001)
    assert too_long.exit_code == 2  # 422: the input is wrong
    assert "at most 10000 characters" in too_long.stderr
    control = run("note", "bell\x07")
    assert control.exit_code == 2
    assert "control character U+0007" in control.stderr
    assert run("note", "--append", "x" * 10_000).exit_code == 2  # the whole would be too long
    both = run("note", "--clear", "--append", "x")
    assert both.exit_code == 2
    assert "not both" in both.stderr
    assert run("note", "--clear", "text", "g").exit_code == 2
    assert ok("note").stdout == "kept\n"


def test_chat_hide_and_unhide_by_name_or_seat(table: Table) -> None:
    ok("--profile", "bob", "say", "hello from Bob")
    ok("say", "hello from Ann")
    hidden = ok("chat", "--hide", "bob")
    assert "In g you hide the table talk of: Bob. The others still read it." in hidden.stdout
    shown = ok("chat").stdout
    assert "hello from Bob" not in shown
    assert "hello from Ann" in shown
    assert "hello from Bob" in ok("--profile", "bob", "chat").stdout  # for Ann alone
    assert "everyone's table talk" in ok("chat", "--unhide", "1").stdout
    assert "hello from Bob" in ok("chat").stdout
    assert as_json("chat", "--hide", "1")["seat"]["hidden"] == [1]
    unknown = run("chat", "--hide", "carol")
    assert unknown.exit_code == 2
    assert "no seat 'carol' in this game" in unknown.stderr
    assert "1 (Bob)" in unknown.stderr
    own = run("chat", "--hide", "Ann")
    assert own.exit_code == 2
    assert "cannot hide your own messages" in own.stderr
    assert as_json("chat", "--unhide", "Bob")["seat"]["hidden"] == []
