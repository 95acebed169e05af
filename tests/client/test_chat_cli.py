"""``dos-client say``, ``chat`` (and ``chat --follow``, woken by the server's long-poll) and
``notify --chat-email`` against a real server over HTTP."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import Table, as_json, ok, run, serve
from test_wait_push import parked, waiting_client

from testkit import backend, db_url

__all__ = ["backend", "db_url"]

@pytest.fixture
def server_url(db_url: str) -> Iterator[str]:
    """The server on SQLite and, with TEST_DATABASE_URL, PostgreSQL."""
    yield from serve(db_url)



def test_say_and_chat(table: Table) -> None:
    assert "Nobody has said anything in g yet" in ok("chat").stdout
    said = ok("say", "good luck, Bob")
    assert "You said in g: good luck, Bob" in said.stdout
    ok("--profile", "bob", "say", "[bold]thanks[/bold]", "g")
    shown = ok("--profile", "bob", "chat").stdout.splitlines()
    assert shown[0].endswith("Ann: good luck, Bob")
    assert shown[1].endswith("Bob: [bold]thanks[/bold]")  # plain text, never markup
    assert [m["text"] for m in as_json("chat", "--last", "1")["messages"]] == [
        "[bold]thanks[/bold]"]
    empty = run("say", "   ")
    assert empty.exit_code == 2  # 422: the input is wrong
    assert "at least one character" in empty.stderr
    assert run("say", "x" * 501).exit_code == 2


def test_chat_follow_shows_a_new_message_as_it_comes(table: Table, config_file: Path) -> None:
    ok("say", "before following")
    client = waiting_client(config_file, "--profile", "bob", "--json", "chat", "--follow",
                            "--timeout", "120")
    try:
        parked(table.id)
        ok("say", "while you follow")
        assert client.stdout is not None
        lines = [json.loads(client.stdout.readline()) for _ in range(2)]
    finally:
        client.terminate()
        try:
            client.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            client.kill()
            client.communicate()
    assert [m["text"] for m in lines] == ["before following", "while you follow"]


def test_notify_chat_email(table: Table) -> None:
    on = ok("--profile", "bob", "notify", "--chat-email", "on")
    assert "An email for the table talk: on." in on.stdout
    assert as_json("--profile", "bob", "notify", "--chat-email", "off")["chat_email"] is False
    assert run("--profile", "bob", "notify", "--chat-email", "maybe").exit_code == 2
