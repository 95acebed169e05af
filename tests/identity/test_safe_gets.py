"""No GET changes anything: every GET route of the OpenAPI document, with every kind of
token, and every link of every email a game sends, fetched as a link scanner or a mail
preview would, leave every stored row as it was. SQLite and, with TEST_DATABASE_URL,
PostgreSQL."""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import urlsplit

from flask import Flask
from identity_helpers import auth, create, deliver, join_all, sign_in
from sqlalchemy import select

from dos_server.extensions import db
from testkit import SmtpSink

ANN, BOB, BOB_NEW = "ann@example.org", "bob@example.org", "bob@new.example.org"
URL = re.compile(r"https?://[^\s\"'<>]+")
# Bookkeeping that a read may move: when an account token was last used, when a seat last
# looked at its game (services/attention.py), and the browser's own session (a page parks the
# token of a link there before its button is pressed).
IGNORED = {("account_sessions", "last_used_at"), ("seats", "last_seen_at")}
IGNORED_TABLES = {"browser_sessions"}


def _snapshot(app: Flask) -> dict[str, list[str]]:
    with app.app_context():
        out = {}
        for table in db.metadata.sorted_tables:
            if table.name in IGNORED_TABLES:
                continue
            columns = [c for c in table.columns if (table.name, c.name) not in IGNORED]
            rows = db.session.execute(select(*columns)).all()
            out[table.name] = sorted(repr(tuple(row)) for row in rows)
        db.session.remove()
    return out


def _play_to_the_end(app: Flask, game_id: str, tokens: dict[int, str]) -> None:
    client = app.test_client()
    for _ in range(2000):
        game = client.get(f"/api/games/{game_id}").get_json()
        if game["status"] != "active":
            return
        token = tokens[game["view"]["current"]]
        actions = client.get(f"/api/games/{game_id}/actions", headers=auth(token)).get_json()
        moved = client.post(f"/api/games/{game_id}/actions", headers=auth(token),
                            json={"version": actions["version"], "number": 1})
        assert moved.status_code == 200, moved.get_json()
    raise AssertionError("the game did not end")


def _links(smtp: SmtpSink) -> tuple[set[str], set[str]]:
    kinds, links = set(), set()
    for message in smtp.messages:
        kinds.add(str(message["X-DOS-Event"]))
        links.update(URL.findall(str(message.get("List-Unsubscribe", ""))))
        for part in message.walk():
            if part.get_content_maintype() == "text":
                links.update(unescape(u).rstrip(".,;)") for u in URL.findall(part.get_content()))
    return kinds, links


def _fill(path: str, values: dict[str, Any]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), path)


def test_no_get_changes_anything(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}],
                  options={"target_score": 1})
    tokens = join_all(client, game)
    changed = client.put(f"/api/games/{game['id']}/seats/1/notifications",
                         headers=auth(tokens[1]), json={"email": BOB_NEW})
    assert changed.status_code == 200, changed.get_json()
    account = sign_in(client, mail_app, smtp, ANN)
    _play_to_the_end(mail_app, game["id"], tokens)
    second = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    second_tokens = join_all(client, second)
    client.post("/api/login", json={"email": BOB})  # a sign-in email left unused
    deliver(mail_app, passes=20)
    kinds, links = _links(smtp)
    assert {"invited", "your_turn", "round_over", "game_over", "login_code",
            "confirm_email"} <= kinds, kinds
    ours = {link for link in links if urlsplit(link).netloc == urlsplit(
        mail_app.config["PUBLIC_URL"]).netloc}
    assert len(ours) > 10, links
    before = _snapshot(mail_app)

    # Every link of every email, opened by a scanner (no cookie) and a browser (following
    # its redirects, which are GETs too).
    for link in sorted(ours):
        parts = urlsplit(link)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        for accept in ("text/html", "application/json", "*/*"):
            mail_app.test_client().get(path, headers={"Accept": accept})
            mail_app.test_client().get(path, headers={"Accept": accept}, follow_redirects=True)
    # Every GET route of the OpenAPI document, with every kind of credential.
    spec = client.get("/openapi.json").get_json()
    # Each token an email carries in a path (unsubscribe, confirm, sign in) goes into every
    # route that takes one: a confirmation token in a GET route would confirm.
    path_tokens = sorted({urlsplit(link).path.rsplit("/", 1)[1] for link in ours
                          if re.search(r"/(unsubscribe|confirm-email|signin)/", link)})
    assert len(path_tokens) >= 3, path_tokens
    bearers = [None, tokens[0], tokens[1], second_tokens[0], game["host_token"], account]
    fetched = 0
    for path, operations in spec["paths"].items():
        if "get" not in operations:
            continue
        for bearer in bearers:
            for game_id in (game["id"], second["id"]):
                for token in path_tokens if "{token}" in path else ["-"]:
                    url = _fill(path, {"game_id": game_id, "token": token, "seat": 0,
                                       "name": "ann"})
                    answer = client.get(url, headers=auth(bearer) if bearer else {})
                    assert answer.status_code < 500, (url, answer.get_data(as_text=True))
                    fetched += 1
    assert fetched > 50
    assert _snapshot(mail_app) == before
