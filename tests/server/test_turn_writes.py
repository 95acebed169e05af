"""How a turn writes the game row: its own UPDATE (``play.write_game``) and nothing more at
commit. The row is then marked stored (``database.mark_stored``), so the commit's flush passes
it by; a change of the row that the UPDATE does not write is still flushed and stored. On
PostgreSQL the turn's history rows go in with that UPDATE, in one statement."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from server_helpers import started_game, stored_state, stored_version
from sqlalchemy import event, select, text
from sqlalchemy.exc import DBAPIError

from dos_server.database import write_transaction
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow
from dos_server.services import access, play
from testkit import sent_statements


@contextmanager
def flushes() -> Iterator[list[int]]:
    """The session's flushes meanwhile that found something to walk (a clean session's flush
    returns before its ``before_flush`` event)."""
    walked: list[int] = []

    def seen(session: Any, *_: Any) -> None:
        walked.append(len(session.dirty))

    event.listen(db.session, "before_flush", seen)
    try:
        yield walked
    finally:
        event.remove(db.session, "before_flush", seen)


def _game_updates(sent: list[tuple[str, Any]]) -> list[str]:
    flat = [" ".join(statement.upper().split()) for statement, _ in sent]
    return [statement for statement in flat if "UPDATE GAMES SET" in statement]


def _play_first_action(game: GameRow) -> None:
    state = play.engine_state(game)
    play.apply_turn(game, state.current, game.version, None, number=1)


def test_a_turn_leaves_nothing_for_the_commit_to_flush(app: Flask) -> None:
    game_id, _, _ = started_game(app.test_client())
    version = stored_version(app, game_id)
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        with sent_statements() as sent, flushes() as walked:
            _play_first_action(game)
            db.session.flush()
        assert len(_game_updates(sent)) == 1
        assert walked == []
        assert game not in db.session.dirty
        written = game.version, game.next_seq, game.state
    assert stored_version(app, game_id) == version + 1 == written[0]
    assert stored_state(app, game_id).to_dict() == written[2]
    with app.app_context():
        stored = db.session.get(GameRow, game_id)
        assert stored is not None
        assert stored.next_seq == written[1]


def test_a_change_the_move_update_does_not_write_is_still_stored(app: Flask) -> None:
    game_id, _, _ = started_game(app.test_client())
    version = stored_version(app, game_id)
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        game.version += 1
        game.title = "Friday cards"
        play.write_game(game)
        assert game in db.session.dirty
    with app.app_context():
        stored = db.session.get(GameRow, game_id)
        assert stored is not None
        assert (stored.title, stored.version) == ("Friday cards", version + 1)


def test_a_change_after_the_turn_is_stored(app: Flask) -> None:
    game_id, _, _ = started_game(app.test_client())
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        _play_first_action(game)
        game.title = "Friday cards"
        assert game in db.session.dirty
    with app.app_context():
        stored = db.session.get(GameRow, game_id)
        assert stored is not None
        assert stored.title == "Friday cards"


def test_a_turn_writes_its_history_with_the_game_on_postgresql(app: Flask, backend: str) -> None:
    game_id, _, _ = started_game(app.test_client())
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        with sent_statements() as sent:
            _play_first_action(game)
        written = (game.version, game.next_seq)
    inserts = [statement for statement, _ in sent if "INSERT INTO game_events" in statement]
    [update] = _game_updates(sent)
    if backend == "postgresql":
        assert inserts == [] or all("UPDATE games" in statement for statement in inserts)
        assert update.startswith("WITH HISTORY AS (INSERT INTO GAME_EVENTS")
    else:
        assert len(inserts) == 1
    with app.app_context():
        stored = db.session.execute(select(EventRow).where(EventRow.game_id == game_id)
                                    .order_by(EventRow.seq)).scalars().all()
    assert [row.seq for row in stored] == list(range(1, written[1]))
    moved = [row for row in stored if row.version == written[0]]
    assert moved
    assert moved[0].kind == "action"
    assert set(moved[0].data) == {"action"}


@pytest.mark.parametrize("count", [0, 1, 40, 300])
def test_history_rows_of_any_number_are_stored_with_the_game(app: Flask, count: int) -> None:
    game_id, _, _ = started_game(app.test_client())
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        first = game.next_seq
        game.version += 1
        rows = [play.append_event(game, i % 2 or None, "noted", {"n": i},
                                  {"hidden": i} if i % 3 == 0 else None) for i in range(count)]
        play.write_game(game, rows)
        version = game.version
    with app.app_context():
        stored = db.session.execute(select(EventRow).where(EventRow.game_id == game_id,
                                                           EventRow.seq >= first)
                                    .order_by(EventRow.seq)).scalars().all()
        assert db.session.get(GameRow, game_id).next_seq == first + count  # type: ignore[union-attr]
        # Both ways of writing store a missing secret alike (as the ORM's INSERT does).
        sql_nulls = db.session.execute(text(
            "SELECT secret IS NULL FROM game_events WHERE game_id = :id AND seq >= :first "
            "ORDER BY seq"), {"id": game_id, "first": first}).scalars().all()
    assert [(row.seq, row.version, row.seat, row.kind, row.data, row.secret) for row in stored] \
        == [(first + i, version, i % 2 or None, "noted", {"n": i},
             {"hidden": i} if i % 3 == 0 else None) for i in range(count)]
    assert stored_version(app, game_id) == version
    assert sql_nulls == [False] * count  # JSON null: SQLAlchemy's JSON type writes None so


def test_history_values_are_stored_as_they_were_made(app: Flask) -> None:
    game_id, _, _ = started_game(app.test_client())
    data = {"text": "ສະບາຍດີ \"quoted\" \\ \u2028", "big": 2**70, "nested": {"1": [None, 1.5]}}
    with app.test_request_context(), write_transaction():
        game = access.get_game(game_id, for_update=True)
        game.version += 1
        made = play.append_event(game, 0, "noted", data, {"hand": ["R5"]})
        play.write_game(game, [made])
    with app.app_context():
        stored = db.session.execute(select(EventRow).where(EventRow.game_id == game_id,
                                                           EventRow.seq == made.seq)).scalar_one()
    assert (stored.data, stored.secret, stored.created_at) == (data, {"hand": ["R5"]},
                                                                made.created_at)


def _write_two_rows(game_id: str, fault: str) -> None:
    with write_transaction():
        game = access.get_game(game_id, for_update=True)
        game.version += 1
        rows = [play.append_event(game, 0, "noted", {}), play.append_event(game, 0, "noted", {})]
        if fault == "seq taken":
            rows[1].seq = rows[0].seq
        else:  # never cut to the column's 32 characters
            rows[1].kind = "x" * 33
        play.write_game(game, rows)


@pytest.mark.parametrize("fault", ["seq taken", "kind too long"])
def test_a_history_row_the_database_refuses_stores_nothing_of_the_turn(
        app: Flask, backend: str, fault: str) -> None:
    if fault == "kind too long" and backend == "sqlite":
        fault = "seq taken"  # SQLite does not enforce a VARCHAR's length
    game_id, _, _ = started_game(app.test_client())
    version = stored_version(app, game_id)
    with app.test_request_context(), pytest.raises(DBAPIError):
        _write_two_rows(game_id, fault)
    assert stored_version(app, game_id) == version
    with app.app_context():
        noted = db.session.execute(select(EventRow.kind).where(EventRow.game_id == game_id,
                                                               EventRow.kind != "action")).all()
    assert all(kind != "noted" and len(kind) <= 32 for (kind,) in noted)
