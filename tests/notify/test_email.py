"""Email over a real SMTP server (aiosmtpd on loopback), parsed with the ``email`` package."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask
from flask.testing import FlaskClient
from notify_helpers import (
    auth,
    create,
    current,
    play_one,
    play_to_end,
    player_tokens,
    rows,
    run_worker,
)

from testkit import SmtpSink

ANN, BOB = "ann@example.org", "bob@example.org"


def _parts(message: email.message.EmailMessage) -> dict[str, str]:
    found = {}
    for part in message.walk():
        if part.get_content_maintype() == "text":
            found[part.get_content_type()] = part.get_content().replace("\r\n", "\n")
    return found


def test_emails_thread_and_carry_the_moves(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}],
                  options={"target_score": 1})
    gid = game["id"]
    tokens = player_tokens(client, game)
    start = client.get(f"/api/games/{gid}", headers=auth(tokens[0])).get_json()
    first = start["view"]["current"]
    listing = client.get(f"/api/games/{gid}/actions",
                         headers=auth(tokens[first])).get_json()
    run_worker(mail_app, passes=5)

    # Invitations for both, and "your turn" for whoever starts.
    for address in (ANN, BOB):
        events = [m["X-DOS-Event"] for m in smtp.to(address)]
        assert events.count("invited") == 1, events
    turn = [m for m in smtp.to([ANN, BOB][first]) if m["X-DOS-Event"] == "your_turn"]
    assert len(turn) == 1
    text = _parts(turn[0])["text/plain"]
    for action in listing["actions"]:
        assert f"{action['number']:>2}. {action['action']}" in text, (action, text)
    version = current(client, gid, tokens[0])["version"]
    assert f"\n  dos-client move {gid} 1 --at {version}\n" in text

    play_to_end(client, gid, tokens)
    run_worker(mail_app, passes=50)
    assert all(r.status == "sent" for r in rows(mail_app, channel="email"))
    for seat, address in enumerate((ANN, BOB)):
        messages = smtp.to(address)
        events = {m["X-DOS-Event"] for m in messages}
        assert {"invited", "your_turn", "round_over", "game_over"} <= events, events
        root = f"<game-{gid}.seat-{seat}@localhost>"
        ids = [m["Message-ID"] for m in messages]
        assert len(set(ids)) == len(ids)
        for message in messages:
            assert message["In-Reply-To"] == root
            assert message["References"] == root
            assert message["Message-ID"] != root
            assert message.get_content_type() == "multipart/alternative"
            parts = _parts(message)
            assert set(parts) == {"text/plain", "text/html"}
            if message["X-DOS-Event"] != "invited":
                assert f"dos-client show {gid}" in parts["text/plain"]
            assert "/unsubscribe/" in parts["text/html"]
            assert "/api/" not in parts["text/html"] + parts["text/plain"]  # pages, not JSON
            assert message["List-Unsubscribe"].startswith("<http")
            assert message["Auto-Submitted"] == "auto-generated"
            assert message["X-Auto-Response-Suppress"] == "All"
            assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        # rows agree with what the server received: one message each, nothing more
        sent = rows(mail_app, channel="email", target=address)
        assert sorted(f"<{r.message_id}@localhost>" for r in sent) == sorted(ids)


def _unsubscribe_path(message: email.message.EmailMessage) -> str:
    link = str(message["List-Unsubscribe"]).split(",")[0].strip().strip("<>")
    return urlsplit(link).path


def _play_until_both_had_a_turn(client: FlaskClient, gid: str, tokens: dict[int, str]) -> set[int]:
    """Play first moves until the turn has passed twice (so each seat was given a turn)."""
    last = current(client, gid, tokens[0])["view"]["current"]
    given: set[int] = set()
    for _ in range(200):
        assert play_one(client, gid, tokens) is not None
        seat = current(client, gid, tokens[0])["view"]["current"]
        if seat != last:
            given.add(seat)
            last = seat
        if len(given) == 2:
            return given
    raise AssertionError("the turn did not pass")


def test_unsubscribe_link_really_unsubscribes(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    gid = game["id"]
    tokens = player_tokens(client, game)
    run_worker(mail_app, passes=3)
    ann_link = _unsubscribe_path(smtp.to(ANN)[0])
    bob_link = _unsubscribe_path(smtp.to(BOB)[0])

    answer = client.post(ann_link, data="List-Unsubscribe=One-Click",
                         content_type="application/x-www-form-urlencoded")  # RFC 8058, no login
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json() == {"game_id": gid, "seat": 0, "unsubscribed": True}
    before = len(rows(mail_app, channel="email", target=ANN))
    bob_before = len(rows(mail_app, channel="email", target=BOB))
    turns = _play_until_both_had_a_turn(client, gid, tokens)
    assert len(rows(mail_app, channel="email", target=ANN)) == before
    assert len(rows(mail_app, channel="email", target=BOB)) > bob_before  # bob still gets his
    assert turns == {0, 1}

    # A GET (a link scanner, a preview) describes the link and changes nothing
    for accept in ("application/json", "text/html", "*/*"):
        answer = client.get(bob_link, headers={"Accept": accept})
        assert answer.status_code == 200
    assert client.get(bob_link).get_json()["unsubscribed"] is False
    page = client.get(bob_link, headers={"Accept": "text/html,*/*;q=0.8"})
    assert page.mimetype == "text/html"
    assert '<form method="post"' in page.get_data(as_text=True)
    bob_before = len(rows(mail_app, channel="email", target=BOB))
    _play_until_both_had_a_turn(client, gid, tokens)
    assert len(rows(mail_app, channel="email", target=BOB)) > bob_before  # still subscribed
    done = client.post(bob_link, headers={"Accept": "text/html"})  # the page's button
    assert done.status_code == 200
    assert "Unsubscribed" in done.get_data(as_text=True)
    assert client.get(bob_link).get_json()["unsubscribed"] is True
    bob_before = len(rows(mail_app, channel="email", target=BOB))
    _play_until_both_had_a_turn(client, gid, tokens)
    assert len(rows(mail_app, channel="email", target=BOB)) == bob_before
    assert client.get(ann_link[:-3] + "xyz").status_code == 401
    assert client.post(ann_link[:-3] + "xyz").status_code == 401  # a forged link does nothing


def test_without_smtp_emails_go_to_the_instance_folder(make_app: object, tmp_path: Path) -> None:
    instance = tmp_path / "elsewhere"
    app = make_app(INSTANCE_PATH=str(instance))  # type: ignore[operator]
    client = app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    run_worker(app, passes=3)
    files = sorted((instance / "outbox").glob("*.eml"))
    sent = rows(app, channel="email")
    assert len(files) == len(sent) >= 3
    assert all(r.status == "sent" for r in sent)
    parsed = [email.message_from_bytes(f.read_bytes(), policy=email.policy.default) for f in files]
    assert {m["To"] for m in parsed} == {ANN, BOB}
    assert all(m["X-DOS-Game"] == game["id"] for m in parsed)
    assert {m["X-DOS-Event"] for m in parsed} >= {"invited", "your_turn"}
