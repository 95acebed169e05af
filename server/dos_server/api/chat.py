"""HTTP views of table talk (services/chat.py): the messages of a game and its chat settings."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import request
from flask.views import MethodView
from marshmallow import validate

from dos_server.api.games import _bearer, _viewer
from dos_server.edge import Blueprint
from dos_server.schemas import Schema, StrictBoolean
from dos_server.services import attention, chat, watch

blp = Blueprint("chat", __name__, url_prefix="/api/games",
                description="Table talk: messages in a game")


class MessageIn(Schema):
    text = ma.fields.String(
        required=True, validate=validate.Length(min=1, max=4 * chat.MAX_CHARS),
        metadata={"description": f"plain text, 1-{chat.MAX_CHARS} characters once stripped; "
                  "line breaks are kept, other control characters refused"})


class MessagesQuery(Schema):
    # Query values arrive as strings: a strict Integer would reject every one of them.
    after = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=2**31 - 1),
                              metadata={"description": "messages after this id"})
    before = ma.fields.Integer(validate=validate.Range(min=1, max=2**31 - 1),
                               metadata={"description": "the newest `limit` messages before "
                                         "this id (a page further back)"})
    limit = ma.fields.Integer(load_default=50,
                              validate=validate.Range(min=1, max=chat.PAGE_LIMIT))
    wait = ma.fields.Float(
        load_default=0.0, validate=validate.Range(min=0, max=60),
        metadata={"description": "Long-poll: with no message after `after` yet, wait up to "
                  "this many seconds (0-60) for one, then answer (an empty list at the "
                  "timeout)."})


class ChatSettingsIn(Schema):
    spectators = StrictBoolean(metadata={"description": "host: whether spectators may write"})
    muted = ma.fields.List(ma.fields.Integer(strict=True, validate=validate.Range(min=0,
                                                                                  max=1000)),
                           validate=validate.Length(max=8),
                           metadata={"description": "host: the seats that may not write "
                                     "(all of them)"})
    hidden = ma.fields.List(ma.fields.Integer(strict=True, validate=validate.Range(min=0,
                                                                                   max=1000)),
                            validate=validate.Length(max=8),
                            metadata={"description": "your seat: the seats whose messages "
                                      "you do not see (all of them)"})
    email = StrictBoolean(metadata={"description": "your seat: an email per message (at "
                                    "most one an hour)"})


@blp.route("/<game_id>/messages")
class Messages(MethodView):
    @blp.arguments(MessagesQuery, location="query")
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="token for another game")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(422, description="invalid query")
    def get(self, query: dict[str, Any], game_id: str) -> dict[str, Any]:
        """The game's table talk, oldest first (the seats you hide left out).

        Messages after `after` (an id), at most `limit`; `next_after` is the `after` of the
        next page and `last` the game's newest message id. `before` pages back from an id.
        With `wait` (seconds, up to 60) this is a long-poll like the events': with no message
        after `after` yet, the answer comes as soon as one is committed, or after `wait`
        seconds with an empty list.
        """
        looked: list[bool] = []

        def look() -> dict[str, Any]:
            game, viewer = _viewer(game_id)
            if not looked:  # a long-poll is one look
                looked.append(True)
                attention.look(game.id, game.seats, viewer.seat, game.turn_started_at)
            return chat.messages_body(game, viewer, query["after"], query["limit"],
                                      query.get("before"))

        wait = 0.0 if "before" in query else query["wait"]
        return watch.wait_until(game_id, look, lambda body: bool(body["messages"]), wait)

    @blp.arguments(MessageIn)
    @blp.response(201)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="muted by the host, or a spectator where spectators "
                      "do not write")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="the game was cancelled")
    @blp.alt_response(422, description="empty, too long, or not plain text; an Idempotency-Key "
                      "sent before with another text")
    @blp.alt_response(429, description="too many messages in the last minute: Retry-After "
                      "says when the next is allowed")
    def post(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Say something at the table: a seat's player, the host, or (when the host allows)
        a spectator. It changes no version; webhooks get `game.message`. A retry with the
        same `Idempotency-Key` gets the first answer and says nothing twice."""
        return chat.post(game_id, _bearer(), body["text"], request.headers.get("Idempotency-Key"))


@blp.route("/<game_id>/chat")
class ChatSettings(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="token for another game")
    @blp.alt_response(404, description="no such game")
    def get(self, game_id: str) -> dict[str, Any]:
        """The chat's settings: whether spectators write, the muted seats, your seat's
        hidden seats and chat emails, and whether you may write."""
        return chat.read_settings(game_id, _bearer())

    @blp.arguments(ChatSettingsIn)
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="host settings without the host token, or seat "
                      "settings without a seat's token")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(422, description="no such seat, or your own seat in hidden")
    def patch(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Change the chat's settings: the host's (`spectators`, `muted`) or your seat's
        (`hidden`, `email`). Fields left out stay as they are."""
        return chat.set_settings(game_id, _bearer(), body)
