"""HTTP views of one identity for all your games: sign in, my games, sessions,
settings, export and deletion. Thin: parse, call services/account.py, serialize."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import current_app, request
from flask.views import MethodView
from marshmallow import validate

from dos_server.api.games import _bearer
from dos_server.edge import Blueprint
from dos_server.extensions import limiter
from dos_server.schemas import (
    EmailAddress,
    Language,
    PlayerName,
    Schema,
    StrictBoolean,
    StrictInteger,
    TimeZone,
)
from dos_server.services import account
from dos_server.services.words import _

blp = Blueprint("account", __name__, url_prefix="/api",
                description="One identity for all your games: sign in with your email address")


class LoginIn(Schema):
    email = EmailAddress(required=True)


class VerifyIn(Schema):
    email = EmailAddress(metadata={"description": "the address the code was sent to"})
    code = ma.fields.String(validate=validate.Length(min=1, max=32),
                            metadata={"description": "the code from the email"})
    link = ma.fields.String(validate=validate.Length(min=1, max=500),
                            metadata={"description": "or: the token of the sign-in link"})

    @ma.validates_schema
    def _one_way(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "link" in data:
            if "code" in data:
                raise ma.ValidationError(_("send either email and code, or link"))
        elif "email" not in data or "code" not in data:
            raise ma.ValidationError(_("send the email address and the code (or the link)"))


class SeatChoiceIn(Schema):
    seat = StrictInteger(validate=validate.Range(min=0, max=3),
                         metadata={"description": "which of your seats, if you hold several"})


class SettingsIn(Schema):
    digest = StrictBoolean(allow_none=True,
                           metadata={"description": "true: one daily digest; false: an email "
                                                    "per turn; null: no preference. Games "
                                                    "set one by one keep their setting."})
    time_zone = TimeZone(metadata={"description": "an IANA zone, like Asia/Vientiane, for "
                                                  "the seats you take from now on that have "
                                                  "none; null: UTC"})
    language = Language()
    player_name = PlayerName(allow_none=True,
                             metadata={"description": "the name your rating goes by "
                                                      "(/players/<name>): 3-40 letters, digits "
                                                      "and - _ . ; unique, case aside; null: "
                                                      "none"})
    leaderboard_hidden = StrictBoolean(metadata={"description": "true: the leaderboard does "
                                                                "not list you (your player "
                                                                "page stays)"})


def _user_agent() -> str | None:
    agent = request.headers.get("User-Agent")
    return agent if agent and agent.isprintable() else None


@blp.route("/login")
class Login(MethodView):
    @limiter.limit(lambda: current_app.config["RATE_LIMIT_LOGIN"])
    @blp.arguments(LoginIn)
    @blp.response(202)
    @blp.alt_response(422, description="not an email address")
    @blp.alt_response(429, description="too many codes asked for this address or from yours")
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """Email a one-time sign-in code and link; the same answer for every address."""
        return account.request_login(body["email"])


@blp.route("/login/verify")
class Verify(MethodView):
    @limiter.limit(lambda: current_app.config["RATE_LIMIT_LOGIN_VERIFY"])
    @blp.arguments(VerifyIn)
    @blp.response(200)
    @blp.alt_response(401, description="wrong, used or expired code or link")
    @blp.alt_response(422, description="invalid input")
    @blp.alt_response(429, description="too many attempts from this address")
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """Trade the emailed code (or link) for an account token (one session)."""
        if "link" in body:
            return account.verify_link(body["link"], _user_agent())
        return account.verify_code(body["email"], body["code"], _user_agent())


@blp.route("/me/games")
class MyGames(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    def get(self) -> dict[str, Any]:
        """Every seat your address opens, the games waiting on you first."""
        return account.my_games(_bearer())


@blp.route("/me/games/<game_id>/token")
class MySeatToken(MethodView):
    @blp.arguments(SeatChoiceIn)
    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    @blp.alt_response(403, description="no seat of this game is yours")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="you hold several seats here: say which")
    @blp.alt_response(422, description="invalid input")
    def post(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Your seat's player token for this game, to play it from this device."""
        return account.seat_token_for(_bearer(), game_id, body.get("seat"))


@blp.route("/me/sessions")
class Sessions(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    def get(self) -> dict[str, Any]:
        """Your signed-in devices."""
        return account.list_sessions(_bearer())

    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    def delete(self) -> dict[str, Any]:
        """Sign out everywhere (this device too)."""
        return account.revoke_all(_bearer())


@blp.route("/me/sessions/<session_id>")
class OneSession(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    @blp.alt_response(404, description="no such session of yours")
    def delete(self, session_id: str) -> dict[str, Any]:
        """Sign one device out; its token stops working at once."""
        return account.revoke_session(_bearer(), session_id)


@blp.route("/me/settings")
class Settings(MethodView):
    @blp.arguments(SettingsIn)
    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    @blp.alt_response(409, description="another player goes by this player name")
    @blp.alt_response(422, description="invalid input")
    def put(self, body: dict[str, Any]) -> dict[str, Any]:
        """Digest or per-turn emails, once for all your games; your time zone and language;
        your player name and whether the leaderboard lists you (a field left out is left as
        it is)."""
        return account.set_settings(_bearer(), body.get("digest"), set(body),
                                    body.get("time_zone"), body.get("language"),
                                    player_name=body.get("player_name"),
                                    leaderboard_hidden=body.get("leaderboard_hidden", False))


@blp.route("/me/export")
class Export(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    def get(self) -> dict[str, Any]:
        """Everything this server stores about your address."""
        return account.export(_bearer())


@blp.route("/me")
class Me(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    def get(self) -> dict[str, Any]:
        """Who you are signed in as, and your settings."""
        return account.whoami(_bearer())

    @blp.response(200)
    @blp.alt_response(401, description="not signed in, or the session was revoked")
    def delete(self) -> dict[str, Any]:
        """Delete your identity: sessions, settings, and your address on finished games."""
        return account.forget(_bearer())


@blp.route("/confirm-email/<token>")
class ConfirmEmail(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="not a valid confirmation link, or it expired")
    @blp.alt_response(404, description="the game is gone")
    @blp.alt_response(409, description="the seat's address changed again since")
    def post(self, token: str) -> dict[str, Any]:
        """Confirm a seat's new address: it then opens the seat by signing in."""
        return account.confirm_address(token)

