"""`remind 50% 1h` / `remind off` by email: the seat's reminders, answered in the thread."""

from __future__ import annotations

from mailtest_helpers import ANN, MailWorld, latest, new_game, reply_to, text_of, write_reply

from dos_server.extensions import db
from dos_server.models import SeatRow


def _reminders(world: MailWorld, game_id: str) -> list[str] | None:
    with world.app.app_context():
        chosen = db.session.execute(db.select(SeatRow.reminders).where(
            SeatRow.game_id == game_id, SeatRow.index == 0)).scalar_one()
        db.session.remove()
    return chosen


def _say(world: MailWorld, command: str) -> str:
    email_in = latest(world, ANN)
    world.send(write_reply("outlook", email_in, command, ANN), ANN, reply_to(email_in))
    world.run_worker()
    return text_of(world.sink.to(ANN)[-1])


def test_remind_by_email(world: MailWorld) -> None:
    game_id = new_game(world, target_score=1)
    version = world.game(game_id)[0]
    assert "Your reminders in this game: 50%, 1h." in _say(world, "remind 1h 50%")
    assert _reminders(world, game_id) == ["50%", "1h"]
    assert "Your reminders in this game: 50%, 1h." in _say(world, "Remind")  # tells them
    answer = _say(world, "remind soon")
    assert "each reminder is a share of the turn's time" in answer
    assert "Nothing was changed." in answer
    assert _reminders(world, game_id) == ["50%", "1h"]
    assert "You get no reminders in this game." in _say(world, "remind off")
    assert _reminders(world, game_id) == []
    assert "remind 50% 1h" in _say(world, "help")
    assert world.game(game_id)[0] == version  # no move, no new version
