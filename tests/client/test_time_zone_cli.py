"""dos-client sends the system's time zone and language when it joins, and `notify
--timezone ZONE --language LANG` changes them; an unknown zone is refused naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import Table, as_json, ok, run

from dos_client import system


def test_the_system_zone_and_language(tmp_path: Path) -> None:
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/Asia/Vientiane")
    assert system.time_zone({}, link) == "Asia/Vientiane"
    assert system.time_zone({"TZ": ":Europe/Paris"}, link) == "Europe/Paris"
    assert system.time_zone({"TZ": "EST5EDT,M3.2.0,M11.1.0"}, link) is None
    assert system.time_zone({}, tmp_path / "missing") is None
    plain = tmp_path / "copied"
    plain.write_bytes(b"TZif")
    assert system.time_zone({}, plain) is None  # a copied file names no zone
    assert system.language({"LANG": "lo_LA.UTF-8"}) == "lo"
    assert system.language({"LC_ALL": "fr_FR.UTF-8", "LANG": "lo_LA.UTF-8"}) == "en"
    assert system.language({"LC_ALL": "lo", "LANG": "en_GB.UTF-8"}) == "lo"
    assert system.language({}) == "en"


def test_join_sends_them_and_notify_changes_them(server_url: str, config_file: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Vientiane")
    monkeypatch.setenv("LANG", "lo_LA.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.delenv("LANGUAGE", raising=False)
    Table(server_url, config_file)  # Ann joins with `new --me`, Bob with `join`
    assert as_json("notify")["time_zone"] == "Asia/Vientiane"
    shown = as_json("--profile", "bob", "notify")
    assert (shown["time_zone"], shown["language"]) == ("Asia/Vientiane", "lo")
    assert "ເວລາໃນ Asia/Vientiane, ພາສາ lo." in ok("--profile", "bob", "notify").stdout
    changed = as_json("--profile", "bob", "notify", "--timezone", "Europe/Paris",
                      "--language", "en")
    assert (changed["time_zone"], changed["language"]) == ("Europe/Paris", "en")
    refused = run("--profile", "bob", "notify", "--timezone", "Mars/Olympus_Mons")
    assert refused.exit_code != 0
    assert "time_zone" in refused.output
    assert as_json("--profile", "bob", "notify")["time_zone"] == "Europe/Paris"
    assert as_json("--profile", "bob", "notify", "--timezone", "")["time_zone"] is None
