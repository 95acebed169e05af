"""One move reads as one line, in the same words, wherever it is read: the table page's
"Latest events", the email's "since your last turn" and dos-client's event list
(``dos_engine.wording`` for all three)."""

from __future__ import annotations

import html
import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from web_helpers import api_game, api_view, join_api, sign_in

from dos_client import render
from dos_server.extensions import db
from dos_server.services import access, notify


def _latest_events(browser: FlaskClient, game_id: str) -> list[str]:
    page = browser.get(f"/games/{game_id}").get_data(as_text=True)
    section = page.split('id="history-h"', 1)[1].split("</ol>", 1)[0]
    return [html.unescape(line) for line in re.findall(r"<li>(.*?)</li>", section)]


def _since_last_turn(app: Flask, game_id: str, seat: int) -> list[str]:
    with app.app_context():
        game = access.get_game(game_id)
        lines = notify.since_last_turn(game, access.seat_of(game, seat))
        db.session.remove()
    return lines


def _events(api: FlaskClient, game_id: str, token: str, after: int) -> list[dict[str, Any]]:
    page = api.get(f"/api/games/{game_id}/events?after={after}",
                   headers={"Authorization": f"Bearer {token}"}).get_json()
    events: list[dict[str, Any]] = page["events"]
    return events


def test_a_draw_is_one_line_on_the_page_in_the_email_and_in_the_client(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    game_id = created["id"]
    tokens = [join_api(api, game_id, invite["invite"]) for invite in created["invites"]]
    mover = int(api_view(api, game_id)["view"]["current"])
    other = 1 - mover
    names = ["alice", "bob"]
    watcher = app.test_client()
    sign_in(app, watcher, game_id, other)
    page_before = _latest_events(watcher, game_id)
    email_before = _since_last_turn(app, game_id, other)
    last_seq = api.get(f"/api/games/{game_id}/events?limit=1").get_json()["last"]

    answer = api.post(f"/api/games/{game_id}/actions",
                      headers={"Authorization": f"Bearer {tokens[mover]}"},
                      json={"version": api_view(api, game_id)["version"], "actions": ["draw"]})
    assert answer.status_code == 200, answer.get_json()
    assert [e["kind"] for e in answer.get_json()["events"]] == ["action", "drew"]

    said = f"{names[mover]} drew 1 card"
    assert _latest_events(watcher, game_id) == [said, *page_before]  # newest first
    assert _since_last_turn(app, game_id, other) == [*email_before, said]
    seen_by_other = _events(api, game_id, tokens[other], last_seq)
    assert render.event_lines(seen_by_other, names) == [f"  {said}"]
    (own,) = render.event_lines(answer.get_json()["events"], names)  # the mover's answer
    assert re.fullmatch(rf"  {said} \([RGBYW]\S*\)", own)  # with the card drawn
