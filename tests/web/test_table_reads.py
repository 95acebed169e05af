"""The table page decodes the game's state once and reads its history once per view (the
page is what a player reloads all day). SQLite and, with TEST_DATABASE_URL, PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import event
from web_helpers import api_game, csrf_of, join_api, sign_in

from dos_engine import Game
from dos_server.extensions import db


@contextmanager
def _counted(app: Flask, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    counts = {"decoded": 0, "history": 0}
    decode = Game.from_dict.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Game], data: dict[str, Any]) -> Game:
        counts["decoded"] += 1
        return decode(cls, data)  # type: ignore[no-any-return]

    def statement(_conn: Any, _cursor: Any, sql: str, *_: Any) -> None:
        if "game_events" in sql and sql.lstrip().upper().startswith("SELECT"):
            counts["history"] += 1

    monkeypatch.setattr(Game, "from_dict", classmethod(counting))
    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", statement)
    try:
        yield counts
    finally:
        event.remove(engine, "before_cursor_execute", statement)


def test_the_table_decodes_once_and_reads_the_history_once(
        app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}])
    for invite in created["invites"]:
        join_api(api, created["id"], invite["invite"])
    browsers = [app.test_client(), app.test_client()]
    for seat, browser in enumerate(browsers):
        sign_in(app, browser, created["id"], seat)
    game_id = created["id"]
    for browser in browsers:
        browser.get(f"/games/{game_id}")  # each seat has looked once
    current = api.get(f"/api/games/{game_id}").get_json()["view"]["current"]
    page = browsers[current].get(f"/games/{game_id}")
    version = api.get(f"/api/games/{game_id}").get_json()["version"]
    moved = browsers[current].post(f"/games/{game_id}/move", data={
        "csrf": csrf_of(page), "version": str(version), "number": "1", "page": "p"})
    assert moved.status_code == 303, moved.get_data(as_text=True)
    other = browsers[1 - current]
    with _counted(app, monkeypatch) as counts:
        shown = other.get(f"/games/{game_id}")  # with what changed since the last look
    assert shown.status_code == 200
    assert 'id="hand"' in shown.get_data(as_text=True)
    assert counts == {"decoded": 1, "history": 1}
