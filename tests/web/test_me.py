"""The page of all your games (``/me``, linked from every your-turn email and the digest):
signing in with an email address and its code, the account's games, opening a seat from
them, CSRF, and signing out. SQLite and, with TEST_DATABASE_URL, PostgreSQL."""

from __future__ import annotations

from flask import Flask
from web_helpers import ANN, account_game, account_sign_in, ask_code, csrf_of, emailed_code

from dos_server.extensions import db
from dos_server.models import AccountSessionRow, LoginCodeRow
from dos_server.services import account


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
    game_id = account_game(app)
    browser = app.test_client()
    page = account_sign_in(app, browser, ANN)
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
    game_id = account_game(app)
    browser = app.test_client()
    ask_code(browser, ANN)
    with app.app_context():
        row = db.session.execute(db.select(LoginCodeRow)).scalars().one()
        path = account.login_link(row.id).split("://", 1)[1].split("/", 1)[1]
        db.session.remove()
    pressed = browser.post(f"/{path}")
    assert pressed.status_code == 200, pressed.get_data(as_text=True)
    assert 'href="/me"' in pressed.get_data(as_text=True)
    assert f"/me/games/{game_id}/open" in browser.get("/me").get_data(as_text=True)


def test_a_wrong_code_shows_an_error_and_signs_nothing_in(app: Flask) -> None:
    game_id = account_game(app)
    browser = app.test_client()
    page = ask_code(browser, ANN)
    right = emailed_code(app, ANN)
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
    game_id = account_game(app)
    browser = app.test_client()
    ask_code(browser, ANN)
    code = emailed_code(app, ANN)
    for url, data in (("/me/login", {"email": ANN}), ("/me/verify", {"email": ANN, "code": code}),
                      ("/me/verify", {"email": ANN, "code": code, "csrf": "forged"})):
        response = browser.post(url, data=data)
        assert response.status_code == 403, url
    assert _sessions(app) == 0
    account_sign_in(app, browser, ANN)
    assert browser.post(f"/me/games/{game_id}/open", data={"seat": "0"}).status_code == 403
    assert 'id="hand"' not in browser.get(f"/games/{game_id}").get_data(as_text=True)
    assert browser.post("/me/signout").status_code == 403
    assert "Signed in as" in browser.get("/me").get_data(as_text=True)


def test_sign_out_ends_access(app: Flask) -> None:
    game_id = account_game(app)
    browser = app.test_client()
    page = account_sign_in(app, browser, ANN)
    browser.post(f"/me/games/{game_id}/open", data={"csrf": csrf_of(page), "seat": "0"})
    with browser.session_transaction() as session:
        token = session["dos_account"]
    # Opening a seat renews the session's CSRF secret: the form of the page before is spent.
    assert browser.post("/me/signout", data={"csrf": csrf_of(page)}).status_code == 403
    page = browser.get("/me").get_data(as_text=True)
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
    account_sign_in(app, browser, ANN)
    with app.app_context():
        db.session.execute(db.delete(AccountSessionRow))
        db.session.commit()
        db.session.remove()
    again = browser.get("/me")
    assert again.status_code == 200
    assert "Sign in with your email address" in again.get_data(as_text=True)
