"""Table talk through the API (``/api/games/<id>/messages`` and ``/chat``), on both backends:
plain text of 1-500 characters, a per-seat rate limit, the host's mute, each player's own
hidden seats, spectators who read (and write only when the host allows), paging and the
long-poll, the ``game.message`` webhook, the email per message at most once an hour, and the
your-turn email that shows what was said since the seat last looked (over real SMTP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, joined_game
from test_push import NO_POLL, Waiter, listening, parked

from dos_server.extensions import db
from dos_server.models import MessageRow, NotificationRow, SeatRow
from testkit import Receiver, SmtpSink, run_worker, smtp, text_of, verify

__all__ = ["smtp"]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


def _game(client: FlaskClient, people: int = 2, **extra: Any) -> tuple[str, dict[int, str]]:
    return joined_game(client, ["ann", "bob", "cid"][:people], turn_time_limit=86400, **extra)


def _host_game(client: FlaskClient, **extra: Any) -> tuple[str, str, dict[int, str]]:
    created = client.post("/api/games", json={
        "seats": [{"name": "ann", "email": "ann@example.org"},
                  {"name": "bob", "email": "bob@example.org"}], **extra})
    assert created.status_code == 201, created.get_data(as_text=True)
    game = created.get_json()
    tokens = {}
    for invite in game["invites"]:
        joined = client.post(f"/api/games/{game['id']}/join", json={"invite": invite["invite"]})
        tokens[joined.get_json()["seat"]] = joined.get_json()["player_token"]
    return game["id"], game["host_token"], tokens


def say(client: FlaskClient, game_id: str, token: str | None, text: Any) -> Any:
    return client.post(f"/api/games/{game_id}/messages", json={"text": text},
                       headers=auth(token))


def said(client: FlaskClient, game_id: str, token: str | None, text: str) -> dict[str, Any]:
    answer = say(client, game_id, token, text)
    assert answer.status_code == 201, answer.get_data(as_text=True)
    return dict(answer.get_json())


def messages(client: FlaskClient, game_id: str, token: str | None,
             query: str = "") -> dict[str, Any]:
    answer = client.get(f"/api/games/{game_id}/messages?{query}", headers=auth(token))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


def texts(body: dict[str, Any]) -> list[str]:
    return [m["text"] for m in body["messages"]]


def _stored(app: Flask, game_id: str) -> list[str]:
    with app.app_context():
        found = list(db.session.execute(sa.select(MessageRow.body).where(
            MessageRow.game_id == game_id).order_by(MessageRow.id)).scalars())
        db.session.remove()
    return found


def _rows(app: Flask, game_id: str, event: str) -> list[NotificationRow]:
    with app.app_context():
        found = list(db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.event == event)
            .order_by(NotificationRow.id)).scalars())
        db.session.expunge_all()
        db.session.remove()
    return found


def _current(client: FlaskClient, game_id: str, token: str) -> dict[str, Any]:
    return dict(client.get(f"/api/games/{game_id}", headers=auth(token)).get_json())


def test_a_message_is_stored_read_by_everyone_and_changes_no_version(
        app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    before = client.get(f"/api/games/{game_id}", headers=auth(tokens[0]))
    version = before.get_json()["version"]
    sent = said(client, game_id, tokens[0], "  good luck,\r\nall of you  ")
    assert sent["text"] == "good luck,\nall of you"
    assert sent["seat"] == 0
    assert sent["name"] == "ann"
    assert sent["author"] == "seat"
    datetime.fromisoformat(sent["created_at"])
    # Seats, the host-less spectator: everyone who can read the game reads its chat.
    for token in (tokens[0], tokens[1], None):
        body = messages(client, game_id, token)
        assert texts(body) == ["good luck,\nall of you"]
        assert body["last"] == sent["id"] == body["next_after"]
    # No version moved: a move chosen before the message still plays, the ETag still holds.
    assert _current(client, game_id, tokens[0])["version"] == version
    again = client.get(f"/api/games/{game_id}", headers={
        **auth(tokens[0]), "If-None-Match": before.headers["ETag"]})
    assert again.status_code == 304


def test_a_retried_message_with_its_idempotency_key_is_said_once(app: Flask,
                                                                   client: FlaskClient) -> None:
    """A client that lost the answer (a dropped connection) asks again with the same key: the
    first answer comes back and nothing is said twice; the key with another text is refused;
    the host's key and a seat's are apart, and so are a message's and a move's."""
    game_id, host_token, tokens = _host_game(client)

    def post(token: str, text: str, key: str) -> Any:
        return client.post(f"/api/games/{game_id}/messages", json={"text": text},
                           headers={**auth(token), "Idempotency-Key": key})

    first = post(tokens[0], "gg", "k-1")
    assert first.status_code == 201, first.get_data(as_text=True)
    again = post(tokens[0], "gg", "k-1")
    assert again.status_code == 201
    assert again.get_json() == first.get_json()
    assert _stored(app, game_id) == ["gg"]
    other = post(tokens[0], "well played", "k-1")
    problem = assert_problem(other, 422)
    assert "Idempotency-Key" in problem["detail"]
    assert _stored(app, game_id) == ["gg"]
    assert post(host_token, "gg", "k-1").status_code == 201  # the host's key is its own
    assert post(tokens[1], "gg", "k-1").status_code == 201  # and so is another seat's
    assert _stored(app, game_id) == ["gg", "gg", "gg"]
    long_key = "x" * 128  # the longest key there is
    assert post(tokens[0], "one more", long_key).status_code == 201
    assert post(tokens[0], "one more", long_key).get_json()["text"] == "one more"
    assert _stored(app, game_id) == ["gg", "gg", "gg", "one more"]


def test_paging_after_before_and_limit(client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    ids = [said(client, game_id, tokens[n % 2], f"line {n}")["id"] for n in range(7)]
    first = messages(client, game_id, None, "limit=3")
    assert texts(first) == ["line 0", "line 1", "line 2"]
    assert first["more"] is True
    second = messages(client, game_id, None, f"limit=3&after={first['next_after']}")
    assert texts(second) == ["line 3", "line 4", "line 5"]
    third = messages(client, game_id, None, f"limit=3&after={second['next_after']}")
    assert texts(third) == ["line 6"]
    assert third["more"] is False
    assert third["last"] == ids[-1]
    back = messages(client, game_id, None, f"limit=2&before={ids[-1]}")
    assert texts(back) == ["line 4", "line 5"]
    for query in ("limit=0", "limit=201", "after=-1", "after=x", "wait=61", "before=0"):
        assert_problem(client.get(f"/api/games/{game_id}/messages?{query}"), 422)
    assert_problem(client.get("/api/games/nosuchgame/messages"), 404)
    assert_problem(client.get(f"/api/games/{game_id}/messages", headers=auth("nope")), 401)


@pytest.mark.parametrize("text", ["", "   \n\t ", "x" * 501, "bell\x07", "nul\x00x",
                                  "tab\there", "esc\x1b[31m", 5, None, ["a"]])
def test_bad_text_is_a_clear_problem_and_stores_nothing(app: Flask, client: FlaskClient,
                                                        text: Any) -> None:
    game_id, tokens = _game(client)
    answer = say(client, game_id, tokens[0], text)
    # A NUL is refused at the edge (400, like any JSON body with one); the rest here (422).
    problem = assert_problem(answer, 400 if text == "nul\x00x" else 422)
    assert "text" in str(problem.get("errors")) + problem["detail"] or \
        "message" in problem["detail"]
    assert _stored(app, game_id) == []
    assert_problem(client.post(f"/api/games/{game_id}/messages", json={},
                               headers=auth(tokens[0])), 422)


def test_plain_text_is_kept_as_written(client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    hostile = "<script>alert(1)</script> {{ 7*7 }} ' \" & ລາວ 🂡"
    assert said(client, game_id, tokens[0], hostile)["text"] == hostile
    assert said(client, game_id, tokens[0], "x" * 500)["text"] == "x" * 500
    assert texts(messages(client, game_id, tokens[1]))[0] == hostile


def test_the_rate_limit_is_per_seat_and_says_when_to_retry(
        make_app: Callable[..., Flask]) -> None:
    app = make_app(CHAT_PER_MINUTE=3)
    client = app.test_client()
    game_id, tokens = _game(client)
    for n in range(3):
        said(client, game_id, tokens[0], f"hi {n}")
    refused = say(client, game_id, tokens[0], "one too many")
    problem = assert_problem(refused, 429)
    assert problem["type"].endswith("/rate-limited")
    assert "at most 3 messages a minute" in problem["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    said(client, game_id, tokens[1], "my own allowance")  # another seat still writes
    assert _stored(app, game_id)[-1] == "my own allowance"
    # A minute later the seat writes again.
    with app.app_context():
        db.session.execute(sa.update(MessageRow).where(MessageRow.game_id == game_id).values(
            created_at=datetime.now(UTC) - timedelta(seconds=61)))
        db.session.commit()
        db.session.remove()
    said(client, game_id, tokens[0], "back again")


def test_the_host_mutes_a_seat_and_only_the_host_may(app: Flask, client: FlaskClient) -> None:
    game_id, host, tokens = _host_game(client)
    muted = client.patch(f"/api/games/{game_id}/chat", json={"muted": [1]}, headers=auth(host))
    assert muted.status_code == 200, muted.get_data(as_text=True)
    assert muted.get_json()["muted"] == [1]
    problem = assert_problem(say(client, game_id, tokens[1], "let me speak"), 403)
    assert problem["type"].endswith("/chat-muted")
    assert "muted" in problem["detail"]
    settings = client.get(f"/api/games/{game_id}/chat", headers=auth(tokens[1])).get_json()
    assert settings["can_write"] is False
    said(client, game_id, tokens[0], "still here")
    said(client, game_id, host, "house rules: be nice")
    assert messages(client, game_id, None)["messages"][-1]["author"] == "host"
    # A seat cannot mute; no such seat is a 422; nothing changed.
    assert_problem(client.patch(f"/api/games/{game_id}/chat", json={"muted": []},
                                headers=auth(tokens[1])), 403)
    assert_problem(client.patch(f"/api/games/{game_id}/chat", json={"muted": [7]},
                                headers=auth(host)), 422)
    assert_problem(client.patch(f"/api/games/{game_id}/chat", json={"muted": ["1"]},
                                headers=auth(host)), 422)
    assert _stored(app, game_id) == ["still here", "house rules: be nice"]
    client.patch(f"/api/games/{game_id}/chat", json={"muted": []}, headers=auth(host))
    said(client, game_id, tokens[1], "thanks")


def test_a_player_hides_a_seat_for_themselves_only(client: FlaskClient) -> None:
    game_id, tokens = _game(client, people=3)
    said(client, game_id, tokens[0], "from ann")
    said(client, game_id, tokens[1], "from bob")
    hidden = client.patch(f"/api/games/{game_id}/chat", json={"hidden": [1]},
                          headers=auth(tokens[0]))
    assert hidden.status_code == 200, hidden.get_data(as_text=True)
    assert hidden.get_json()["seat"]["hidden"] == [1]
    assert texts(messages(client, game_id, tokens[0])) == ["from ann"]
    assert texts(messages(client, game_id, tokens[2])) == ["from ann", "from bob"]
    assert texts(messages(client, game_id, None)) == ["from ann", "from bob"]
    # Nobody else learns whom ann hides: other seats' settings show only their own.
    for token in (tokens[1], tokens[2], None):
        other = client.get(f"/api/games/{game_id}/chat", headers=auth(token)).get_json()
        assert "[1]" not in str((other.get("seat") or {}).get("hidden"))
    assert_problem(client.patch(f"/api/games/{game_id}/chat", json={"hidden": [0]},
                                headers=auth(tokens[0])), 422)
    assert_problem(client.patch(f"/api/games/{game_id}/chat", json={"hidden": [1]}), 403)
    client.patch(f"/api/games/{game_id}/chat", json={"hidden": []}, headers=auth(tokens[0]))
    assert texts(messages(client, game_id, tokens[0])) == ["from ann", "from bob"]


def test_spectators_read_and_write_only_when_the_host_allows(app: Flask,
                                                             client: FlaskClient) -> None:
    game_id, host, tokens = _host_game(client)
    problem = assert_problem(say(client, game_id, None, "hello from the rail"), 403)
    assert "spectators" in problem["detail"]
    assert client.get(f"/api/games/{game_id}/chat").get_json()["can_write"] is False
    allowed = client.patch(f"/api/games/{game_id}/chat", json={"spectators": True},
                           headers=auth(host))
    assert allowed.status_code == 200
    assert allowed.get_json()["spectators"] is True
    sent = said(client, game_id, None, "hello from the rail")
    assert sent["author"] == "spectator"
    assert sent["seat"] is None
    # A seat cannot open the chat to spectators.
    assert_problem(client.patch(f"/api/games/{game_id}/chat", json={"spectators": False},
                                headers=auth(tokens[0])), 403)
    # A game option at creation.
    open_game, _host, _tokens = _host_game(client, chat_spectators=True)
    said(client, open_game, None, "open from the start")
    assert_problem(client.post("/api/games", json={
        "seats": [{"name": "a"}, {"name": "b"}], "chat_spectators": "yes"}), 422)


def test_a_new_message_wakes_the_long_poll(make_app: Callable[..., Flask],
                                           backend: str) -> None:
    app = make_app(**NO_POLL)
    listening(app, backend)
    client = app.test_client()
    game_id, tokens = _game(client)
    said(client, game_id, tokens[0], "first")
    last = messages(client, game_id, None)["last"]
    empty = messages(client, game_id, tokens[1], f"after={last}&wait=0.2")
    assert empty["messages"] == []
    assert empty["next_after"] == last
    waiters = [Waiter(lambda token=token: app.test_client().get(
        f"/api/games/{game_id}/messages?after={last}&wait=60", headers=auth(token)))
        for token in (tokens[1], None)]
    for waiter in waiters:
        waiter.start()
    parked(game_id, len(waiters))
    said(client, game_id, tokens[0], "are you there?")
    for waiter in waiters:
        waiter.join(90)
        assert texts(waiter.answer) == ["are you there?"]


def test_webhook_seats_get_game_message_but_never_their_own(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app = make_app(WEBHOOK_ALLOW_PRIVATE=True)
    client = app.test_client()
    game_id, tokens = _game(client)
    secrets = {}
    for seat in (0, 1):
        hooked = client.put(f"/api/games/{game_id}/seats/{seat}/notifications",
                            json={"webhook_url": receiver.url(f"/hook{seat}")},
                            headers=auth(tokens[seat]))
        assert hooked.status_code == 200, hooked.get_data(as_text=True)
        secrets[seat] = hooked.get_json()["webhook_secret"]
    sent = said(client, game_id, tokens[0], "gg")
    run_worker(app)
    assert [r for r in receiver.at("/hook0") if r.json["type"] == "game.message"] == []
    [delivery] = [r for r in receiver.at("/hook1") if r.json["type"] == "game.message"]
    data = verify(delivery, secrets[1])["data"]
    assert data == {"id": sent["id"], "seat": 0, "author": "seat", "name": "ann",
                    "text": "gg", "created_at": sent["created_at"]}
    # A seat that hides the author gets no webhook of its messages either.
    client.patch(f"/api/games/{game_id}/chat", json={"hidden": [0]}, headers=auth(tokens[1]))
    said(client, game_id, tokens[0], "unheard")
    run_worker(app)
    assert len([r for r in receiver.at("/hook1") if r.json["type"] == "game.message"]) == 1


def test_no_email_by_default_and_at_most_one_an_hour_when_asked(
        make_app: Callable[..., Flask], smtp: SmtpSink) -> None:
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none")
    client = app.test_client()
    game_id, tokens = _game(client)
    said(client, game_id, tokens[0], "nobody is emailed for this")
    assert _rows(app, game_id, "message") == []
    opted = client.patch(f"/api/games/{game_id}/chat", json={"email": True},
                         headers=auth(tokens[1]))
    assert opted.status_code == 200
    assert opted.get_json()["seat"]["email"] is True
    assert_problem(client.patch(f"/api/games/{game_id}/chat", json={"email": "on"},
                                headers=auth(tokens[1])), 422)
    said(client, game_id, tokens[0], "first of the hour")
    said(client, game_id, tokens[0], "second")
    said(client, game_id, tokens[0], "third")
    now_row, later_row = _rows(app, game_id, "message")
    assert now_row.seats == [1] == later_row.seats  # never to ann, the author
    assert [m["text"] for m in now_row.payload["data"]["messages"]] == ["first of the hour"]
    assert [m["text"] for m in later_row.payload["data"]["messages"]] == ["second", "third"]
    gap = later_row.next_attempt_at - now_row.next_attempt_at
    assert timedelta(minutes=59) < gap <= timedelta(hours=1)
    run_worker(app)
    [mail] = [m for m in smtp.to("bob@example.org") if "at the table" in str(m["Subject"])]
    assert "ann" in str(mail["Subject"])
    text = text_of(mail)
    assert "first of the hour" in text
    assert "second" not in text
    assert "say" in text  # how to answer by email
    assert smtp.to("ann@example.org") == [] or all(
        "at the table" not in str(m["Subject"]) for m in smtp.to("ann@example.org"))
    # The hour's email is due at its end, with what was said meanwhile.
    run_worker(app, clock=lambda: datetime.now(UTC) + timedelta(hours=1, minutes=1))
    later = [m for m in smtp.to("bob@example.org") if "at the table" in str(m["Subject"])]
    assert len(later) == 2
    assert "second" in text_of(later[1])
    assert "third" in text_of(later[1])


def test_the_your_turn_email_shows_what_was_said_since_the_last_look(
        make_app: Callable[..., Flask], smtp: SmtpSink) -> None:
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none",
                   ACTIVE_SECONDS=0)
    client = app.test_client()
    game_id, tokens = _game(client)
    body = _current(client, game_id, tokens[0])
    mover = body["view"]["current"]
    other = 1 - mover
    names = ["ann", "bob"]
    with app.app_context():  # the other player looked before anything was said
        db.session.execute(sa.update(SeatRow).where(SeatRow.game_id == game_id).values(
            last_seen_at=datetime.now(UTC) - timedelta(minutes=5)))
        db.session.commit()
        db.session.remove()
    said(client, game_id, tokens[other], "my own words")
    said(client, game_id, tokens[mover], "your move, <friend> & co")
    # Watched as a spectator: a seat's own read would be a look.
    while client.get(f"/api/games/{game_id}").get_json()["view"]["current"] == mover:
        listing = client.get(f"/api/games/{game_id}/actions",
                             headers=auth(tokens[mover])).get_json()
        played = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[mover]),
                             json={"version": listing["version"], "number": 1})
        assert played.status_code == 200, played.get_data(as_text=True)
    run_worker(app, passes=3)
    [mail] = [m for m in smtp.to(f"{names[other]}@example.org")
              if m["X-DOS-Event"] == "your_turn"]
    text = text_of(mail)
    assert "Table talk since you last looked:" in text
    assert f"{names[mover]} (" in text
    assert "your move, <friend> & co" in text
    assert "my own words" not in text  # never your own message
    html = next(part for part in mail.walk() if part.get_content_type() == "text/html")
    markup = html.get_content()
    assert "your move, &lt;friend&gt; &amp; co" in markup
    assert "<friend>" not in markup


def test_a_message_never_carries_a_hand_nor_anothers_settings(client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    said(client, game_id, tokens[0], "hmm")
    client.patch(f"/api/games/{game_id}/chat", json={"hidden": [1], "email": True},
                 headers=auth(tokens[0]))
    for token in (tokens[0], tokens[1], None):
        body = messages(client, game_id, token)
        for message in body["messages"]:
            assert set(message) == {"id", "seat", "author", "name", "text", "created_at"}
        assert set(body) == {"messages", "next_after", "more", "last"}
        settings = client.get(f"/api/games/{game_id}/chat", headers=auth(token)).get_json()
        assert set(settings) == {"spectators", "muted", "last", "per_minute", "max_chars",
                                 "seat", "can_write"}
        own = settings["seat"]
        if token == tokens[0]:
            assert own == {"index": 0, "hidden": [1], "email": True}
        else:
            assert own is None or (own["hidden"] == [] and own["email"] is False)
