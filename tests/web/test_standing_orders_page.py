"""Standing orders on the pages: the settings page's checkboxes (with its CSRF token), the
table's line about them, the history's "by standing order", and the new-game form's choice."""

from __future__ import annotations

import re
from html import unescape

from flask import Flask
from web_helpers import api_game, api_view, join_api, post, sign_in

from dos_call_helpers import waiting_seat_holds_two
from dos_server.extensions import db
from dos_server.models import GameRow


def _game(app: Flask, **options: object) -> tuple[str, list[str]]:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}], dos_call=True, **options)
    return created["id"], [join_api(api, created["id"], i["invite"]) for i in created["invites"]]


def _checked(html: str) -> list[str]:
    return re.findall(r'name="order" value="(\w+)" checked', html)


def test_settings_page_sets_the_orders_and_the_table_shows_them(app: Flask) -> None:
    game_id, tokens = _game(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    settings = f"/games/{game_id}/settings"
    page = browser.get(settings).get_data(as_text=True)
    assert "Standing orders" in page
    assert re.findall(r'name="order" value="(\w+)"', page) == ["draw", "only", "dos", "catch"]
    assert _checked(page) == []
    saved = post(browser, f"{settings}/orders", {"order": ["dos", "draw"]}, page=settings)
    assert saved.status_code == 303, saved.get_data(as_text=True)
    page = browser.get(settings).get_data(as_text=True)
    assert "Standing orders saved." in page
    assert _checked(page) == ["draw", "dos"]
    assert api_view(app.test_client(), game_id, tokens[0])["orders"] == ["draw", "dos"]
    assert api_view(app.test_client(), game_id, tokens[1])["orders"] == []
    table = browser.get(f"/games/{game_id}").get_data(as_text=True)
    assert "Standing orders may call DOS and catch in this game." in table
    assert "Your standing orders: draw, dos." in table
    other = app.test_client()
    sign_in(app, other, game_id, 1)
    assert "Your standing orders" not in other.get(f"/games/{game_id}").get_data(as_text=True)


def test_a_forged_or_bad_orders_form_changes_nothing(app: Flask) -> None:
    game_id, tokens = _game(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    settings = f"/games/{game_id}/settings"
    forged = browser.post(f"{settings}/orders", data={"order": "draw", "csrf": "forged"})
    assert forged.status_code == 403
    bad = post(browser, f"{settings}/orders", {"order": ["draw", "win"]}, page=settings)
    assert bad.status_code == 422
    assert "nknown standing order 'win'" in unescape(bad.get_data(as_text=True))
    assert app.test_client().post(f"{settings}/orders", data={"order": "draw"}).status_code in (
        401, 403)
    assert api_view(app.test_client(), game_id, tokens[0])["orders"] == []


def test_the_history_says_by_standing_order(app: Flask) -> None:
    game_id, _tokens = _game(app)
    view = api_view(app.test_client(), game_id)["view"]
    waiting = 1 - int(view["current"])
    browser = app.test_client()
    sign_in(app, browser, game_id, waiting)
    settings = f"/games/{game_id}/settings"
    assert post(browser, f"{settings}/orders", {"order": "dos"}, page=settings).status_code == 303
    # The order plays once the seat holds two cards: arrange it, then save the orders again
    # (the order plays at once).
    waiting_seat_holds_two(app, game_id)
    assert post(browser, f"{settings}/orders", {"order": "dos"}, page=settings).status_code == 303
    table = browser.get(f"/games/{game_id}").get_data(as_text=True)
    name = ["alice", "bob"][waiting]
    assert f"<li>{name} called DOS (by standing order)</li>" in table


def test_the_new_game_form_offers_standing_dos(app: Flask) -> None:
    host = app.test_client()
    form = host.get("/new").get_data(as_text=True)
    assert re.search(r'name="standing_dos" value="1" checked', form)
    fields = {"seat0_kind": "person", "seat0_name": "alice", "seat1_kind": "person",
              "seat1_name": "bob", "seat2_kind": "none", "seat3_kind": "none", "me": "0",
              "target_score": "50", "after_draw": "drawn_card", "turn_time_limit": "86400",
              "dos_call": "1"}
    for ticked in (True, False):
        response = post(host, "/new", {**fields, **({"standing_dos": "1"} if ticked else {})},
                        page="/new")
        assert response.status_code == 303, response.get_data(as_text=True)
        game_id = response.headers["Location"].split("/")[2]
        with app.app_context():
            row = db.session.get(GameRow, game_id)
            assert row is not None
            assert row.standing_dos is ticked
            db.session.remove()
