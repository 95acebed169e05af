"""Which seats an address opens: by the invite sent to it or by the player's
confirmation, never by the host's say-so; my games; playing from an account; privacy of
addresses; export and deletion; the per-identity digest preference; links in emails."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from identity_helpers import (
    CONFIRM,
    auth,
    create,
    deliver,
    finish,
    join_all,
    last_to,
    my_games,
    sign_in,
    text_of,
)

from dos_server.extensions import db
from dos_server.models import GameRow, SeatRow
from testkit import SmtpSink

ANN, BOB, HOST, NEW = ("ann@example.org", "bob@example.org", "host@example.org",
                       "bob.new@example.org")


def _seat(app: Flask, game_id: str, index: int) -> SeatRow:
    with app.app_context():
        row = db.session.execute(db.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.index == index)).scalar_one()
        db.session.expunge(row)
        db.session.remove()
    return row


def _put_email(client: FlaskClient, game_id: str, seat: int, token: str,
               email: str | None) -> Any:
    return client.put(f"/api/games/{game_id}/seats/{seat}/notifications",
                      json={"email": email}, headers=auth(token))


def test_my_games_lists_the_seats_an_invite_claimed(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    games = [create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
             for _ in range(3)]
    tokens = [join_all(client, game) for game in games]
    # A seat taken with the invite code (no address) is nobody's by sign-in.
    open_game = create(client, [{"name": "ann", "email": ANN}, {}])
    client.post(f"/api/games/{open_game['id']}/join",
                json={"code": open_game["invite_code"], "name": "zed"})
    account = sign_in(client, mail_app, smtp, "ANN@example.org")
    listed = my_games(client, account)
    assert {g["game_id"] for g in listed} == {g["id"] for g in games}  # not open_game: unclaimed
    waiting = [g["your_turn"] for g in listed]
    assert waiting == sorted(waiting, reverse=True)  # your turn first
    for line in listed:
        assert line["name"] == "ann"
        assert line["seat"] == 0
        assert line["players"] == ["ann", "bob"]
        assert line["status"] == "active"
        assert line["turn"] in ("ann", "bob")
        assert line["your_turn"] == (line["turn"] == "ann")
    # From the account: the seat's player token, which plays.
    target = next(g for g in listed if g["your_turn"]) if any(waiting) else listed[0]
    got = client.post(f"/api/games/{target['game_id']}/token", json={},
                      headers=auth(account))
    assert got.status_code == 404  # not a route of games: the account's route is under /me
    got = client.post(f"/api/me/games/{target['game_id']}/token", json={},
                      headers=auth(account))
    assert got.status_code == 200, got.get_data(as_text=True)
    player = got.get_json()["player_token"]
    view = client.get(f"/api/games/{target['game_id']}", headers=auth(player)).get_json()
    assert view["you"] == 0
    assert view["view"]["hand"] is not None
    # Only one's own seats.
    bob_game = games[0]["id"]
    assert client.post(f"/api/me/games/{bob_game}/token", json={"seat": 1},
                       headers=auth(account)).status_code == 403
    assert client.post("/api/me/games/nosuchgame/token", json={},
                       headers=auth(account)).status_code == 404
    assert tokens  # the per-game tokens still work untouched
    assert client.get(f"/api/games/{bob_game}/actions",
                      headers=auth(tokens[0][1])).status_code == 200


def test_host_cannot_redirect_a_claimed_seat(mail_app: Flask, smtp: SmtpSink) -> None:
    """The attack: the host points bob's claimed seat at the host's own address and signs in."""
    client = mail_app.test_client()
    game = create(client, [{"name": "host", "email": HOST}, {"name": "bob", "email": BOB}])
    join_all(client, game)
    host = game["host_token"]
    refused = _put_email(client, game["id"], 1, host, HOST)
    assert refused.status_code == 403
    assert _seat(mail_app, game["id"], 1).email == BOB
    account = sign_in(client, mail_app, smtp, HOST)
    assert [(g["game_id"], g["seat"]) for g in my_games(client, account)] == [(game["id"], 0)]
    assert client.post(f"/api/me/games/{game['id']}/token", json={"seat": 1},
                       headers=auth(account)).status_code == 403
    # The host may still change the other settings of the seat.
    assert client.put(f"/api/games/{game['id']}/seats/1/notifications", json={"digest": True},
                      headers=auth(host)).status_code == 200


def test_host_readdressing_an_unclaimed_seat_gains_nothing(mail_app: Flask,
                                                           smtp: SmtpSink) -> None:
    """Before the claim the host may change the address (an invitation), but the invite bob
    already got was for bob's address: claiming with it gives the host's address nothing."""
    client = mail_app.test_client()
    game = create(client, [{"name": "host", "email": HOST}, {"name": "bob", "email": BOB}])
    bob_invite = game["invites"][1]["invite"]
    assert _put_email(client, game["id"], 1, game["host_token"], HOST).status_code == 200
    joined = client.post(f"/api/games/{game['id']}/join", json={"invite": bob_invite})
    assert joined.status_code == 200
    assert _seat(mail_app, game["id"], 1).owner_key is None
    account = sign_in(client, mail_app, smtp, HOST)
    assert [g["seat"] for g in my_games(client, account)] == []  # seat 0 was never claimed
    assert client.post(f"/api/me/games/{game['id']}/token", json={"seat": 1},
                       headers=auth(account)).status_code == 403


def test_host_invites_a_new_address_by_email(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "carol"}])
    assert _put_email(client, game["id"], 1, game["host_token"],
                      "carol@example.org").status_code == 200
    deliver(mail_app)
    invite = text_of(last_to(smtp, "carol@example.org", "invited"))
    line = next(w for w in invite.split() if w.startswith(f"{game['id']}:"))
    joined = client.post(f"/api/games/{game['id']}/join",
                         json={"invite": line.split(":", 1)[1]})
    assert joined.status_code == 200, joined.get_data(as_text=True)
    account = sign_in(client, mail_app, smtp, "carol@example.org")
    assert [(g["game_id"], g["seat"]) for g in my_games(client, account)] == [(game["id"], 1)]


def test_a_player_moves_their_address_by_confirming_it(mail_app: Flask,
                                                        smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    tokens = join_all(client, game)
    old = sign_in(client, mail_app, smtp, BOB)
    new = sign_in(client, mail_app, smtp, NEW)
    answer = _put_email(client, game["id"], 1, tokens[1], NEW)
    assert answer.status_code == 200
    body = answer.get_json()
    assert body["email"] == NEW
    assert body["email_confirmed"] is False
    assert body["confirmation_sent"] is True
    # Until confirmed, the old address still opens the seat and the new one does not.
    assert [g["seat"] for g in my_games(client, old)] == [1]
    assert my_games(client, new) == []
    deliver(mail_app)
    link = CONFIRM.search(text_of(last_to(smtp, NEW, "confirm_email")))
    assert link
    path = link.group(1).split("://", 1)[1].split("/", 1)[1]
    page = client.get(f"/{path}")  # a page with a button: a mail scanner's GET does nothing
    assert page.status_code == 200, page.get_data(as_text=True)
    assert my_games(client, new) == []
    confirmed = client.post(f"/{path}", data={"csrf": _csrf(page.get_data(as_text=True))})
    assert confirmed.status_code == 200, confirmed.get_data(as_text=True)
    assert [g["seat"] for g in my_games(client, new)] == [1]
    assert my_games(client, old) == []
    # Setting the same address again (any case) needs no new confirmation.
    again = _put_email(client, game["id"], 1, tokens[1], NEW.upper())
    assert again.get_json()["email_confirmed"] is True
    assert again.get_json()["confirmation_sent"] is False


def _csrf(page: str) -> str:
    """The CSRF token of the confirmation page's form (the button POSTs with it)."""
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


def test_a_confirmation_link_for_a_superseded_address_is_refused(mail_app: Flask,
                                                                 smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    tokens = join_all(client, game)
    _put_email(client, game["id"], 1, tokens[1], NEW)
    _put_email(client, game["id"], 1, tokens[1], "third@example.org")
    deliver(mail_app)
    link = CONFIRM.search(text_of(last_to(smtp, NEW, "confirm_email")))
    assert link
    path = link.group(1).split("://", 1)[1].split("/", 1)[1]
    page = client.get(f"/{path}").get_data(as_text=True)
    assert client.post(f"/{path}", data={"csrf": _csrf(page)}).status_code == 409
    assert _seat(mail_app, game["id"], 1).owner_email == BOB
    assert client.post("/api/confirm-email/garbage").status_code == 401


def test_addresses_are_private(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB},
                           {"name": "carol", "email": "carol@example.org"}])
    tokens = {i["seat"]: client.post(f"/api/games/{game['id']}/join",
                                     json={"invite": i["invite"]}).get_json()["player_token"]
              for i in game["invites"][:2]}
    host = game["host_token"]
    claimed = client.put(f"/api/games/{game['id']}/seats/1/notifications",
                         json={"digest": True}, headers=auth(host)).get_json()
    assert claimed["email"] is None
    assert claimed["email_hidden"] is True
    unclaimed = client.put(f"/api/games/{game['id']}/seats/2/notifications",
                           json={"digest": True}, headers=auth(host)).get_json()
    assert unclaimed["email"] == "carol@example.org"  # an invitation: the host's to see
    own = client.put(f"/api/games/{game['id']}/seats/1/notifications",
                     json={"digest": False}, headers=auth(tokens[1])).get_json()
    assert own["email"] == BOB
    for viewer in (tokens[0], host, None):
        body = client.get(f"/api/games/{game['id']}",
                          headers=auth(viewer) if viewer else {}).get_data(as_text=True)
        assert "@example.org" not in body
    assert client.put(f"/api/games/{game['id']}/seats/1/notifications", json={"digest": True},
                      headers=auth(tokens[0])).status_code == 403


def test_export_and_delete(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    done = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    live = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    join_all(client, done)
    join_all(client, live)
    finish(mail_app, done["id"])
    account = sign_in(client, mail_app, smtp, ANN)
    exported = client.get("/api/me/export", headers=auth(account))
    assert exported.status_code == 200
    data = exported.get_json()
    assert data["identity"]["email"] == ANN
    assert {s["game_id"] for s in data["seats"]} == {done["id"], live["id"]}
    assert all(s["email"] == ANN and s["opens_by_sign_in"] for s in data["seats"])
    assert len(data["sessions"]) == 1
    assert data["sign_in_codes"]
    assert {"login_code", "invited"} <= {e["event"] for e in data["emails"]}
    assert BOB not in exported.get_data(as_text=True)  # nothing of anyone else

    deleted = client.delete("/api/me", headers=auth(account))
    assert deleted.status_code == 200
    assert deleted.get_json()["forgotten_in_games"] == [done["id"]]
    assert deleted.get_json()["kept_in_games_in_play"] == [live["id"]]
    assert client.get("/api/me/games", headers=auth(account)).status_code == 401
    finished_seat = _seat(mail_app, done["id"], 0)
    assert (finished_seat.email, finished_seat.owner_email, finished_seat.owner_key) == (
        None, None, None)
    assert _seat(mail_app, done["id"], 1).email == BOB
    assert _seat(mail_app, live["id"], 0).email == ANN
    # Signing in again: the game in play is still there, the finished one is forgotten.
    again = sign_in(client, mail_app, smtp, ANN)
    assert [g["game_id"] for g in my_games(client, again)] == [live["id"]]


def test_digest_once_for_all_games(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    games = [create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
             for _ in range(3)]
    tokens = [join_all(client, game) for game in games]
    # Ann chose per-turn emails in the first game, by hand.
    client.put(f"/api/games/{games[0]['id']}/seats/0/notifications", json={"digest": False},
               headers=auth(tokens[0][0]))
    account = sign_in(client, mail_app, smtp, ANN)
    answer = client.put("/api/me/settings", json={"digest": True}, headers=auth(account))
    assert answer.status_code == 200
    assert answer.get_json()["games_changed"] == 2
    assert [_seat(mail_app, g["id"], 0).digest for g in games] == [False, True, True]
    assert _seat(mail_app, games[1]["id"], 1).digest is False  # bob's seat: not Ann's choice
    # A game joined later follows the preference.
    later = create(client, [{"name": "ann", "email": ANN}, {"name": "bob"}])
    join_all(client, later)
    assert _seat(mail_app, later["id"], 0).digest is True
    assert client.get("/api/me", headers=auth(account)).get_json()["digest"] is True
    assert client.put("/api/me/settings", json={"digest": 1},
                      headers=auth(account)).status_code == 422


def test_your_turn_emails_link_to_all_your_games(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    join_all(client, game)
    deliver(mail_app)
    turn = [m for m in smtp.messages if m["X-DOS-Event"] == "your_turn"]
    assert turn
    assert f"All your games: {mail_app.config['PUBLIC_URL']}/me" in text_of(turn[0])


def test_my_finished_games_are_listed_by_when_they_ended(mail_app: Flask, smtp: SmtpSink) -> None:
    """Newest ending first, whatever the order they started in, and a later touch of the row
    (a message at the table, an archive) does not move it."""
    client = mail_app.test_client()
    games = [create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
             for _ in range(3)]
    tokens = [join_all(client, game) for game in games]
    ended = [games[1], games[2], games[0]]
    for game in ended:  # both resign: nobody is left playing, the game ends then
        seat_tokens = tokens[games.index(game)]
        for seat in (0, 1):
            answer = client.post(f"/api/games/{game['id']}/resign", json={},
                                 headers=auth(seat_tokens[seat]))
            assert answer.status_code == 200, answer.get_data(as_text=True)
    said = client.post(f"/api/games/{games[1]['id']}/messages", json={"text": "gg"},
                       headers=auth(tokens[1][0]))
    assert said.status_code in (201, 403), said.get_data(as_text=True)
    with mail_app.app_context():  # the first to end is the last touched
        row = db.session.get(GameRow, games[1]["id"])
        assert row is not None
        assert row.finished_at is not None
        row.title = "touched later"
        db.session.commit()
        db.session.remove()
    account = sign_in(client, mail_app, smtp, ANN)
    listed = my_games(client, account)
    assert [g["status"] for g in listed] == ["finished"] * 3
    assert [g["game_id"] for g in listed] == [g["id"] for g in reversed(ended)]
    stamps = [g["finished_at"] for g in listed]
    assert stamps == sorted(stamps, reverse=True)
