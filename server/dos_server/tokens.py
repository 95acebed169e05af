"""Signed tokens (itsdangerous), one salt per purpose, a key list for rotation.

A token carries the game, the seat and the seat's ``token_version``; bumping that version
revokes every older token of the seat. Tokens are never logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import current_app
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from dos_server.problems import Problem

SALTS = {
    "player": "dos.player.v1",
    "host": "dos.host.v1",
    "invite": "dos.invite.v1",
    "unsubscribe": "dos.unsubscribe.v1",
    "inbound": "dos.inbound-mail.v1",
}


@dataclass(frozen=True)
class TokenClaims:
    game_id: str
    seat: int | None  # None for host tokens
    version: int


def _serializer(purpose: str) -> URLSafeTimedSerializer:
    keys = [*current_app.config["SECRET_KEY_FALLBACKS"], current_app.config["SECRET_KEY"]]
    return URLSafeTimedSerializer(keys, salt=SALTS[purpose])


def issue(purpose: str, game_id: str, seat: int | None, version: int) -> str:
    payload: dict[str, Any] = {"g": game_id, "v": version}
    if seat is not None:
        payload["s"] = seat
    return str(_serializer(purpose).dumps(payload))


def read(purpose: str, token: str) -> TokenClaims:
    """Verify a token; a bad, expired or malformed one is a 401 problem."""
    max_age = int(current_app.config["TOKEN_MAX_AGE_DAYS"]) * 86400
    try:
        payload = _serializer(purpose).loads(token, max_age=max_age)
    except SignatureExpired:
        raise unauthorized(f"this {purpose} token has expired; ask the game's host for a new one") from None
    except BadSignature:
        raise unauthorized(f"this is not a valid {purpose} token for this server") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("g"), str):
        raise unauthorized(f"this is not a valid {purpose} token for this server")
    seat = payload.get("s")
    version = payload.get("v")
    if (seat is not None and not isinstance(seat, int)) or not isinstance(version, int):
        raise unauthorized(f"this is not a valid {purpose} token for this server")
    return TokenClaims(payload["g"], seat, version)


def unauthorized(detail: str) -> Problem:
    return Problem(401, "unauthorized", "Not authorized", detail,
                   headers={"WWW-Authenticate": 'Bearer realm="dos"'})
