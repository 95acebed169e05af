"""The lobby waits for the people a game names (API, host page), and a your-turn email's move
links: opening one changes nothing, its button plays it, a stale one plays nothing."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import sqlalchemy as sa
from flask import Flask
from web_helpers import ANN, BOB, api_game, api_view, csrf_of, join_api, path_of

from dos_server.delivery.mail import dispatch
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow, NotificationRow
from dos_server.services import access, notify

SEATS = [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}]


def _turn_rows(app: Flask, game_id: str) -> int:
    with app.app_context():
        count = db.session.execute(sa.select(sa.func.count()).select_from(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.event == "your_turn")).scalar_one()
        db.session.remove()
    return int(count)


def _row(app: Flask, game_id: str) -> tuple[str, Any, int, int]:
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        events = db.session.execute(sa.select(sa.func.count()).select_from(EventRow).where(
            EventRow.game_id == game_id)).scalar_one()
        out = (game.status, game.turn_deadline, game.version, int(events))
        db.session.remove()
    return out


def test_a_game_naming_people_waits_until_all_have_joined(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, SEATS)
    created_limit = api.post("/api/games", json={"seats": SEATS, "turn_time_limit": 3600})
    game_id = created["id"]
    for body in (created, created_limit.get_json()):
        assert body["status"] == "waiting"
    status, deadline, _, _ = _row(app, game_id)
    assert (status, deadline) == ("waiting", None)
    join_api(api, game_id, created["invites"][0]["invite"])
    status, deadline, _, _ = _row(app, game_id)
    assert (status, deadline) == ("waiting", None)
    assert _turn_rows(app, game_id) == 0  # nobody is told it is their turn
    join_api(api, game_id, created["invites"][1]["invite"])
    assert api_view(api, game_id)["status"] == "active"
    assert _turn_rows(app, game_id) == 1

    timed = created_limit.get_json()
    join_api(api, timed["id"], timed["invites"][0]["invite"])
    assert _row(app, timed["id"])[1] is None  # no clock runs for bob, who has not come
    join_api(api, timed["id"], timed["invites"][1]["invite"])
    assert _row(app, timed["id"])[1] is not None


def test_start_now_keeps_the_invited_seat_and_its_invite(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, SEATS)
    game_id = created["id"]
    join_api(api, game_id, created["invites"][0]["invite"])
    started = api.post(f"/api/games/{game_id}/start",
                       headers={"Authorization": f"Bearer {created['host_token']}"})
    assert started.status_code == 200, started.get_json()
    body = api_view(api, game_id)
    assert body["status"] == "active"
    assert [s["name"] for s in body["seats"]] == ["ann", "bob"]
    assert [s["claimed"] for s in body["seats"]] == [True, False]
    join_api(api, game_id, created["invites"][1]["invite"])  # bob comes later, and plays
    assert api_view(api, game_id)["seats"][1]["claimed"] is True


def test_the_host_page_of_a_waiting_game_offers_start_and_cancel(app: Flask) -> None:
    browser = app.test_client()
    page = browser.get("/new")
    made = browser.post("/new", data={
        "csrf": csrf_of(page), "seat_count": "2", "seat0_kind": "person", "seat0_name": "ann",
        "seat1_kind": "person", "seat1_name": "bob", "me": "0"})
    assert made.status_code == 303, made.get_data(as_text=True)
    host = browser.get(made.headers["Location"])
    text = host.get_data(as_text=True)
    game_id = made.headers["Location"].split("/")[2]
    assert "waiting" in text
    assert "Start now" in text
    assert "Cancel the game" in text
    assert _row(app, game_id)[0] == "waiting"
    started = browser.post(f"/games/{game_id}/start", data={"csrf": csrf_of(text)})
    assert started.status_code == 303
    assert _row(app, game_id)[0] == "active"


# -- the your-turn email's move links -------------------------------------------------------


def _started(app: Flask) -> tuple[str, dict[int, str]]:
    api = app.test_client()
    created = api_game(api, SEATS)
    tokens = {i["seat"]: join_api(api, created["id"], i["invite"]) for i in created["invites"]}
    return str(created["id"]), tokens


def _emailed_links(app: Flask, game_id: str) -> tuple[int, list[str]]:
    """The seat to move, and the Play links of its your-turn email's HTML part."""
    with app.app_context():
        game = access.get_game(game_id)
        state = access.engine_state(game)
        seat = access.seat_of(game, state.current)
        payload = notify.email_payload(game, seat, state, "your_turn", {})
        message = dispatch.build(payload, "dos.turn.test")
        html = next(part for part in message.walk()
                    if part.get_content_type() == "text/html").get_content()
        db.session.remove()
    return state.current, [unescape(link) for link in re.findall(
        r'href="([^"]*/emailed-move/[^"]*)"', html)]


def test_an_emailed_move_link_changes_nothing_and_its_button_plays_it(app: Flask) -> None:
    game_id, _ = _started(app)
    _, links = _emailed_links(app, game_id)
    assert links
    assert all("/emailed-move/" in link for link in links)
    before = _row(app, game_id)
    scanner = app.test_client()  # a link scanner fetches every URL, following redirects
    for link in links:
        assert scanner.get(path_of(link), follow_redirects=True).status_code == 200
    assert _row(app, game_id) == before

    person = app.test_client()
    first = person.get(path_of(links[0]))
    assert first.status_code == 303
    assert "token" not in first.headers["Location"]
    page = person.get(first.headers["Location"])
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Play " in text
    assert 'method="post"' in text
    assert _row(app, game_id) == before
    played = person.post(first.headers["Location"], data={"csrf": csrf_of(text)})
    assert played.status_code == 303, played.get_data(as_text=True)
    after = _row(app, game_id)
    assert after[2] > before[2]
    assert after[3] > before[3]
    table = person.get(played.headers["Location"]).get_data(as_text=True)
    assert "Played:" in table
    assert "(you)" in table


def test_a_stale_emailed_move_plays_nothing_and_shows_the_new_table(app: Flask) -> None:
    game_id, tokens = _started(app)
    seat, links = _emailed_links(app, game_id)
    person = app.test_client()
    first = person.get(path_of(links[0]))
    page = person.get(first.headers["Location"]).get_data(as_text=True)
    api = app.test_client()
    moved = api.post(f"/api/games/{game_id}/actions",
                     headers={"Authorization": f"Bearer {tokens[seat]}"},
                     json={"version": _row(app, game_id)[2], "number": 1})
    assert moved.status_code == 200, moved.get_json()
    before = _row(app, game_id)
    stale = person.post(first.headers["Location"], data={"csrf": csrf_of(page)})
    assert stale.status_code == 409
    assert "nothing was played" in stale.get_data(as_text=True)
    assert _row(app, game_id) == before
    again = person.get(path_of(links[0]), follow_redirects=True)
    assert again.status_code == 409
    assert "nothing was played" in again.get_data(as_text=True)
    assert _row(app, game_id) == before
