"""Arbitrary JSON, strings and headers at every route: never a 5xx, every error is
problem+json, and a request that is refused changes nothing.

Routes come from the app's url_map, so a new route is fuzzed without touching this file.
Path parameters are arbitrary text or the real game's id; bodies are arbitrary JSON values
(with shapes like the real schemas), hostile JSON text, or arbitrary bytes; headers are
arbitrary (latin-1, as HTTP carries them). Runs on SQLite and, with TEST_DATABASE_URL, on
PostgreSQL, whose driver refuses what SQLite stores (NUL, lone surrogates, long strings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import PROBLEM_JSON, auth, create, join
from werkzeug.routing import Rule

from dos_server.extensions import db
from dos_server.models import GameRow

NOT_FUZZED = {"/static/<path:filename>", "/openapi.json", "/docs"}
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
# Field names of the request schemas, so that generated objects reach past "unknown field".
FIELDS = ["seats", "name", "email", "webhook_url", "bot", "options", "after_draw", "dos_call",
          "target_score", "timeout_policy", "forfeit_after", "vacation_days", "turn_time_limit",
          "invite", "code", "version", "actions", "turn", "number", "events", "digest", "days",
          "webhook", "after", "limit"]
PARAMETER = re.compile(r"<(?:(\w+):)?(\w+)>")

# Strings that broke the server before: mixed into every text strategy, since
# hypothesis alone seldom builds them.
HOSTILE = st.sampled_from(["", " ", "\u00a0", "\x00", "ab\x00cd", "\ud800", "a\udc00",
                           "\u202e", "\ue000", "\x0b", "\u00e9" * 41, "x" * 129,
                           '"a\x0bb"@example.org', "ann@example.org\n", "\U0001f0cf"])


def text(max_size: int) -> st.SearchStrategy[str]:
    return st.text(max_size=max_size) | HOSTILE


json_leaf = (st.none() | st.booleans() | st.integers() | st.floats() | text(50)
             | st.sampled_from(["draw", "end", "m1 R5", "random", "greedy", "ann@example.org",
                                "http://x.test/h"]))
json_value = st.recursive(
    json_leaf,
    lambda inner: (st.lists(inner, max_size=5)
                   | st.dictionaries(st.sampled_from(FIELDS) | text(8), inner,
                                     max_size=6)),
    max_leaves=20,
)
# Latin-1 without CR/LF: what an HTTP header value can carry to the application.
header_text = (st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=200)
               | st.sampled_from(["", " ", "\x00", "x" * 129, "caf\u00e9", "Bearer \x00"]))


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes | None, str | None]:
    """(body, Content-Type): mostly JSON, sometimes hostile JSON text or arbitrary bytes."""
    kind = draw(st.sampled_from(["json", "json", "json", "unicode-json", "deep", "digits",
                                 "bytes", "none"]))
    content_type = draw(st.sampled_from(["application/json", "application/json",
                                         "application/problem+json", "text/plain", None]))
    if kind == "none":
        return None, content_type
    if kind == "bytes":
        return draw(st.binary(max_size=300)), content_type
    if kind == "deep":
        depth = draw(st.sampled_from([31, 32, 33, 1000, 5000]) | st.integers(1, 5000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"seats":', "}")]))
        return (opener * depth + "1" + closer * depth).encode(), content_type
    if kind == "digits":
        digits = draw(st.sampled_from([64, 65, 4300, 4301, 6000]) | st.integers(1, 6000))
        key = draw(st.sampled_from(["version", "number", "days", "limit"]))
        return f'{{"{key}": {"9" * digits}}}'.encode(), content_type
    value = draw(json_value)
    if kind == "unicode-json":  # raw (maybe lone-surrogate) characters, not \u escapes
        return _utf8(json.dumps(value, ensure_ascii=False)), content_type
    return json.dumps(value).encode(), content_type


def _fuzzed_rules(app: Flask) -> list[Rule]:
    return [rule for rule in app.url_map.iter_rules() if rule.rule not in NOT_FUZZED]


def _utf8(value: str) -> bytes:
    """As a client would send it (a lone surrogate as the bytes UTF-8 would give it)."""
    return value.encode("utf-8", "surrogatepass")


def _path(rule: Rule, values: dict[str, str]) -> str:
    def fill(match: re.Match[str]) -> str:
        return quote(_utf8(values[match.group(2)]), safe="")
    return PARAMETER.sub(fill, rule.rule)


@st.composite
def requests_for(draw: st.DrawFn, rule: Rule, game_id: str,
                 tokens: list[str]) -> dict[str, Any]:
    values: dict[str, str] = {}
    for converter, name in PARAMETER.findall(rule.rule):
        if name == "game_id":
            values[name] = draw(st.just(game_id) | text(30))
        elif converter == "int":
            values[name] = draw(st.integers(0, 5).map(str) | st.integers(0, 10**30).map(str)
                                | text(10))
        else:
            values[name] = draw(text(200) | st.sampled_from(tokens))
    headers: dict[str, str] = {}
    authorization = draw(st.none() | st.sampled_from(tokens).map(lambda t: f"Bearer {t}")
                         | header_text | header_text.map(lambda t: f"Bearer {t}"))
    if authorization is not None:
        headers["Authorization"] = authorization
    key = draw(st.none() | header_text)
    if key is not None:
        headers["Idempotency-Key"] = key
    for name in draw(st.lists(st.sampled_from(["X-Request-Id", "Accept", "Accept-Language",
                                                "If-None-Match", "Forwarded"]), max_size=2)):
        headers[name] = draw(header_text)
    body, content_type = draw(bodies())
    query = urlencode([(_utf8(k), _utf8(v)) for k, v in draw(st.dictionaries(
        st.sampled_from(["after", "limit"]) | text(5), text(20), max_size=3)).items()])
    methods = sorted(m for m in rule.methods or () if m in METHODS)
    return {"method": draw(st.sampled_from(methods) | st.sampled_from(METHODS)),
            "path": _path(rule, values), "headers": headers, "data": body,
            "content_type": content_type, "query_string": query}


def _snapshot(app: Flask, game_id: str) -> tuple[Any, ...]:
    """Everything a request could change about the game: its row and its seats."""
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        seats = tuple(
            tuple(getattr(seat, column.key) for column in seat.__table__.columns)
            for seat in game.seats)
        shot = (game.version, game.status, json.dumps(game.state, sort_keys=True),
                game.host_token_version, game.next_seq, seats)
        db.session.remove()
    return shot


def _is_web_page(request: dict[str, Any]) -> bool:
    """The browser's pages answer errors as HTML pages (still never a 500); the API as
    problem+json."""
    path = str(request.get("path", ""))
    return not (path.startswith("/api") or path.startswith("/inbound")
                or path in ("/healthz", "/readyz", "/openapi.json"))


def _check(response: Any, request: dict[str, Any]) -> None:
    status = response.status_code
    assert status < 500, (request, response.get_data(as_text=True))
    if status >= 400 and not _is_web_page(request):
        assert response.mimetype == PROBLEM_JSON, (request, response.mimetype)
        body = response.get_json()
        assert body["status"] == status
        assert isinstance(body["detail"], str)
        assert body["detail"]


@pytest.fixture
def fuzz_app(make_app: Callable[..., Flask]) -> Flask:
    return make_app(INBOUND_SECRET="fuzz-inbound-secret")


@pytest.fixture
def target(fuzz_app: Flask) -> dict[str, Any]:
    """A game in play with two players and a bot, and every kind of token for it."""
    client = fuzz_app.test_client()
    game = create(client, [{"name": "ann"}, {"name": "bob"}, {"bot": "greedy"}])
    game["players"] = [join(client, game["id"], invite=i["invite"])["player_token"]
                       for i in game["invites"]]
    return game


def test_no_token_fuzz_never_500s_and_changes_nothing(fuzz_app: Flask,
                                                      target: dict[str, Any]) -> None:
    """Without a valid token, nothing anyone sends changes the game, and nothing is a 5xx."""
    client = fuzz_app.test_client()
    game_id = target["id"]
    # Look-alikes of tokens: the right shape, but not valid for this game.
    fakes = ["a.b.c", target["host_token"][:-3] + "AAA", target["players"][0] + "x"]
    before = _snapshot(fuzz_app, game_id)
    for rule in _fuzzed_rules(fuzz_app):
        _fuzz_rule(client, rule, game_id, fakes, examples=50)
        assert _snapshot(fuzz_app, game_id) == before, rule.rule


def test_token_fuzz_never_500s_and_refusals_change_nothing(fuzz_app: Flask,
                                                           target: dict[str, Any]) -> None:
    """With real tokens, a request may change the game, but a 4xx never does."""
    client = fuzz_app.test_client()
    game_id = target["id"]
    tokens = [target["host_token"], *target["players"]]
    for rule in _fuzzed_rules(fuzz_app):
        if "<game_id>" not in rule.rule:
            continue
        state = {"shot": _snapshot(fuzz_app, game_id)}

        def after(response: Any, request: dict[str, Any], state: dict[str, Any] = state) -> None:
            shot = _snapshot(fuzz_app, game_id)
            if response.status_code >= 400:
                assert shot == state["shot"], (request, response.get_json())
            state["shot"] = shot

        _fuzz_rule(client, rule, game_id, tokens, examples=25, after=after)


def _fuzz_rule(client: FlaskClient, rule: Rule, game_id: str, tokens: list[str], *,
               examples: int, after: Callable[[Any, dict[str, Any]], None] | None = None) -> None:
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(request=requests_for(rule, game_id, tokens))
    def run(request: dict[str, Any]) -> None:
        response = client.open(**request)
        _check(response, request)
        if after:
            after(response, request)

    run()


def test_the_fuzz_reaches_the_services(fuzz_app: Flask, target: dict[str, Any]) -> None:
    """The strategies are not all refused at the edge: real answers come back too."""
    client = fuzz_app.test_client()
    seen: dict[int, int] = {}
    token = target["players"][0]

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(request=requests_for(next(r for r in _fuzzed_rules(fuzz_app)
                                     if r.rule == "/api/games/<game_id>"),
                                target["id"], [token]))
    def run(request: dict[str, Any]) -> None:
        response = client.open(**request)
        _check(response, request)
        seen[response.status_code] = seen.get(response.status_code, 0) + 1

    run()
    assert 200 in seen, seen
    assert 404 in seen, seen
    assert client.get(f"/api/games/{target['id']}", headers=auth(token)).status_code == 200
