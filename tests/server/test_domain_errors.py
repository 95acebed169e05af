"""Services raise domain errors (dos_server.errors); one table (problems.PROBLEM_TYPES) gives
each its status and title. Every class is in the table, each answer a route gives is
documented for that route, and the services import none of the HTTP side."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, create, join

import dos_server
from dos_server import errors
from dos_server.errors import DomainError
from dos_server.problems import PROBLEM_BASE, PROBLEM_TYPES, problem_of

SERVER = Path(dos_server.__file__).parent


def _subclasses(cls: type[DomainError]) -> Iterator[type[DomainError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_domain_error_is_in_the_table_with_a_kind_of_its_own() -> None:
    classes = set(_subclasses(DomainError))
    assert classes == set(PROBLEM_TYPES)
    assert classes == {getattr(errors, name) for name in errors.__all__} - {DomainError}
    for cls in classes:
        assert "kind" in vars(cls), cls  # never inherited: a subclass is another problem type
        status, title = PROBLEM_TYPES[cls]
        assert 400 <= status < 500, cls
        assert title, cls
    kinds = [cls.kind for cls in classes]
    assert len(set(kinds)) == len(kinds)


@pytest.mark.parametrize(("error", "status", "body", "headers"), [
    (errors.StaleVersion("moved on", current_version=7), 409,
     {"type": PROBLEM_BASE + "stale-version", "title": "The game has moved on", "status": 409,
      "detail": "moved on", "current_version": 7}, {}),
    (errors.NotYourTurn("wait", rule="3.1"), 409,
     {"type": PROBLEM_BASE + "not-your-turn", "title": "Not your turn", "status": 409,
      "detail": "wait", "rule": "3.1"}, {}),
    (errors.IllegalAction("not now"), 422,  # no rule: none in the answer
     {"type": PROBLEM_BASE + "illegal-action", "title": "Illegal action", "status": 422,
      "detail": "not now"}, {}),
    (errors.AmbiguousAction("which?", candidates=["m1 R5", "m1 R5+B3"]), 422,
     {"type": PROBLEM_BASE + "ambiguous-action", "title": "Ambiguous action", "status": 422,
      "detail": "which?", "candidates": ["m1 R5", "m1 R5+B3"]}, {}),
    (errors.InvalidInput("name: too long"), 422,
     {"type": PROBLEM_BASE + "invalid-input", "title": "Invalid input", "status": 422,
      "detail": "name: too long"}, {}),
    (errors.NotAuthenticated("expired"), 401,
     {"type": PROBLEM_BASE + "unauthorized", "title": "Not authorized", "status": 401,
      "detail": "expired"}, {"WWW-Authenticate": 'Bearer realm="dos"'}),
    (errors.WrongCode("wrong"), 401,
     {"type": PROBLEM_BASE + "invalid-code", "title": "Wrong or expired code", "status": 401,
      "detail": "wrong"}, {"WWW-Authenticate": 'Bearer realm="dos"'}),
    (errors.RateLimited("later", retry_after=3600), 429,
     {"type": PROBLEM_BASE + "rate-limited", "title": "Too many requests", "status": 429,
      "detail": "later"}, {"Retry-After": "3600"}),
    (errors.SeveralSeats("say which", seats=[0, 2]), 409,
     {"type": PROBLEM_BASE + "several-seats", "title": "Several seats", "status": 409,
      "detail": "say which", "seats": [0, 2]}, {}),
])
def test_a_domain_error_becomes_its_problem(error: DomainError, status: int,
                                            body: dict[str, Any],
                                            headers: dict[str, str]) -> None:
    problem = problem_of(error)
    assert (problem.status, problem.body(), problem.headers) == (status, body, headers)


# -- the services know nothing of HTTP ---------------------------------------------------------

FORBIDDEN = ("dos_server.problems", "dos_server.web", "dos_server.delivery",
             "werkzeug.exceptions", "flask.abort")
CHECKED = [*sorted((SERVER / "services").glob("*.py")), SERVER / "tokens.py",
           SERVER / "errors.py"]


def _imported(source: str, package: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of everything ``source`` imports, at any depth (function-level
    imports too); ``from a import b`` gives ``a`` and ``a.b``, and ``flask.abort`` used as an
    attribute counts as imported."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id == "flask"):
            yield node.lineno, f"flask.{node.attr}"


def _imports_of(path: Path) -> list[tuple[int, str]]:
    package = ".".join(path.relative_to(SERVER.parent).parts[:-1])
    return list(_imported(path.read_text(), package))


def _refused(names: list[tuple[int, str]], forbidden: tuple[str, ...]) -> list[tuple[int, str]]:
    return [(line, name) for line, name in names
            if any(name == f or name.startswith(f + ".") for f in forbidden)]


def test_the_import_walk_sees_every_way_of_importing() -> None:
    source = ("import dos_server.delivery.email\n"
              "def f():\n    from dos_server.problems import Problem\n"
              "    import flask\n    flask.abort(404)\n"
              "    from ..web import views\n    from . import read\n")
    found = {name for _, name in _refused(list(_imported(source, "dos_server.services")),
                                          (*FORBIDDEN, "dos_server.services.read"))}
    assert found == {"dos_server.delivery.email", "dos_server.problems",
                     "dos_server.problems.Problem", "flask.abort", "dos_server.web",
                     "dos_server.web.views", "dos_server.services.read"}


@pytest.mark.parametrize("path", CHECKED, ids=lambda path: path.name)
def test_services_import_no_http_machinery(path: Path) -> None:
    assert not _refused(_imports_of(path), FORBIDDEN)
    if path.name == "errors.py":  # the bottom of the house: everything may raise these
        assert not _refused(_imports_of(path), ("dos_server",))


@pytest.mark.parametrize("name", ["play.py", "lobby.py"])
def test_writes_leave_their_answer_to_read(name: str) -> None:
    assert not _refused(_imports_of(SERVER / "services" / name), ("dos_server.services.read",))


# -- each answer a route gives is documented for that route --------------------------------------


def _openapi_path(rule: str) -> str:
    return rule.replace("<int:", "<").replace("<", "{").replace(">", "}")


def test_domain_errors_answer_as_the_table_says_with_documented_statuses(
        app: Flask, client: FlaskClient) -> None:
    spec = client.get("/openapi.json").get_json()
    adapter = app.url_map.bind("localhost")
    by_kind = {cls.kind: cls for cls in PROBLEM_TYPES}

    def refused(method: str, path: str, kind: str, token: str | None = None,
                **request: Any) -> None:
        headers = {**auth(token), **request.pop("headers", {})}
        answer = client.open(path, method=method, headers=headers, **request)
        status, title = PROBLEM_TYPES[by_kind[kind]]
        body = assert_problem(answer, status)
        assert (body["type"], body["title"]) == (PROBLEM_BASE + kind, title)
        rule = adapter.match(path, method=method, return_rule=True)[0]
        documented = spec["paths"][_openapi_path(rule.rule)][method.lower()]["responses"]
        assert str(status) in documented, (method, rule.rule, status, sorted(documented))

    started = create(client, [{"name": "ann"}, {"name": "bob"}])
    seats = {}
    for invite in started["invites"]:
        joined = join(client, started["id"], invite=invite["invite"])
        seats[joined["seat"]] = joined["player_token"]
    games, host = f"/api/games/{started['id']}", started["host_token"]
    shown = client.get(games).get_json()
    version, current = shown["version"], shown["view"]["current"]
    player, other = seats[current], seats[1 - current]
    waiting = create(client, [{"name": "cat"}, {}, {}])
    lobby = f"/api/games/{waiting['id']}"
    eve = join(client, waiting["id"], code=waiting["invite_code"], name="eve")
    lone = create(client, [{"name": "dan"}, {}])
    alone = f"/api/games/{lone['id']}"

    refused("GET", "/api/games/nosuchgame", "game-not-found")
    refused("GET", games, "unauthorized", "not-a-token")
    refused("GET", games, "wrong-game", waiting["host_token"])
    refused("GET", f"{games}/actions", "not-a-player", host)
    refused("GET", f"{lobby}/actions", "game-not-started", eve["player_token"])
    refused("POST", f"{lobby}/actions", "game-not-active", eve["player_token"],
            json={"version": 1, "actions": ["draw"]})
    move = f"{games}/actions"
    refused("POST", move, "stale-version", player, json={"version": version + 1,
                                                          "actions": ["draw"]})
    refused("POST", move, "not-your-turn", other, json={"version": version,
                                                         "actions": ["draw"]})
    refused("POST", move, "illegal-action", player, json={"version": version, "turn": "m9 R1"})
    refused("POST", move, "invalid-action", player, json={"version": version, "turn": "zzz"})
    refused("POST", move, "no-such-action", player, json={"version": version, "number": 999})
    keyed = {"Idempotency-Key": "domain-errors-1"}
    drawn = client.post(move, headers={**auth(player), **keyed},
                        json={"version": version, "actions": ["draw"]})
    assert drawn.status_code == 200, drawn.get_json()
    refused("POST", move, "idempotency-key-reused", player, headers=keyed,
            json={"version": version, "actions": ["end"]})
    refused("POST", f"{games}/start", "host-only", player)
    refused("POST", f"{games}/start", "already-started", host)
    refused("POST", f"{alone}/start", "not-enough-players", lone["host_token"])
    refused("DELETE", f"{lobby}/seats/3", "no-such-seat", waiting["host_token"])
    refused("DELETE", f"{alone}/seats/1", "too-few-seats", lone["host_token"])
    refused("POST", f"{games}/join", "bad-invite-code", json={"code": "wrong", "name": "fay"})
    refused("POST", f"{games}/join", "no-open-seat",
            json={"code": started["invite_code"], "name": "fay"})
    cat = waiting["invites"][0]["invite"]
    join(client, waiting["id"], invite=cat)
    refused("POST", f"{lobby}/join", "seat-claimed", json={"invite": cat})
    refused("PUT", f"{games}/seats/{1 - current}/notifications", "not-your-seat", player,
            json={"email": "someone@example.org"})
    refused("POST", f"{games}/vacation", "no-vacation-left", player, json={"days": 60})
    refused("GET", f"{games}/record", "game-not-finished")
    assert client.post(f"{games}/resign", headers=auth(player)).status_code == 200
    refused("POST", f"{games}/resign", "already-resigned", player)
    assert client.post(f"{alone}/cancel", headers=auth(lone["host_token"])).status_code == 200
    refused("POST", f"{alone}/join", "game-closed", json={"code": lone["invite_code"],
                                                            "name": "gus"})
    refused("POST", f"{alone}/cancel", "already-started", lone["host_token"])
    refused("POST", "/api/login/verify", "invalid-code",
            json={"email": "ann@example.org", "code": "12345678"})
    refused("GET", "/api/me/games", "unauthorized")
