"""The table's nudge and vote buttons in a real browser (Playwright on the system's Chromium,
the app under a real server), on SQLite and, with TEST_DATABASE_URL, PostgreSQL: the nudge
button nudges once and then says when the next nudge is allowed; an absent player's seat gets
vote buttons, and a majority's vote ends the game. The settings page turns nudges off."""

from __future__ import annotations

import re

import sqlalchemy as sa
from browsing import Site, any_site, browser, new_page, sign_in
from flask import Flask
from playwright.sync_api import Browser, expect
from web_helpers import api_game, join_api, post
from web_helpers import sign_in as sign_in_client

from dos_server.extensions import db
from dos_server.models import NotificationRow, SeatRow
from testkit import backend, db_url

__all__ = ["any_site", "backend", "browser", "db_url"]


def _nudges(site: Site, game_id: str) -> int:
    with site.app.app_context():
        count = db.session.execute(sa.select(sa.func.count()).select_from(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.event == "nudge")).scalar_one()
        db.session.remove()
    return int(count)


def test_nudge_then_vote_in_the_browser(browser: Browser, any_site: Site) -> None:
    site = any_site
    names = ["alice", "bob"]
    game_id, _tokens = site.game([{"name": n, "email": f"{n}@example.org"} for n in names])
    mover = site.view(game_id)["view"]["current"]
    waiter = 1 - mover
    page = new_page(browser)
    sign_in(page, site, game_id, waiter, names[waiter])
    page.get_by_role("button", name=f"Nudge {names[mover]}").click()
    expect(page.locator("p.flash")).to_contain_text(f"You nudged {names[mover]}: they get an "
                                                    "email")
    # The table's history says it too, as every history does.
    expect(page.locator("ol.history")).to_contain_text(f"{names[waiter]} nudged {names[mover]}")
    expect(page.locator("#next-nudge")).to_contain_text("your next nudge in this game is "
                                                        "allowed at")
    expect(page.get_by_role("button", name=f"Nudge {names[mover]}")).to_have_count(0)
    assert _nudges(site, game_id) == 1
    # The mover has timed out three turns in a row: the waiter may vote on the seat.
    with site.app.app_context():
        db.session.execute(sa.update(SeatRow).where(SeatRow.game_id == game_id,
                                                    SeatRow.index == mover).values(timeouts=3))
        db.session.commit()
        db.session.remove()
    page.reload()
    expect(page.get_by_text(f"{names[mover]} seems to be away")).to_be_visible()
    page.get_by_role("button", name="Vote: end the game now").click()
    expect(page.locator("p.flash")).to_contain_text("Decided: the game is over")
    assert site.view(game_id)["status"] == "finished"
    expect(page.get_by_role("button", name="Vote: end the game now")).to_have_count(0)


def test_the_settings_page_turns_nudges_off(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    tokens = [join_api(api, created["id"], invite["invite"]) for invite in created["invites"]]
    browser = app.test_client()
    sign_in_client(app, browser, created["id"], 0)
    settings = f"/games/{created['id']}/settings"
    assert re.search(r'name="nudges"[^>]* checked', browser.get(settings).get_data(as_text=True))
    saved = post(browser, f"{settings}/notifications", {"nudges_shown": "1"}, page=settings)
    assert saved.status_code == 303, saved.get_data(as_text=True)
    assert not re.search(r'name="nudges"[^>]* checked',
                         browser.get(settings).get_data(as_text=True))
    answer = api.put(f"/api/games/{created['id']}/seats/0/notifications", json={},
                     headers={"Authorization": f"Bearer {tokens[0]}"})
    assert answer.get_json()["nudges"] is False
    # A form from before the checkbox (no nudges_shown) keeps the setting as it is.
    post(browser, f"{settings}/notifications", {"nudges": "on"}, page=settings)
    assert api.put(f"/api/games/{created['id']}/seats/0/notifications", json={},
                   headers={"Authorization": f"Bearer {tokens[0]}"}).get_json()["nudges"] is False


def test_a_refused_nudge_on_the_page_says_why(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    tokens = [join_api(api, created["id"], invite["invite"]) for invite in created["invites"]]
    game_id = created["id"]
    mover = api.get(f"/api/games/{game_id}").get_json()["view"]["current"]
    waiter = 1 - mover
    browser = app.test_client()
    sign_in_client(app, browser, game_id, waiter)
    table = f"/games/{game_id}"
    assert "Nudge " + ["alice", "bob"][mover] in browser.get(table).get_data(as_text=True)
    api.put(f"/api/games/{game_id}/seats/{mover}/notifications", json={"nudges": False},
            headers={"Authorization": f"Bearer {tokens[mover]}"})
    page = browser.get(table).get_data(as_text=True)
    assert f"{['alice', 'bob'][mover]} has turned nudges off." in page
    assert 'id="nudge"' not in page
    refused = post(browser, f"/games/{game_id}/nudge", page=table)  # an old page's button
    assert refused.status_code == 409
    assert "has turned nudges off" in refused.get_data(as_text=True)
    # The player to move sees no nudge button: nobody is waiting on them to nudge.
    own = app.test_client()
    sign_in_client(app, own, game_id, mover)
    assert 'id="nudge"' not in own.get(table).get_data(as_text=True)
