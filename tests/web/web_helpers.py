"""What the web tests share: reading forms out of pages, and making games through the API."""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import urlsplit

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


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
