"""ProblemApi (dos_server.problems) shapes flask-smorest through public hooks only; these
tests prove each hook takes effect, on a bare app and on the real one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import marshmallow as ma
import pytest
from apispec import BasePlugin
from flask import Flask, abort
from flask.views import MethodView
from flask_smorest import Blueprint

from dos_server import create_app
from dos_server.problems import PROBLEM_JSON, Problem, ProblemApi

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}


class Thing(ma.Schema):
    name = ma.fields.String(required=True)


class Marker(BasePlugin):
    """Someone else's apispec plugin, to show ours is added to it, not instead of it."""

    seen = False

    def init_spec(self, spec: Any) -> None:
        Marker.seen = True


def _bare_app(**init_kwargs: Any) -> Flask:
    app = Flask("problem_api_test")
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.0.3",
                      OPENAPI_URL_PREFIX="/", OPENAPI_JSON_PATH="openapi.json")
    api = ProblemApi()
    api.init_app(app, **init_kwargs)
    blp = Blueprint("things", __name__, url_prefix="/things")

    @blp.route("/")
    class Things(MethodView):
        @blp.arguments(Thing)
        @blp.response(201, Thing)
        @blp.alt_response(409, response="CONFLICT")  # a reference to the component
        def post(self, body: dict[str, Any]) -> dict[str, Any]:
            if body["name"] == "taken":
                raise Problem(409, "conflict", "Conflict", "that name is taken", rule="1.2",
                              headers={"X-Extra": "yes"})
            if body["name"] == "abort":
                abort(403)
            if body["name"] == "bug":
                raise RuntimeError("a bug with a secret in it")
            return body

    api.register_blueprint(blp)
    return app


def test_error_responses_are_documented_as_problem_json() -> None:
    document = _bare_app().test_client().get("/openapi.json").get_json()
    responses = document["components"]["responses"]
    assert responses["DEFAULT_ERROR"]["content"] == {PROBLEM_JSON: {"schema": PROBLEM_REF}}
    assert responses["CONFLICT"]["content"] == {PROBLEM_JSON: {"schema": PROBLEM_REF}}
    assert set(document["components"]["schemas"]["Problem"]["properties"]) >= {
        "type", "title", "status", "detail", "rule"}
    post = document["paths"]["/things/"]["post"]["responses"]
    assert post["201"]["content"] == {"application/json": {
        "schema": {"$ref": "#/components/schemas/Thing"}}}  # success keeps its type
    assert post["409"] == {"$ref": "#/components/responses/CONFLICT"}
    assert post["422"] == {"$ref": "#/components/responses/UNPROCESSABLE_ENTITY"}
    assert responses["UNPROCESSABLE_ENTITY"]["content"] == {PROBLEM_JSON: {"schema": PROBLEM_REF}}
    assert post["default"] == {"$ref": "#/components/responses/DEFAULT_ERROR"}


def test_our_plugin_joins_plugins_given_to_init_app() -> None:
    Marker.seen = False
    app = _bare_app(spec_kwargs={"extra_plugins": [Marker()]})
    document = app.test_client().get("/openapi.json").get_json()
    assert Marker.seen
    assert PROBLEM_JSON in document["components"]["responses"]["DEFAULT_ERROR"]["content"]


@pytest.mark.parametrize(("method", "body", "status", "kind"), [
    ("post", {"name": "taken"}, 409, "conflict"),  # a Problem raised by a view
    ("post", {"name": "abort"}, 403, "forbidden"),  # werkzeug's HTTPException
    ("post", {"nom": 1}, 422, "invalid-input"),  # flask-smorest's validation error
    ("delete", None, 405, "method-not-allowed"),
    ("post", {"name": "bug"}, 500, "internal-error"),  # anything unexpected
])
def test_every_error_is_problem_json(method: str, body: Any, status: int, kind: str) -> None:
    client = _bare_app().test_client()
    answer = getattr(client, method)("/things/", json=body)
    assert answer.status_code == status
    assert answer.mimetype == PROBLEM_JSON
    problem = answer.get_json()
    assert problem["type"].endswith("/" + kind)
    assert problem["status"] == status
    assert problem["title"]
    assert problem["detail"]
    assert "secret" not in answer.get_data(as_text=True)
    if status == 409:
        assert problem["rule"] == "1.2"
        assert answer.headers["X-Extra"] == "yes"
    if status == 422:
        assert problem["errors"] == {"json": {"name": ["Missing data for required field."],
                                              "nom": ["Unknown field."]}}


def test_unknown_path_and_success() -> None:
    client = _bare_app().test_client()
    missing = client.get("/nowhere")
    assert (missing.status_code, missing.mimetype) == (404, PROBLEM_JSON)
    created = client.post("/things/", json={"name": "x"})
    assert (created.status_code, created.mimetype) == (201, "application/json")


def test_the_real_app_documents_and_answers_problem_json(tmp_path: Path) -> None:
    app = create_app({"TESTING": True, "SECRET_KEY": "problem-api",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'dos.sqlite3'}"})
    client = app.test_client()
    document = client.get("/openapi.json").get_json()
    for response in document["components"]["responses"].values():
        assert list(response.get("content", {PROBLEM_JSON: None})) == [PROBLEM_JSON]
    answer = client.delete("/api/games")
    assert (answer.status_code, answer.mimetype) == (405, PROBLEM_JSON)
