"""/openapi.json documents every route and its statuses; schemathesis finds no 5xx."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)
from server_helpers import auth, create, join

UNDOCUMENTED = {"/static/<path:filename>", "/openapi.json", "/docs"}
METHODS = {"get", "post", "put", "patch", "delete"}


def _openapi_path(rule: str) -> str:
    return rule.replace("<int:", "<").replace("<", "{").replace(">", "}")


def test_every_route_is_documented_with_its_statuses(app: Flask, client: FlaskClient) -> None:
    spec = client.get("/openapi.json").get_json()
    assert spec["openapi"].startswith("3.")
    paths = spec["paths"]
    routes = {(_openapi_path(rule.rule), method.lower())
              for rule in app.url_map.iter_rules() if rule.rule not in UNDOCUMENTED
              and not rule.endpoint.startswith("web.")  # HTML pages (web/), not the JSON API
              for method in rule.methods or () if method.lower() in METHODS}
    documented = {(path, method) for path, ops in paths.items() for method in ops
                  if method in METHODS}
    assert routes == documented
    for path, method in routes:
        operation = paths[path][method]
        statuses = set(operation["responses"])
        assert operation.get("summary"), (method, path)
        assert statuses & {"200", "201", "202"}, (method, path, statuses)
        assert "default" in statuses, (method, path)  # problem+json for anything else
        if "{game_id}" in path:
            assert "404" in statuses, (method, path)
        if "requestBody" in operation or any(p["in"] == "query"
                                             for p in operation.get("parameters", [])):
            assert "422" in statuses, (method, path)
    actions = paths["/api/games/{game_id}/actions"]["post"]["responses"]
    assert {"200", "400", "401", "403", "404", "409", "422"} <= set(actions)
    problem = spec["components"]["schemas"]["Problem"] if "Problem" in spec["components"][
        "schemas"] else spec["components"]["schemas"]["ProblemSchema"]
    assert set(problem["required"]) == {"type", "title", "status", "detail"}


@pytest.mark.filterwarnings(
    # hypothesis-jsonschema / schemathesis may warn about regex patterns it can only
    # approximate (the name pattern); that is about test generation, not the server.
    "ignore::UserWarning",
)
def test_schemathesis_finds_no_server_error(app: Flask, client: FlaskClient) -> None:
    game = create(client, [{"name": "ann"}, {"name": "bob"}, {"bot": "random"}, {}])
    token = join(client, game["id"], invite=game["invites"][0]["invite"])["player_token"]
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    checks = [not_a_server_error, response_schema_conformance, content_type_conformance]
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    seen: dict[int, int] = {}

    for operation in operations:
        has_game = "{game_id}" in operation.path
        strategies = [operation.as_strategy(GenerationMode.POSITIVE),
                      operation.as_strategy(GenerationMode.NEGATIVE)]
        if has_game:
            for headers in ({}, auth(token), auth(game["host_token"])):
                strategies.append(operation.as_strategy(
                    GenerationMode.POSITIVE, path_parameters={"game_id": game["id"]},
                    headers=headers))

        @settings(max_examples=12, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=st.one_of(strategies))
        def run(case: Any) -> None:
            wait = (case.query or {}).get("wait")
            if isinstance(wait, int | float) and not isinstance(wait, bool) and wait > 0:
                case.query["wait"] = 0  # a valid long-poll would only wait: answer at once
            response = case.call_and_validate(checks=checks)
            seen[response.status_code] = seen.get(response.status_code, 0) + 1

        run()
    assert not [status for status in seen if status >= 500], seen
    assert any(200 <= status < 300 for status in seen), seen
