"""Notifications into the outbox, inside the transaction of the change that causes them.

Nothing here talks to SMTP or HTTP: the worker (``dos_server.worker``) delivers the rows.
Each row carries everything its message needs (the seat's view, its numbered moves), so a
message says what was true when the change committed, however late it is delivered.

A row's words are its reader's: the payload is made inside ``i18n.in_language`` of the seat's
language (:func:`reader_language`), so the lines it carries (what happened since, the moves'
descriptions) are in that language, and it names the language and zone the worker renders
the email in, whatever the language of the request that caused it.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any

from flask_babel import gettext as _
from sqlalchemy import insert

from dos_engine import Game, redact
from dos_engine.wording import describe
from dos_server import i18n, tokens, urls
from dos_server.database import insert_rows
from dos_server.extensions import db
from dos_server.models import GameRow, IdentityRow, NotificationRow, SeatRow, utcnow
from dos_server.services import access, archive, attention, chat_history, ratings, series
from dos_server.services.access import get_game, seat_named_by

EVENTS = ("your_turn", "reminder", "timed_out", "caught", "round_over", "game_over", "invited")
CHANNELS = ("email", "webhook")
DIGESTED = ("your_turn", "reminder")  # what digest mode gathers into one daily email
# Not choosable: sent whenever the seat has the channel (the other channel, a new address).
# A nudge (the seat's own switch: SeatRow.nudges_off) and the vote on an absent seat too.
# A chat message: webhooks always, an email only when the seat asked (services/chat.py).
ALWAYS = ("undeliverable", "new_address", "nudge", "abandoned", "message")
SINCE_LIMIT = 40  # "since your last turn" tells at most this many events

# Seats (public ids) that get their new turn inside another email of this moment (the answer
# to their emailed move, the timed-out email): no separate your-turn email for them.
_ANSWERED: ContextVar[frozenset[str]] = ContextVar("dos_answered", default=frozenset())


@contextmanager
def one_message_for_seat_of(reply_token: str | None) -> Iterator[None]:
    """:func:`one_message_for` the seat a reply-address token names (if it names one)."""
    claims = tokens.read_mail(reply_token) if reply_token else None
    if claims is None or claims.seat_id is None:
        yield
        return
    with one_message_for(claims.seat_id):
        yield


@contextmanager
def one_message_for(seat_id: str) -> Iterator[None]:
    """While this runs, a new turn of ``seat_id`` sends no your-turn email: the caller's own
    email to the seat (the answer to its move, its timed-out email) carries the new table and
    list. Webhooks are sent as always."""
    token = _ANSWERED.set(_ANSWERED.get() | {seat_id})
    try:
        yield
    finally:
        _ANSWERED.reset(token)


def wants(seat: SeatRow, channel: str, event: str) -> bool:
    """Whether ``seat`` receives ``event`` on ``channel`` (bots never do)."""
    if seat.bot:
        return False
    if event in ALWAYS:  # not a choosable event: the channel just has to exist
        return bool(seat.webhook_url and seat.webhook_secret and not seat.webhook_disabled
                    if channel == "webhook" else seat.email and not seat.email_unsubscribed)
    if channel == "email":
        if not seat.email or seat.email_unsubscribed:
            return False
    elif not seat.webhook_url or seat.webhook_disabled or not seat.webhook_secret:
        return False
    if seat.notify_events is None:
        return True
    return event in seat.notify_events.get(channel, [])


def new_webhook_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and base64 of 24 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def links(game: GameRow) -> dict[str, str]:
    return urls.api_game_urls(game.id)


def enqueue(
    game: GameRow,
    event: str,
    seats: Iterable[SeatRow],
    state: Game | None,
    data: dict[str, Any] | None = None,
    key: str | None = None,
    channels: Sequence[str] = CHANNELS,
    due: datetime | None = None,
) -> int:
    """Write the outbox rows for ``event`` to ``seats``; returns how many.

    ``key`` tells this occurrence of the event apart (default: the game version), so that a
    retried transaction or a second worker never writes the same delivery twice. ``due``:
    when the rows may go out (default: now).
    """
    occurrence = key or f"v{game.version}"
    data = data or {}
    chosen = list(seats)
    rows: list[dict[str, Any]] = []
    for seat in chosen:
        if "email" not in channels or not wants(seat, "email", event):
            continue
        if seat.digest and event in DIGESTED:
            continue  # it will be in the seat's daily digest instead
        if event == "your_turn" and seat.public_id in _ANSWERED.get():
            continue  # the email the seat is getting now already says it is its turn
        payload = email_payload(game, seat, state, event, data)
        rows.append(outbox_row(game.id, [seat.index], "email", seat.email or "", event,
                               f"{game.id}:{occurrence}:{event}:email:{seat.index}", payload,
                               due))
    by_url: dict[str, list[SeatRow]] = {}
    for seat in chosen:
        if "webhook" in channels and wants(seat, "webhook", event):
            by_url.setdefault(seat.webhook_url or "", []).append(seat)
    for url, group in by_url.items():
        payload = {
            "type": f"game.{event}",
            "game_id": game.id,
            "game_title": game.title,
            "seat": group[0].index if len(group) == 1 else None,
            "seats": [s.index for s in group],
            "version": game.version,
            "links": links(game),
            "data": data,
            "secret": group[0].webhook_secret,
        }
        rows.append(outbox_row(game.id, [s.index for s in group], "webhook", url, event,
                               f"{game.id}:{occurrence}:{event}:webhook:{url}", payload, due))
    write_outbox(rows)
    return len(rows)


def add_row(game_id: str | None, seats: list[int], channel: str, target: str, event: str,
            dedupe_key: str, payload: dict[str, Any], due: datetime | None = None) -> None:
    """One outbox row, due now (or at ``due``), with the id it keeps on every retry."""
    write_outbox([outbox_row(game_id, seats, channel, target, event, dedupe_key, payload, due)])


def outbox_row(game_id: str | None, seats: list[int], channel: str, target: str, event: str,
               dedupe_key: str, payload: dict[str, Any],
               due: datetime | None = None) -> dict[str, Any]:
    """The columns of one outbox row (:func:`write_outbox` inserts it)."""
    now = utcnow()
    return {"game_id": game_id, "seats": seats, "channel": channel, "target": target,
            "event": event, "dedupe_key": dedupe_key[:512],
            "message_id": "msg_" + secrets.token_hex(12), "payload": payload,
            "status": "pending", "attempts": 0, "next_attempt_at": due or now,
            "created_at": now}


_INSERT_OUTBOX = insert(NotificationRow.__table__)


def write_outbox(rows: Sequence[dict[str, Any]]) -> None:
    """Insert outbox rows in one statement, in the caller's transaction (none if there are
    none): the unit of work would flush one object per row."""
    insert_rows(_INSERT_OUTBOX, rows)


def chosen_language(seat: SeatRow) -> str | None:
    """The language the seat's person chose: the seat's, else its owner identity's; None for
    none."""
    if seat.language is None and seat.owner_key:
        identity = db.session.get(IdentityRow, seat.owner_key)
        return identity.language if identity is not None else None
    return seat.language


def reader_language(seat: SeatRow) -> str:
    """The language the seat's person reads: the one chosen (shipped), else English."""
    return i18n.language_of(chosen_language(seat))


def reader_zone(seat: SeatRow) -> str | None:
    """The time zone the seat's person reads times in: the seat's, else its owner identity's
    (None: UTC)."""
    if seat.time_zone is None and seat.owner_key:
        identity = db.session.get(IdentityRow, seat.owner_key)
        return identity.time_zone if identity is not None else None
    return seat.time_zone


def seat_names(game: GameRow) -> list[str]:
    """Each seat's name as an email shows it ("seat 2" for one without), in the current
    language."""
    return [s.name or _("seat %(number)s", number=s.index) for s in game.seats]


def email_payload(game: GameRow, seat: SeatRow, state: Game | None, event: str,
                  data: dict[str, Any]) -> dict[str, Any]:
    """The row of one email to ``seat``, in its reader's language and zone."""
    language = reader_language(seat)
    with i18n.in_language(language):
        return _email_payload(game, seat, state, event, data, language)


def _email_payload(game: GameRow, seat: SeatRow, state: Game | None, event: str,
                   data: dict[str, Any], language: str) -> dict[str, Any]:
    names = seat_names(game)
    unsubscribe, unsubscribe_page = unsubscribe_urls(game.id, seat.public_id)
    payload: dict[str, Any] = {
        "event": event,
        "game_id": game.id,
        "game_title": game.title,
        "seat": seat.index,
        "name": seat.name,
        "names": names,
        "version": game.version,
        "deadline": game.turn_deadline.isoformat() if game.turn_deadline else None,
        "time_zone": reader_zone(seat),  # the reader's: every time in the email is shown in it
        "language": language,  # the reader's: the email is rendered in it
        "links": links(game),
        "data": data,
        "unsubscribe": unsubscribe,  # List-Unsubscribe (RFC 8058 one-click POST, the API)
        "unsubscribe_page": unsubscribe_page,  # the link in the body: a page with a button
        "unsubscribe_mailto": tokens.unsubscribe_address(game.id, seat.public_id),
        "view": None,
        "moves": [],
        "since": [],
        # Play by email: replying to this email plays this seat at this version (and, to an
        # invitation, "join" takes the seat).
        "reply_to": tokens.reply_address(
            game.id, seat.public_id, game.version, seat.token_version),
    }
    # The page a person can read: the seat's table (one press signs the browser in), or the
    # join page of an invite.
    invite = str(data.get("invite", "")).partition(":")[2]
    signin = access.seat_token("signin", game, seat)
    payload["table"] = (urls.join_url(game.id, invite) if event == "invited" and invite
                        else urls.signin_url(game.id, signin))
    payload["signin"] = signin  # each listed move links to a page that plays it
    if event == "game_over":
        payload["record"] = urls.record_url(game.id)
        payload["rematch"] = urls.rematch_url(game.id, signin)  # makes or accepts it
    if event in ("game_over", "mail_reply") and game.rematch_id:  # who accepted it so far
        payload["rematch_standing"] = series.standing_line(series.challenge_body(game.rematch_id))
    if event in ("your_turn", "reminder", "game_over", "mail_reply"):
        payload["series"] = series.score_line(series.series_body(
            game.series_id, game.series_no, [s.name for s in game.seats], current=game))
    if state is not None:
        view = state.view(seat.index)
        payload["view"] = view.to_dict()
        # A timed-out email lists no moves: each new turn has its own your-turn email.
        if not state.is_over and game.status == "active" and event != "timed_out":
            payload["moves"] = [
                {"number": n, "action": a.text(), "description": state.describe(a, seat.index, language)}
                for n, a in enumerate(view.legal_actions, start=1)
            ]
        if event == "timed_out":
            payload["since"] = since_last_turn(game, seat, timed_out=True)
        elif event in ("your_turn", "reminder", "mail_reply", "new_address") \
                and state.current == seat.index and not state.is_over:
            payload["since"] = since_last_turn(game, seat)
    if event in ("your_turn", "reminder"):
        payload["chat"] = chat_history.since_look(game, seat)  # said since the seat looked
    return payload


def rating_lines(game: GameRow) -> list[dict[str, Any]]:
    """Each rated seat's rating change in the finished ``game`` (none if it was not rated), for
    the game-over email and webhook: ``{"seat", "before", "after", "change"}``."""
    return [{"seat": seat, **change} for seat, change in ratings.game_changes(game.id).items()]


def since_last_turn(game: GameRow, seat: SeatRow, timed_out: bool = False) -> list[str]:
    """What happened since ``seat``'s last turn ended, in plain words, as the seat may see it.

    ``timed_out``: from the start of the seat's last timed-out turn (what was played for it).
    The lines are in the reader's language (the engine's ``describe`` takes ``language``).
    """
    language = reader_language(seat)
    mark = archive.latest_of(game, "timed_out" if timed_out else "turn_ended", seat.index)
    after = mark.seq if mark is not None else 0
    if timed_out:
        after -= 1
    rows = archive.events_latest(game, SINCE_LIMIT + 1, after)
    names = dict(enumerate(seat_names(game)))
    lines = []
    for row in reversed(rows[:SINCE_LIMIT]):
        shown = redact({"kind": row.kind, "seat": row.seat, "data": row.data,
                        "secret": row.secret}, seat.index)
        line = describe(shown, names, seat.index, language)
        if line:
            lines.append(line)
    if len(rows) > SINCE_LIMIT:
        command = "dos-client history " + game.id
        with i18n.in_language(language):
            lines.insert(0, _("(earlier events: %(command)s)", command=command))
    return lines


def unsubscribe_urls(game_id: str, seat_id: str) -> tuple[str, str]:
    """The seat's one-click unsubscribe link for List-Unsubscribe (the API) and the page a
    person opens from the email's body, with one token (``seat_id``: its public_id); never
    revoked."""
    token = tokens.issue("unsubscribe", game_id, seat_id, 1)
    return urls.one_click_unsubscribe_url(token), urls.unsubscribe_url(token)


def new_address(game: GameRow, seat: SeatRow) -> None:
    """The seat's tokens were replaced: email it a fresh reply address and the table, so a
    player who plays by email is not locked out (the caller holds the game's lock)."""
    if game.status not in ("active", "waiting"):
        return
    state = Game.from_dict(game.state) if game.state is not None else None
    enqueue(game, "new_address", [seat], state,
            key=f"tv{seat.token_version}-seat{seat.public_id}", channels=("email",))


def describe_unsubscribe(token: str) -> dict[str, Any]:
    """What the unsubscribe link would do (a GET: nothing is changed); NotAuthenticated or
    GameNotFound for a bad link."""
    claims = tokens.read("unsubscribe", token)
    game = get_game(claims.game_id)
    seat = seat_named_by(game, claims)
    out = {"game_id": game.id, "seat": seat.index, "name": seat.name,
           "unsubscribed": seat.email_unsubscribed,
           # the page is in the seat's language (None: the browser's)
           "language": chosen_language(seat)}
    db.session.rollback()
    return out


def round_result(game: GameRow, state: Game) -> dict[str, Any]:
    """The latest round's result: who went out, each hand's points, the scores."""
    row = archive.latest_of(game, "round_over")
    data = dict(row.data) if row is not None else {}
    return {"scores": list(data.get("scores") or state.scores), "round": data.get("round"),
            "winner": row.seat if row is not None else None, "points": data.get("points"),
            "scored": data.get("scored")}


def after_change(game: GameRow, state: Game, *, new_turn: bool, just_over: bool,
                 kinds: Sequence[tuple[str, int | None]]) -> None:
    """Notify what a committed change caused: whose turn it is now, catches, round/game end.

    ``new_turn``: a new turn began (the engine's turn counter moved on); ``just_over``: the
    change ended the game; ``kinds``: the ``(kind, seat)`` of the events the change appended.
    """
    seats = {s.index: s for s in game.seats}
    people = [s for s in game.seats if not s.bot]
    for kind, seat in kinds:
        if kind == "caught" and seat is not None:
            enqueue(game, "caught", [seats[seat]], state, {"seat": seat},
                    key=f"v{game.version}-seat{seat}")
    rounds = [k for k, _ in kinds if k == "round_over"]
    if rounds:
        enqueue(game, "round_over", people, state, round_result(game, state))
    if state.is_over:
        if just_over:
            enqueue(game, "game_over", people, state,
                    {"winner": state.winner, "scores": list(state.scores),
                     "ratings": rating_lines(game)})
        return
    if new_turn:
        current = seats[state.current]
        if not current.resigned:
            announce_turn(game, current, state)


def announce_turn(game: GameRow, seat: SeatRow, state: Game) -> None:
    """The your-turn rows of the turn that began for ``seat``: held while it is looking, and
    no email while it has not come back since the last one (services/attention.py)."""
    now = utcnow()
    due = attention.held_until(seat, now)
    data: dict[str, Any] = {"turn": state.turn_no}
    if due is not None:
        data["held"] = True
    enqueue(game, "your_turn", [seat], state, data, channels=("webhook",), due=due)
    if attention.emailed_since_look(seat):
        return  # one email until the player comes back
    missed = seat.turns_missed or 0
    if enqueue(game, "your_turn", [seat], state,
               {**data, "turns_missed": missed} if missed else data,
               channels=("email",), due=due):
        if due is None:  # a held email counts when the worker sends it (attention.recheck)
            seat.turn_notified_at = now
        if seat.turns_missed:
            seat.turns_missed = 0
