"""HTTP views: parse, call a service, make the answer of what it returns (services/read.py),
serialize. No transactions or rules here."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView

from dos_server.edge import Blueprint
from dos_server.extensions import limiter
from dos_server.schemas import (
    ActionsIn,
    CreateGameIn,
    HistoryQuery,
    JoinIn,
    NotesIn,
    NotificationsIn,
    OrdersIn,
    VacationIn,
    VoteIn,
)
from dos_server.services import (
    abandon,
    access,
    attention,
    lobby,
    notes,
    notify,
    nudge,
    play,
    read,
    rematch,
    standing,
    watch,
)
from dos_server.web.pages import mailed as pages  # a browser opening the link gets the page

blp = Blueprint("games", __name__, url_prefix="/api/games",
                description="Create, join and play games")


def _bearer() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _space, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


ETAG_HEADER = {"ETag": {"description": "a weak tag of this answer for this viewer; send it in "
                               "If-None-Match to get 304 while it holds",
                               "schema": {"type": "string"}}}


def _viewer(game_id: str) -> tuple[Any, access.Viewer]:
    """For reads: the game and who asks. Writes authenticate under the game's lock instead."""
    game = access.get_game(game_id)
    return game, access.authenticate(game, _bearer())


def _conditional(game_id: str, etag: Callable[[Any, access.Viewer], str],
                 encoded: Callable[[access.GameSnapshot, access.Viewer, str], bytes]) -> Response:
    """A read that answers ``304 Not Modified`` when ``If-None-Match`` holds its current tag.

    One statement reads the game's row and seats (``access.read_game``); the token is checked
    against them before any answer, so a revoked token gets its 401, never a 304 nor an
    answer this process encoded before. The tag comes from the version and seat rows: a 304
    never decodes the state, and neither does an answer already encoded (``read.game_json``).
    """
    game = access.read_game(game_id)
    viewer = access.authenticate(game, _bearer())
    attention.look(game.id, game.seats, viewer.seat, game.turn_started_at)
    tag = etag(game, viewer)
    headers = {"ETag": f'W/"{tag}"', "Vary": "Authorization"}
    if request.if_none_match.contains_weak(tag):
        return Response(status=304, headers=headers)
    return current_app.response_class(encoded(game, viewer, tag), headers=headers,
                                      mimetype="application/json")


@blp.route("")
class Games(MethodView):
    @limiter.limit(lambda: current_app.config["RATE_LIMIT_CREATE"])
    @blp.arguments(CreateGameIn)
    @blp.response(201)
    @blp.alt_response(422, description="invalid seats or options")
    @blp.alt_response(429, description="too many games created from this address")
    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a game; returns the host token and one invite per named seat (shown once)."""
        return read.created_body(lobby.create_game(lobby.NewGame.from_loaded(body)))


@blp.route("/<game_id>")
class GameView(MethodView):
    @blp.response(200, headers=ETAG_HEADER)
    @blp.alt_response(304, description="not modified: If-None-Match holds the current ETag")
    @blp.alt_response(401, description="bad, expired or revoked token")
    @blp.alt_response(403, description="token for another game or seat")
    @blp.alt_response(404, description="no such game")
    def get(self, game_id: str) -> Any:
        """The game as your token's seat sees it (no token: as a spectator).

        The answer has a weak ``ETag`` (it differs per seat, host and spectator); send it back
        in ``If-None-Match`` to get ``304 Not Modified`` while nothing you can see changed.
        """
        return _conditional(game_id, read.game_etag, read.game_json)


@blp.route("/<game_id>/join")
class Join(MethodView):
    @limiter.limit(lambda: current_app.config["RATE_LIMIT_JOIN"])
    @blp.arguments(JoinIn)
    @blp.response(200)
    @blp.alt_response(401, description="bad, expired or revoked invite")
    @blp.alt_response(403, description="invite for another game, or wrong code")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="no open seat, or the game is over")
    @blp.alt_response(422, description="invalid input")
    @blp.alt_response(429, description="too many attempts from this address")
    def post(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Claim a seat: with its invite token, or an open seat with the invite code and a name."""
        return read.joined_body(lobby.join_game(game_id, body.get("invite"), body.get("code"),
                                                body.get("name"), body.get("time_zone"),
                                                body.get("language")))


@blp.route("/<game_id>/start")
class Start(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not the host")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="already started, or too few players")
    def post(self, game_id: str) -> dict[str, Any]:
        """Host: start now with the seats filled so far (open seats are removed)."""
        return read.written_body(lobby.start_now(game_id, _bearer()))


@blp.route("/<game_id>/rematch")
class Rematch(MethodView):
    @limiter.limit(lambda: current_app.config["RATE_LIMIT_CREATE"])
    @blp.response(200, description="the finished game's standing challenge, which this call "
                  "accepted for your seat")
    @blp.alt_response(201, description="the challenge, made by this call")
    @blp.alt_response(401, description="bad, expired or revoked token")
    @blp.alt_response(403, description="neither a player nor the host of this game")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="the game is not over, or the rematch started without "
                      "your seat")
    @blp.alt_response(429, description="too many games created from this address")
    def post(self, game_id: str) -> tuple[dict[str, Any], int]:
        """Rematch: the first call on a finished game makes a standing challenge (a new
        waiting game with the same seats and options; the caller hosts it); every call, the
        first one too, accepts it for the caller's seat and answers that seat's player token
        for the new game. It deals when every person accepted (bots accept at once)."""
        done = rematch.rematch(game_id, _bearer())
        return read.rematch_body(done), 201 if done.created else 200


@blp.route("/<game_id>/actions")
class Actions(MethodView):
    @blp.response(200, headers=ETAG_HEADER)
    @blp.alt_response(304, description="not modified: If-None-Match holds the current ETag")
    @blp.alt_response(401, description="bad, expired or revoked token")
    @blp.alt_response(403, description="not a player of this game")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="game not started")
    def get(self, game_id: str) -> Any:
        """Your legal actions, numbered, with notation and a description.

        With a weak ``ETag`` like the game's: ``If-None-Match`` gets ``304`` until it changes.
        """
        # A host token or a spectator gets its 403 before any tag is compared.
        return _conditional(game_id, read.actions_etag, read.legal_actions_json)

    @blp.arguments(ActionsIn)
    @blp.response(200)
    @blp.alt_response(400, description="not an action in the notation")
    @blp.alt_response(401, description="bad, expired or revoked token")
    @blp.alt_response(403, description="not a player of this game")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="stale version, not your turn, or game not in play")
    @blp.alt_response(422, description="illegal or ambiguous action (names the rule)")
    def post(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Play one action or a whole turn, all or nothing, against the version you saw."""
        actions = [body["turn"]] if "turn" in body else body.get("actions")
        return play.submit_actions(game_id, _bearer(), body["version"], actions,
                                   request.headers.get("Idempotency-Key"),
                                   number=body.get("number"), answer=read.turn_body)


@blp.route("/<game_id>/events")
class History(MethodView):
    @blp.arguments(HistoryQuery, location="query")
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="token for another game")
    @blp.alt_response(404, description="no such game")
    def get(self, query: dict[str, Any], game_id: str) -> dict[str, Any]:
        """The game's history, oldest first, redacted for you (nobody sees others' draws).

        Events after `after` (a `seq`), at most `limit`; `next_after` is the `after` of the next
        page and `last` the newest event's `seq` in the game. With `wait` (seconds, up to 60)
        this is a long-poll: when there is no event after `after` yet, the answer comes as soon
        as one is committed, or after `wait` seconds with an empty list. To follow a game,
        ask again with `after` = `next_after` (no need to poll in between).
        """

        looked: list[bool] = []

        def look() -> dict[str, Any]:
            game, viewer = _viewer(game_id)
            if not looked:  # a long-poll is one look
                looked.append(True)
                attention.look(game.id, game.seats, viewer.seat, game.turn_started_at)
            body = read.history_body(game, viewer, query["after"], query["limit"])
            body["last"] = game.next_seq - 1
            return body

        return watch.wait_until(game_id, look, lambda body: bool(body["events"]), query["wait"],
                                key=("events", game_id, _bearer(), query["after"], query["limit"]))


@blp.route("/<game_id>/record")
class Record(MethodView):
    @blp.response(200)
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="the game is not over")
    def get(self, game_id: str) -> dict[str, Any]:
        """A finished game as a self-contained record that dos_engine.replay verifies."""
        return read.record_body(access.get_game(game_id))


@blp.route("/<game_id>/cancel")
class Cancel(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not the host")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="the game has started")
    def post(self, game_id: str) -> dict[str, Any]:
        """Host: cancel a game that has not started."""
        return read.written_body(lobby.cancel(game_id, _bearer()))


@blp.route("/<game_id>/seats/<int:seat>")
class Seat(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not the host, or no such seat")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="the game has started, or too few seats would remain")
    def delete(self, game_id: str, seat: int) -> dict[str, Any]:
        """Host: remove a seat before the start (seats after it move down; new invites)."""
        return read.seat_removed_body(lobby.remove_seat(game_id, _bearer(), seat))


@blp.route("/<game_id>/seats/<int:seat>/token")
class RotateToken(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="neither the host nor this seat")
    @blp.alt_response(404, description="no such game")
    def post(self, game_id: str, seat: int) -> dict[str, Any]:
        """Revoke the seat's tokens and get a new player token (and invite)."""
        return lobby.rotate_token(game_id, _bearer(), seat)


@blp.route("/<game_id>/resign")
class Resign(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not a player")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="already resigned, or the game is over")
    def post(self, game_id: str) -> dict[str, Any]:
        """Resign: the random strategy plays your seat from now on."""
        return read.written_body(play.resign(game_id, _bearer()))


@blp.route("/<game_id>/seats/<int:seat>/notifications")
class Notifications(MethodView):
    @blp.arguments(NotificationsIn)
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="neither the host nor this seat")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(422, description="invalid address, URL, event name, time zone or "
                      "reminder")
    def put(self, body: dict[str, Any], game_id: str, seat: int) -> dict[str, Any]:
        """Set the seat's email and webhook and which events each receives, its time zone,
        language and reminders. An empty body changes nothing and answers the settings.

        Setting ``webhook_url`` answers a new ``whsec_`` secret, shown only this once.
        """
        return lobby.set_notifications(game_id, _bearer(), seat, body.get("email"),
                                         body.get("webhook_url"), body.get("events"),
                                         set(body), body.get("digest"),
                                         body.get("time_zone"), body.get("language"),
                                         reminders=body.get("reminders"),
                                         nudges=body.get("nudges"))


@blp.route("/<game_id>/seats/<int:seat>/orders")
class StandingOrders(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not this seat's player")
    @blp.alt_response(404, description="no such game")
    def get(self, game_id: str, seat: int) -> dict[str, Any]:
        """Your seat's standing orders, what each does and whether it can play in this game."""
        return standing.read_orders(game_id, _bearer(), seat)

    @blp.arguments(OrdersIn)
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not this seat's player")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(422, description="unknown order")
    def put(self, body: dict[str, Any], game_id: str, seat: int) -> dict[str, Any]:
        """Set your seat's standing orders (all of them). The server plays them for you the
        moment they apply, marked "by standing order" in the history; one that applies now
        is played at once (the game's version moves on)."""
        return standing.set_orders(game_id, _bearer(), seat, body["orders"])


def _notes_request_size(view: Callable[..., Any]) -> Callable[..., Any]:
    """Notes may be longer than the server's usual request limit (MAX_CONTENT_LENGTH): set
    before the body is parsed, so a whole note in any script reaches the length check."""
    @functools.wraps(view)  # with flask-smorest's documentation of the view
    def sized(*args: Any, **kwargs: Any) -> Any:
        request.max_content_length = notes.MAX_REQUEST_BYTES
        return view(*args, **kwargs)

    return sized


@blp.route("/<game_id>/seats/<int:seat>/notes")
class Notes(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not this seat's player")
    @blp.alt_response(404, description="no such game")
    def get(self, game_id: str, seat: int) -> dict[str, Any]:
        """Your seat's private notes on this game ("" for none): only the seat's player
        reads them, in any status of the game."""
        return notes.read_notes(game_id, _bearer(), seat)

    @_notes_request_size
    @blp.arguments(NotesIn)
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not this seat's player")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(413, description="a request larger than any note")
    @blp.alt_response(422, description="too long, or not plain text")
    def put(self, body: dict[str, Any], game_id: str, seat: int) -> dict[str, Any]:
        """Replace your seat's private notes (``""`` clears them): plain text, at most
        10,000 characters, newlines and tabs kept. Nobody else ever sees them; they change
        no version."""
        return notes.set_notes(game_id, _bearer(), seat, body["text"])


@blp.route("/<game_id>/vacation")
class Vacation(MethodView):
    @blp.arguments(VacationIn)
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not a player")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="not enough vacation days left, or the game is over")
    @blp.alt_response(422, description="invalid number of days")
    def post(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Pause your clock for some days (the game's allowance per year)."""
        return lobby.start_vacation(game_id, _bearer(), body["days"])


@blp.route("/<game_id>/nudge")
class Nudge(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not a player")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="your own turn or a bot's, nudges off, resigned, or "
                      "the game is not in play")
    @blp.alt_response(429, description="you nudged in this game less than a day ago: "
                      "next_allowed_at and Retry-After say when you may again")
    def post(self, game_id: str) -> dict[str, Any]:
        """Nudge the player whose turn it is: they get one email and webhook saying who is
        waiting and since when. At most once a day per player per game."""
        return nudge.nudge(game_id, _bearer())


@blp.route("/<game_id>/votes")
class Votes(MethodView):
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not a player")
    @blp.alt_response(404, description="no such game")
    def get(self, game_id: str) -> dict[str, Any]:
        """The absent seats and the votes on each (the players still playing vote)."""
        return abandon.standing(game_id, _bearer())

    @blp.arguments(VoteIn)
    @blp.response(200)
    @blp.alt_response(401, description="bad token")
    @blp.alt_response(403, description="not a player still playing, your own seat, or no "
                      "such seat")
    @blp.alt_response(404, description="no such game")
    @blp.alt_response(409, description="the seat is not absent, or the game is not in play")
    @blp.alt_response(422, description="invalid seat or choice")
    def post(self, body: dict[str, Any], game_id: str) -> dict[str, Any]:
        """Vote on an absent seat: ``bot`` hands it to a bot for the rest of the game, ``end``
        ends the game now with the scores as they stand. A strict majority of the players
        still playing (the absent one aside) decides at once (``decided``)."""
        return abandon.vote(game_id, _bearer(), body["seat"], body["choice"])


unsubscribe_blp = Blueprint("unsubscribe", __name__, url_prefix="/api/unsubscribe",
                            description="One-click unsubscribe links from emails")


@unsubscribe_blp.route("/<token>")
class Unsubscribe(MethodView):
    @unsubscribe_blp.response(200, description="done (for a browser, Accept: text/html, the "
                              "web's page that says so)")
    @unsubscribe_blp.alt_response(401, description="not a valid unsubscribe link")
    @unsubscribe_blp.alt_response(404, description="the game is gone")
    def post(self, token: str) -> Any:
        """Stop this seat's emails for this game (RFC 8058 one-click; no login).

        Mail clients POST ``List-Unsubscribe=One-Click``.
        """
        done = lobby.unsubscribe(token)
        if _wants_html():
            return pages.unsubscribe_page(
                token, {**notify.describe_unsubscribe(token), **done}, done=True)
        return done

    @unsubscribe_blp.response(200, description="what the link would do (for a browser, "
                              "Accept: text/html, the web's page whose button unsubscribes)")
    @unsubscribe_blp.alt_response(401, description="not a valid unsubscribe link")
    @unsubscribe_blp.alt_response(404, description="the game is gone")
    def get(self, token: str) -> Any:
        """What the link does, without doing it: link scanners fetch every link in an email,
        so only a POST unsubscribes (the page's button, or the mail client's one-click)."""
        info = notify.describe_unsubscribe(token)
        if _wants_html():
            return pages.unsubscribe_page(token, info, done=False)
        return {**info, "action": "POST this URL to stop this seat's emails for this game"}


def _wants_html() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return best == "text/html" and request.accept_mimetypes["text/html"] > \
        request.accept_mimetypes["application/json"]
