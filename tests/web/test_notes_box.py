"""The table page's "Your notes" box: for the signed-in seat alone (never drawn for a
spectator, the host's browser or another seat), collapsed by default, saved by a plain POST
and 303 without the script (CSRF protected), a refused save keeps what was typed; in a real
browser (Playwright on the system's Chromium), a note saved survives a reload."""

from __future__ import annotations

import re
from typing import Any

from browsing import Site, any_site, browser, new_page, sign_in
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import Browser, expect
from test_pages import create_form
from web_helpers import api_game, join_api, post
from web_helpers import sign_in as sign_in_client

from testkit import backend, db_url, stored_notes

__all__ = ["any_site", "backend", "browser", "db_url"]

HOSTILE = "<b>bold?</b> {{ 7*7 }} & ລາວ\n\tsecond line"
ESCAPED = "&lt;b&gt;bold?&lt;/b&gt; {{ 7*7 }} &amp; ລາວ\n\tsecond line"


def _game(app: Flask) -> tuple[dict[str, Any], list[str]]:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    tokens = [join_api(api, created["id"], invite["invite"]) for invite in created["invites"]]
    return created, tokens


def _hosted_game(app: Flask) -> tuple[str, FlaskClient]:
    """A game made on the new-game page by a host who holds no seat: its id and the host's
    browser (alice and bob joined through the API with the invites the host page shows)."""
    host = app.test_client()
    made = post(host, "/new", create_form(me="", seat2_kind="none"), page="/new")
    assert made.status_code == 303, made.get_data(as_text=True)
    game_id = made.headers["Location"].split("/")[2]
    page = host.get(made.headers["Location"]).get_data(as_text=True)
    invites = re.findall(r'id="invite\d" class="copy" readonly value="[^"]+invite=([^"&]+)"',
                         page)
    assert len(invites) == 2
    for invite in invites:
        join_api(app.test_client(), game_id, invite)
    return game_id, host


def test_without_the_script_the_box_posts_and_redirects(app: Flask) -> None:
    created, _tokens = _game(app)
    game_id = created["id"]
    table = f"/games/{game_id}"
    alice = app.test_client()
    sign_in_client(app, alice, game_id, 0)
    page = alice.get(table).get_data(as_text=True)
    assert '<details class="notes" id="notes">' in page  # collapsed: no ``open``
    assert "Your notes" in page
    assert 'name="seat" value="0"' in page
    saved = post(alice, f"{table}/notes", {"text": HOSTILE, "seat": "0"}, page=table)
    assert saved.status_code == 303, saved.get_data(as_text=True)
    assert saved.headers["Location"].endswith(f"{table}#notes")
    assert stored_notes(app, game_id) == {0: HOSTILE, 1: None}
    page = alice.get(table).get_data(as_text=True)
    assert "Your notes are saved." in page
    assert ESCAPED in page  # text in the textarea, never markup
    assert "<b>bold?</b>" not in page
    # A form without this session's CSRF token is refused, and nothing changes.
    forged = alice.post(f"{table}/notes", data={"text": "forged", "seat": "0"})
    assert forged.status_code == 403
    assert stored_notes(app, game_id)[0] == HOSTILE
    # "" clears the notes.
    assert post(alice, f"{table}/notes", {"text": "", "seat": "0"},
                page=table).status_code == 303
    assert stored_notes(app, game_id)[0] is None


def test_the_box_is_only_ever_the_seats_own(app: Flask) -> None:
    game_id, host = _hosted_game(app)
    table = f"/games/{game_id}"
    assert "Host controls" in host.get(table).get_data(as_text=True)
    alice = app.test_client()
    sign_in_client(app, alice, game_id, 0)
    post(alice, f"{table}/notes", {"text": "SECRET-OF-ALICE", "seat": "0"}, page=table)
    bob = app.test_client()
    sign_in_client(app, bob, game_id, 1)
    for viewer in (bob, host, app.test_client()):
        for path in (table, f"{table}/history", f"{table}/record"):
            text = viewer.get(path).get_data(as_text=True)
            assert "SECRET-OF-ALICE" not in text, path
        page = viewer.get(table).get_data(as_text=True)
        if viewer is bob:
            assert 'name="seat" value="1"' in page  # his own box, empty
        else:
            assert 'id="notes"' not in page
            assert "Your notes" not in page
    # Bob's browser cannot write Alice's notes with a form naming her seat; a stranger's
    # browser cannot write any.
    refused = post(bob, f"{table}/notes", {"text": "overwritten", "seat": "0"}, page=table)
    assert refused.status_code == 403
    stranger = app.test_client()
    assert post(stranger, f"{table}/notes", {"text": "x", "seat": "0"},
                page="/new").status_code == 401
    assert stored_notes(app, game_id) == {0: "SECRET-OF-ALICE", 1: None}


def test_a_refused_save_keeps_what_was_typed(app: Flask) -> None:
    created, _tokens = _game(app)
    game_id = created["id"]
    table = f"/games/{game_id}"
    alice = app.test_client()
    sign_in_client(app, alice, game_id, 0)
    post(alice, f"{table}/notes", {"text": "kept", "seat": "0"}, page=table)
    too_long = "ລ" * 10_001
    refused = post(alice, f"{table}/notes", {"text": too_long, "seat": "0"}, page=table)
    assert refused.status_code == 422
    page = refused.get_data(as_text=True)
    assert "at most 10000 characters" in page
    assert '<details class="notes" id="notes" open>' in page
    assert too_long in page  # typed again, not lost
    assert post(alice, f"{table}/notes", {"text": "bell\x07", "seat": "0"},
                page=table).status_code == 422
    assert post(alice, f"{table}/notes", {"text": "x", "seat": "x"},
                page=table).status_code == 422
    assert stored_notes(app, game_id)[0] == "kept"
    # The longest notes fit, in a script whose characters take 9 bytes each in a form.
    longest = "ລ" * 10_000
    assert post(alice, f"{table}/notes", {"text": longest, "seat": "0"},
                page=table).status_code == 303
    assert stored_notes(app, game_id)[0] == longest


def test_a_note_saved_in_the_browser_is_there_after_a_reload(browser: Browser,
                                                             any_site: Site) -> None:
    site = any_site
    game_id, _tokens = site.game([{"name": "alice", "email": "alice@example.org"},
                                  {"name": "bob", "email": "bob@example.org"}])
    page = new_page(browser, viewport={"width": 360, "height": 800})
    sign_in(page, site, game_id, 0, "alice")
    box = page.locator("#notes-text")
    expect(box).to_be_hidden()  # collapsed by default
    page.get_by_text("Your notes", exact=True).click()
    expect(box).to_be_visible()
    box.fill("bob hoards wild cards\nwatch his DOS")
    page.locator("#notes-save").click()
    expect(page.get_by_text("Your notes are saved.")).to_be_visible()
    page.reload()
    page.get_by_text("Your notes", exact=True).click()
    expect(page.locator("#notes-text")).to_have_value("bob hoards wild cards\nwatch his DOS")
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= 360
