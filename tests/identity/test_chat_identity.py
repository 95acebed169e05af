"""Table talk and identities: your messages are in the account export (nobody else's), and
deleting the identity removes every message you or your seats wrote, in games in play too."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from identity_helpers import auth, create, join_all, sign_in

from testkit import SmtpSink

ANN, BOB = "ann@example.org", "bob@example.org"


def _say(client: FlaskClient, game_id: str, token: str, text: str) -> None:
    answer = client.post(f"/api/games/{game_id}/messages", json={"text": text},
                         headers=auth(token))
    assert answer.status_code == 201, answer.get_data(as_text=True)


def _texts(client: FlaskClient, game_id: str) -> list[str]:
    return [m["text"] for m in client.get(f"/api/games/{game_id}/messages").get_json()["messages"]]


def test_messages_are_exported_and_forgotten_with_their_author(mail_app: Flask,
                                                               smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    games = [create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
             for _ in range(2)]
    tokens = [join_all(client, game) for game in games]
    _say(client, games[0]["id"], tokens[0][0], "ann in the first game")
    _say(client, games[0]["id"], tokens[0][1], "bob answers")
    _say(client, games[1]["id"], tokens[1][0], "ann in the second game")
    account = sign_in(client, mail_app, smtp, ANN)
    exported = client.get("/api/me/export", headers=auth(account))
    assert exported.status_code == 200
    mine = exported.get_json()["messages"]
    assert [(m["game_id"], m["text"]) for m in mine] == [
        (games[0]["id"], "ann in the first game"), (games[1]["id"], "ann in the second game")]
    assert "bob answers" not in exported.get_data(as_text=True)

    deleted = client.delete("/api/me", headers=auth(account))
    assert deleted.status_code == 200
    assert deleted.get_json()["messages_deleted"] == 2
    assert _texts(client, games[0]["id"]) == ["bob answers"]
    assert _texts(client, games[1]["id"]) == []
