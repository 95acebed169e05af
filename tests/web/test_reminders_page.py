"""The settings page chooses the seat's reminders; the table page is a look of the seat."""

from __future__ import annotations

from html import unescape

from flask import Flask
from web_helpers import ANN, BOB, join_api, post, sign_in

from dos_server.extensions import db
from dos_server.models import SeatRow


def _game(app: Flask) -> str:
    api = app.test_client()
    answer = api.post("/api/games", json={"seats": [{"name": "ann", "email": ANN},
                                                    {"name": "bob", "email": BOB}],
                                          "turn_time_limit": 7200})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    created = answer.get_json()
    for invite in created["invites"]:
        join_api(api, created["id"], invite["invite"])
    return str(created["id"])


def _seat(app: Flask, game_id: str) -> SeatRow:
    with app.app_context():
        seat = db.session.execute(db.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.index == 0)).scalar_one()
        db.session.expunge(seat)
        db.session.remove()
    return seat


def test_the_settings_page_sets_the_reminders(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    page = f"/games/{game_id}/settings"
    shown = unescape(browser.get(page).get_data(as_text=True))
    assert 'name="reminders"' in shown
    assert 'value="80%"' in shown  # the default
    saved = post(browser, f"{page}/notifications", {"reminders": "1h, 50%"}, page=page)
    assert saved.status_code == 303
    assert _seat(app, game_id).reminders == ["50%", "1h"]
    assert 'value="50%, 1h"' in unescape(browser.get(page).get_data(as_text=True))

    refused = post(browser, f"{page}/notifications", {"reminders": "50%, soon"}, page=page)
    assert refused.status_code == 422
    text = unescape(refused.get_data(as_text=True))
    assert "Each reminder is a share of the turn's time" in text
    assert 'value="50%, soon"' in text  # what was typed, to correct it
    assert _seat(app, game_id).reminders == ["50%", "1h"]  # nothing changed

    assert post(browser, f"{page}/notifications", {"reminders": ""},
                page=page).status_code == 303
    assert _seat(app, game_id).reminders == []


def test_the_table_page_is_a_look(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    assert browser.get(f"/games/{game_id}").status_code == 200
    assert _seat(app, game_id).last_seen_at is not None
    watcher = app.test_client()  # someone not signed in: nobody's look
    assert watcher.get(f"/games/{game_id}").status_code == 200
    with app.app_context():
        other = db.session.execute(db.select(SeatRow.last_seen_at).where(
            SeatRow.game_id == game_id, SeatRow.index == 1)).scalar_one()
        db.session.remove()
    assert other is None


def test_an_open_table_waiting_for_a_change_is_a_look(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    assert _seat(app, game_id).last_seen_at is None
    answer = browser.get(f"/games/{game_id}/wait?version=0")  # not the game's: answers at once
    assert answer.status_code == 200
    assert answer.get_json()["changed"] is True
    assert _seat(app, game_id).last_seen_at is not None
