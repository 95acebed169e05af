"""Every kind of email, as the relay receives it.

One deterministic game (fixed seed, game id and seat ids) produces every email kind through
the real worker and a real SMTP relay (aiosmtpd). For each message:

- the raw header block the relay received: ``List-Unsubscribe`` is the plain
  ``<https://...>, <mailto:...>`` form, no structural header is an RFC 2047 encoded-word,
  no line is over 998 characters, the automatic-mail headers are there;
- the text part is compared with a snapshot in ``tests/data/mail/snapshots/<kind>.txt``
  (``UPDATE_SNAPSHOTS=1`` rewrites them);
- the HTML part parses and lists the same moves as the text part.
"""

from __future__ import annotations

import email
import email.policy
import os
import re
import types
from collections.abc import Callable, Iterator
from datetime import timedelta
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from notify_helpers import (
    FakeClock,
    auth,
    create,
    current,
    player_tokens,
    run_worker,
)

from dos_server.extensions import db
from dos_server.models import GameRow
from dos_server.services import digest, lobby, notify, play
from testkit import SmtpSink

SNAPSHOTS = Path(__file__).resolve().parents[1] / "data" / "mail" / "snapshots"
DORA, BOB = "dora@example.org", "bob@example.org"
KINDS = ("invited", "your_turn", "reminder", "timed_out", "caught", "round_over", "game_over",
         "new_address", "undeliverable", "mail_reply", "digest")
STRUCTURAL = ("List-Unsubscribe", "List-Unsubscribe-Post", "Reply-To", "Message-ID",
              "In-Reply-To", "References", "List-Id", "Auto-Submitted",
              "X-Auto-Response-Suppress", "X-DOS-Event", "X-DOS-Game", "Date", "To")


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same game every run: seed, game id and seat ids."""
    monkeypatch.setattr(play, "secrets", types.SimpleNamespace(token_hex=lambda n: "5e" * n))
    monkeypatch.setattr(lobby, "_new_id", lambda: "snapgame01")
    seats: Iterator[str] = iter(["dorasnapseat", "bobsnapseatz", "botsnapseatz"])
    monkeypatch.setattr(lobby, "new_seat_id", lambda: next(seats))


def _all_kinds(make_app: Callable[..., Flask], smtp: SmtpSink) -> Flask:
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none",
                   INBOUND_SECRET="inbound-secret", MAIL_DOMAIN="play.test",
                   PUBLIC_URL="https://dos.example.org")
    client = app.test_client()
    game = create(client, [{"name": "dora", "email": DORA}, {"name": "bob", "email": BOB},
                           {"bot": "greedy"}],
                  turn_time_limit=3600, options={"target_score": 1})
    gid = game["id"]
    tokens = player_tokens(client, game)
    run_worker(app, passes=5)
    clock = FakeClock()
    with app.app_context():
        row = db.session.get(GameRow, gid)
        assert row is not None
        assert row.turn_started_at is not None
        started = row.turn_started_at
        db.session.remove()
    clock.set(started + timedelta(seconds=0.8 * 3600 + 1))
    run_worker(app, clock, passes=3)  # reminder
    clock.set(started + timedelta(seconds=3600 + 1))
    run_worker(app, clock, passes=3)  # timed out
    seat = current(client, gid, tokens[0])["view"]["current"]
    with app.app_context():  # a catch and an undeliverable webhook, as the engine/worker write
        row = db.session.get(GameRow, gid)
        assert row is not None
        state = play.engine_state(row)
        notify.enqueue(row, "caught", [row.seats[seat]], state, {"seat": seat}, key="snap")
        notify.enqueue(row, "undeliverable", [row.seats[0]], None,
                       {"channel": "webhook", "target": "https://hooks.example.org/x",
                        "event": "your_turn", "error": "answered HTTP 500"},
                       key="snap", channels=("email",))
        db.session.commit()
        db.session.remove()
    answer = client.post(f"/api/games/{gid}/seats/0/token", headers=auth(tokens[0]))
    assert answer.status_code == 200
    tokens[0] = answer.get_json()["player_token"]
    run_worker(app, passes=5)
    latest = [m for m in smtp.to(DORA) if m["Reply-To"]][-1]
    reply = EmailMessage()
    reply["From"] = f"Dora <{DORA}>"
    reply["To"] = str(latest["Reply-To"])
    reply["Subject"] = f"Re: {latest['Subject']}"
    reply["Message-ID"] = "<reply-1@client.example>"
    reply.set_content("show\n")
    answer = client.post("/inbound/email", data=bytes(reply),
                         headers={"Authorization": "Bearer inbound-secret"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    waiting = current(client, gid, tokens[0])["view"]["current"]
    assert waiting in (0, 1)
    answer = client.put(f"/api/games/{gid}/seats/{waiting}/notifications",
                        json={"digest": True}, headers=auth(tokens[waiting]))
    assert answer.status_code == 200
    with app.app_context():
        digest.send_digests(clock.now)
        db.session.remove()
    run_worker(app, clock, passes=5)
    for _ in range(500):  # to the end: round over and game over
        body = current(client, gid, tokens[0])
        if body["status"] != "active":
            break
        turn = body["view"]["current"]
        listing = client.get(f"/api/games/{gid}/actions", headers=auth(tokens[turn])).get_json()
        client.post(f"/api/games/{gid}/actions", headers=auth(tokens[turn]),
                    json={"version": listing["version"], "number": 1})
    run_worker(app, clock, passes=20)
    return app


def _raw_headers(raw: bytes) -> list[tuple[str, str, list[str]]]:
    """(name, unfolded value, physical lines) of a raw header block."""
    block = raw.split(b"\r\n\r\n", 1)[0] if b"\r\n\r\n" in raw else raw.split(b"\n\n", 1)[0]
    out: list[tuple[str, str, list[str]]] = []
    for line in block.decode("ascii").splitlines():
        if line[:1] in (" ", "\t") and out:
            name, value, lines = out[-1]
            out[-1] = (name, value + " " + line.strip(), [*lines, line])
        else:
            name, _, value = line.partition(":")
            out.append((name, value.strip(), [line]))
    return out


class _Moves(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.moves: list[str] = []
        self.chips = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("data-move"):
            self.moves.append(str(found["data-move"]))
        if found.get("class") == "card":
            self.chips += 1


def _normalise(text: str) -> str:
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(\+00:00)?( UTC)?", "<time>",
                  text)
    text = re.sub(r"\w+day \d+ \w+( \d{4})?, \d\d:\d\d \([^)]*\), (in [^,.)]+|[^,.)]+ ago)",
                  "<time>", text)
    text = re.sub(r"/unsubscribe/\S+", "/unsubscribe/<token>", text)
    text = re.sub(r"/games/(\w+)(/join|/rematch)?\?(token|invite)=\S+", r"/games/\1\2?\3=<token>", text)
    return re.sub(r"dos-client join \S+", "dos-client join <invite>", text)


def test_every_email_kind_on_the_wire(make_app: Callable[..., Flask], smtp: SmtpSink,
                                      fixed_ids: None, backend: str) -> None:
    _all_kinds(make_app, smtp)
    seen: dict[str, EmailMessage] = {}
    for _, _, raw in list(smtp.raw):
        headers = _raw_headers(raw)
        named = {name.lower(): value for name, value, _ in headers}
        kind = named["x-dos-event"]
        for name, value, lines in headers:
            assert all(len(line) <= 998 for line in lines), name
            if name in STRUCTURAL:
                assert "=?" not in value, (kind, name, value)
        unsubscribe = named["list-unsubscribe"]
        assert re.fullmatch(r"<https://dos\.example\.org/api/unsubscribe/[^<>\s,]+>, "
                            r"<mailto:unsubscribe\+[a-z0-9.]+@play\.test>", unsubscribe), unsubscribe
        assert named["list-unsubscribe-post"] == "List-Unsubscribe=One-Click"
        assert named["auto-submitted"] == ("auto-replied" if kind == "mail_reply"
                                           else "auto-generated")
        assert named["x-auto-response-suppress"] == "All"
        if "reply-to" in named:
            assert re.fullmatch(r"play\+[a-z0-9.]+@play\.test", named["reply-to"])
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        assert_links_open_pages(message)
        seen.setdefault(kind, message)
    assert set(seen) == set(KINDS), sorted(seen)
    if backend != "sqlite":
        return  # the snapshots are the same on both: compare once
    for kind, message in sorted(seen.items()):
        text = message.get_body(preferencelist=("plain",))
        markup = message.get_body(preferencelist=("html",))
        assert text is not None
        assert markup is not None
        plain = _normalise(str(text.get_content()).replace("\r\n", "\n"))
        parser = _Moves()
        parser.feed(str(markup.get_content()))
        parser.close()
        listed = re.findall(r"^\s+\d+\. (\S+(?: \S+)?)", plain.split("Your moves:")[-1], re.M) \
            if "Your moves:" in plain else []
        assert [m.split(" ")[0] for m in parser.moves] == [m.split(" ")[0] for m in listed]
        if listed:
            assert parser.moves == [m for m in parser.moves if m]
            assert parser.chips > 0
            assert re.search(r"dos-client move snapgame01 1 --at \d+\n", plain)
        snapshot = SNAPSHOTS / f"{kind}.txt"
        if os.environ.get("UPDATE_SNAPSHOTS") or not snapshot.exists():
            snapshot.parent.mkdir(parents=True, exist_ok=True)
            snapshot.write_text(plain, encoding="utf-8")
        assert plain == snapshot.read_text(encoding="utf-8"), kind


API_LINK = re.compile(r"https?://[^\s\"'<>]+/api/")


def assert_links_open_pages(message: EmailMessage) -> None:
    """Every link in an email's text or HTML opens a web page, never the JSON API
    (``List-Unsubscribe``, a header for mail clients, posts to the API and is not a link)."""
    for kind in ("plain", "html"):
        part = message.get_body(preferencelist=(kind,))
        assert part is not None
        found = API_LINK.findall(str(part.get_content()))
        assert not found, (message["X-DOS-Event"], kind, found)


def test_your_turn_subject_names_the_opponents(make_app: Callable[..., Flask], smtp: SmtpSink,
                                               fixed_ids: None) -> None:
    _all_kinds(make_app, smtp)
    subjects: dict[str, Any] = {}
    for message in smtp.to(DORA) + smtp.to(BOB):
        subjects.setdefault(message["X-DOS-Event"], str(message["Subject"]))
    assert re.fullmatch(r"DOS snapgame01: your turn \(vs (bob|dora) and greedy-bot-2\)",
                        subjects["your_turn"])
    assert subjects["game_over"].startswith("DOS snapgame01: game over, ")
