"""Private notes and identities: a seat's notes are in its owner's account export (never in
another identity's, not even one whose address a seat merely carries), a signed-in identity
reaches them with its seat's token, and deleting the identity clears the notes of every seat
it owned, in games in play and finished alike."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient
from identity_helpers import auth, create, finish, join_all, sign_in

from testkit import SmtpSink, stored_notes

ANN, BOB = "ann@example.org", "bob@example.org"


def _write(client: FlaskClient, game_id: str, seat: int, token: str, text: str) -> None:
    answer = client.put(f"/api/games/{game_id}/seats/{seat}/notes", json={"text": text},
                        headers=auth(token))
    assert answer.status_code == 200, answer.get_data(as_text=True)


def test_notes_are_exported_to_their_owner_and_cleared_when_it_is_deleted(
        mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    playing, finished = (create(client, [{"name": "ann", "email": ANN},
                                         {"name": "bob", "email": BOB}]) for _ in range(2))
    tokens = {game["id"]: join_all(client, game) for game in (playing, finished)}
    for game in (playing, finished):
        _write(client, game["id"], 0, tokens[game["id"]][0], f"ANN-NOTE {game['id']}")
        _write(client, game["id"], 1, tokens[game["id"]][1], f"BOB-NOTE {game['id']}")
    finish(mail_app, finished["id"])
    # A seat that carries Ann's address without being hers: cy typed it, and never confirmed.
    other = create(client, [{"name": "cy"}, {"name": "di"}])
    cy = join_all(client, other)[0]
    typed = client.put(f"/api/games/{other['id']}/seats/0/notifications", json={"email": ANN},
                       headers=auth(cy))
    assert typed.status_code == 200, typed.get_data(as_text=True)
    _write(client, other["id"], 0, cy, "CY-NOTE")

    account = sign_in(client, mail_app, smtp, ANN)
    exported = client.get("/api/me/export", headers=auth(account))
    assert exported.status_code == 200
    seats = {(s["game_id"], s["seat"]): s for s in exported.get_json()["seats"]}
    assert seats[playing["id"], 0]["notes"] == f"ANN-NOTE {playing['id']}"
    assert seats[finished["id"], 0]["notes"] == f"ANN-NOTE {finished['id']}"
    assert seats[other["id"], 0]["notes"] is None  # listed by its address, but cy's notes
    text = exported.get_data(as_text=True)
    assert "BOB-NOTE" not in text
    assert "CY-NOTE" not in text
    # Bob's export has his notes and none of Ann's.
    bob_account = sign_in(client, mail_app, smtp, BOB)
    bob_export = client.get("/api/me/export", headers=auth(bob_account)).get_data(as_text=True)
    assert "BOB-NOTE" in bob_export
    assert "ANN-NOTE" not in bob_export
    # Signed in, Ann reaches her notes with the seat token her account gives her.
    seat_token = client.post(f"/api/me/games/{finished['id']}/token", json={},
                             headers=auth(account))
    assert seat_token.status_code == 200, seat_token.get_data(as_text=True)
    read = client.get(f"/api/games/{finished['id']}/seats/0/notes",
                      headers=auth(seat_token.get_json()["player_token"]))
    assert read.get_json()["text"] == f"ANN-NOTE {finished['id']}"
    # The account token itself is no seat's token.
    assert client.get(f"/api/games/{finished['id']}/seats/0/notes",
                      headers=auth(account)).status_code == 401

    deleted = client.delete("/api/me", headers=auth(account))
    assert deleted.status_code == 200, deleted.get_data(as_text=True)
    assert deleted.get_json()["notes_cleared"] == 2
    for game in (playing, finished):
        assert stored_notes(mail_app, game["id"]) == {0: None, 1: f"BOB-NOTE {game['id']}"}
    assert stored_notes(mail_app, other["id"]) == {0: "CY-NOTE", 1: None}
    # The game in play goes on: Ann's seat token still opens her (now empty) notes.
    still = client.get(f"/api/games/{playing['id']}/seats/0/notes",
                       headers=auth(tokens[playing["id"]][0]))
    assert still.status_code == 200
    assert still.get_json()["text"] == ""
