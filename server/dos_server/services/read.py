"""Response bodies: what each kind of viewer may see of a game (cosmicpython's ``views``).

Nothing here writes or commits; each function reads in the caller's session. No body ever
holds another seat's hand or the draw pile. The answers of writes are made here too, from what
the write returned (:func:`turn_body`, :func:`written_body`...).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from flask import Response, current_app

from dos_engine import Game, GameRecord, redact, round_seed, seed_commitment
from dos_server.errors import GameNotFinished
from dos_server.models import GameRow, as_utc, utcnow
from dos_server.services import archive, attention, ratings, series
from dos_server.services.access import (
    GameLike,
    GameSnapshot,
    SeatLike,
    Viewer,
    Written,
    engine_state,
    require_host,
    require_player,
    seat_of,
    seat_token,
)
from dos_server.services.archive import HistoryEvent
from dos_server.services.nudge import NUDGE_EVERY
from dos_server.services.words import _
from dos_server.services.words import language as reader_language

if TYPE_CHECKING:
    from dos_server.services.lobby import Created, Invite, Joined, SeatRemoved
    from dos_server.services.play import Turn
    from dos_server.services.rematch import Rematch


def game_body(game: GameLike[SeatLike], viewer: Viewer,
              state: Game | None = None) -> dict[str, Any]:
    """The game as ``viewer`` may see it: never another seat's hand or the draw pile."""
    now = utcnow()
    changes = _rating_changes(game)
    body: dict[str, Any] = {
        "id": game.id,
        "title": game.title,
        "status": game.status,
        "version": game.version,
        "you": viewer.seat,
        "host": viewer.host,
        "turn_time_limit": game.turn_time_limit,
        "turn_deadline": game.turn_deadline.isoformat() if game.turn_deadline else None,
        "options": game.options,
        "seats": [
            {
                "seat": seat.index,
                "name": seat.name,
                "bot": seat.bot,
                "claimed": seat.claimed,
                "resigned": seat.resigned,
                "open": seat.name is None,
                "vacation_until": _shown_until(seat, now),
                "rating": changes.get(seat.index),
            }
            for seat in game.seats
        ],
        "rated": game.rated,
        "view": None,
        "fairness": None,
        # Standing orders (services/orders.py): whether they may call and catch here, and
        # the viewer's own (nobody sees another seat's).
        "standing_dos": game.standing_dos,
        "orders": _own_orders(game, viewer),
    }
    if game.state is not None:
        state = state or Game.from_dict(game.state)
        body["view"] = state.view(viewer.seat).to_dict()
        if game.status != "active":  # ended early (nobody left to play): nothing is legal
            body["view"]["legal_actions"] = []
        body["fairness"] = fairness(state, revealed=game.status == "finished")
    body.update(series_parts(game))
    return body


def series_parts(game: GameLike[SeatLike]) -> dict[str, Any]:
    """The game's rematch series and score, and the standing challenge made from it (who
    accepted): queried only for a game of a series."""
    if game.series_id is None and game.rematch_id is None:
        return {"series": None, "rematch": None}
    return {"series": series.series_body(game.series_id, game.series_no,
                                         [s.name for s in game.seats]),
            "rematch": series.challenge_body(game.rematch_id)}


def _rating_changes(game: GameLike[SeatLike]) -> dict[int, dict[str, float]]:
    """A finished rated game's rating changes by seat. Written with its finish, at that
    version; deleting an identity (or a rebuild) changes them without a new version, so they
    are in the game's entity tag too (:func:`game_etag`)."""
    return (ratings.game_changes(game.id) if game.rated and game.status == "finished"
            else {})


def _own_orders(game: GameLike[SeatLike], viewer: Viewer) -> list[str] | None:
    """The viewer's standing orders; None for the host and spectators."""
    seat = next((s for s in game.seats if s.index == viewer.seat), None)
    return None if seat is None else list(seat.standing_orders or [])


def fairness(state: Game, revealed: bool = False) -> dict[str, Any]:
    """Commitments to every dealt round's seed; the game seed once the game is over."""
    return {
        "algorithm": "sha256(round_seed); round_seed = dos_engine.rng.round_seed(seed, round)",
        "commitments": [_commitment(state.seed, number)
                        for number in range(1, state.round_no + 1)],
        "seed": state.seed if state.is_over or revealed else None,
    }


@lru_cache(maxsize=2048)  # every answer about a game lists its rounds' commitments again
def _commitment(seed: str, round_no: int) -> str:
    return seed_commitment(round_seed(seed, round_no))


def fairness_check(game: GameRow, state: Game | None = None) -> dict[str, Any] | None:
    """The fairness section with each round's commitment re-derived from the revealed seed.

    ``verified`` is None until the seed is revealed (the game is over); then each round says
    whether ``sha256(round_seed(seed, round))`` equals the commitment published at its deal.
    """
    if game.state is None:
        return None
    state = state or Game.from_dict(game.state)
    shown = fairness(state, revealed=game.status == "finished")
    seed = shown["seed"]
    rounds = []
    for number, commitment in enumerate(shown["commitments"], start=1):
        derived = seed_commitment(round_seed(seed, number)) if seed is not None else None
        rounds.append({"round": number, "commitment": commitment, "derived": derived,
                       "ok": None if derived is None else derived == commitment})
    return {"seed": seed, "rounds": rounds,
            "verified": None if seed is None else all(r["ok"] for r in rounds)}


def legal_actions_body(game: GameLike[SeatLike], viewer: Viewer, state: Game | None = None,
                       language: str | None = None) -> dict[str, Any]:
    """The viewer's legal actions, numbered; 403 unless a seat's player, 409 before the start.

    ``language`` is the descriptions' (default: the request's, ``Accept-Language``)."""
    seat = require_player(viewer, "list that seat's legal actions")
    state = state or engine_state(game)
    actions = state.legal_actions(seat) if game.status == "active" else []
    language = language or reader_language()
    return {
        "version": game.version,
        "seat": seat,
        "your_turn": bool(actions) and state.current == seat,
        "actions": [
            {"number": number, "action": action.text(),
             "description": state.describe(action, seat, language)}
            for number, action in enumerate(actions, start=1)
        ],
    }


# -- encoded answers: the same viewer re-reading the same game gets the bytes made before ------


class EncodedAnswers:
    """A process's JSON-encoded read answers, by everything each answer is computed from.

    Players' clients and the web table read games again and again between two moves; each
    such read would decode the state, rebuild the view and encode it again. A key holds every
    value its body is made of: the game's version stands for its state (every change of the
    state bumps it), and the viewer's seat and host flag for whose hand it shows. So an answer
    is never served for another viewer, another version or other seats (the key is the
    answer's entity tag, which holds all of them), and an entry is never invalidated, only
    evicted (least recently used first). The token is checked before any
    answer is looked up (``api.games``), on rows the request has just read.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._lock = threading.Lock()  # gthread workers share it between threads

    def get(self, key: tuple[Any, ...], body: Callable[[], dict[str, Any]]) -> bytes:
        """The encoded answer for ``key``; ``body()`` makes it the first time."""
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
                return found
        # Flask's own encoding, as ``jsonify`` would answer: the app's response class.
        encoded = cast(Response, current_app.json.response(body())).get_data()
        with self._lock:
            self._answers[key] = encoded
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return encoded

    def __len__(self) -> int:
        return len(self._answers)


ENCODED_ANSWERS = 2048  # a few KB each: a few MB per process at most


def encoded_answers() -> EncodedAnswers:
    """This app's answers (one per app: tests run several apps, on other databases)."""
    answers: EncodedAnswers | None = current_app.extensions.get("dos_encoded_answers")
    if answers is None:
        answers = current_app.extensions["dos_encoded_answers"] = EncodedAnswers(ENCODED_ANSWERS)
    return answers


def game_json(game: GameSnapshot, viewer: Viewer, tag: str) -> bytes:
    """:func:`game_body` as JSON, made once per process per :func:`game_etag` ``tag``: the tag
    holds everything the body shows this viewer (a 304 relies on it the same way)."""
    return encoded_answers().get(("game", tag), lambda: game_body(game, viewer))


def legal_actions_json(game: GameSnapshot, viewer: Viewer, tag: str) -> bytes:
    """:func:`legal_actions_body` as JSON, made once per process per :func:`actions_etag`
    ``tag`` (computing the tag answered the 403 and 409 already)."""
    return encoded_answers().get(("actions", tag), lambda: legal_actions_body(game, viewer))


# -- entity tags: a client that has the current answer gets 304 Not Modified ------------------


def game_etag(game: GameLike[SeatLike], viewer: Viewer) -> str:
    """The tag of :func:`game_body` for ``viewer``, from the version and the seat rows alone.

    Every change of the state bumps the version. What the body shows of the seats (names,
    claims, resignations, a vacation still running, a finished rated game's rating changes)
    and the turn deadline can change without it (a host's rotation unclaims a seat, a
    vacation ends, an identity is deleted), so they are in the tag as well.
    The viewer is in it: a tag never matches another seat's (or the host's) answer.
    """
    seats = _seats_shown(game, utcnow())
    deadline = game.turn_deadline.isoformat() if game.turn_deadline else None
    # A series' score and a challenge's acceptances change in other games' rows.
    return _tag("g", game, viewer, [game.status, deadline, viewer.host, seats,
                                    game.standing_dos, _own_orders(game, viewer),
                                    series_parts(game), sorted(_rating_changes(game).items())])


def actions_etag(game: GameLike[SeatLike], viewer: Viewer) -> str:
    """The tag of :func:`legal_actions_body`: it changes only with the version and status.

    Whoever would get a 403 or 409 from the body gets it here too, never a 304.
    """
    require_player(viewer, "list that seat's legal actions")
    if game.status in ("waiting", "cancelled"):
        engine_state(game)  # not started: 409
    # The descriptions are in the reader's language: an answer is kept (and tagged) per language.
    return _tag("a", game, viewer, [game.status, reader_language()])


def _tag(kind: str, game: GameLike[SeatLike], viewer: Viewer, parts: list[Any]) -> str:
    seat_id = next((s.public_id for s in game.seats if s.index == viewer.seat), None)
    digest = hashlib.sha256(json.dumps([game.id, seat_id, *parts]).encode()).hexdigest()
    return f"{kind}{game.version}-{digest[:20]}"


def _seats_shown(game: GameLike[SeatLike], now: datetime) -> tuple[tuple[Any, ...], ...]:
    """What a game body shows of its seats besides their position's view (``game_body``)."""
    return tuple((seat.index, seat.name, seat.bot, seat.claimed, seat.resigned,
                  _shown_until(seat, now)) for seat in game.seats)


def _shown_until(seat: SeatLike, now: datetime) -> str | None:
    """A seat's vacation end as the game body shows it: only while it is still running."""
    until = seat.vacation_until
    return until.isoformat() if until is not None and as_utc(until) > now else None


def history_body(game: GameRow, viewer: Viewer, after: int, limit: int) -> dict[str, Any]:
    rows = archive.events_after(game, after, limit)  # from the rows or the game's archive
    events = [event_out(row, viewer) for row in rows]
    return {
        "events": events,
        "next_after": rows[-1].seq if rows else after,
        "more": len(rows) == limit,
    }


def recent_history_body(game: GameRow, viewer: Viewer, limit: int) -> dict[str, Any]:
    """The last ``limit`` events (oldest first), redacted for ``viewer``; ``last``: newest seq."""
    rows = archive.events_latest(game, limit)
    return {"events": [event_out(row, viewer) for row in reversed(rows)],
            "last": game.next_seq - 1}


def table_body(game: GameRow, viewer: Viewer, seen: int | None, recent: int,
               since_limit: int = 200) -> dict[str, Any]:
    """What the table page shows, from one decoding of the state and one read of the history
    (a second only when more than ``since_limit`` events came since the seat looked):

    ``game`` (as :func:`game_body`), ``actions`` (the seat's, or None), ``recent`` (the last
    ``recent`` events, oldest first), ``last`` (the newest seq), ``since`` (up to
    ``since_limit`` events after ``seen``, for a seat that looked before) and ``fairness``
    (checked, once the game is over).
    """
    state = Game.from_dict(game.state) if game.state is not None else None
    body = game_body(game, viewer, state)
    actions = (legal_actions_body(game, viewer, state)
               if viewer.seat is not None and state is not None else None)
    last = game.next_seq - 1
    since_seq = seen if viewer.seat is not None and seen is not None and seen < last else None
    start = max(0, last - recent) if since_seq is None else min(max(0, last - recent), since_seq)
    rows = archive.events_after(game, start, since_limit + recent)
    if rows and rows[-1].seq < last:  # a long absence: the newest events were not in reach
        latest = list(reversed(archive.events_latest(game, recent)))
    else:
        latest = list(rows[-recent:])
    since = [] if since_seq is None else [row for row in rows if row.seq > since_seq][:since_limit]
    return {
        "game": body,
        "actions": actions,
        "recent": [event_out(row, viewer) for row in latest],
        "last": last,
        "since": [event_out(row, viewer) for row in since],
        "fairness": fairness_check(game, state) if game.status == "finished" else None,
    }


def seat_settings_body(game: GameRow, viewer: Viewer) -> dict[str, Any]:
    """The viewer's own seat settings: channels, events, digest, vacation (players only)."""
    index = require_player(viewer, "read that seat's settings")
    seat = seat_of(game, index)
    now = utcnow()
    used = seat.vacation_used if seat.vacation_year == now.year else 0
    return {
        "seat": seat.index,
        "name": seat.name,
        "email": seat.email,
        "email_unsubscribed": seat.email_unsubscribed,
        "webhook_url": seat.webhook_url,
        "webhook_disabled": seat.webhook_disabled,
        "events": seat.notify_events,  # None: every event on every channel
        "digest": seat.digest,
        "time_zone": seat.time_zone,  # None: UTC
        "language": seat.language,  # None: en
        "reminders": attention.reminders_of(seat),  # when its turn is reminded
        "nudges": not seat.nudges_off,
        "next_nudge_at": seat.last_nudged_at and (as_utc(seat.last_nudged_at)
                                                  + NUDGE_EVERY).isoformat(),
        "resigned": seat.resigned,
        "vacation_until": seat.vacation_until.isoformat()
        if seat.vacation_until and as_utc(seat.vacation_until) > now else None,
        "vacation_days_left": game.vacation_days - used,
    }


def reader_zone(game: GameRow, viewer: Viewer) -> str | None:
    """The time zone the viewer reads times in: their seat's (None: UTC)."""
    if viewer.seat is None or not 0 <= viewer.seat < len(game.seats):
        return None
    return seat_of(game, viewer.seat).time_zone


def invites_body(game: GameRow, viewer: Viewer) -> dict[str, Any]:
    """Host only: a fresh invite for every named seat not yet claimed, and the invite code.

    A game whose seats were all named at creation starts at once; its invites still let each
    person claim their seat.
    """
    require_host(viewer)
    return {
        "invite_code": game.invite_code if any(s.name is None for s in game.seats) else None,
        "invites": [
            {"seat": seat.index, "name": seat.name,
             "invite": seat_token("invite", game, seat)
             if game.status in ("waiting", "active") else None}
            for seat in game.seats if seat.name is not None and not seat.bot and not seat.claimed
        ],
    }


def event_out(row: HistoryEvent, viewer: Viewer) -> dict[str, Any]:
    shown = redact({"kind": row.kind, "seat": row.seat, "data": row.data, "secret": row.secret},
                   viewer.seat)
    shown.update({"seq": row.seq, "version": row.version, "at": row.created_at.isoformat()})
    return shown


def record_body(game: GameRow) -> dict[str, Any]:
    if game.status != "finished" or game.state is None:
        raise GameNotFinished(_("a game's record (with its seed) is available once the game "
                                "is over"))
    state = Game.from_dict(game.state)
    record = GameRecord(state.players, state.seed, state.options,
                        tuple(archive.action_list(game)))
    return record.to_dict()


# -- the answers of writes ------------------------------------------------------------------


def turn_body(turn: Turn) -> dict[str, Any]:
    """A move's answer: the version it made, the actions applied, the events (redacted for the
    player) and the game after it. Made in the move's transaction (it is what an
    Idempotency-Key gives back)."""
    return {
        "version": turn.game.version,
        "applied": [action.text() for action in turn.applied],
        "events": [event_out(row, turn.viewer) for row in turn.rows],
        "game": game_body(turn.game, turn.viewer, turn.state),
    }


def written_body(written: Written) -> dict[str, Any]:
    """The game as a write left it, for the one who wrote."""
    return game_body(written.game, written.viewer)


def created_body(created: Created) -> dict[str, Any]:
    """A new game for its host, with the host token, the invite code and the invites."""
    body = written_body(created)
    body["host_token"] = created.host_token
    body["invite_code"] = created.invite_code
    body["invites"] = [{**_invite_out(invite), "webhook_secret": invite.webhook_secret}
                       for invite in created.invites]
    return body


def rematch_body(done: Rematch) -> dict[str, Any]:
    """A Rematch press: the new game as the presser sees it, their seat's player token, and
    the host token when this press made the challenge (shown once)."""
    body: dict[str, Any] = {"game_id": done.game.id, "from": done.old_id,
                            "created": done.created, "seat": done.seat,
                            "player_token": done.player_token}
    if done.created:
        body["host_token"] = done.host_token
        body["invite_code"] = done.invite_code
    body["game"] = written_body(done)
    return body


def joined_body(joined: Joined) -> dict[str, Any]:
    return {"seat": joined.seat, "name": joined.name, "player_token": joined.player_token,
            "game": written_body(joined)}


def seat_removed_body(removed: SeatRemoved) -> dict[str, Any]:
    body = written_body(removed)
    body["invites"] = [_invite_out(invite) for invite in removed.invites]
    return body


def _invite_out(invite: Invite) -> dict[str, Any]:
    return {"seat": invite.seat, "name": invite.name, "invite": invite.invite}


__all__ = [
    "EncodedAnswers",
    "actions_etag",
    "created_body",
    "encoded_answers",
    "event_out",
    "fairness",
    "fairness_check",
    "game_body",
    "game_etag",
    "game_json",
    "history_body",
    "invites_body",
    "joined_body",
    "legal_actions_body",
    "legal_actions_json",
    "reader_zone",
    "recent_history_body",
    "record_body",
    "seat_removed_body",
    "seat_settings_body",
    "turn_body",
    "written_body",
]
