"""The game-over email of a rated game shows each rated player's rating change (its reader's
own first-person), over a real SMTP sink, on SQLite and, with TEST_DATABASE_URL,
PostgreSQL; a casual game's says nothing of ratings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from rating_kit import new_game, people, play_out, sign_in
from testkit import SmtpSink, app_factory, run_worker, smtp, text_of

__all__ = ["smtp"]


@pytest.fixture
def mail_app(db_url: str, tmp_path: Path, smtp: SmtpSink) -> Iterator[Flask]:
    with app_factory(db_url, INSTANCE_PATH=str(tmp_path / "instance"), SMTP_HOST="127.0.0.1",
                     SMTP_PORT=smtp.port, SMTP_SECURITY="none") as make:
        yield make()


def _game_over(smtp: SmtpSink, address: str) -> tuple[str, str]:
    [over] = [m for m in smtp.to(address) if m["X-DOS-Event"] == "game_over"]
    markup = over.get_body(preferencelist=("html",))
    assert markup is not None
    return text_of(over).replace("\r\n", "\n"), str(markup.get_content())


def test_the_game_over_email_shows_each_rating_change(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    for name in ("ann", "bob"):
        sign_in(client, mail_app, f"{name}@example.org")
    seats = [*people("ann", "bob"), {"name": "cid", "email": "cid@example.org"}]
    game_id, tokens = new_game(client, seats)  # cid never signed in: not rated
    body = play_out(client, game_id, tokens)
    run_worker(mail_app, passes=5)
    shown = {seat["seat"]: seat["rating"] for seat in body["seats"]}
    assert shown[2] is None

    def line(seat: int) -> str:
        change = shown[seat]
        assert change is not None
        return f"{change['before']} → {change['after']} ({change['change']:+.1f})"

    text, markup = _game_over(smtp, "ann@example.org")
    assert "Ratings after this game:" in text
    assert f"- your rating: {line(0)}\n" in text
    assert f"- bob: {line(1)}\n" in text
    assert "cid:" not in text
    assert f"your rating: {line(0)}</li>" in markup
    text, _ = _game_over(smtp, "bob@example.org")
    assert f"- ann: {line(0)}\n" in text
    assert f"- your rating: {line(1)}\n" in text
    text, _ = _game_over(smtp, "cid@example.org")  # not rated, but told how the others moved
    assert f"- ann: {line(0)}\n" in text


def test_a_casual_game_over_email_says_nothing_of_ratings(mail_app: Flask,
                                                          smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    for name in ("ann", "bob"):
        sign_in(client, mail_app, f"{name}@example.org")
    game_id, tokens = new_game(client, people("ann", "bob"), rated=False)
    play_out(client, game_id, tokens)
    run_worker(mail_app, passes=5)
    text, markup = _game_over(smtp, "ann@example.org")
    assert "The game is over" in text
    assert "rating" not in text.lower()
    assert "rating" not in markup.lower()
