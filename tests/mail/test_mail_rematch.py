"""Rematch by email, on both backends: the game-over email carries the accept link and says to
reply ``rematch``; a reply ``rematch`` makes the challenge (or accepts it) and answers with the
new game's links; the link opens a page whose one button accepts; the rematch's emails say
the series' score."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import urlsplit

from mailtest_helpers import ANN, BJORN, SEATS, MailWorld, emails, reply_to, text_of, write_reply

from dos_server.extensions import db
from dos_server.models import GameRow
from testkit import finish_game

LINK = re.compile(r"Play again: (\S+)")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _finish(world: MailWorld, game_id: str, winner: int) -> None:
    """End the game as a winning move would, and send its game-over emails."""
    finish_game(world.app, game_id, winner, emails=True)
    world.run_worker()


def _rematch_of(world: MailWorld, game_id: str) -> GameRow:
    with world.app.app_context():
        old = db.session.get(GameRow, game_id)
        assert old is not None
        assert old.rematch_id is not None
        new = db.session.get(GameRow, old.rematch_id)
        assert new is not None
        _ = [seat.claimed for seat in new.seats]  # loaded before the session goes
        db.session.expunge_all()
        db.session.remove()
    return new


def _reply(world: MailWorld, address: str, message: object, command: str) -> str:
    world.send(write_reply("plain", message, command, address), address,
               reply_to(message))  # type: ignore[arg-type]
    world.run_worker()
    return text_of(world.sink.to(address)[-1])


def test_reply_rematch_then_accept_from_the_link(world: MailWorld) -> None:
    game_id = world.create(SEATS)
    world.run_worker()
    _finish(world, game_id, 1)
    (ann_over,) = emails(world, ANN, "game_over")
    (bjorn_over,) = emails(world, BJORN, "game_over")
    text = text_of(ann_over)
    assert "reply to this email with the word rematch" in text
    link = LINK.search(text)
    assert link is not None
    assert f"/games/{game_id}/rematch?token=" in link.group(1)

    answer = _reply(world, ANN, ann_over, "rematch")
    assert world.inbound()[-1] == ("processed", "rematch")
    new = _rematch_of(world, game_id)
    assert f"You are in the rematch {new.id}" in answer
    assert f"/games/{new.id}?token=" in answer  # the new game's table, signed in
    assert (f"The rematch {new.id} is waiting: accepted by Ann, greedy-bot-2; "
            "not yet: Bjørn Ødegård."
            in answer)
    assert new.status == "waiting"
    assert [s.claimed for s in new.seats] == [True, False, True]  # Ann, and the bot
    again = _reply(world, ANN, ann_over, "rematch")  # twice: nothing more
    assert f"You are in the rematch {new.id}" in again
    assert _rematch_of(world, game_id).id == new.id

    # Bjørn follows his game-over email's link: a page with one button, which accepts
    browser = world.app.test_client()
    url = LINK.search(text_of(bjorn_over))
    assert url is not None
    parts = urlsplit(unescape(url.group(1)))
    opened = browser.get(f"{parts.path}?{parts.query}")
    assert opened.status_code == 303  # the token leaves the address bar
    page = browser.get(opened.headers["Location"])
    html = page.get_data(as_text=True)
    assert "Accept rematch" in html
    assert "Accepted: Ann" in html
    assert _rematch_of(world, game_id).status == "waiting"  # opening the link did nothing
    csrf = CSRF.search(html)
    assert csrf is not None
    pressed = browser.post(f"/games/{game_id}/rematch", data={"csrf": csrf.group(1)})
    assert pressed.status_code == 303
    assert pressed.headers["Location"].endswith(f"/games/{new.id}")
    assert _rematch_of(world, game_id).status == "active"
    world.run_worker()
    turn_emails = [m for address in (ANN, BJORN) for m in emails(world, address, "your_turn")
                   if new.id in str(m["Subject"])]
    assert turn_emails  # the bot plays at once when it is first: then a person's turn comes
    assert ("Game 2 of the series, wins so far: Ann 0, Bjørn Ødegård 1, greedy-bot-2 0"
            in text_of(turn_emails[-1]))
    with world.app.app_context():
        from dos_server.services import series
        line = series.score_line(series.series_body(new.series_id, new.series_no,
                                                    [s.name for s in new.seats]))
        db.session.remove()
    assert line == "Game 2 of the series, wins so far: Ann 0, Bjørn Ødegård 1, greedy-bot-2 0"


def test_the_series_line_in_the_rematch_game_over_email(world: MailWorld) -> None:
    game_id = world.create(SEATS)
    world.run_worker()
    _finish(world, game_id, 0)
    for address in (ANN, BJORN):
        _reply(world, address, emails(world, address, "game_over")[-1], "rematch")
    new = _rematch_of(world, game_id)
    assert new.status == "active"
    _finish(world, new.id, 0)
    over = [m for m in emails(world, BJORN, "game_over") if new.id in str(m["Subject"])]
    assert len(over) == 1
    assert "Game 2 of the series, wins so far: Ann 2, Bjørn Ødegård 0" in text_of(over[0])


def test_rematch_before_the_end_changes_nothing(world: MailWorld) -> None:
    world.create(SEATS)
    world.run_worker()
    message = [m for m in world.sink.to(ANN) if m["Reply-To"]][-1]
    answer = _reply(world, ANN, message, "rematch")
    assert "a rematch can start once the game is over" in answer
    assert world.inbound()[-1] == ("rejected", "game-not-finished")
    with world.app.app_context():
        assert db.session.query(GameRow).count() == 1
        db.session.remove()
