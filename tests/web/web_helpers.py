"""What the web tests share: reading forms out of pages, and making games through the API."""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import urlsplit

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from dos_server.extensions import db
from dos_server.models import LoginCodeRow
from dos_server.services import account
from dos_server.validation import email_key

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ANN, BOB = "ann@example.org", "bob@example.org"


def csrf_of(page: TestResponse | str) -> str:
    text = page if isinstance(page, str) else page.get_data(as_text=True)
    found = CSRF.search(text)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def form_value(page: TestResponse, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page.get_data(as_text=True))
    assert found, f"no field {name!r} in the page"
    return unescape(found.group(1))


def path_of(url: str) -> str:
    parts = urlsplit(unescape(url))
    return parts.path + (f"?{parts.query}" if parts.query else "")


def post(client: FlaskClient, url: str, data: dict[str, Any] | None = None,
         page: str | None = None) -> TestResponse:
    """POST a form as the browser would: with the CSRF token of a page of this session."""
    token = csrf_of(client.get(page or "/new").get_data(as_text=True))
    return client.post(url, data={"csrf": token, **(data or {})})


def api_game(client: FlaskClient, seats: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    """Create a game through the API (the web pages are what is under test, not creation)."""
    response = client.post("/api/games", json={"seats": seats, "options": options})
    assert response.status_code == 201, response.get_json()
    body: dict[str, Any] = response.get_json()
    return body


def join_api(client: FlaskClient, game_id: str, invite: str) -> str:
    response = client.post(f"/api/games/{game_id}/join", json={"invite": invite})
    assert response.status_code == 200, response.get_json()
    return str(response.get_json()["player_token"])


def api_view(client: FlaskClient, game_id: str, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body: dict[str, Any] = client.get(f"/api/games/{game_id}", headers=headers).get_json()
    return body


def signin_link(app: Flask, game_id: str, seat: int) -> str:
    """The link a your-turn email carries (``dos_server.urls.signin_url``)."""
    from dos_server import urls
    from dos_server.services import access

    with app.app_context():
        game = access.get_game(game_id)
        return urls.signin_url(game_id, access.seat_token("signin", game, access.seat_of(game, seat)))


def sign_in(app: Flask, client: FlaskClient, game_id: str, seat: int) -> None:
    """Open the email link, then press Continue."""
    first = client.get(path_of(signin_link(app, game_id, seat)))
    assert first.status_code == 303
    page = client.get(first.headers["Location"])
    response = client.post(f"/games/{game_id}/signin", data={"csrf": csrf_of(page)})
    assert response.status_code == 303, response.get_data(as_text=True)


# -- signing in with an email address -----------------------------------------------------


def account_game(app: Flask) -> str:
    """A game whose seat 0 belongs to ANN (claimed with the invite sent to her address)."""
    api = app.test_client()
    created = api_game(api, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    for invite in created["invites"]:
        join_api(api, created["id"], invite["invite"])
    return str(created["id"])


def emailed_code(app: Flask, address: str) -> str:
    """The code the newest sign-in email carries (an HMAC of the row's nonce)."""
    with app.app_context():
        row = db.session.execute(
            db.select(LoginCodeRow).where(LoginCodeRow.email_key == email_key(address))
            .order_by(LoginCodeRow.created_at.desc())).scalars().first()
        assert row is not None
        code = account.login_code(row.nonce)
        db.session.remove()
    return code


def ask_code(browser: FlaskClient, address: str) -> str:
    """Ask for a code on /me; the page that follows (with the code form)."""
    page = browser.get("/me")
    asked = browser.post("/me/login", data={"csrf": csrf_of(page), "email": address})
    assert asked.status_code == 303, asked.get_data(as_text=True)
    assert asked.headers["Location"].endswith("/me")
    text = browser.get("/me").get_data(as_text=True)
    assert "If this address plays here, a code and a link are on their way" in text
    assert 'action="/me/verify"' in text
    return text


def account_sign_in(app: Flask, browser: FlaskClient, address: str) -> str:
    page = ask_code(browser, address)
    code = emailed_code(app, address)
    done = browser.post("/me/verify", data={"csrf": csrf_of(page), "email": address,
                                            "code": f"{code[:4]} {code[4:]}"})
    assert done.status_code == 303, done.get_data(as_text=True)
    text = browser.get("/me").get_data(as_text=True)
    assert f"Signed in as {address}" in text
    return text


def login_link(app: Flask, address: str) -> str:
    """The account sign-in link last emailed to ``address``, as the email holds it."""
    assert app.test_client().post("/api/login", json={"email": address}).status_code == 202
    with app.app_context():
        row = db.session.execute(
            db.select(LoginCodeRow).order_by(LoginCodeRow.created_at.desc())).scalars().first()
        assert row is not None
        link = account.login_link(row.id)
        db.session.remove()
    return link
