"""``dos-client login`` from two devices (two config files) against a real server over HTTP,
codes through a real SMTP sink and the worker; on SQLite and, with TEST_DATABASE_URL,
PostgreSQL."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import requests
from click.testing import CliRunner, Result
from flask import Flask
from identity_helpers import code_for, join_all

from dos_client.cli import cli
from testkit import SmtpSink, serving

ANN, BOB = "ann@example.org", "bob@example.org"


@pytest.fixture
def server_url(mail_app: Flask) -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    with serving(mail_app) as url:
        yield url


class Device:
    """One machine: its own config file."""

    def __init__(self, path: Path, url: str) -> None:
        self.env = {"DOS_CLIENT_CONFIG": str(path), "NO_COLOR": "1", "DOS_SERVER": None,
                    "DOS_PROFILE": None, "DOS_JSON": None, "DOS_DEBUG": None}
        self.path = path
        self.ok("server", url)

    def run(self, *args: str) -> Result:
        result = CliRunner().invoke(cli, list(args), env=self.env)
        assert "Traceback" not in result.output, result.output
        if result.exit_code != 0:
            assert isinstance(result.exception, SystemExit), repr(result.exception)
        return result

    def ok(self, *args: str) -> Result:
        result = self.run(*args)
        assert result.exit_code == 0, (args, result.output)
        return result

    def js(self, *args: str) -> Any:
        return json.loads(self.ok("--json", *args).stdout)

    def saved(self) -> dict[str, Any]:
        return dict(json.loads(self.path.read_text()))


def _game(url: str, seats: list[dict[str, Any]]) -> dict[str, Any]:
    answer = requests.post(f"{url}/api/games", json={"seats": seats}, timeout=30)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_two_devices_one_identity(mail_app: Flask, smtp: SmtpSink, server_url: str,
                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    laptop = Device(tmp_path / "laptop" / "config.json", server_url)
    phone = Device(tmp_path / "phone" / "config.json", server_url)
    # Game one: Ann joins on the laptop with the invite; Bob by the API.
    first = _game(server_url, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    ann_invite = next(i for i in first["invites"] if i["seat"] == 0)["invite"]
    laptop.ok("join", f"{first['id']}:{ann_invite}", "--as", "friday")
    requests.post(f"{server_url}/api/games/{first['id']}/join", timeout=30,
                  json={"invite": first["invites"][1]["invite"]}).raise_for_status()
    # Game two: Ann joined elsewhere (the web, an old machine): no device has its token.
    second = _game(server_url, [{"name": "bob", "email": BOB}, {"name": "ann", "email": ANN}])
    join_all(mail_app.test_client(), second)

    # Not signed in: per-game tokens work, the phone knows nothing.
    assert [r["id"] for r in laptop.js("games")] == [first["id"]]
    assert phone.js("games") == []
    assert phone.js("whoami")["email"] is None

    # The phone signs in: the code is asked for at the prompt (read from the real email).
    monkeypatch.setattr(click, "prompt", lambda *a, **k: code_for(mail_app, smtp, ANN))
    signed = phone.ok("login", ANN)
    assert f"Signed in as {ANN}" in signed.stdout
    assert "on its way" in signed.stderr
    assert phone.js("whoami")["email"] == ANN
    listed = phone.js("games")
    assert {r["id"] for r in listed} == {first["id"], second["id"]}
    assert all("error" not in r for r in listed)
    # Any of them is played by its id: the phone holds ann's seat tokens now.
    body = phone.js("show", second["id"])
    assert body["you"] == 1
    assert body["view"]["hand"] is not None
    _play_if_my_turn(phone, first["id"])
    assert phone.js("whoami")["email"] == ANN

    # The laptop signs in with --code: its saved game merges with the account's games.
    laptop.ok("login", ANN, "--send-only")
    laptop.ok("login", ANN, "--code", code_for(mail_app, smtp, ANN))
    merged = laptop.js("games")
    assert sorted(r["id"] for r in merged) == sorted([first["id"], second["id"]])
    assert "friday" in [r["game"] for r in merged]  # the local name is kept

    # Logging out forgets and revokes the account token; the game tokens keep working.
    account_token = phone.saved()["profiles"]["default"]["account"]["token"]
    assert phone.js("logout")["signed_out"] is True
    assert requests.get(f"{server_url}/api/me/games", timeout=30,
                        headers={"Authorization": f"Bearer {account_token}"}).status_code == 401
    assert "account" not in phone.saved()["profiles"]["default"]
    assert phone.js("whoami")["email"] is None
    assert phone.js("show", second["id"])["you"] == 1
    # Signing out everywhere from the phone's next login ends the laptop's session too.
    phone.ok("login", ANN)
    phone.ok("logout", "--everywhere")
    warned = laptop.run("games")
    assert warned.exit_code == 0
    assert "not listed" in warned.stderr
    assert laptop.run("whoami").exit_code == 5  # its saved session was revoked
    # Wrong code: refused with the auth exit code.
    laptop.ok("login", ANN, "--send-only")
    assert laptop.run("login", ANN, "--code", "00000000").exit_code == 5


def _play_if_my_turn(device: Device, game_id: str) -> None:
    listing = device.js("moves", game_id)
    if listing["your_turn"]:
        result = device.js("move", game_id, "1")
        assert result["version"] == listing["version"] + 1


def test_the_first_sign_in_gives_the_account_this_machines_zone_and_language(
        mail_app: Flask, smtp: SmtpSink, server_url: str, tmp_path: Path) -> None:
    laos = Device(tmp_path / "laos" / "config.json", server_url)
    laos.env.update({"TZ": "Asia/Vientiane", "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "",
                     "LANG": "lo_LA.UTF-8"})
    laos.ok("login", ANN, "--send-only")
    laos.ok("login", ANN, "--code", code_for(mail_app, smtp, ANN))
    me = laos.js("whoami")
    assert (me["time_zone"], me["language"]) == ("Asia/Vientiane", "lo")
    # Another machine in another zone and language: what the account has stays.
    oslo = Device(tmp_path / "oslo" / "config.json", server_url)
    oslo.env.update({"TZ": "Europe/Oslo", "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "",
                     "LANG": "en_GB.UTF-8"})
    oslo.ok("login", ANN, "--send-only")
    oslo.ok("login", ANN, "--code", code_for(mail_app, smtp, ANN))
    me = oslo.js("whoami")
    assert (me["time_zone"], me["language"]) == ("Asia/Vientiane", "lo")
