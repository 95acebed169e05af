"""Webhook URLs may only point at public internet addresses.

Refused when set (422 naming ``webhook_url``) and again at delivery, where the worker resolves
the host once and connects to the address it checked; ``WEBHOOK_ALLOW_PRIVATE`` lifts the rule
(the other notification tests use it: their receiver is on loopback).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from notify_helpers import Receiver, attempts, auth, create, player_tokens, rows, run_worker

from dos_server import create_app, netguard

HOOK_NAME = "hooks.example.com"
PUBLIC_IP = "93.184.215.14"  # a public address; nothing here connects to it

REFUSED = [
    "http://127.0.0.1/hook",
    "http://localhost:8080/hook",
    "http://127.8.9.10/hook",
    "http://[::1]/hook",
    "http://10.1.2.3/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.20/hook",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://100.64.0.1/hook",  # CGNAT
    "http://0.0.0.0/hook",
    "http://224.0.0.1/hook",
    "http://255.255.255.255/hook",
    "http://240.0.0.1/hook",
    "http://198.18.0.1/hook",  # benchmarking
    "http://192.0.2.1/hook",  # documentation
    "http://[fe80::1]/hook",
    "http://[fc00::1]/hook",
    "http://[fec0::1]/hook",
    "http://[::]/hook",
    "http://[::ffff:7f00:1]/hook",  # IPv4-mapped 127.0.0.1
    "http://[::ffff:a9fe:a9fe]/hook",  # IPv4-mapped 169.254.169.254
    "http://[2002:7f00:1::1]/hook",  # 6to4 around 127.0.0.1
    "http://[64:ff9b::a00:1]/hook",  # NAT64 around 10.0.0.1
    "http://2130706433/hook",  # 127.0.0.1 in decimal
    "http://0x7f000001/hook",  # in hex
    "https://user:pass@example.com/hook",  # credentials
]


def _strict(make_app: Callable[..., Flask]) -> Flask:
    return make_app(WEBHOOK_ALLOW_PRIVATE=False)


def _problem_names_webhook_url(response: Any, url: str) -> str:
    assert response.status_code == 422, (url, response.status_code, response.get_data(True))
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert "webhook_url" in body["detail"], (url, body)
    return str(body["detail"])


def test_private_and_odd_webhook_urls_are_refused_when_set(
        make_app: Callable[..., Flask]) -> None:
    client = _strict(make_app).test_client()
    game = create(client, [{"name": "ann"}, {"name": "bob"}])
    host = game["host_token"]
    for url in REFUSED:
        created = client.post("/api/games", json={
            "seats": [{"name": "ann", "webhook_url": url}, {"name": "bob"}]})
        detail = _problem_names_webhook_url(created, url)
        assert detail.startswith("seats.0.webhook_url:"), detail
        assert created.get_json()["errors"]["json"]["seats"]["0"]["webhook_url"]
        put = client.put(f"/api/games/{game['id']}/seats/1/notifications", headers=auth(host),
                         json={"webhook_url": url})
        _problem_names_webhook_url(put, url)
    metadata = client.put(f"/api/games/{game['id']}/seats/1/notifications", headers=auth(host),
                          json={"webhook_url": "http://169.254.169.254/"}).get_json()
    assert "link-local" in metadata["detail"]
    unknown = client.put(f"/api/games/{game['id']}/seats/1/notifications", headers=auth(host),
                         json={"webhook_url": "https://no-such-host.invalid/hook"})
    assert "does not resolve" in _problem_names_webhook_url(unknown, "no-such-host.invalid")
    assert rows(make_app(), channel="webhook") == []


def test_public_webhook_urls_are_accepted(make_app: Callable[..., Flask]) -> None:
    client = _strict(make_app).test_client()
    game = create(client, [{"name": "ann", "webhook_url": f"https://{PUBLIC_IP}/hook"},
                           {"name": "bob"}])
    answer = client.put(f"/api/games/{game['id']}/seats/1/notifications",
                        headers=auth(game["host_token"]),
                        json={"webhook_url": "https://[2606:4700:4700::1111]:8443/dos"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["webhook_secret"].startswith("whsec_")


def test_allow_private_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    def allowed() -> object:
        app = create_app({"SECRET_KEY": "x", "INSTANCE_PATH": str(tmp_path),
                          "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'db.sqlite3'}"})
        return app.config["WEBHOOK_ALLOW_PRIVATE"]

    monkeypatch.delenv("DOS_WEBHOOK_ALLOW_PRIVATE", raising=False)
    assert allowed() is False  # the production default
    monkeypatch.setenv("DOS_WEBHOOK_ALLOW_PRIVATE", "true")
    assert allowed() is True
    monkeypatch.setenv("DOS_WEBHOOK_ALLOW_PRIVATE", "False")
    assert allowed() is False


class FakeDns:
    """``socket.getaddrinfo`` that answers ``HOOK_NAME`` with ``self.address``; others are real."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.lookups = 0
        self.real = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != HOOK_NAME:
            return self.real(host, port, *args, **kwargs)
        self.lookups += 1
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "",
                 (self.address, int(port or 80)))]


def test_name_that_now_resolves_to_loopback_is_refused_at_delivery(
        make_app: Callable[..., Flask], receiver: Receiver,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dns = FakeDns(PUBLIC_IP)
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    app = _strict(make_app)
    client = app.test_client()
    port = receiver.url("/").split(":")[2].split("/")[0]
    url = f"http://{HOOK_NAME}:{port}/hook"  # the receiver, if the name led to loopback
    game = create(client, [{"name": "ann", "email": "ann@example.org", "webhook_url": url},
                           {"name": "bob"}])
    assert dns.lookups == 1  # checked when set: public then
    dns.address = "127.0.0.1"  # the DNS record changes after the check (rebinding)
    dns.lookups = 0
    player_tokens(client, game)
    run_worker(app, passes=5)

    assert receiver.all() == []
    hooks = rows(app, channel="webhook")
    assert hooks
    assert {r.status for r in hooks} == {"dead"}
    assert dns.lookups == len(hooks)  # one look-up per delivery, and that address is used
    for row in hooks:
        tried = attempts(app, row.id)
        assert len(tried) == 1  # permanent: not retried
        assert tried[0].ok is False
        assert f"{HOOK_NAME} resolves to 127.0.0.1" in str(tried[0].error)
        assert "loopback" in str(row.last_error)
    assert rows(app, event="undeliverable", channel="email")  # ann is told by email


def test_url_stored_before_the_rule_is_refused_at_delivery(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    lax = make_app()  # WEBHOOK_ALLOW_PRIVATE: the URL is accepted and stored
    game = create(lax.test_client(), [{"name": "ann", "webhook_url": receiver.url("/hook")},
                                      {"name": "bob"}])
    strict = _strict(make_app)  # the same database, the operator turned the rule on
    run_worker(strict, passes=3)
    assert receiver.all() == []
    hooks = rows(strict, channel="webhook", game_id=game["id"])
    assert hooks
    assert {r.status for r in hooks} == {"dead"}
    assert "127.0.0.1 is a loopback address" in str(hooks[0].last_error)


def test_pinned_connection_keeps_the_name_for_host(
        make_app: Callable[..., Flask], receiver: Receiver,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The checked address is the one connected to; the request still names the host."""
    dns = FakeDns("127.0.0.1")
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    monkeypatch.setattr(netguard, "forbidden_reason", lambda address: None)  # loopback "public"
    app = _strict(make_app)
    port = receiver.url("/").split(":")[2].split("/")[0]
    create(app.test_client(), [{"name": "ann", "webhook_url": f"http://{HOOK_NAME}:{port}/h"},
                               {"name": "bob"}])
    run_worker(app, passes=3)
    assert {r.status for r in rows(app, channel="webhook")} == {"sent"}
    received = receiver.at("/h")
    assert received
    assert received[0].headers["host"] == f"{HOOK_NAME}:{port}"
