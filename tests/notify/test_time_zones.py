"""Every time a person reads is in their time zone: the seat's zone and language are set by
joining and by the notification settings (an unknown zone is a 422 naming ``time_zone``), and
the your-turn email shows its deadline on the reader's local date, alike in both parts."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from flask import Flask
from notify_helpers import auth, run_worker

from dos_server import timefmt
from dos_server.delivery.mail import builders
from dos_server.delivery.mail.render import render
from dos_server.extensions import db
from dos_server.models import SeatRow
from dos_server.services import lobby, play
from testkit import SmtpSink

DORA, BOB = "dora@example.org", "bob@example.org"


def _waiting_game(app: Flask) -> tuple[str, str, dict[int, str]]:
    """A game of dora and bob, both joined by invite, waiting for the host to start."""
    client = app.test_client()
    answer = client.post("/api/games", json={
        "seats": [{"name": "dora", "email": DORA}, {"name": "bob", "email": BOB},
                  {}], "turn_time_limit": 3600})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    game = answer.get_json()
    tokens = {}
    for invite in game["invites"]:
        joined = client.post(f"/api/games/{game['id']}/join", json={"invite": invite["invite"]})
        assert joined.status_code == 200, joined.get_data(as_text=True)
        tokens[invite["seat"]] = joined.get_json()["player_token"]
    return game["id"], game["host_token"], tokens


def _stored(app: Flask, game_id: str) -> list[tuple[str | None, str | None]]:
    with app.app_context():
        found = db.session.execute(db.select(SeatRow.time_zone, SeatRow.language)
                                   .where(SeatRow.game_id == game_id)
                                   .order_by(SeatRow.index)).all()
        db.session.remove()
    return [(zone, language) for zone, language in found]


def test_settings_set_the_zone_and_language(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    game_id, _, tokens = _waiting_game(app)
    path = f"/api/games/{game_id}/seats/0/notifications"
    answer = client.put(path, json={"time_zone": "Asia/Vientiane", "language": "lo-LA"},
                        headers=auth(tokens[0]))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert (answer.get_json()["time_zone"], answer.get_json()["language"]) == (
        "Asia/Vientiane", "lo")
    read = client.put(path, json={}, headers=auth(tokens[0])).get_json()
    assert (read["time_zone"], read["language"]) == ("Asia/Vientiane", "lo")
    # An unknown language is English, no mistake.
    answer = client.put(path, json={"language": "tlh"}, headers=auth(tokens[0]))
    assert answer.status_code == 200
    assert answer.get_json()["language"] is None
    assert _stored(app, game_id)[0] == ("Asia/Vientiane", None)


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "asia/vientiane", "../etc/passwd",
                                  "x" * 300, 7, ["UTC"], "posix/UTC "])
def test_an_unknown_zone_is_422_naming_the_field(make_app: Callable[..., Flask],
                                                 zone: object) -> None:
    app = make_app()
    client = app.test_client()
    game_id, _, tokens = _waiting_game(app)
    before = _stored(app, game_id)
    answer = client.put(f"/api/games/{game_id}/seats/0/notifications",
                        json={"time_zone": zone, "language": "lo", "digest": True},
                        headers=auth(tokens[0]))
    assert answer.status_code == 422, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    assert "time_zone" in answer.get_json()["errors"]["json"]
    assert _stored(app, game_id) == before  # nothing changed: not the language either
    answer = app.test_client().post(f"/api/games/{game_id}/join",
                                    json={"code": "x", "name": "eve", "time_zone": zone})
    assert answer.status_code == 422
    assert "time_zone" in answer.get_json()["errors"]["json"]


def test_joining_fills_them_the_first_time(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    answer = client.post("/api/games", json={"seats": [{"name": "dora"}, {"name": "bob"}]})
    game = answer.get_json()
    invite = game["invites"][0]["invite"]
    body = {"invite": invite, "time_zone": "Asia/Vientiane", "language": "lo_LA.UTF-8"}
    assert client.post(f"/api/games/{game['id']}/join", json=body).status_code == 200
    assert _stored(app, game["id"]) == [("Asia/Vientiane", "lo"), (None, None)]


def test_local_time_names_the_zone_and_its_offset() -> None:
    when = datetime(2026, 12, 2, 18, 53, tzinfo=UTC)
    now = datetime(2026, 12, 1, 19, 53, tzinfo=UTC)
    assert timefmt.local_time(when, "Asia/Vientiane", now) == (
        "Thursday 3 December, 01:53 (Asia/Vientiane, UTC+7)")
    assert timefmt.local_time(when, None, now) == "Wednesday 2 December, 18:53 (UTC)"
    assert timefmt.local_time(when, "Asia/Kolkata", now).endswith("00:23 (Asia/Kolkata, UTC+5:30)")
    assert timefmt.local_time(when, "America/St_Johns", now).endswith("(America/St_Johns, UTC-3:30)")
    assert timefmt.local_time(when, "Asia/Vientiane", when + timedelta(days=40)) == (
        "Thursday 3 December 2026, 01:53 (Asia/Vientiane, UTC+7)")
    assert timefmt.relative(when, now) == "in 23 hours"
    assert timefmt.relative(now, when) == "23 hours ago"
    assert timefmt.relative(when, when - timedelta(minutes=5)) == "in 5 minutes"
    assert timefmt.relative(when, when - timedelta(days=3, hours=2)) == "in 3 days"
    assert timefmt.relative(when, when) == "in less than a minute"


def _ends_at(message: EmailMessage) -> tuple[str, str]:
    text = message.get_body(preferencelist=("plain",))
    markup = message.get_body(preferencelist=("html",))
    assert text is not None
    assert markup is not None
    found = [re.search(r"Your turn ends at (.+?)\.(?:</p>)?\s*$", str(part.get_content()), re.M)
             for part in (text, markup)]
    assert found[0] is not None
    assert found[1] is not None
    return found[0][1], found[1][1]


@pytest.mark.parametrize(("zone", "local"), [
    (None, r"\w+day (\d+) \w+, 18:30 \(UTC\), in \d+ (hours|days)"),
    ("Asia/Vientiane", r"\w+day (\d+) \w+, 01:30 \(Asia/Vientiane, UTC\+7\), in \d+ (hours|days)"),
])
def test_the_your_turn_deadline_is_on_the_readers_date(
        make_app: Callable[..., Flask], smtp: SmtpSink, monkeypatch: pytest.MonkeyPatch,
        zone: str | None, local: str) -> None:
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none")
    client = app.test_client()
    game_id, host, tokens = _waiting_game(app)
    for seat, token in tokens.items():
        answer = client.put(f"/api/games/{game_id}/seats/{seat}/notifications",
                            json={"time_zone": zone}, headers=auth(token))
        assert answer.status_code == 200, answer.get_data(as_text=True)
    # The turn starts at 17:30 UTC in two days: its hour ends at 18:30 UTC, 01:30 the next
    # day in Vientiane.
    today = datetime.now(UTC).replace(hour=17, minute=30, second=0, microsecond=0)
    start = today + timedelta(days=2)
    monkeypatch.setattr(play, "utcnow", lambda: start)
    monkeypatch.setattr(lobby, "utcnow", lambda: start)
    answer = client.post(f"/api/games/{game_id}/start", headers=auth(host))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    monkeypatch.undo()
    run_worker(app, passes=3)
    turns = [m for m in smtp.messages if m["X-DOS-Event"] == "your_turn"]
    assert len(turns) == 1
    plain, html = _ends_at(turns[0])
    assert plain == html  # the text and HTML parts agree
    matched = re.fullmatch(local, plain)
    assert matched is not None, plain
    deadline = start + timedelta(hours=1)
    local_day = deadline.astimezone(timefmt.zone(zone)).day
    assert int(matched[1]) == local_day
    assert (local_day != deadline.day) == (zone is not None)


@pytest.mark.parametrize("kind", ["your_turn", "reminder", "digest"])
@pytest.mark.parametrize("zone", [None, "Asia/Vientiane"])
def test_each_kind_with_a_deadline_shows_it_in_the_zone(make_app: Callable[..., Flask],
                                                        kind: str, zone: str | None) -> None:
    deadline = (datetime.now(UTC) + timedelta(days=3)).replace(hour=18, minute=30, second=0,
                                                                microsecond=0)
    shown = timefmt.local_time(deadline, zone)
    assert (deadline.astimezone(timefmt.zone(zone)).day != deadline.day) == (zone is not None)
    game = {"event": kind, "seat": 0, "game_id": "tzgame0001", "names": ["dora", "bob"],
            "name": "dora", "version": 3, "deadline": deadline.isoformat(), "time_zone": zone,
            "unsubscribe": "https://dos.example.org/api/unsubscribe/t", "data": {}}
    payload: dict[str, object] = game
    if kind == "digest":
        payload = {"event": "digest", "thread": "t", "unsubscribe": game["unsubscribe"],
                   "games": [{**game, "id": "tzgame0001", "line": "dos-client move ...",
                              "opponents": ["bob"]}]}
    app = make_app(PUBLIC_URL="https://dos.example.org")
    with app.app_context():
        letter = builders.KINDS[kind](payload, builders.Facts())
        rendered = render(kind, letter.context)
    assert f"{shown}, in " in rendered.text  # the local date and time, and how far off
    assert f"{shown}, in " in rendered.html  # the text and HTML parts agree
