"""Game services: each public function is one transaction and owns it.

Views call these with parsed input; these lock the game row, check version and turn, apply the
engine, append events and commit. The engine never sees SQLAlchemy; the ORM never maps engine
classes: the game row stores ``Game.to_dict()``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import joinedload

from dos_engine import (
    DosError,
    Event,
    EventKind,
    Game,
    GameRecord,
    IllegalActionError,
    InvalidOptionsError,
    Options,
    make_strategy,
    redact,
    round_seed,
    seed_commitment,
    start_game,
)
from dos_engine.errors import AmbiguousActionError, NotYourTurnError
from dos_server import tokens
from dos_server.database import write_transaction
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow, IdempotencyRow, SeatRow, as_utc, utcnow
from dos_server.problems import Problem
from dos_server.services import notify

BOT_STRATEGIES = ("random", "greedy")
MAX_BOT_ACTIONS_PER_REQUEST = 20_000


@dataclass(frozen=True)
class SeatSpec:
    name: str | None = None  # None: an open seat, claimed with the game's invite code
    email: str | None = None
    webhook_url: str | None = None
    bot: str | None = None


@dataclass(frozen=True)
class Viewer:
    """Who is asking: a seat (player token), the host, or a spectator (both None/False)."""

    seat: int | None = None
    host: bool = False


# -- reading --------------------------------------------------------------------------------


def get_game(game_id: str, *, for_update: bool = False) -> GameRow:
    # Seats come with the game in the same SELECT, not lazily later (a lazy load would
    # autoflush a half-made change and cost a second UPDATE of the game row). The lock is
    # taken on the game row only: FOR UPDATE OF games, beside the outer join.
    query = select(GameRow).where(GameRow.id == game_id).options(joinedload(GameRow.seats))
    if for_update:
        query = query.with_for_update(of=GameRow)
    row = db.session.execute(query).unique().scalar_one_or_none()
    if row is None:
        raise Problem(404, "game-not-found", "No such game",
                      f"there is no game {game_id!r} on this server; check the game id")
    return row


def authenticate(game: GameRow, bearer: str | None, *, allow_host: bool = True) -> Viewer:
    """Map an ``Authorization: Bearer`` token to a viewer of this game (401/403 on failure)."""
    if not bearer:
        return Viewer()
    claims = None
    for purpose in ("player", "host") if allow_host else ("player",):
        try:
            claims = tokens.read(purpose, bearer)
        except Problem:
            continue
        if purpose == "host":
            _check_game(game, claims.game_id)
            if claims.version != game.host_token_version:
                raise tokens.unauthorized("this host token was replaced; use the newest one")
            return Viewer(host=True)
        break
    if claims is None or claims.seat is None:
        raise tokens.unauthorized(
            "this is not a valid token for this server (it may be for another server, or cut "
            "short when copied)"
        )
    _check_game(game, claims.game_id)
    seat = _seat(game, claims.seat)
    if seat.token_version != claims.version:
        raise tokens.unauthorized(
            "this token was revoked (the seat's token was rotated); use the newest token"
        )
    return Viewer(seat=seat.index)


def _check_game(game: GameRow, token_game: str) -> None:
    if token_game != game.id:
        raise Problem(403, "wrong-game", "Token for another game",
                      f"this token belongs to game {token_game}, not to game {game.id}")


def _seat(game: GameRow, index: int) -> SeatRow:
    for seat in game.seats:
        if seat.index == index:
            return seat
    raise Problem(403, "no-such-seat", "No such seat", f"game {game.id} has no seat {index}")


def engine_state(game: GameRow) -> Game:
    if game.state is None:
        raise Problem(409, "game-not-started", "Game not started",
                      "the game has not started yet: it starts when every seat is filled, "
                      "or when the host starts it")
    return Game.from_dict(game.state)


def game_body(game: GameRow, viewer: Viewer, state: Game | None = None) -> dict[str, Any]:
    """The game as ``viewer`` may see it: never another seat's hand or the draw pile."""
    body: dict[str, Any] = {
        "id": game.id,
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
                "vacation_until": seat.vacation_until.isoformat()
                if seat.vacation_until and as_utc(seat.vacation_until) > utcnow() else None,
            }
            for seat in game.seats
        ],
        "view": None,
        "fairness": None,
    }
    if game.state is not None:
        state = state or Game.from_dict(game.state)
        body["view"] = state.view(viewer.seat).to_dict()
        body["fairness"] = fairness(state)
    return body


def fairness(state: Game) -> dict[str, Any]:
    """Commitments to every dealt round's seed; the game seed once the game is over."""
    return {
        "algorithm": "sha256(round_seed); round_seed = dos_engine.rng.round_seed(seed, round)",
        "commitments": [
            seed_commitment(round_seed(state.seed, number))
            for number in range(1, state.round_no + 1)
        ],
        "seed": state.seed if state.is_over else None,
    }


def legal_actions_body(game: GameRow, viewer: Viewer) -> dict[str, Any]:
    if viewer.seat is None:
        raise Problem(403, "not-a-player", "Players only",
                      "only a seat's player token can list that seat's legal actions")
    state = engine_state(game)
    actions = state.legal_actions(viewer.seat)
    return {
        "version": game.version,
        "seat": viewer.seat,
        "your_turn": state.current == viewer.seat and not state.is_over,
        "actions": [
            {"number": number, "action": action.text(),
             "description": state.describe(action, viewer.seat)}
            for number, action in enumerate(actions, start=1)
        ],
    }


def history_body(game: GameRow, viewer: Viewer, after: int, limit: int) -> dict[str, Any]:
    rows = db.session.execute(
        select(EventRow)
        .where(EventRow.game_id == game.id, EventRow.seq > after)
        .order_by(EventRow.seq)
        .limit(limit)
    ).scalars().all()
    events = [event_out(row, viewer) for row in rows]
    return {
        "events": events,
        "next_after": rows[-1].seq if rows else after,
        "more": len(rows) == limit,
    }


def event_out(row: EventRow, viewer: Viewer) -> dict[str, Any]:
    shown = redact({"kind": row.kind, "seat": row.seat, "data": row.data, "secret": row.secret},
                   viewer.seat)
    shown.update({"seq": row.seq, "version": row.version, "at": row.created_at.isoformat()})
    return shown


def record_body(game: GameRow) -> dict[str, Any]:
    if game.status != "finished" or game.state is None:
        raise Problem(409, "game-not-finished", "Game not finished",
                      "a game's record (with its seed) is available once the game is over")
    state = Game.from_dict(game.state)
    actions = db.session.execute(
        select(EventRow.seat, EventRow.data)
        .where(EventRow.game_id == game.id, EventRow.kind == "action")
        .order_by(EventRow.seq)
    ).all()
    record = GameRecord(state.players, state.seed, state.options,
                        tuple((seat, data["action"]) for seat, data in actions))
    return record.to_dict()


# -- creating and joining -------------------------------------------------------------------


def create_game(
    seats: Sequence[SeatSpec],
    options: dict[str, Any],
    turn_time_limit: int | None,
    timeout_policy: str = "random",
    forfeit_after: int | None = None,
    vacation_days: int = 14,
) -> dict[str, Any]:
    if not 2 <= len(seats) <= 4:
        raise _invalid("a game has 2 to 4 seats (RULES.md 2.1)")
    if all(spec.bot for spec in seats):
        raise _invalid("at least one seat must be a person, not a bot")
    for spec in seats:
        if spec.bot and spec.bot not in BOT_STRATEGIES:
            raise _invalid(f"unknown bot {spec.bot!r}: choose from {', '.join(BOT_STRATEGIES)}")
    if timeout_policy not in BOT_STRATEGIES:
        raise _invalid(f"timeout_policy must be one of {', '.join(BOT_STRATEGIES)}")
    try:
        parsed = Options.from_dict(options)
    except InvalidOptionsError as error:
        raise _invalid(str(error)) from None
    _check_unique_names([spec.name or (spec.bot and f"{spec.bot}-bot") for spec in seats])
    with write_transaction():
        game = GameRow(
            id=_new_id(),
            status="waiting",
            version=1,
            options=parsed.to_dict(),
            invite_code=secrets.token_urlsafe(9),
            host_token_version=1,
            turn_time_limit=turn_time_limit,
            timeout_policy=timeout_policy,
            forfeit_after=forfeit_after,
            vacation_days=vacation_days,
            next_seq=1,
        )
        for index, spec in enumerate(seats):
            name = spec.name or (f"{spec.bot}-bot-{index}" if spec.bot else None)
            game.seats.append(SeatRow(
                index=index, name=name, email=spec.email, webhook_url=spec.webhook_url,
                bot=spec.bot, token_version=1, claimed=bool(spec.bot),
                webhook_secret=_webhook_secret_for(game, spec.webhook_url),
            ))
        db.session.add(game)
        db.session.flush()
        if all(seat.name for seat in game.seats):
            _start(game)
        invites = []
        for seat in game.seats:
            if seat.name is None or seat.bot:
                continue
            invite = tokens.issue("invite", game.id, seat.index, seat.token_version)
            invites.append({"seat": seat.index, "name": seat.name, "invite": invite,
                            "webhook_secret": seat.webhook_secret})
            notify.enqueue(game, "invited", [seat], None,
                           {"invite": f"{game.id}:{invite}",
                            "join": f"dos-client join {game.id}:{invite}"},
                           key=f"created-{seat.index}")  # seats may share a webhook URL
        body = game_body(game, Viewer(host=True))
        body["host_token"] = tokens.issue("host", game.id, None, game.host_token_version)
        body["invite_code"] = game.invite_code
        body["invites"] = invites
    return body


def _webhook_secret_for(game: GameRow, url: str | None) -> str | None:
    """Seats of one game that share a webhook URL share its secret (one delivery per event)."""
    if not url:
        return None
    for seat in game.seats:
        if seat.webhook_url == url and seat.webhook_secret:
            return seat.webhook_secret
    return notify.new_webhook_secret()


def set_notifications(game_id: str, viewer: Viewer, index: int, email: str | None,
                      webhook_url: str | None, events: dict[str, list[str]] | None,
                      fields: set[str], digest: bool | None = None) -> dict[str, Any]:
    """Change a seat's channels and the events each receives (host or the seat itself)."""
    if not viewer.host and viewer.seat != index:
        raise Problem(403, "not-your-seat", "Not your seat",
                      "only the host or the seat's own player can change its notifications")
    with write_transaction():
        game = get_game(game_id, for_update=True)
        seat = _seat(game, index)
        secret_shown = None
        if "email" in fields:
            seat.email = email
            seat.email_unsubscribed = False
        if "webhook_url" in fields:
            seat.webhook_url = webhook_url
            seat.webhook_disabled = False
            seat.webhook_secret = None
            seat.webhook_secret = _webhook_secret_for(game, webhook_url)
            secret_shown = seat.webhook_secret
        if "events" in fields:
            seat.notify_events = events
        if digest is not None:
            seat.digest = digest
        return {
            "seat": seat.index,
            "email": seat.email,
            "webhook_url": seat.webhook_url,
            "events": seat.notify_events or {c: list(notify.EVENTS) for c in notify.CHANNELS},
            "digest": seat.digest,
            "webhook_secret": secret_shown,  # shown once, when the URL is set
        }


def start_vacation(game_id: str, viewer: Viewer, days: int) -> dict[str, Any]:
    """Pause the seat's clock for ``days`` days, out of the game's allowance per year."""
    if viewer.seat is None:
        raise Problem(403, "not-a-player", "Players only", "only a seat's player token can "
                      "take a vacation")
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status not in ("waiting", "active"):
            raise Problem(409, "game-not-active", "Game not in play",
                          f"game {game.id} is {game.status}")
        seat = _seat(game, viewer.seat)
        now = utcnow()
        used = seat.vacation_used if seat.vacation_year == now.year else 0
        left = game.vacation_days - used
        if days > left:
            raise Problem(409, "no-vacation-left", "Not enough vacation days",
                          f"you have {left} vacation day(s) left this year in this game "
                          f"(the game allows {game.vacation_days})")
        seat.vacation_year = now.year
        seat.vacation_used = used + days
        pause = timedelta(days=days)
        base = now if seat.vacation_until is None else max(now, as_utc(seat.vacation_until))
        seat.vacation_until = base + pause
        state = Game.from_dict(game.state) if game.state is not None else None
        if (state is not None and not state.is_over and state.current == seat.index
                and game.turn_deadline is not None and game.turn_started_at is not None):
            game.turn_deadline = as_utc(game.turn_deadline) + pause
            game.turn_started_at = as_utc(game.turn_started_at) + pause
        game.version += 1
        return {"seat": seat.index, "vacation_until": seat.vacation_until.isoformat(),
                "days_left": game.vacation_days - seat.vacation_used,
                "turn_deadline": game.turn_deadline.isoformat() if game.turn_deadline
                else None}


def unsubscribe(token: str) -> dict[str, Any]:
    """The List-Unsubscribe link: stop this seat's emails for this game, no login needed."""
    claims = tokens.read("unsubscribe", token)
    with write_transaction():
        game = get_game(claims.game_id, for_update=True)
        assert claims.seat is not None
        seat = _seat(game, claims.seat)
        seat.email_unsubscribed = True
        return {"game_id": game.id, "seat": seat.index, "unsubscribed": True}


def join_game(game_id: str, invite: str | None, code: str | None, name: str | None) -> dict[str, Any]:
    """Claim a seat with its invite token, or an open seat with the game's invite code."""
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status in ("finished", "cancelled"):
            raise Problem(409, "game-closed", "Game closed", f"game {game.id} is {game.status}")
        if invite:
            claims = tokens.read("invite", invite)
            _check_game(game, claims.game_id)
            assert claims.seat is not None
            seat = _seat(game, claims.seat)
            if seat.token_version != claims.version:
                raise tokens.unauthorized("this invite was revoked; ask the host for a new one")
        elif code:
            if not secrets.compare_digest(code, game.invite_code):
                raise Problem(403, "bad-invite-code", "Wrong invite code",
                              "that invite code is not this game's; check it with the host")
            if not name:
                raise _invalid("give a name to take an open seat with the invite code")
            open_seats = [s for s in game.seats if s.name is None]
            if not open_seats:
                raise Problem(409, "no-open-seat", "No open seat",
                              "every seat of this game is taken")
            _check_unique_names([s.name for s in game.seats if s.name] + [name])
            seat = open_seats[0]
            seat.name = name
        else:
            raise _invalid("send either an invite token, or the invite code and a name")
        seat.claimed = True
        game.version += 1
        if game.status == "waiting" and all(s.name for s in game.seats):
            _start(game)
        token = tokens.issue("player", game.id, seat.index, seat.token_version)
        body = {"seat": seat.index, "name": seat.name, "player_token": token,
                "game": game_body(game, Viewer(seat=seat.index))}
    return body


def start_now(game_id: str, viewer: Viewer) -> dict[str, Any]:
    """The host starts the game with the seats filled so far; open seats are removed."""
    _require_host(viewer)
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status != "waiting":
            raise Problem(409, "already-started", "Already started",
                          f"game {game.id} is {game.status}, not waiting for players")
        filled = [s for s in game.seats if s.name is not None]
        if len(filled) < 2 or all(s.bot for s in filled):
            raise Problem(409, "not-enough-players", "Not enough players",
                          "a game needs at least two filled seats, one of them a person")
        for seat in [s for s in game.seats if s.name is None]:
            game.seats.remove(seat)
        db.session.flush()  # delete first: renumbering onto a removed index breaks the unique key
        for new_index, seat in enumerate(game.seats):
            if seat.index != new_index:
                seat.index = new_index
                seat.token_version += 1  # its tokens named the old number (maybe another seat's)
        game.version += 1
        db.session.flush()
        _start(game)
        return game_body(game, viewer)


def _require_host(viewer: Viewer) -> None:
    if not viewer.host:
        raise Problem(403, "host-only", "Host only", "only the game's host token can do this")


def _start(game: GameRow) -> None:
    """Dealer draw and deal (2.2-2.3) with a fresh secret seed, then bots play if first."""
    seed = secrets.token_hex(32)
    names = [seat.name or "" for seat in game.seats]
    state, events = start_game(names, seed, Options.from_dict(game.options))
    game.seed = seed
    game.status = "active"
    before = (0, -1, False)
    rows = append_events(game, events)
    rows += run_bots(game, state)
    save_state(game, state, before)
    notify.after_change(game, state, before, [(r.kind, r.seat) for r in rows])


def cancel(game_id: str, viewer: Viewer) -> dict[str, Any]:
    """Host: cancel a game that has not started."""
    _require_host(viewer)
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status != "waiting":
            raise Problem(409, "already-started", "Already started",
                          f"only a game that has not started can be cancelled; this one is "
                          f"{game.status}")
        game.status = "cancelled"
        game.version += 1
        return game_body(game, viewer)


def remove_seat(game_id: str, viewer: Viewer, index: int) -> dict[str, Any]:
    """Host: remove a seat before the game starts (at least two must remain)."""
    _require_host(viewer)
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status != "waiting":
            raise Problem(409, "already-started", "Already started",
                          "seats can only be removed before the game starts")
        seat = _seat(game, index)
        if len(game.seats) <= 2:
            raise Problem(409, "too-few-seats", "Too few seats", "a game keeps at least two seats")
        game.seats.remove(seat)
        db.session.flush()
        for new_index, other in enumerate(game.seats):
            other.index = new_index
            other.token_version += 1  # seat numbers moved: earlier invites and tokens lapse
        game.version += 1
        db.session.flush()
        if all(s.name for s in game.seats):
            _start(game)
        body = game_body(game, viewer)
        body["invites"] = [
            {"seat": s.index, "name": s.name,
             "invite": tokens.issue("invite", game.id, s.index, s.token_version)}
            for s in game.seats if s.name is not None and not s.bot
        ]
        return body


def rotate_token(game_id: str, viewer: Viewer, index: int) -> dict[str, Any]:
    """Revoke a seat's tokens and issue a new one (the host for any seat, a player for theirs)."""
    if not viewer.host and viewer.seat != index:
        raise Problem(403, "not-your-seat", "Not your seat",
                      "only the host or the seat's own player can rotate its token")
    with write_transaction():
        game = get_game(game_id, for_update=True)
        seat = _seat(game, index)
        seat.token_version += 1
        return {
            "seat": seat.index,
            "player_token": tokens.issue("player", game.id, seat.index, seat.token_version),
            "invite": tokens.issue("invite", game.id, seat.index, seat.token_version),
        }


def resign(game_id: str, viewer: Viewer) -> dict[str, Any]:
    """A player resigns: from now on the ``random`` strategy plays their seat to the end."""
    if viewer.seat is None:
        raise Problem(403, "not-a-player", "Players only", "only a seat's player token can resign")
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status not in ("active", "waiting"):
            raise Problem(409, "game-not-active", "Game not in play",
                          f"game {game.id} is {game.status}")
        resign_seat(game, viewer.seat)
        return game_body(game, viewer)


def resign_seat(game: GameRow, index: int) -> None:
    """Resign seat ``index`` of the locked ``game`` (the caller owns the transaction)."""
    seat = _seat(game, index)
    if seat.resigned:
        raise Problem(409, "already-resigned", "Already resigned", "you have already resigned")
    seat.resigned = True
    game.version += 1
    append_event(game, seat.index, "resigned", {})
    if game.state is not None:
        state = Game.from_dict(game.state)
        before = turn_key(state)
        rows = run_bots(game, state)
        save_state(game, state, before)
        notify.after_change(game, state, before, [(r.kind, r.seat) for r in rows])


# -- playing --------------------------------------------------------------------------------


def submit_actions(
    game_id: str,
    bearer: str | None,
    expected_version: int,
    actions: Sequence[str] | None,
    idempotency_key: str | None,
    number: int | None = None,
) -> dict[str, Any]:
    """Apply one action or a whole turn atomically for the token's seat.

    ``number`` picks from the numbered legal actions of ``expected_version``. The game is
    read once, under the lock, and authenticated there.
    """
    request_hash = hashlib.sha256(json.dumps(
        {"version": expected_version, "actions": list(actions or []), "number": number}
    ).encode()).hexdigest()
    with write_transaction():
        game = get_game(game_id, for_update=True)
        viewer = authenticate(game, bearer)
        if viewer.seat is None:
            raise Problem(403, "not-a-player", "Players only",
                          "only a seat's player token can play")
        if idempotency_key:
            stored = db.session.get(IdempotencyRow, (game.id, viewer.seat, idempotency_key))
            if stored is not None:
                if stored.request_hash != request_hash:
                    raise Problem(422, "idempotency-key-reused", "Idempotency-Key reused",
                                  "this Idempotency-Key was used for a different request; "
                                  "use a new key for a new request")
                return dict(stored.body)
        body = apply_turn(game, viewer.seat, expected_version, actions, number)
        if idempotency_key:
            db.session.add(IdempotencyRow(game_id=game.id, seat=viewer.seat, key=idempotency_key,
                                          request_hash=request_hash, status=200, body=body))
    return body


def apply_turn(
    game: GameRow,
    seat: int,
    expected_version: int,
    actions: Sequence[str] | None,
    number: int | None = None,
) -> dict[str, Any]:
    """Apply one action or a whole turn for ``seat`` of the locked ``game``; returns the body.

    The core of :func:`submit_actions`, shared with play by email (the caller has locked the
    game and authenticated the seat, and owns the transaction: a Problem rolls it back).
    """
    viewer = Viewer(seat=seat)
    if game.status != "active":
        raise Problem(409, "game-not-active", "Game not in play",
                      f"game {game.id} is {game.status}")
    if expected_version != game.version:
        raise Problem(409, "stale-version", "The game has moved on",
                      f"you sent version {expected_version} but the game is at version "
                      f"{game.version}: someone moved first. Reload the game and choose again.",
                      current_version=game.version)
    state = engine_state(game)
    if number is not None:
        listed = state.legal_actions(seat)
        if number > len(listed):
            raise Problem(422, "no-such-action", "No such action",
                          f"there are {len(listed)} legal actions; choose a number from 1 "
                          f"to {len(listed)}" if listed else
                          "you have no legal action now: it is not your turn")
        actions = [listed[number - 1].text()]
    game.version += 1  # one version per committed request
    text = "; ".join(actions or [])
    before = turn_key(state)
    try:
        parsed, events = state.play_text(text, seat)
    except AmbiguousActionError as error:
        raise Problem(422, "ambiguous-action", "Ambiguous action", str(error),
                      candidates=[a.text() for a in error.candidates]) from None
    except NotYourTurnError as error:
        raise Problem(409, "not-your-turn", "Not your turn", error.detail,
                      rule=error.rule) from None
    except IllegalActionError as error:
        raise Problem(422, "illegal-action", "Illegal action", error.detail,
                      rule=error.rule) from None
    except DosError as error:
        raise Problem(400, "invalid-action", "Not an action", str(error)) from None
    new_rows = [append_action(game, seat, action.text()) for action in parsed]
    new_rows += append_events(game, events)
    new_rows += run_bots(game, state)
    save_state(game, state, before)
    notify.after_change(game, state, before, [(r.kind, r.seat) for r in new_rows])
    db.session.flush()
    body = {
        "version": game.version,
        "applied": [a.text() for a in parsed],
        "events": [event_out(row, viewer) for row in new_rows],
        "game": game_body(game, viewer, state),
    }
    return body


def run_bots(game: GameRow, state: Game) -> list[EventRow]:
    """Bots (and resigned seats, played by ``random``) move right after the turn before them."""
    seats = {seat.index: seat for seat in game.seats}
    rows: list[EventRow] = []
    for _ in range(MAX_BOT_ACTIONS_PER_REQUEST):
        if state.is_over:
            return rows
        seat = seats[state.current]
        if not (seat.bot or seat.resigned):
            return rows
        strategy = make_strategy(seat.bot or "random", f"{state.seed}:{state.actions_played}")
        legal = state.legal_actions(seat.index)
        action = strategy(state.view(seat.index), legal)
        events = state.play(action, seat.index)
        rows.append(append_action(game, seat.index, action.text()))
        rows += append_events(game, events)
    raise RuntimeError("bots did not finish within the per-request limit")


def turn_key(state: Game) -> tuple[int, int, bool]:
    """(round, current seat, over): a turn changed when this did."""
    return (state.round_no, state.current, state.is_over)


def save_state(game: GameRow, state: Game, before: tuple[int, int, bool],
          now: datetime | None = None) -> None:
    """Store the state; a new turn restarts the turn clock (deadline and 80% reminder).

    ``now``: the worker's clock when it applies a timeout (default: the wall clock).
    """
    game.state = state.to_dict()
    if state.is_over:
        game.status = "finished"
        game.turn_deadline = None
        game.turn_started_at = None
    elif (state.round_no, state.current) != before[:2]:
        start = now or utcnow()
        seat = next(s for s in game.seats if s.index == state.current)
        if seat.vacation_until is not None:  # the clock waits for the player's return
            start = max(start, as_utc(seat.vacation_until))
        game.turn_started_at = start
        game.reminded = False
        game.turn_deadline = (start + timedelta(seconds=game.turn_time_limit)
                              if game.turn_time_limit else None)


def append_event(game: GameRow, seat: int | None, kind: str, data: dict[str, Any],
                 secret: dict[str, Any] | None = None) -> EventRow:
    """Append one history row at the game's next sequence number and current version."""
    row = EventRow(game_id=game.id, seq=game.next_seq, version=game.version, seat=seat,
                   kind=kind, data=data, secret=secret, created_at=utcnow())
    db.session.add(row)
    game.next_seq += 1
    return row


def append_action(game: GameRow, seat: int, text: str) -> EventRow:
    return append_event(game, seat, "action", {"action": text})


def append_events(game: GameRow, events: Sequence[Event]) -> list[EventRow]:
    rows = []
    for event in events:
        stored = event.to_dict()
        rows.append(append_event(game, event.seat, stored["kind"], stored["data"],
                                 stored.get("secret")))
    return rows


def _new_id() -> str:
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(10))


def _check_unique_names(names: Sequence[str | None]) -> None:
    given = [n.strip().lower() for n in names if n]
    if len(set(given)) != len(given):
        raise _invalid("every seat needs a different name")


def _invalid(detail: str) -> Problem:
    return Problem(422, "invalid-input", "Invalid input", detail)


__all__ = [
    "EventKind",
    "SeatSpec",
    "Viewer",
    "apply_turn",
    "authenticate",
    "cancel",
    "create_game",
    "game_body",
    "get_game",
    "history_body",
    "join_game",
    "legal_actions_body",
    "record_body",
    "remove_seat",
    "resign",
    "resign_seat",
    "rotate_token",
    "set_notifications",
    "start_now",
    "start_vacation",
    "submit_actions",
    "unsubscribe",
]
