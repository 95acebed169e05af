"""The settings page sets the seat's time zone and language; the vacation and the table's
deadline are shown in that zone, with its name and offset."""

from __future__ import annotations

import re
from html import unescape

from flask import Flask
from web_helpers import csrf_of, join_api, post, sign_in

from dos_server.extensions import db
from dos_server.models import SeatRow


def _stored(app: Flask, game_id: str) -> tuple[str | None, str | None]:
    with app.app_context():
        found = db.session.execute(db.select(SeatRow.time_zone, SeatRow.language).where(
            SeatRow.game_id == game_id, SeatRow.index == 0)).one()
        db.session.remove()
    return found[0], found[1]


def test_the_settings_page_sets_the_zone(app: Flask) -> None:
    api = app.test_client()
    answer = api.post("/api/games", json={"seats": [{"name": "alice"}, {"name": "bob"}],
                                          "turn_time_limit": 7200})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    created = answer.get_json()
    game_id = created["id"]
    for invite in created["invites"]:
        join_api(api, game_id, invite["invite"])
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    settings = f"/games/{game_id}/settings"
    page = browser.get(settings).get_data(as_text=True)
    assert '<option value="Asia/Vientiane">' in page
    assert re.search(r'<input id="time_zone" name="time_zone" list="zones"[^>]*value=""', page)

    bad = post(browser, f"{settings}/notifications",
               {"time_zone": "Mars/Olympus_Mons", "language": "lo"}, page=settings)
    text = unescape(bad.get_data(as_text=True))
    assert bad.status_code == 422, text
    assert '<a href="#time_zone">Time zone</a>: ' in text
    assert re.search(r'id="time_zone"[^>]*value="Mars/Olympus_Mons"[^>]*aria-invalid="true"',
                     text)
    assert _stored(app, game_id) == (None, None)  # nothing changed

    done = post(browser, f"{settings}/notifications",
                {"time_zone": "Asia/Vientiane", "language": "lo"}, page=settings)
    assert done.status_code == 303
    assert _stored(app, game_id) == ("Asia/Vientiane", "lo")
    page = browser.get(settings).get_data(as_text=True)
    assert re.search(r'id="time_zone"[^>]*value="Asia/Vientiane"', page)
    assert '<option value="lo" selected>' in page

    assert post(browser, f"{settings}/vacation", {"days": "1"}, page=settings).status_code == 303
    # The seat reads Lao now: its pages are in Lao, whatever the browser asks for.
    page = unescape(browser.get(settings, headers={"Accept-Language": "en"}).get_data(as_text=True))
    assert '<html lang="lo">' in page
    assert re.search(r"ໂມງຂອງທ່ານຢຸດໄວ້ຈົນຮອດ [^<]*\d\d:\d\d[^<]*\(Asia/Vientiane, UTC\+7\)",
                     page), page
    table = unescape(browser.get(f"/games/{game_id}").get_data(as_text=True))
    assert re.search(r"ຕານີ້ໝົດເວລາ <time [^>]*>[^<]*\d\d:\d\d[^<]*"
                     r"\(Asia/Vientiane, UTC\+7\)</time>", table), table
    english = post(browser, f"{settings}/notifications", {"language": "en"}, page=settings)
    assert english.status_code == 303
    table = unescape(browser.get(f"/games/{game_id}").get_data(as_text=True))
    assert re.search(r"Turn ends <time [^>]*>\w+day \d+ \w+( \d{4})?, \d\d:\d\d "
                     r"\(Asia/Vientiane, UTC\+7\)</time>", table), table


def test_joining_in_a_browser_takes_its_language(app: Flask) -> None:
    api = app.test_client()
    answer = api.post("/api/games", json={"seats": [{"name": "alice"}, {"name": "bob"}]})
    created = answer.get_json()
    invite = created["invites"][0]["invite"]
    browser = app.test_client()
    first = browser.get(f"/games/{created['id']}/join?invite={invite}")
    join_page = browser.get(first.headers["Location"])
    joined = browser.post(f"/games/{created['id']}/join", data={"csrf": csrf_of(join_page)},
                          headers={"Accept-Language": "lo-LA,lo;q=0.9,en;q=0.5"})
    assert joined.status_code == 303, joined.get_data(as_text=True)
    assert _stored(app, created["id"]) == (None, "lo")
