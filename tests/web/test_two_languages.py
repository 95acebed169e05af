"""One game, two readers: Ann reads English in Oslo, Bjørn reads Lao in Vientiane. Each gets
their own words and times on the table page (whatever their browser asks for) and from
`dos-client` (in the language of its environment, over real HTTP); the move notation is the
same for both. (Their emails: tests/mail/test_email_languages.py.)"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from web_helpers import sign_in

from dos_client.cli import cli
from testkit import serving

LAO = re.compile("[\u0e80-\u0eff]")
READERS = {0: ("Ann", "en", "Europe/Oslo"), 1: ("Bjørn", "lo", "Asia/Vientiane")}


def _game(app: Flask) -> tuple[str, dict[int, str]]:
    client = app.test_client()
    created = client.post("/api/games", json={"seats": [{"name": "Ann"}, {"name": "Bjørn"}],
                                              "turn_time_limit": 20 * 3600})
    assert created.status_code == 201, created.get_data(as_text=True)
    game = created.get_json()
    tokens = {}
    for invite in game["invites"]:
        _name, language, zone = READERS[invite["seat"]]
        joined = client.post(f"/api/games/{game['id']}/join",
                             json={"invite": invite["invite"], "language": language,
                                   "time_zone": zone})
        assert joined.status_code == 200, joined.get_data(as_text=True)
        tokens[invite["seat"]] = joined.get_json()["player_token"]
    return str(game["id"]), tokens


def test_each_reader_has_their_own_language_and_times_on_the_table(app: Flask) -> None:
    game_id, _tokens = _game(app)
    for seat, (name, language, zone) in READERS.items():
        browser = app.test_client()
        sign_in(app, browser, game_id, seat)
        other = "en" if language == "lo" else "lo"
        page = browser.get(f"/games/{game_id}", headers={"Accept-Language": other})
        html = page.get_data(as_text=True)
        assert page.status_code == 200
        assert f'<html lang="{language}">' in html, name
        assert zone in html, f"{name}'s times are not in {zone}"
        if language == "lo":
            assert "ແຖວກາງ" in html  # Center Row
            assert "Center Row" not in html
        else:
            assert "Center Row" in html
            assert not LAO.search(html.replace("Bjørn", "")), "Lao on Ann's English table"


def test_each_player_reads_dos_client_in_their_own_language(
        app: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    game_id, tokens = _game(app)
    outputs: dict[int, str] = {}
    listings: dict[int, str] = {}
    with serving(app) as url:
        for seat, (name, language, zone) in READERS.items():
            env = {"DOS_CLIENT_CONFIG": str(tmp_path / f"{name}.json"), "NO_COLOR": "1",
                   "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "",
                   "LANG": "lo_LA.UTF-8" if language == "lo" else "en_GB.UTF-8"}
            runner = CliRunner()

            def run(*args: str, env: dict[str, str] = env, runner: CliRunner = runner) -> str:
                result = runner.invoke(cli, ["--server", url, *args], env=env)
                assert result.exit_code == 0, result.output
                return result.output

            monkeypatch.setenv("TZ", zone)  # the player's machine is in the player's zone
            time.tzset()
            run("token", "set", game_id, tokens[seat])
            outputs[seat] = run("show")
            listings[seat] = run("--json", "show")
    time.tzset()  # monkeypatch restores TZ after the test; the C library reads it again then
    lao, english = outputs[1], outputs[0].replace("Bjørn", "")
    assert "ແຖວກາງ" in lao, lao  # Center Row
    assert "Center Row" not in lao
    assert "Center Row" in english
    assert not LAO.search(english), english
    assert "UTC+7)" in lao, lao  # the deadline in Vientiane's time
    assert re.search(r"UTC\+[12]\)", english), english  # and in Oslo's (CET or CEST)
    for output in outputs.values():
        assert re.search(r"\[[RGBYW][0-9#]*\]", output), output  # cards as codes in both
    assert json.loads(listings[0]).keys() == json.loads(listings[1]).keys()
