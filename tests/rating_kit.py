"""Helpers of the ratings tests (server, web, client): identities signed in without a mail
server, rated games of them played to the end through the API."""

from __future__ import annotations

import random
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from dos_server.extensions import db
from dos_server.models import LoginCodeRow
from dos_server.services import account
from dos_server.validation import email_key


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def ask_code(client: FlaskClient, app: Flask, address: str) -> str:
    """Ask for a sign-in code; the code, recomputed from the stored row as the email would
    carry it."""
    asked = client.post("/api/login", json={"email": address})
    assert asked.status_code == 202, asked.get_data(as_text=True)
    with app.app_context():
        row = db.session.execute(
            select(LoginCodeRow).where(LoginCodeRow.email_key == email_key(address))
            .order_by(LoginCodeRow.created_at.desc())).scalars().first()
        assert row is not None
        code = account.login_code(row.nonce)
        db.session.remove()
    return code


def sign_in(client: FlaskClient, app: Flask, address: str) -> str:
    """Ask for a code and verify it; the account token. The identity exists from here on."""
    code = ask_code(client, app, address)
    verified = client.post("/api/login/verify", json={"email": address, "code": code})
    assert verified.status_code == 200, verified.get_data(as_text=True)
    return str(verified.get_json()["account_token"])


def new_game(client: FlaskClient, seats: list[dict[str, Any]],
             **extra: Any) -> tuple[str, dict[int, str]]:
    """A game of ``seats`` (a name with an address is a person: joined by the invite sent
    there, so the address opens the seat), to 1 point (one round); its id and the people's
    player tokens by seat."""
    created = client.post("/api/games", json={"seats": seats,
                                              "options": {"target_score": 1}, **extra})
    assert created.status_code == 201, created.get_data(as_text=True)
    game = created.get_json()
    tokens = {}
    for invite in game["invites"]:
        joined = client.post(f"/api/games/{game['id']}/join", json={"invite": invite["invite"]})
        assert joined.status_code == 200, joined.get_data(as_text=True)
        tokens[invite["seat"]] = joined.get_json()["player_token"]
    return str(game["id"]), tokens


def people(*names: str) -> list[dict[str, Any]]:
    return [{"name": name, "email": f"{name}@example.org"} for name in names]


def play_out(client: FlaskClient, game_id: str, tokens: dict[int, str],
             seed: int = 0) -> dict[str, Any]:
    """Play every person's turns (a random legal number) until the game is over; the game as
    the first token's seat sees it then."""
    rng = random.Random(seed)
    first = next(iter(tokens.values()))
    for _ in range(3000):
        body = client.get(f"/api/games/{game_id}", headers=bearer(first)).get_json()
        if body["status"] == "finished":
            return dict(body)
        seat = body["view"]["current"]
        listing = client.get(f"/api/games/{game_id}/actions",
                             headers=bearer(tokens[seat])).get_json()
        choice = rng.randint(1, len(listing["actions"]))
        answer = client.post(f"/api/games/{game_id}/actions",
                             json={"version": listing["version"], "number": choice},
                             headers=bearer(tokens[seat]))
        assert answer.status_code == 200, answer.get_data(as_text=True)
    raise AssertionError("the game did not finish")
