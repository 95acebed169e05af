"""Helpers of the identity tests: the worker in-process, codes and links out of real emails,
signing in, games with addresses."""

from __future__ import annotations

import re
from email.message import EmailMessage
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from dos_server.extensions import db
from dos_server.models import GameRow
from testkit import SmtpSink, run_worker

CODE = re.compile(r": (\d{4}) (\d{4})\b")  # "Your code: 1234 5678", in any language
LINK = re.compile(r"(https?://\S+/account/signin/\S+)")
CONFIRM = re.compile(r"(https?://\S+/confirm-email/\S+)")


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def deliver(app: Flask, passes: int = 5) -> int:
    """Worker passes in-process, as the worker process would run them."""
    return run_worker(app, passes=passes)


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def last_to(smtp: SmtpSink, address: str, event: str) -> EmailMessage:
    found = [m for m in smtp.to(address) if m["X-DOS-Event"] == event]
    assert found, (address, event, [m["X-DOS-Event"] for m in smtp.messages])
    return found[-1]


def code_for(app: Flask, smtp: SmtpSink, address: str) -> str:
    deliver(app)
    match = CODE.search(text_of(last_to(smtp, address, "login_code")))
    assert match
    return match.group(1) + match.group(2)


def link_for(app: Flask, smtp: SmtpSink, address: str) -> str:
    deliver(app)
    match = LINK.search(text_of(last_to(smtp, address, "login_code")))
    assert match
    return match.group(1)


def sign_in(client: FlaskClient, app: Flask, smtp: SmtpSink, address: str) -> str:
    """The whole flow: ask, read the code from the real email, verify; the account token."""
    asked = client.post("/api/login", json={"email": address})
    assert asked.status_code == 202, asked.get_data(as_text=True)
    code = code_for(app, smtp, address)
    verified = client.post("/api/login/verify", json={"email": address, "code": code})
    assert verified.status_code == 200, verified.get_data(as_text=True)
    return str(verified.get_json()["account_token"])


def create(client: FlaskClient, seats: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    answer = client.post("/api/games", json={"seats": seats, **options})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    return dict(answer.get_json())


def join_all(client: FlaskClient, game: dict[str, Any]) -> dict[int, str]:
    tokens = {}
    for invite in game["invites"]:
        answer = client.post(f"/api/games/{game['id']}/join", json={"invite": invite["invite"]})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        tokens[invite["seat"]] = answer.get_json()["player_token"]
    return tokens


def my_games(client: FlaskClient, account: str) -> list[dict[str, Any]]:
    answer = client.get("/api/me/games", headers=auth(account))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return list(answer.get_json()["games"])


def finish(app: Flask, game_id: str) -> None:
    """Mark the game finished (as its last turn would), straight in the database."""
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        row.status = "finished"
        row.version += 1
        db.session.commit()
        db.session.remove()
