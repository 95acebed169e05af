"""The lock-and-read of a write (``access.get_game(..., for_update=True)``): it runs on the
driver's cursor and makes the rows the session's objects itself, so they must be what
SQLAlchemy would have loaded, to the last column, and behave as loaded objects do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from server_helpers import started_game
from sqlalchemy import inspect, select

from dos_server.database import write_transaction
from dos_server.errors import GameNotFound
from dos_server.extensions import db
from dos_server.models import GameRow, SeatRow
from dos_server.services import access
from testkit import sent_statements

WHEN = datetime(2026, 12, 5, 21, 30, 15, 250000, tzinfo=UTC)


def _columns(instance: Any) -> dict[str, Any]:
    return {attr.key: getattr(instance, attr.key) for attr in inspect(instance).mapper.column_attrs}


def _varied_game(app: Flask) -> str:
    """A started game whose rows hold every kind of column value: JSON objects and lists,
    times with microseconds, true and false booleans, NULLs and text."""
    game_id, _, _ = started_game(app.test_client())
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        game.title = "Friday cards ♦"
        game.turn_deadline = WHEN
        game.reminders_sent = ["80%"]
        game.rated = True
        first, second = game.seats
        first.vacation_until = WHEN + timedelta(days=3)
        first.standing_orders = ["draw", "pass"]
        first.notify_events = {"email": ["your_turn"], "webhook": []}
        first.chat_hidden = [1]
        first.digest = True
        second.time_zone = "Asia/Vientiane"
        second.language = "lo"
        db.session.commit()
    return game_id


def _loaded_by_orm(app: Flask, game_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with app.app_context():
        game = access.get_game(game_id)  # the ORM's read, game and seats in one statement
        loaded = _columns(game), [_columns(seat) for seat in game.seats]
        db.session.remove()
    return loaded


def test_the_locked_rows_hold_what_the_orm_loads(app: Flask) -> None:
    game_id = _varied_game(app)
    game_columns, seat_columns = _loaded_by_orm(app, game_id)
    assert game_columns["turn_deadline"] == WHEN
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        with sent_statements() as sent:  # nothing is left to load: no attribute is expired
            assert _columns(game) == game_columns
            assert [_columns(seat) for seat in game.seats] == seat_columns
            assert all(seat.game is game for seat in game.seats)
        assert sent == []
        for instance in (game, *game.seats):
            state = inspect(instance)
            assert state.persistent
            assert not state.expired_attributes
            assert not state.modified
        assert not db.session.dirty
        assert not db.session.new


def test_changes_to_the_locked_rows_are_stored(app: Flask) -> None:
    game_id = _varied_game(app)
    game_columns, _ = _loaded_by_orm(app, game_id)
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        game.version += 1  # the mapper's version check compares with the version read
        game.title = "Saturday cards"
        game.seats[1].name = "zed"
        game.seats[0].standing_orders = None
    stored, seats = _loaded_by_orm(app, game_id)
    assert (stored["version"], stored["title"]) == (game_columns["version"] + 1,
                                                    "Saturday cards")
    assert [seat["name"] for seat in seats] == ["ann", "zed"]
    assert seats[0]["standing_orders"] is None


def test_a_session_holding_objects_locks_through_the_orm(app: Flask) -> None:
    """Objects the session holds are refreshed from the locked rows and its pending changes
    are flushed first, as with any query; the caller gets the instances it holds."""
    game_id = _varied_game(app)
    game_columns, _ = _loaded_by_orm(app, game_id)
    with app.test_request_context(), write_transaction():
        held = db.session.get(GameRow, game_id)
        assert held is not None
        seat = db.session.execute(select(SeatRow).where(SeatRow.game_id == game_id,
                                                        SeatRow.index == 1)).scalar_one()
        held.title = "Sunday cards"
        with sent_statements() as sent:
            game = access.get_game(game_id, for_update=True)
        assert game is held
        assert game.seats[1] is seat
        assert any(statement.lstrip().upper().startswith("UPDATE GAMES")
                   for statement, _ in sent)
        assert game.title == "Sunday cards"
        assert not db.session.dirty
    stored, _ = _loaded_by_orm(app, game_id)
    assert (stored["title"], stored["version"]) == ("Sunday cards", game_columns["version"])


def test_a_missing_game_is_not_found_and_leaves_the_session_empty(app: Flask) -> None:
    with app.test_request_context(), write_transaction():
        with pytest.raises(GameNotFound):
            access.get_game("nosuchgame", for_update=True)
        assert not db.session.identity_map
