"""How a turn writes the game row: its own UPDATE (``play.write_game``) and nothing more at
commit. The row is then marked stored (``database.mark_stored``), so the commit's flush passes
it by; a change of the row that the UPDATE does not write is still flushed and stored."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask
from server_helpers import started_game, stored_state, stored_version
from sqlalchemy import event

from dos_server.database import write_transaction
from dos_server.extensions import db
from dos_server.models import GameRow
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
        assert any(statement.lstrip().upper().startswith("UPDATE GAMES") for statement, _ in sent)
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
