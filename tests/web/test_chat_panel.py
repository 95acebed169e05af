"""The table's chat panel: in a real browser (Playwright on the system's Chromium, the app
under a real server, on SQLite and, with TEST_DATABASE_URL, PostgreSQL) a line typed in one
player's page appears in the other's without a reload, and is in that player's next your-turn
email; without the script the form is a plain POST and 303; text is shown as text."""

from __future__ import annotations

import html
from html import unescape

import sqlalchemy as sa
from browsing import Site, any_site, browser, new_page, sign_in
from flask import Flask
from playwright.sync_api import Browser, expect
from test_pages import create_form
from web_helpers import api_game, join_api, post
from web_helpers import sign_in as sign_in_client

from dos_server.extensions import db
from dos_server.models import NotificationRow
from testkit import SmtpSink, backend, db_url, run_worker, smtp, text_of

__all__ = ["any_site", "backend", "browser", "db_url", "smtp"]

HOSTILE = "<b>bold?</b> {{ 7*7 }} & ລາວ"


def _your_turn_chat(site: Site, game_id: str, seat: int) -> list[str]:
    with site.app.app_context():
        rows = db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.event == "your_turn",
            NotificationRow.channel == "email").order_by(NotificationRow.id)).scalars().all()
        said = [line["text"] for row in rows if row.seats == [seat]
                for line in row.payload.get("chat") or []]
        db.session.remove()
    return said


def test_a_line_typed_in_one_browser_appears_in_the_other(browser: Browser, any_site: Site,
                                                          smtp: SmtpSink) -> None:
    site = any_site
    names = ["alice", "bob"]
    game_id, tokens = site.game([{"name": n, "email": f"{n}@example.org"} for n in names])
    mover = site.view(game_id)["view"]["current"]
    other = 1 - mover
    pages = {}
    for seat in (mover, other):
        pages[seat] = new_page(browser)
        sign_in(pages[seat], site, game_id, seat, names[seat])
    listening = pages[other].locator("#chat-log")
    expect(listening).to_contain_text("Nobody has said anything yet.")
    pages[mover].get_by_label("Your message").fill(HOSTILE)
    pages[mover].get_by_role("button", name="Say", exact=True).click()
    expect(pages[mover].locator("#chat-log")).to_contain_text(HOSTILE)  # in place, no reload
    expect(listening).to_contain_text(HOSTILE)  # the other page, by its long-poll
    expect(listening.locator("li").last.locator(".chat-who")).to_have_text(names[mover])
    assert listening.locator("b").count() == 0  # text, never markup
    for width in (360, 1280):
        pages[other].set_viewport_size({"width": width, "height": 800})
        wide = pages[other].evaluate("() => document.documentElement.scrollWidth")
        assert wide <= width, (width, wide)
        box = pages[other].locator("#chat").bounding_box()
        assert box is not None
        assert box["width"] <= width
    # The mover's turn ends: the other player's your-turn email shows what was said.
    while site.view(game_id)["view"]["current"] == mover:
        listing = site.api.get(f"/api/games/{game_id}/actions",
                               headers={"Authorization": f"Bearer {tokens[mover]}"}).get_json()
        played = site.api.post(f"/api/games/{game_id}/actions",
                               headers={"Authorization": f"Bearer {tokens[mover]}"},
                               json={"version": listing["version"], "number": 1})
        assert played.status_code == 200, played.get_data(as_text=True)
    assert HOSTILE in _your_turn_chat(site, game_id, other)
    # ... and the worker mails it: in the text as typed, in the HTML as text, never markup.
    site.app.config.update(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none")
    run_worker(site.app, passes=5)
    (mail,) = [m for m in smtp.to(f"{names[other]}@example.org")
               if "your turn" in str(m["Subject"]).lower()][-1:]
    assert HOSTILE in text_of(mail)
    html_part = mail.get_body(preferencelist=("html",))
    assert html_part is not None
    assert html.escape(HOSTILE, quote=False) in str(html_part.get_content())
    assert "<b>bold?</b>" not in str(html_part.get_content())


def test_without_the_script_the_form_posts_and_redirects(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    for invite in created["invites"]:
        join_api(api, created["id"], invite["invite"])
    browser = app.test_client()
    sign_in_client(app, browser, created["id"], 0)
    table = f"/games/{created['id']}"
    sent = post(browser, f"{table}/chat", {"text": HOSTILE}, page=table)
    assert sent.status_code == 303
    assert sent.headers["Location"].endswith(f"{table}#chat")
    page = browser.get(table).get_data(as_text=True)
    assert "&lt;b&gt;bold?&lt;/b&gt; {{ 7*7 }} &amp; ລາວ" in page
    assert "<b>bold?</b>" not in page
    empty = post(browser, f"{table}/chat", {"text": "   "}, page=table)
    assert empty.status_code == 422
    assert "at least one character" in empty.get_data(as_text=True)
    # A spectator reads the panel but gets no form.
    spectator = app.test_client().get(table).get_data(as_text=True)
    assert "&lt;b&gt;bold?&lt;/b&gt;" in spectator
    assert 'id="chat-form"' not in spectator
    assert "only the players write" in spectator


def test_the_new_game_form_and_the_host_page_set_the_chat(app: Flask) -> None:
    host = app.test_client()
    made = post(host, "/new", create_form(chat_spectators="1"), page="/new")
    assert made.status_code == 303, made.get_data(as_text=True)
    game_id = made.headers["Location"].split("/")[2]
    assert host.get(f"/api/games/{game_id}/chat").get_json()["spectators"] is True
    page = f"/games/{game_id}/host"
    assert "Mute alice" in host.get(page).get_data(as_text=True)
    saved = post(host, f"/games/{game_id}/chat/settings", {"muted": "1"}, page=page)
    assert saved.status_code == 303
    settings = app.test_client().get(f"/api/games/{game_id}/chat").get_json()
    assert settings["muted"] == [1]
    assert settings["spectators"] is False  # unticked on the form
    stranger = post(app.test_client(), f"/games/{game_id}/chat/settings", {"muted": "0"},
                    page="/new")
    assert stranger.status_code == 403



def test_the_settings_page_turns_chat_emails_on(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    tokens = [join_api(api, created["id"], invite["invite"]) for invite in created["invites"]]
    browser = app.test_client()
    sign_in_client(app, browser, created["id"], 0)
    settings = f"/games/{created['id']}/settings"
    assert 'name="chat_email" checked' not in browser.get(settings).get_data(as_text=True)
    saved = post(browser, f"{settings}/notifications",
                 {"chat_email_shown": "1", "chat_email": "on", "nudges_shown": "1",
                  "nudges": "on"}, page=settings)
    assert saved.status_code == 303, saved.get_data(as_text=True)
    assert 'name="chat_email" checked' in browser.get(settings).get_data(as_text=True)
    mine = api.get(f"/api/games/{created['id']}/chat",
                   headers={"Authorization": f"Bearer {tokens[0]}"}).get_json()
    assert mine["seat"]["email"] is True


def test_a_player_hides_another_seats_messages_from_the_panel(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}, {"name": "cid"}])
    tokens = [join_api(api, created["id"], invite["invite"]) for invite in created["invites"]]
    game_id = created["id"]
    table = f"/games/{game_id}"
    for seat, text in ((1, "BOB-SAYS-1"), (2, "CID-SAYS-2")):
        assert api.post(f"/api/games/{game_id}/messages", json={"text": text},
                        headers={"Authorization": f"Bearer {tokens[seat]}"}).status_code == 201
    browsers = {}
    for seat in (0, 1, 2):
        browsers[seat] = app.test_client()
        sign_in_client(app, browsers[seat], game_id, seat)
    alice = browsers[0]
    page = unescape(alice.get(table).get_data(as_text=True))
    assert "Hide bob's messages" in page
    assert "Hide cid's messages" in page
    assert "Hide alice's messages" not in page  # never your own
    hidden = post(alice, f"{table}/chat/hide", {"seat": "1", "do": "hide"}, page=table)
    assert hidden.status_code == 303, hidden.get_data(as_text=True)
    assert hidden.headers["Location"].endswith(f"{table}#chat")
    page = unescape(alice.get(table).get_data(as_text=True))
    assert "You no longer see bob's messages here; the others still do." in page
    assert "BOB-SAYS-1" not in page
    assert "CID-SAYS-2" in page
    assert "You hide bob's messages." in page
    assert "Show them again" in page
    # For alice alone: bob, cid and a spectator still read bob's message.
    for reader in (browsers[1], browsers[2], app.test_client()):
        assert "BOB-SAYS-1" in reader.get(table).get_data(as_text=True)
    spectator = app.test_client().get(table).get_data(as_text=True)
    assert 'id="chat-hide"' not in spectator
    assert api.get(f"/api/games/{game_id}/chat", headers={
        "Authorization": f"Bearer {tokens[0]}"}).get_json()["seat"]["hidden"] == [1]
    # Hiding cid too keeps bob hidden; showing bob again keeps cid hidden.
    post(alice, f"{table}/chat/hide", {"seat": "2", "do": "hide"}, page=table)
    post(alice, f"{table}/chat/hide", {"seat": "1", "do": "show"}, page=table)
    page = unescape(alice.get(table).get_data(as_text=True))
    assert "BOB-SAYS-1" in page
    assert "CID-SAYS-2" not in page
    # Refused: your own seat, a form without its seat, no CSRF token, no seat signed in.
    own = post(alice, f"{table}/chat/hide", {"seat": "0", "do": "hide"}, page=table)
    assert own.status_code == 422
    assert "cannot hide your own messages" in own.get_data(as_text=True)
    assert post(alice, f"{table}/chat/hide", {"seat": "x", "do": "hide"},
                page=table).status_code == 422
    assert alice.post(f"{table}/chat/hide", data={"seat": "1", "do": "hide"}).status_code == 403
    assert post(app.test_client(), f"{table}/chat/hide", {"seat": "1", "do": "hide"},
                page="/new").status_code == 401
    assert api.get(f"/api/games/{game_id}/chat", headers={
        "Authorization": f"Bearer {tokens[0]}"}).get_json()["seat"]["hidden"] == [2]


def test_the_hide_button_works_in_a_browser(browser: Browser, any_site: Site) -> None:
    site = any_site
    game_id, tokens = site.game([{"name": "alice", "email": "alice@example.org"},
                                 {"name": "bob", "email": "bob@example.org"}])
    assert site.api.post(f"/api/games/{game_id}/messages", json={"text": "BOB-SAYS-HI"},
                         headers={"Authorization": f"Bearer {tokens[1]}"}).status_code == 201
    page = new_page(browser)
    sign_in(page, site, game_id, 0, "alice")
    expect(page.locator("#chat-log")).to_contain_text("BOB-SAYS-HI")
    page.get_by_role("button", name="Hide bob's messages").click()
    expect(page.get_by_text("You hide bob's messages.")).to_be_visible()
    expect(page.locator("#chat-log")).not_to_contain_text("BOB-SAYS-HI")
    page.get_by_role("button", name="Show them again").click()
    expect(page.locator("#chat-log")).to_contain_text("BOB-SAYS-HI")
