"""Configuration, start-up rules, rate limits and the docs page."""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from flask import Flask
from server_helpers import assert_problem

from dos_server import create_app
from dos_server.config import ConfigError, normalize_database_url
from testkit import REDIS_URL


def test_production_refuses_to_start_without_a_secret_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.delenv("DOS_SECRET_KEY", raising=False)
    with pytest.raises(ConfigError, match="SECRET_KEY is not set"):
        create_app({"ENV_NAME": "production",
                    "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/db.sqlite3"})


def test_production_secret_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOS_ENV_NAME", "production")
    monkeypatch.setenv("SECRET_KEY", "from-the-environment")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/db.sqlite3")
    app = create_app()
    assert app.config["SECRET_KEY"] == "from-the-environment"
    assert app.config["ENV_NAME"] == "production"


def test_development_generates_a_secret_and_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SECRET_KEY", raising=False)
    monkeypatch.delenv("DOS_SECRET_KEY", raising=False)
    instance = tmp_path / "instance"
    config = {"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/db.sqlite3",
              "INSTANCE_PATH": str(instance)}
    one = create_app(config)
    two = create_app(config)  # a restart: the same key, so tokens stay valid
    key_file = instance / "secret_key"
    assert key_file.exists()
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert one.config["SECRET_KEY"] == two.config["SECRET_KEY"] == key_file.read_text().strip()
    assert len(one.config["SECRET_KEY"]) >= 40


def test_database_urls_use_psycopg_3() -> None:
    assert normalize_database_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_database_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_fallback_keys_from_the_environment_are_a_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOS_SECRET_KEY_FALLBACKS", "old-one,older-one")
    app = create_app({"SECRET_KEY": "k",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/db.sqlite3"})
    assert app.config["SECRET_KEY_FALLBACKS"] == ["old-one", "older-one"]


def test_creating_games_is_rate_limited_with_a_problem(
    make_app: Callable[..., Flask],
) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATE_LIMIT_CREATE="2 per minute")
    client = app.test_client()
    body = {"seats": [{"name": "ann"}, {"name": "bob"}]}
    assert client.post("/api/games", json=body).status_code == 201
    assert client.post("/api/games", json=body).status_code == 201
    answer = client.post("/api/games", json=body)
    problem = assert_problem(answer, 429)
    assert "too many requests" in problem["detail"]
    assert int(answer.headers["Retry-After"]) > 0


def test_joining_is_rate_limited(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATE_LIMIT_JOIN="1 per minute")
    client = app.test_client()
    created = client.post("/api/games", json={"seats": [{"name": "a"}, {"name": "b"}]}).get_json()
    url = f"/api/games/{created['id']}/join"
    assert client.post(url, json={"invite": created["invites"][0]["invite"]}).status_code == 200
    assert_problem(client.post(url, json={"invite": created["invites"][1]["invite"]}), 429)


def test_a_default_limit_still_applies_to_every_route(make_app: Callable[..., Flask]) -> None:
    # Without app-wide limits the views without a limit skip Flask-Limiter's hook; with one,
    # the hook stays and limits a view that names no limit of its own.
    app = make_app(RATELIMIT_ENABLED=True, RATELIMIT_DEFAULT="2 per minute")
    client = app.test_client()
    assert client.get("/api/ping").status_code == 200
    assert client.get("/api/ping").status_code == 200
    assert_problem(client.get("/api/ping"), 429)


def test_views_without_a_limit_are_not_limited(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATE_LIMIT_CREATE="1 per minute")
    client = app.test_client()
    for _ in range(5):
        assert client.get("/api/ping").status_code == 200


def test_rate_limits_are_shared_by_web_instances_through_redis(
    make_app: Callable[..., Flask],
) -> None:
    """Two instances with ``RATELIMIT_STORAGE_URI=redis://...`` count against one limit (the
    server extra lacked the redis client: such a server failed to start)."""
    prefix = f"test-{secrets.token_hex(4)}"
    config = {"RATELIMIT_ENABLED": True, "RATE_LIMIT_CREATE": "2 per minute",
              "RATELIMIT_STORAGE_URI": REDIS_URL, "RATELIMIT_KEY_PREFIX": prefix}
    first, second = make_app(**config), make_app(**config)
    body = {"seats": [{"name": "ann"}, {"name": "bob"}]}
    try:
        assert first.test_client().post("/api/games", json=body).status_code == 201
        assert second.test_client().post("/api/games", json=body).status_code == 201
        assert_problem(first.test_client().post("/api/games", json=body), 429)
        assert_problem(second.test_client().post("/api/games", json=body), 429)
    finally:
        store = redis.Redis.from_url(REDIS_URL)
        for key in store.scan_iter(f"*{prefix}*"):
            store.delete(key)


def test_docs_page_and_health(client: object) -> None:
    from flask.testing import FlaskClient

    assert isinstance(client, FlaskClient)
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert b"openapi.json" in docs.data
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz").get_json()
    assert ready["status"] == "ready"
    assert client.get("/api/ping").get_json() == {"pong": True}
