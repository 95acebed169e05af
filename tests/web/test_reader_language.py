"""Whose language and zone a page is in: a seat's own pages in the seat's stored language
(whatever the browser asks for), a signed-in identity's ``/me`` in the identity's language and
zone; the page sends the browser's zone the first time, which fills an empty zone and never a
chosen one."""

from __future__ import annotations

import re
from html import unescape

from browsing import Site, browser, new_page, site
from browsing import sign_in as browser_sign_in
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import Browser, expect
from web_helpers import ANN, BOB, account_sign_in, csrf_of, join_api, post, sign_in

from dos_server.extensions import db
from dos_server.models import IdentityRow, SeatRow
from dos_server.validation import email_key

__all__ = ["browser", "site"]  # the fixtures, for pytest to find in this module

ENGLISH = {"Accept-Language": "en"}


def _game(app: Flask, api: FlaskClient | None = None) -> str:
    """ann (ANN's seat 0) and bob, both joined, 2 hours a turn."""
    api = api or app.test_client()
    answer = api.post("/api/games", json={"seats": [{"name": "ann", "email": ANN},
                                                    {"name": "bob", "email": BOB}],
                                          "turn_time_limit": 7200})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    created = answer.get_json()
    for invite in created["invites"]:
        join_api(api, created["id"], invite["invite"])
    return str(created["id"])


def _seat_zone(app: Flask, game_id: str) -> str | None:
    with app.app_context():
        zone = db.session.execute(db.select(SeatRow.time_zone).where(
            SeatRow.game_id == game_id, SeatRow.index == 0)).scalar_one()
        db.session.remove()
    return zone


def _page(browser: FlaskClient, path: str) -> str:
    return unescape(browser.get(path, headers=ENGLISH).get_data(as_text=True))


def test_a_seat_that_reads_lao_gets_its_pages_in_lao_even_when_the_browser_asks_for_english(
        app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    table = f"/games/{game_id}"
    assert '<html lang="en">' in _page(browser, table)
    saved = post(browser, f"{table}/settings/notifications", {"language": "lo"},
                 page=f"{table}/settings")
    assert saved.status_code == 303
    flashed = _page(browser, f"{table}/settings")  # the message of the save is in Lao too
    assert "ບັນທຶກການຕັ້ງຄ່າການແຈ້ງເຕືອນແລ້ວ." in flashed
    for path in (table, f"{table}/settings", f"{table}/history", f"{table}/resign"):
        page = _page(browser, path)
        assert '<html lang="lo">' in page, path
        assert "ເກມ" in page, path
    page = _page(browser, table)
    assert '<h2 id="cr-h">ແຖວກາງ</h2>' in page
    assert ">Center Row<" not in page  # (the engine's own lines get the language from it)
    assert "ບັດໃນມືຂອງທ່ານ" in page
    # Someone else watching, whose browser asks for English, reads English.
    watcher = _page(app.test_client(), table)
    assert '<html lang="en">' in watcher
    assert '<h2 id="cr-h">Center Row</h2>' in watcher


def test_the_browsers_zone_fills_the_seats_the_first_time_and_never_a_chosen_one(
        app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    table = f"/games/{game_id}"
    page = _page(browser, table)
    assert f'data-zone-fill="/games/{game_id}/zone"' in page
    assert re.search(r"<time [^>]*data-local[^>]*>[^<]*\(UTC\)</time>", page), page
    csrf = csrf_of(page)
    unknown = browser.post(f"{table}/zone", data={"csrf": csrf, "time_zone": "Mars/Olympus"})
    assert unknown.status_code == 204
    assert _seat_zone(app, game_id) is None  # an unknown zone is ignored
    filled = browser.post(f"{table}/zone", data={"csrf": csrf, "time_zone": "Asia/Vientiane"})
    assert filled.status_code == 204
    assert _seat_zone(app, game_id) == "Asia/Vientiane"
    page = _page(browser, table)
    assert "data-zone-fill" not in page
    assert re.search(r"<time [^>]*>[^<]*\(Asia/Vientiane, UTC\+7\)</time>", page), page
    assert "data-local" not in page
    again = browser.post(f"{table}/zone", data={"csrf": csrf_of(page), "time_zone": "Europe/Paris"})
    assert again.status_code == 204
    assert _seat_zone(app, game_id) == "Asia/Vientiane"  # the zone it has stays
    assert browser.post(f"{table}/zone", data={"time_zone": "Europe/Paris"}).status_code == 403


def test_me_is_in_the_identitys_language_and_zone(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    page = account_sign_in(app, browser, ANN)
    assert f"/me/games/{game_id}/open" in page
    assert 'data-zone-fill="/me/zone"' in page
    assert re.search(r"<time [^>]*data-local[^>]*>[^<]*\(UTC\)</time>", unescape(page)), page
    sent = browser.post("/me/zone", data={"csrf": csrf_of(page), "time_zone": "Asia/Vientiane"})
    assert sent.status_code == 204
    page = _page(browser, "/me")
    assert "data-zone-fill" not in page
    assert re.search(r"<time [^>]*>[^<]*\d\d:\d\d \(Asia/Vientiane, UTC\+7\)</time>", page), page
    assert "UTC</" not in page  # no UTC-only time left
    again = browser.post("/me/zone", data={"csrf": csrf_of(page), "time_zone": "Europe/Paris"})
    assert again.status_code == 204
    assert "(Asia/Vientiane, UTC+7)" in _page(browser, "/me")  # the zone it has stays
    with app.app_context():
        identity = db.session.get(IdentityRow, email_key(ANN))
        assert identity is not None
        assert identity.time_zone == "Asia/Vientiane"
        identity.language = "lo"
        db.session.commit()
        db.session.remove()
    page = _page(browser, "/me")
    assert '<html lang="lo">' in page
    assert "ເກມທັງໝົດຂອງທ່ານ" in page


def test_the_page_sends_the_browsers_zone_and_shows_times_in_it(browser: Browser,
                                                                 site: Site) -> None:
    game_id = _game(site.app, site.api)
    page = new_page(browser, timezone_id="Asia/Vientiane", locale="en")
    with page.expect_response(lambda r: r.url.endswith(f"/games/{game_id}/zone")) as sent:
        browser_sign_in(page, site, game_id, 0, "ann")
    assert sent.value.status == 204
    deadline = page.locator("p.deadline time")
    expect(deadline).to_contain_text("(Asia/Vientiane)")  # the script's, in the browser's zone
    assert _seat_zone(site.app, game_id) == "Asia/Vientiane"
    page.reload()  # the server's words now: the seat's zone, with its offset
    expect(deadline).to_contain_text("(Asia/Vientiane, UTC+7)")
    page.context.close()
