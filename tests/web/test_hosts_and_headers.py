"""Links never come from the Host header, other hosts are refused in production, and every
route that can answer HTML sends the same security headers.

The walks cover every GET route of the app (``url_map``), filled with a real game, real
tokens and garbage, so a page added later is checked without a test of its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import api_game, csrf_of, join_api, path_of, sign_in
from werkzeug.test import TestResponse

EVIL = "evil.example"
PUBLIC = "https://dos.example.org"
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def _signed_in_browsers(app: Flask) -> tuple[dict[str, Any], list[FlaskClient]]:
    """A waiting game (one open seat: the host page lists invites) and three browsers: a
    stranger, the host, and the seat of alice."""
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}, {}])
    join_api(api, created["id"], created["invites"][0]["invite"])
    stranger, host, alice = app.test_client(), app.test_client(), app.test_client()
    page = host.get(f"/games/{created['id']}/signin")
    signed = host.post(f"/games/{created['id']}/signin",
                       data={"csrf": csrf_of(page), "token": created["host_token"]})
    assert signed.status_code == 303, signed.get_data(as_text=True)
    sign_in(app, alice, created["id"], 0)
    # Something said at the table: the chat's long-poll answers it at once, not after a wait.
    said = api.post(f"/api/games/{created['id']}/messages", json={"text": "hello"},
                    headers={"Authorization": f"Bearer {created['host_token']}"})
    assert said.status_code == 201, said.get_data(as_text=True)
    return created, [stranger, host, alice]


def _get_routes(app: Flask, game_id: str) -> Iterator[str]:
    """A path for every GET route of the app, its arguments filled in."""
    values = {"game_id": game_id, "token": "garbage", "seat": 0, "version": 1, "number": 1,
              "filename": "dos.css", "session_id": "0123456789abcdef", "name": "nobody"}
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or set()):
            continue
        missing = rule.arguments - values.keys()
        assert not missing, f"teach this walk the argument(s) {missing} of {rule.rule}"
        yield rule.build({name: values[name] for name in rule.arguments}, append_unknown=False)[1]


def _every_answer(app: Flask, game_id: str, browsers: list[FlaskClient],
                  **headers: str) -> Iterator[tuple[str, TestResponse]]:
    extra = ["/games//" + game_id, "/nowhere", f"/games/{game_id}/", "/static/../x"]
    for path in [*_get_routes(app, game_id), *extra]:
        for browser in browsers:
            for accept in ("text/html", "application/json"):
                answer = browser.get(path, headers={"Accept": accept, **headers})
                yield path, answer
                answer.close()


@pytest.fixture
def public_app(make_app: Any) -> Flask:
    app: Flask = make_app(PUBLIC_URL=PUBLIC)
    return app


def test_no_link_and_no_redirect_comes_from_a_forged_host(public_app: Flask) -> None:
    created, browsers = _signed_in_browsers(public_app)
    for browser in browsers:  # the browsers' cookies go to the forged host too
        cookie = browser.get_cookie("dos_session")
        if cookie is not None:
            browser.set_cookie("dos_session", cookie.value, domain=EVIL)
    host_page = browsers[1].get(f"/games/{created['id']}/host", headers={"Host": EVIL})
    text = host_page.get_data(as_text=True)
    assert f"{PUBLIC}/games/{created['id']}/join?" in text  # the invite links
    seen = 0
    for path, answer in _every_answer(public_app, created["id"], browsers, Host=EVIL):
        seen += 1
        assert EVIL not in answer.get_data(as_text=True), path
        for name, value in answer.headers.items():
            assert EVIL not in value, (path, name, value)
    assert seen > 100
    doubled = browsers[0].get(f"/games//{created['id']}", headers={"Host": EVIL})
    assert doubled.status_code == 308
    assert doubled.headers["Location"] == f"/games/{created['id']}"
    assert "no-store" in doubled.headers["Cache-Control"]


def test_every_html_answer_has_the_security_headers(app: Flask) -> None:
    created, browsers = _signed_in_browsers(app)
    html = 0
    for path, answer in _every_answer(app, created["id"], browsers):
        assert answer.headers.get("X-Content-Type-Options") == "nosniff", path
        if answer.mimetype != "text/html":
            continue
        html += 1
        for name, value in HEADERS.items():
            assert answer.headers.get(name) == value, (path, name)
        policy = answer.headers.get("Content-Security-Policy", "")
        assert "frame-ancestors 'none'" in policy, path
        assert "object-src 'none'" in policy, path
        assert answer.headers.get("Cache-Control") == "no-store", path
    assert html > 50
    # The pages an email opens, with real links: the account sign-in and unsubscribe.
    from dos_server.services import access, notify

    with app.app_context():
        game = access.get_game(created["id"])
        one_click, _ = notify.unsubscribe_urls(game.id, access.seat_of(game, 0).public_id)
    for path in ("/account/signin/garbage", path_of(one_click)):
        answer = browsers[0].get(path, headers={"Accept": "text/html"})
        if answer.status_code == 303:  # the API sends a browser on to the page
            answer = browsers[0].get(answer.headers["Location"])
        assert answer.mimetype == "text/html", path
        assert answer.headers.get("X-Frame-Options") == "DENY", path


def _production(make_app: Any, **config: Any) -> Flask:
    app: Flask = make_app(ENV_NAME="production", SECRET_KEY="k" * 48, PUBLIC_URL=PUBLIC,
                          **config)
    return app


def test_production_refuses_a_host_it_does_not_serve(make_app: Any) -> None:
    app = _production(make_app, TRUSTED_HOSTS="play.example.org, dos.example.net")
    client = app.test_client()
    for host in ("dos.example.org", "play.example.org", "dos.example.net:443"):
        assert client.get("/", headers={"Host": host}).status_code == 200, host
    for path in ("/", "/api/games/abc", "/me"):
        refused = client.get(path, headers={"Host": EVIL})
        assert refused.status_code == 400, path
        assert EVIL not in refused.get_data(as_text=True)
    # Development serves any host (a laptop's address, a LAN name) but never links to it.
    assert make_app().test_client().get("/", headers={"Host": EVIL}).status_code == 200


def test_forwarded_headers_count_only_behind_a_configured_proxy(make_app: Any) -> None:
    forged = {"Host": "dos.example.org", "X-Forwarded-Host": EVIL}
    ignored = _production(make_app).test_client()
    assert ignored.get("/", headers=forged).status_code == 200  # not trusted: not read
    behind = _production(make_app, PROXY_COUNT="1").test_client()
    assert behind.get("/", headers=forged).status_code == 400  # read, and not a host we serve
    proxied = {"Host": "127.0.0.1:8000", "X-Forwarded-Host": "dos.example.org",
               "X-Forwarded-Proto": "https"}
    assert behind.get("/", headers=proxied).status_code == 200
