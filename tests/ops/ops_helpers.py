"""Helpers of the operations tests: the worker in-process on a clock the test moves, games
played through the API (a Flask test client or real HTTP), sign-in from the real email."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any, Protocol

from flask import Flask

import testkit
from testkit import SmtpSink

CODE = re.compile(r": (\d{4}) (\d{4})\b")  # "Your code: 1234 5678", in any language


class Answer(Protocol):
    status_code: int

    def json(self) -> Any: ...


class Clock:
    """The worker's clock: the real time moved forward by the test (``at_days``)."""

    def __init__(self, days: float = 0) -> None:
        self.offset = timedelta(days=days)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def at_days(self, days: float) -> Clock:
        """A clock ``days`` ahead of the real one."""
        return Clock(days)


def run_worker(app: Flask, clock: Callable[[], datetime], passes: int = 5) -> int:
    """Worker passes in-process on ``clock`` (as the worker process runs them)."""
    return testkit.run_worker(app, clock, passes)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Api:
    """The API through a test client or ``requests`` (same calls, one shape)."""

    def __init__(self, get: Callable[..., Any], post: Callable[..., Any],
                 body: Callable[[Any], Any]) -> None:
        self._get, self._post, self._body = get, post, body

    def get(self, path: str, token: str | None = None) -> Any:
        answer = self._get(path, headers=auth(token) if token else {})
        assert answer.status_code == 200, (path, answer.status_code, self._body(answer))
        return self._body(answer)

    def post(self, path: str, body: dict[str, Any] | None = None, token: str | None = None,
             status: int = 200) -> Any:
        answer = self._post(path, json=body or {}, headers=auth(token) if token else {})
        assert answer.status_code == status, (path, answer.status_code, self._body(answer))
        return self._body(answer)

    def create(self, seats: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
        return dict(self.post("/api/games", {"seats": seats, **options}, status=201))

    def join_all(self, game: dict[str, Any]) -> dict[int, str]:
        return {invite["seat"]: self.post(f"/api/games/{game['id']}/join",
                                          {"invite": invite["invite"]})["player_token"]
                for invite in game["invites"]}

    def play_one(self, game_id: str, tokens: dict[int, str]) -> bool:
        """The seat to move plays its first legal move; False when the game is over."""
        body = self.get(f"/api/games/{game_id}", next(iter(tokens.values())))
        if body["status"] != "active":
            return False
        seat = body["view"]["current"]
        listing = self.get(f"/api/games/{game_id}/actions", tokens[seat])
        self.post(f"/api/games/{game_id}/actions",
                  {"version": listing["version"], "number": 1}, tokens[seat])
        return True

    def play_to_end(self, game_id: str, tokens: dict[int, str], limit: int = 3000) -> None:
        for _ in range(limit):
            if not self.play_one(game_id, tokens):
                return
        raise AssertionError("the game did not finish")


def client_api(app: Flask) -> Api:
    client = app.test_client()
    return Api(client.get, client.post, lambda answer: answer.get_json())


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content()).replace("\r\n", "\n")


def sign_in(api: Api, app: Flask, smtp: SmtpSink, address: str, clock: Callable[[], datetime]
            ) -> str:
    """Ask for a code, read it from the real email, verify; the account token."""
    api.post("/api/login", {"email": address}, status=202)
    run_worker(app, clock)
    found = [m for m in smtp.to(address) if m["X-DOS-Event"] == "login_code"]
    assert found
    match = CODE.search(text_of(found[-1]))
    assert match
    verified = api.post("/api/login/verify", {"email": address,
                                              "code": match.group(1) + match.group(2)})
    return str(verified["account_token"])
