"""The page of all your games (``/me``, linked from every your-turn email and the digest):
signing in with an email address and its code, the account's games, opening a seat from
them, CSRF, and signing out. SQLite and, with TEST_DATABASE_URL, PostgreSQL."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from web_helpers import api_game, csrf_of, join_api

from dos_server.extensions import db
from dos_server.models import AccountSessionRow, LoginCodeRow
from dos_server.services import account
from dos_server.validation import email_key

ANN, BOB = "ann@example.org", "bob@example.org"


def _game(app: Flask) -> str:
    """A game whose seat 0 belongs to ANN (claimed with the invite sent to her address)."""
    api = app.test_client()
    created = api_game(api, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    for invite in created["invites"]:
        join_api(api, created["id"], invite["invite"])
    return str(created["id"])


def _emailed_code(app: Flask, address: str) -> str:
    """The code the newest sign-in email carries (an HMAC of the row's nonce)."""
    with app.app_context():
        row = db.session.execute(
            db.select(LoginCodeRow).where(LoginCodeRow.email_key == email_key(address))
            .order_by(LoginCodeRow.created_at.desc())).scalars().first()
        assert row is not None
        code = account.login_code(row.nonce)
        db.session.remove()
    return code


def _ask(browser: FlaskClient, address: str) -> str:
    """Ask for a code on /me; the page that follows (with the code form)."""
    page = browser.get("/me")
    asked = browser.post("/me/login", data={"csrf": csrf_of(page), "email": address})
    assert asked.status_code == 303, asked.get_data(as_text=True)
    assert asked.headers["Location"].endswith("/me")
    text = browser.get("/me").get_data(as_text=True)
    assert "If this address plays here, a code and a link are on their way" in text
    assert 'action="/me/verify"' in text
    return text


def _sign_in(app: Flask, browser: FlaskClient, address: str) -> str:
    page = _ask(browser, address)
    code = _emailed_code(app, address)
    done = browser.post("/me/verify", data={"csrf": csrf_of(page), "email": address,
                                            "code": f"{code[:4]} {code[4:]}"})
    assert done.status_code == 303, done.get_data(as_text=True)
    text = browser.get("/me").get_data(as_text=True)
    assert f"Signed in as {address}" in text
    return text


def _sessions(app: Flask) -> int:
    with app.app_context():
        count = len(db.session.execute(db.select(AccountSessionRow)).scalars().all())
        db.session.remove()
    return count


def test_me_without_signing_in_shows_the_sign_in_form(app: Flask) -> None:
    browser = app.test_client()
    response = browser.get("/me")
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert "Sign in with your email address" in text
    assert 'action="/me/login"' in text
    assert 'name="csrf"' in text
    assert 'action="/me/verify"' not in text  # no code asked yet
    assert 'href="/me"' in browser.get("/").get_data(as_text=True)  # "All your games"


def test_login_code_lists_the_game_and_open_signs_the_seat_in(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    page = _sign_in(app, browser, ANN)
    assert f"/me/games/{game_id}/open" in page
    assert "ann, bob" in page
    assert browser.get(f"/games/{game_id}").get_data(as_text=True).count("id=\"hand\"") == 0
    opened = browser.post(f"/me/games/{game_id}/open", data={"csrf": csrf_of(page), "seat": "0"})
    assert opened.status_code == 303, opened.get_data(as_text=True)
    assert opened.headers["Location"].endswith(f"/games/{game_id}")
    table = browser.get(f"/games/{game_id}").get_data(as_text=True)
    assert 'id="hand"' in table  # the seat is signed in: its hand is on the table
    # The game is also listed among this browser's seats, on /me and on the home page.
    assert f'href="/games/{game_id}"' in browser.get("/me").get_data(as_text=True)
    assert f'href="/games/{game_id}"' in browser.get("/").get_data(as_text=True)


def test_the_emailed_link_signs_in_for_me_too(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    _ask(browser, ANN)
    with app.app_context():
        row = db.session.execute(db.select(LoginCodeRow)).scalars().one()
        path = account.login_link(row.id).split("://", 1)[1].split("/", 1)[1]
        db.session.remove()
    pressed = browser.post(f"/{path}")
    assert pressed.status_code == 200, pressed.get_data(as_text=True)
    assert 'href="/me"' in pressed.get_data(as_text=True)
    assert f"/me/games/{game_id}/open" in browser.get("/me").get_data(as_text=True)


def test_a_wrong_code_shows_an_error_and_signs_nothing_in(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    page = _ask(browser, ANN)
    right = _emailed_code(app, ANN)
    wrong = "00000000" if right != "00000000" else "11111111"
    response = browser.post("/me/verify", data={"csrf": csrf_of(page), "email": ANN,
                                                 "code": wrong})
    assert response.status_code == 401
    text = response.get_data(as_text=True)
    assert "That code is wrong, used or expired" in text
    assert "Signed in as" not in text
    assert f"/me/games/{game_id}/open" not in text
    assert _sessions(app) == 0
    # Bad input is a readable page too, never a 500.
    for data in ({"email": "not an address", "code": right}, {"email": ANN, "code": ""}):
        bad = browser.post("/me/verify", data={"csrf": csrf_of(page), **data})
        assert bad.status_code == 422
        assert 'class="error"' in bad.get_data(as_text=True)
    bad = browser.post("/me/login", data={"csrf": csrf_of(page), "email": "nobody"})
    assert bad.status_code == 422
    assert "not an email address" in bad.get_data(as_text=True).lower()
    # Opening a seat needs the account.
    refused = browser.post(f"/me/games/{game_id}/open", data={"csrf": csrf_of(page)})
    assert refused.status_code == 303
    assert 'id="hand"' not in browser.get(f"/games/{game_id}").get_data(as_text=True)


def test_posts_without_csrf_are_refused(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    _ask(browser, ANN)
    code = _emailed_code(app, ANN)
    for url, data in (("/me/login", {"email": ANN}), ("/me/verify", {"email": ANN, "code": code}),
                      ("/me/verify", {"email": ANN, "code": code, "csrf": "forged"})):
        response = browser.post(url, data=data)
        assert response.status_code == 403, url
    assert _sessions(app) == 0
    _sign_in(app, browser, ANN)
    assert browser.post(f"/me/games/{game_id}/open", data={"seat": "0"}).status_code == 403
    assert 'id="hand"' not in browser.get(f"/games/{game_id}").get_data(as_text=True)
    assert browser.post("/me/signout").status_code == 403
    assert "Signed in as" in browser.get("/me").get_data(as_text=True)


def test_sign_out_ends_access(app: Flask) -> None:
    game_id = _game(app)
    browser = app.test_client()
    page = _sign_in(app, browser, ANN)
    browser.post(f"/me/games/{game_id}/open", data={"csrf": csrf_of(page), "seat": "0"})
    with browser.session_transaction() as session:
        token = session["dos_account"]
    out = browser.post("/me/signout", data={"csrf": csrf_of(page)})
    assert out.status_code == 303
    text = browser.get("/me").get_data(as_text=True)
    assert "Sign in with your email address" in text
    assert f"/me/games/{game_id}/open" not in text
    assert 'id="hand"' not in browser.get(f"/games/{game_id}").get_data(as_text=True)
    assert _sessions(app) == 0  # revoked on the server, not only forgotten by the browser
    api = app.test_client().get("/api/me/games", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 401
    # A session revoked elsewhere: /me shows the form again (not an error page).
    _sign_in(app, browser, ANN)
    with app.app_context():
        db.session.execute(db.delete(AccountSessionRow))
        db.session.commit()
        db.session.remove()
    again = browser.get("/me")
    assert again.status_code == 200
    assert "Sign in with your email address" in again.get_data(as_text=True)
