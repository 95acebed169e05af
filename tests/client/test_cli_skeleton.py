"""The two helpers every command is built on: Settings.saved_game and Settings.emit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dos_client.config import Store
from dos_client.context import Settings
from dos_client.errors import ClientError


def _settings(as_json: bool = False, server: str | None = None) -> Settings:
    return Settings(server=server, profile="default", as_json=as_json, debug=False)


def _save(entries: dict[str, dict[str, object]], current: str | None = None) -> None:
    store = Store("default")
    store.section["server"] = "http://saved.example:5000"
    store.section["current"] = current
    store.games.update(entries)
    store.save()


def test_emit_prints_json_or_the_human_text(capsys: pytest.CaptureFixture[str]) -> None:
    _settings(as_json=True).emit({"b": 1, "a": [2]}, "never shown")
    assert json.loads(capsys.readouterr().out) == {"a": [2], "b": 1}
    _settings().emit({"a": 1}, "line one\nline two")
    assert capsys.readouterr().out == "line one\nline two\n"
    _settings().emit({"a": 1}, lambda: print("drawn"))
    assert capsys.readouterr().out == "drawn\n"
    _settings().emit({"a": 1})
    assert capsys.readouterr().out == ""


def test_a_human_printer_is_not_called_for_json(capsys: pytest.CaptureFixture[str]) -> None:
    def boom() -> None:
        raise AssertionError("called")

    _settings(as_json=True).emit([], boom)
    assert capsys.readouterr().out == "[]\n"


def test_saved_game_picks_by_name_prefix_id_or_current(config_file: Path) -> None:
    _save({"alpha": {"game_id": "g111", "server": None, "seat": 0, "token": "t-a",
                     "host_token": "h-a"},
           "beta": {"game_id": "g222", "server": "http://other.example", "seat": None,
                    "token": None, "host_token": None}}, current="beta")
    settings = _settings()
    assert settings.saved_game(None).name == "beta"
    assert settings.saved_game("al").name == "alpha"
    assert settings.saved_game("g111").game_id == "g111"
    alpha = settings.saved_game("alpha")
    assert alpha.server == "http://saved.example:5000"
    assert alpha.api.server == "http://saved.example:5000"
    assert alpha.api.session.headers["Authorization"] == "Bearer t-a"
    assert alpha.api is alpha.api  # one session per command
    assert alpha.seat() == 0
    assert alpha.host_api().session.headers["Authorization"] == "Bearer h-a"
    assert _settings(server="http://flag.example/").saved_game("alpha").server == \
        "http://flag.example"
    beta = settings.saved_game("beta")
    assert beta.server == "http://other.example"
    assert "Authorization" not in beta.api.session.headers
    with pytest.raises(ClientError, match="you hold no seat in this game"):
        beta.seat()
    with pytest.raises(ClientError, match="only the host can start a game early"):
        beta.host_api()
    with pytest.raises(ClientError, match="no saved game called 'zeta'; saved: alpha, beta"):
        settings.saved_game("zeta")


def test_saved_game_without_games(config_file: Path) -> None:
    with pytest.raises(ClientError, match="no saved games: create one"):
        _settings().saved_game(None)
