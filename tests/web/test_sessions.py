"""Browser sessions you can trust: a server-side session behind an opaque cookie, ended by
signing out (every copy of the cookie with it), by "sign out everywhere", by rotating the
seat's token and by removing the seat; a new session id and CSRF secret whenever who the
browser is changes. SQLite and, with TEST_DATABASE_URL, PostgreSQL."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient
from web_helpers import (
    ANN,
    account_game,
    account_sign_in,
    api_game,
    csrf_of,
    join_api,
    sign_in,
)

from dos_server.extensions import db
from dos_server.models import BrowserSessionRow

COOKIE = "dos_session"
OPAQUE = re.compile(r"[A-Za-z0-9_-]{43}")


def _cookie(browser: FlaskClient) -> str | None:
    cookie = browser.get_cookie(COOKIE)
    return None if cookie is None else cookie.value


def _copy_of(app: Flask, browser: FlaskClient) -> FlaskClient:
    """Another client holding a copy of ``browser``'s session cookie (as a thief would)."""
    value = _cookie(browser)
    assert value is not None
    thief = app.test_client()
    thief.set_cookie(COOKIE, value)
    return thief


def _sessions(app: Flask) -> int:
    with app.app_context():
        count = len(db.session.execute(db.select(BrowserSessionRow)).scalars().all())
        db.session.remove()
    return count


def _two_players(app: Flask) -> tuple[str, list[str], str]:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    tokens = [join_api(api, created["id"], invite["invite"]) for invite in created["invites"]]
    return str(created["id"]), tokens, str(created["host_token"])


def _holds_seat(browser: FlaskClient, game_id: str) -> bool:
    return 'id="hand"' in browser.get(f"/games/{game_id}").get_data(as_text=True)


def test_the_cookie_is_an_opaque_id_and_no_token_is_readable_in_it(app: Flask) -> None:
    game_id, tokens, host = _two_players(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    value = _cookie(browser)
    assert value is not None
    assert OPAQUE.fullmatch(value), value
    with app.app_context():
        rows = db.session.execute(db.select(BrowserSessionRow)).scalars().all()
        # The table keys sessions by the id's digest: a copy of the table opens no browser.
        assert all(row.id_hash != value for row in rows)
        db.session.remove()
    for token in (*tokens, host):
        assert token not in value


def test_signing_out_ends_every_copy_of_the_cookie(app: Flask) -> None:
    game_id, _, _ = _two_players(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    copy = _copy_of(app, browser)
    assert _holds_seat(copy, game_id)  # a copy taken while signed in opens the hand ...
    page = browser.get(f"/games/{game_id}")
    out = browser.post(f"/games/{game_id}/signout", data={"csrf": csrf_of(page)})
    assert out.status_code == 303
    assert not _holds_seat(browser, game_id)
    assert not _holds_seat(copy, game_id)  # ... and nothing once the seat signed out


def test_rotating_the_token_or_removing_the_seat_ends_the_browser_seat(app: Flask) -> None:
    game_id, tokens, _ = _two_players(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 1)
    copy = _copy_of(app, browser)
    rotated = app.test_client().post(f"/api/games/{game_id}/seats/1/token",
                                     headers={"Authorization": f"Bearer {tokens[1]}"})
    assert rotated.status_code == 200, rotated.get_json()
    for client in (copy, browser):
        assert not _holds_seat(client, game_id)
    # A seat the host removes (a game still waiting for players).
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {}, {}])
    waiting = created["id"]
    join_api(api, waiting, created["invites"][0]["invite"])
    joiner = app.test_client()
    parked = joiner.get(f"/games/{waiting}/join?code={created['invite_code']}")
    page = joiner.get(parked.headers["Location"])
    joined = joiner.post(f"/games/{waiting}/join", data={"csrf": csrf_of(page), "name": "carl"})
    assert joined.status_code == 303, joined.get_data(as_text=True)
    assert "carl (you)" in joiner.get(f"/games/{waiting}").get_data(as_text=True)
    removed = api.delete(f"/api/games/{waiting}/seats/1",
                         headers={"Authorization": f"Bearer {created['host_token']}"})
    assert removed.status_code == 200, removed.get_json()
    after = joiner.get(f"/games/{waiting}").get_data(as_text=True)
    assert "(you)" not in after
    assert "You were signed out of this game" in after


def test_sign_out_everywhere_ends_the_browser_and_the_seats_it_opened(app: Flask) -> None:
    game_id = account_game(app)
    browser = app.test_client()
    page = account_sign_in(app, browser, ANN)
    opened = browser.post(f"/me/games/{game_id}/open", data={"csrf": csrf_of(page), "seat": "0"})
    assert opened.status_code == 303
    assert _holds_seat(browser, game_id)
    with browser.session_transaction() as session:
        account_token = session["dos_account"]
    everywhere = app.test_client().delete(
        "/api/me/sessions", headers={"Authorization": f"Bearer {account_token}"})
    assert everywhere.status_code == 200, everywhere.get_json()
    assert _sessions(app) == 0
    assert not _holds_seat(browser, game_id)
    assert "Sign in with your email address" in browser.get("/me").get_data(as_text=True)


def test_signing_in_renews_the_session_id_and_the_csrf_secret(app: Flask) -> None:
    game_id, _, _ = _two_players(app)
    browser = app.test_client()
    before = browser.get("/me")
    old_csrf, old_id = csrf_of(before), _cookie(browser)
    assert old_id is not None
    sign_in(app, browser, game_id, 0)
    assert _cookie(browser) not in (None, old_id)
    refused = browser.post(f"/games/{game_id}/signout", data={"csrf": old_csrf})
    assert refused.status_code == 403
    assert _holds_seat(browser, game_id)
    # Signing in with an address renews them too.
    account_game(app)
    page = browser.get("/me").get_data(as_text=True)
    seat_id = _cookie(browser)
    account_sign_in(app, browser, ANN)
    assert _cookie(browser) != seat_id
    assert browser.post("/me/signout", data={"csrf": csrf_of(page)}).status_code == 403


def test_a_planted_cookie_gives_the_attacker_nothing_after_the_victim_signs_in(
        app: Flask) -> None:
    game_id, _, _ = _two_players(app)
    attacker = app.test_client()
    form = attacker.get("/me")  # a session of the attacker's, and a CSRF token of it
    planted = _cookie(attacker)
    assert planted is not None
    victim = app.test_client()
    victim.set_cookie(COOKIE, planted)  # e.g. set from a sibling subdomain
    sign_in(app, victim, game_id, 0)
    assert _cookie(victim) != planted
    assert not _holds_seat(attacker, game_id)
    # The attacker's old form cannot sign the victim out (nor post anything as the victim).
    forged = victim.post(f"/games/{game_id}/signout", data={"csrf": csrf_of(form)})
    assert forged.status_code == 403
    assert _holds_seat(victim, game_id)


def test_a_slow_request_cannot_bring_back_a_session_that_was_ended(app: Flask) -> None:
    """Sign-out deletes the row; a request that read it before saves nothing back."""
    from dos_server.web.sessions import ServerSideSessions

    game_id, _, _ = _two_players(app)
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    value = _cookie(browser)
    interface = ServerSideSessions()
    with app.test_request_context(headers={"Cookie": f"{COOKIE}={value}"}) as context:
        slow = interface.open_session(app, context.request)
        assert "seats" in slow  # read while the seat was signed in
        page = browser.get(f"/games/{game_id}")
        browser.post(f"/games/{game_id}/signout", data={"csrf": csrf_of(page)})
        slow["seen"] = 1  # the slow request changes the session and saves it
        interface.save_session(app, slow, app.response_class())
    assert not _holds_seat(_copy_of(app, browser), game_id)
    thief = app.test_client()
    assert value is not None
    thief.set_cookie(COOKIE, value)
    assert not _holds_seat(thief, game_id)
