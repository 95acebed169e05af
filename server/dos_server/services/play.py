"""Playing: turns, bots, timeouts and the one tail every engine move goes through.

Every change of the engine state ends in :func:`after_move`: bots (and resigned seats) play
up to the next person's turn, the state is stored (a new turn restarts the clock), and the
outbox gets what the change caused, all in the caller's transaction.

Transactions: :func:`submit_actions` and :func:`resign` own theirs. :func:`apply_turn`,
:func:`resign_seat`, :func:`apply_timeout` and :func:`deal` work on a game the caller has
locked (with :func:`access.locked` or :func:`access.get_game`) inside the caller's
transaction: a domain error they raise rolls the whole transaction back.

What a move did comes back as a :class:`Turn` (a resignation as an :class:`access.Written`);
the views make the answer of it (``services/read.py``). A turn's answer is made inside its
transaction, from the locked row (``submit_actions``' ``answer``): it is also what an
Idempotency-Key gives back later.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    String,
    bindparam,
    cast,
    column,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm.attributes import get_history, set_committed_value
from sqlalchemy.orm.exc import StaleDataError

from dos_engine import (
    Action,
    DosError,
    Draw,
    Event,
    Game,
    IllegalActionError,
    Options,
    make_strategy,
    start_game,
)
from dos_engine.errors import AmbiguousActionError, NotYourTurnError
from dos_engine.search import LEVELS as SEARCH_LEVELS
from dos_server import jsoncodec, metrics
from dos_server.database import (
    flush_new_rows,
    insert_rows,
    mark_stored,
    row_holding,
    write_transaction,
)
from dos_server.errors import (
    AlreadyResigned,
    AmbiguousAction,
    DomainError,
    GameNotActive,
    IdempotencyKeyReused,
    IllegalAction,
    InvalidAction,
    NoSuchAction,
    NotYourTurn,
    StaleVersion,
)
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow, IdempotencyRow, SeatRow, as_utc, utcnow
from dos_server.services import attention, notify, orders, ratings, watch
from dos_server.services.access import (
    Viewer,
    Written,
    engine_state,
    game_is,
    locked,
    require_in_play,
    require_player,
    seat_of,
    snapshot,
)
from dos_server.services.words import _, engine_detail

# A request's tail (bots and standing orders after a move) stops at the first bot turn after
# this many bot actions (far more than bots play between two people's turns) and leaves the
# rest to the worker, which plays on in steps of WORKER_BOT_ACTIONS under one lock each: no
# request, and no lock, lasts as long as a game.
REQUEST_BOT_ACTIONS = 200
WORKER_BOT_ACTIONS = 1000


@dataclass(frozen=True)
class TurnMark:
    """Where a game stood before a change; a new turn began if ``turn_no`` moved on."""

    turn_no: int
    over: bool

    @classmethod
    def of(cls, state: Game) -> TurnMark:
        return cls(state.turn_no, state.is_over)


BEFORE_DEAL = TurnMark(turn_no=0, over=False)


@dataclass(frozen=True)
class Turn:
    """What a turn did: the locked game and its state after it, the seat that played, the
    actions as applied, and every history row the turn appended (the bots' after them).

    Read it before the transaction ends: the commit expires the row.
    """

    game: GameRow
    state: Game
    viewer: Viewer
    applied: tuple[Action, ...]
    rows: tuple[EventRow, ...]


# -- the tail after every move --------------------------------------------------------------


def after_move(game: GameRow, state: Game, before: TurnMark, rows: list[EventRow],
               now: datetime | None = None, in_worker: bool = False) -> list[EventRow]:
    """Bots play, the state is stored, the outbox written; returns ``rows`` plus the bots'.

    ``rows``: the history rows the move itself appended. ``now``: the worker's clock when it
    applies a timeout (default: the wall clock). ``in_worker``: searching bots may play too
    (a request stops before their turn and leaves it to the worker, see :func:`run_bots`).
    """
    if not any(seat_plays(seat) for seat in game.seats):
        rows = rows + _end_without_people(game, state)
        write_history(rows)
        return rows
    played = run_bots(game, state, in_worker)
    by_order = [row for row in played if row.data.get(orders.MARK_KEY) == orders.MARK]
    metrics.count_actions(by_order, "order")
    metrics.count_actions([row for row in played if row not in by_order], "bot")
    rows = rows + played
    save_state(game, state, before, now)
    write_game(game, rows)  # before the outbox: its messages read the latest events
    notify.after_change(game, state, new_turn=state.turn_no != before.turn_no,
                        just_over=state.is_over and not before.over,
                        kinds=[(row.kind, row.seat) for row in rows])
    return rows


def seat_plays(seat: SeatRow) -> bool:
    """A person still playing: not a bot, not resigned or forfeited."""
    return not seat.bot and not seat.resigned


def _end_without_people(game: GameRow, state: Game) -> list[EventRow]:
    """Nobody is left to play for: the game ends now, with the scores as they stand.

    Bots do not play a whole game out inside one request (with a high target that held the
    game's lock for many seconds). The record holds the actions played, and replays to here.
    """
    return [_ended(game, state, "no person is left playing")]


def end_now(game: GameRow, state: Game, reason: str, data: dict[str, Any]) -> None:
    """End the locked ``game`` now with the scores as they stand (``reason`` and ``data`` go in
    its ``game_ended`` row); everyone is told the game is over. The caller bumped the version."""
    write_history([_ended(game, state, reason, data)])


def _ended(game: GameRow, state: Game, reason: str,
           data: dict[str, Any] | None = None) -> EventRow:
    game.state = state.to_dict()
    mark_finished(game)
    ratings.apply(game, state)  # before the email: it shows each player's change
    scores = list(state.scores)
    row = append_event(game, None, "game_ended", {**(data or {}), "reason": reason,
                                                   "scores": scores})
    people = [seat for seat in game.seats if not seat.bot]
    notify.enqueue(game, "game_over", people, state,
                   {"winner": None, "scores": scores, "reason": reason,
                    "ratings": notify.rating_lines(game)})
    return row


def searching_bot(seat: SeatRow) -> bool:
    """A bot that searches (``search-1``..): it takes longer than a request should wait."""
    return seat.bot in SEARCH_LEVELS and not seat.resigned


def run_bots(game: GameRow, state: Game, in_worker: bool = False) -> list[EventRow]:
    """Bots (and resigned seats, played by ``random``) move right after the turn before them.

    Outside the worker this stops before a searching bot's turn, and at the first bot turn
    after REQUEST_BOT_ACTIONS bot actions: the request returns at once, and the worker's next pass
    plays on (:func:`play_waiting_bots`), WORKER_BOT_ACTIONS at a time.
    """
    seats = {seat.index: seat for seat in game.seats}
    rows: list[EventRow] = []
    budget = WORKER_BOT_ACTIONS if in_worker else REQUEST_BOT_ACTIONS
    played = 0
    while not state.is_over:
        seat = seats[state.current]
        at_rest = not (seat.bot or seat.resigned) or (searching_bot(seat) and not in_worker)
        # Standing orders interleave with the bots (services/orders.py says when each plays).
        due = orders.next_order(state, game.seats, game.standing_dos, at_rest)
        if due is not None:
            rows += play_order(game, state, *due)
            continue
        if at_rest or played >= budget:
            break
        played += 1
        strategy = make_strategy(seat.bot or "random", f"{state.seed}:{state.actions_played}")
        legal = state.legal_actions(seat.index)
        action = strategy(state.view(seat.index), legal)
        events = state.play(action, seat.index)
        rows.append(append_action(game, seat.index, action.text()))
        rows += append_events(game, events)
    return rows


def bot_to_play(game: GameRow, state: Game) -> bool:
    """A bot (or a resigned seat) is to move and no person's turn comes first: the worker
    plays it (a searching bot, or the rest of a request's capped tail)."""
    seat = seat_of(game, state.current)
    return not state.is_over and bool(seat.bot or seat.resigned)


def play_order(game: GameRow, state: Game, seat: int, action: Action) -> list[EventRow]:
    """Play a standing order's action for ``seat``: the seat's own action, marked as the
    order's in the history (the record holds it like any other action)."""
    events = state.play(action, seat)
    row = append_event(game, seat, "action",
                       {"action": action.text(), orders.MARK_KEY: orders.MARK})
    caused = append_events(game, events)
    if caused:  # its first event is the line a person reads (dos_engine.wording says "by order")
        caused[0].data = {**caused[0].data, orders.EVENT_MARK: True}
    return [row, *caused]


def mark_finished(game: GameRow, now: datetime | None = None) -> None:
    """Every way a game ends comes here: no turn clock runs, and ``finished_at`` says when."""
    game.status = "finished"
    game.finished_at = now or utcnow()
    game.turn_deadline = None
    game.turn_started_at = None


def save_state(game: GameRow, state: Game, before: TurnMark, now: datetime | None = None) -> None:
    """Store the state; a new turn restarts the turn clock (deadline and reminders)."""
    game.state = state.to_dict()
    if state.is_over:
        mark_finished(game, now)
        ratings.apply(game, state)  # before the outbox (after_move): the email shows it
    elif state.turn_no != before.turn_no:
        start = now or utcnow()
        seat = seat_of(game, state.current)
        if seat.vacation_until is not None:  # the clock waits for the player's return
            start = max(start, as_utc(seat.vacation_until))
        game.turn_started_at = start
        game.reminders_sent = None
        game.turn_deadline = (start + timedelta(seconds=game.turn_time_limit)
                              if game.turn_time_limit else None)


# The columns a move changes, written by one prebuilt UPDATE (:func:`write_game`).
_GAMES = GameRow.__table__
_EVENTS = EventRow.__table__
_HISTORY_COLUMNS = ("game_id", "seq", "version", "seat", "kind", "data", "secret", "created_at")
_INSERT_HISTORY = insert(_EVENTS)
_MOVE_COLUMNS = ("version", "next_seq", "state", "status", "turn_deadline", "turn_started_at",
                 "reminders_sent")
_WRITE_GAME = (
    update(_GAMES)
    .where(_GAMES.c.id == bindparam("game_id"), _GAMES.c.version == bindparam("read_version"))
    .values({name: bindparam(name, type_=_GAMES.c[name].type)
             for name in (*_MOVE_COLUMNS, "updated_at")})
)


# On PostgreSQL a move's history rows go in with the game's UPDATE, their INSERT in its WITH
# clause, the rows sent as one JSON array: one statement, one round trip and one parameter
# (a parameter a value cost more CPU than the round trip saved).
def _recordset_type(name: str) -> Any:
    """A history column's type in the JSON array: VARCHAR without a length (a too long value
    fails as the column fails it, never cut short), the stored type of a decorated one."""
    kind = _EVENTS.c[name].type
    return String() if isinstance(kind, String) else getattr(kind, "impl", kind)


_HISTORY_ROWS = (
    func.jsonb_to_recordset(cast(bindparam("history", type_=String), JSONB))
    .table_valued(*(column(name, _recordset_type(name)) for name in _HISTORY_COLUMNS))
    .render_derived(name="event", with_types=True)
)
_JSON_NULL = literal_column("'null'::jsonb", JSONB)  # a None as the ORM stores it, not SQL NULL
_WRITE_GAME_WITH_HISTORY = watch.notifying(_WRITE_GAME).add_cte(  # PostgreSQL
    insert(_EVENTS).from_select(_HISTORY_COLUMNS, select(*(
        func.coalesce(_HISTORY_ROWS.c[name], _JSON_NULL) if name in ("data", "secret")
        else _HISTORY_ROWS.c[name] for name in _HISTORY_COLUMNS)))
    .cte("history"))


def write_game(game: GameRow, history: Sequence[EventRow] = ()) -> None:
    """Write the columns a move changes in one UPDATE, and the move's ``history`` rows
    (:func:`append_event`); the ORM then holds the game's columns as stored.

    The unit of work would cost more CPU than the statement. Like the ORM's ``version_id_col``
    check, the UPDATE matches the version the game was read at (a backstop behind the lock).
    Anything else the caller changed on the row is still flushed by the ORM; without such a
    change the row is marked stored, and the commit's flush passes it by.
    """
    # The version read (``inspect(game).attrs`` would first make a state for every column).
    bumped: Sequence[int] = get_history(game, "version").deleted
    values = {name: getattr(game, name) for name in _MOVE_COLUMNS}
    values["updated_at"] = utcnow()
    params = {**values, "game_id": game.id,
              "read_version": bumped[0] if bumped else game.version}
    connection = db.session.connection()
    notified = connection.dialect.name == "postgresql"
    if notified:
        if history:
            flush_new_rows()
        params["history"] = jsoncodec.dumps([
            {**{name: getattr(row, name) for name in _HISTORY_COLUMNS},
             "created_at": as_utc(row.created_at).isoformat()} for row in history])
        found = len(connection.execute(_WRITE_GAME_WITH_HISTORY, params).all())
    else:
        write_history(history)
        found = connection.execute(_WRITE_GAME, params).rowcount
    if found != 1:
        raise StaleDataError(f"game {game.id} was changed by another transaction")
    for name, value in values.items():
        set_committed_value(game, name, value)
    mark_stored(game)
    watch.wrote(game.id, notified=notified)


# -- history rows ---------------------------------------------------------------------------


def append_event(game: GameRow, seat: int | None, kind: str, data: dict[str, Any],
                 secret: dict[str, Any] | None = None) -> EventRow:
    """A history row at the game's next sequence number and current version.

    Not added to the session: :func:`write_history` inserts a move's rows in one statement
    (the unit of work would flush one object per row).
    """
    row = row_holding(EventRow, {
        "game_id": game.id, "seq": game.next_seq, "version": game.version, "seat": seat,
        "kind": kind, "data": data, "secret": secret, "created_at": utcnow()})
    game.next_seq += 1
    return row


def write_history(rows: Sequence[EventRow]) -> None:
    """Insert the rows :func:`append_event` made, in one statement (none if there are none)."""
    insert_rows(_INSERT_HISTORY, [{name: getattr(row, name) for name in _HISTORY_COLUMNS}
                                  for row in rows])


def append_action(game: GameRow, seat: int, text: str) -> EventRow:
    return append_event(game, seat, "action", {"action": text})


def append_events(game: GameRow, events: Sequence[Event]) -> list[EventRow]:
    rows = []
    for event in events:
        stored = event.to_dict()
        rows.append(append_event(game, event.seat, stored["kind"], stored["data"],
                                 stored.get("secret")))
    return rows


# -- the moves ------------------------------------------------------------------------------


def deal(game: GameRow) -> None:
    """Dealer draw and deal (2.2-2.3) with a fresh secret seed, then bots play if first."""
    seed = secrets.token_hex(32)
    names = [seat.name or "" for seat in game.seats]
    state, events = start_game(names, seed, Options.from_dict(game.options))
    game.seed = seed
    game.status = "active"
    after_move(game, state, BEFORE_DEAL, append_events(game, events))


def submit_actions(
    game_id: str,
    bearer: str | None,
    expected_version: int,
    actions: Sequence[str] | None,
    idempotency_key: str | None,
    number: int | None = None,
    *,
    answer: Callable[[Turn], dict[str, Any]],
) -> dict[str, Any]:
    """Apply one action or a whole turn atomically for the token's seat (own transaction).

    ``number`` picks from the numbered legal actions of ``expected_version``. The game is
    read once, under the lock, and authenticated there. Returns ``answer(turn)``, made in the
    transaction: it is stored with the ``idempotency_key``, and a retry with that key gets it
    back as it was first answered.
    """
    request_hash = hashlib.sha256(json.dumps(
        {"version": expected_version, "actions": list(actions or []), "number": number}
    ).encode()).hexdigest()
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        seat = require_player(viewer, "play")
        if idempotency_key:
            stored = db.session.get(IdempotencyRow, (game.id, seat, idempotency_key))
            if stored is not None:
                if stored.request_hash != request_hash:
                    raise IdempotencyKeyReused(_("this Idempotency-Key was used for a "
                                                 "different request; use a new key for a new "
                                                 "request"))
                return dict(stored.body)
        body = answer(apply_turn(game, seat, expected_version, actions, number))
        if idempotency_key:
            db.session.add(IdempotencyRow(game_id=game.id, seat=seat, key=idempotency_key,
                                          request_hash=request_hash, status=200, body=body))
    return body


def apply_turn(
    game: GameRow,
    seat: int,
    expected_version: int,
    actions: Sequence[str] | None,
    number: int | None = None,
) -> Turn:
    """Apply one action or a whole turn for ``seat`` of the locked ``game``.

    The core of :func:`submit_actions`, shared with play by email (the caller has locked the
    game and authenticated the seat, and owns the transaction: a domain error rolls it back).
    """
    if game.status != "active":
        raise GameNotActive(game_is(game))
    if expected_version != game.version:
        raise StaleVersion(_("you sent version %(sent)s but the game is at version "
                             "%(version)s: someone moved first. Reload the game and choose "
                             "again.", sent=expected_version, version=game.version),
                           current_version=game.version)
    state = engine_state(game)
    game.version += 1  # one version per committed request
    before = TurnMark.of(state)
    try:
        if number is not None:  # a numbered choice is an Action already: play it as it is
            chosen = _numbered(state, seat, number)
            parsed, events = [chosen], state.play_turn([chosen], seat)
        else:
            parsed, events = state.play_text("; ".join(actions or []), seat)
    except DosError as error:
        raise _rule_error(error) from None
    attention.moved(seat_of(game, seat))
    rows = [append_action(game, seat, action.text()) for action in parsed]
    _moved_in_person(game, seat)
    metrics.count_actions(rows)
    rows = after_move(game, state, before, rows + append_events(game, events))
    db.session.flush()
    return Turn(game, state, Viewer(seat=seat), tuple(parsed), tuple(rows))


def _moved_in_person(game: GameRow, index: int) -> None:
    """The seat's person moved: its timeouts in a row (services/abandon.py) start again."""
    seat = seat_of(game, index)
    if seat.timeouts:
        seat.timeouts = 0


def _numbered(state: Game, seat: int, number: int) -> Action:
    """Legal action ``number`` (1-based) of ``seat``'s list at this version."""
    listed = state.legal_actions(seat)
    if not listed:  # not this seat's turn (or over): the engine words it, as for a typed one
        state.check(Draw(), seat)
    if not 1 <= number <= len(listed):
        raise NoSuchAction(_("there are %(count)s legal actions; choose a number from 1 to "
                             "%(count)s", count=len(listed)))
    return listed[number - 1]


def _rule_error(error: DosError) -> DomainError:
    """The domain error of an engine error, whichever way the move was sent, worded in the
    reader's language (a rule error's detail without its rule: ``rule`` says it apart)."""
    detail = engine_detail(error)
    if isinstance(error, AmbiguousActionError):
        return AmbiguousAction(detail, candidates=[a.text() for a in error.candidates])
    if isinstance(error, NotYourTurnError):
        return NotYourTurn(detail, rule=error.rule)
    if isinstance(error, IllegalActionError):
        return IllegalAction(detail, rule=error.rule)
    return InvalidAction(detail)


def resign(game_id: str, bearer: str | None) -> Written:
    """A player resigns (own transaction): the ``random`` strategy plays their seat to the end."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        seat = require_player(viewer, "resign")
        require_in_play(game)
        resign_seat(game, seat)
        return Written(snapshot(game), viewer)


def resign_seat(game: GameRow, index: int) -> None:
    """Resign seat ``index`` of the locked ``game`` (the caller owns the transaction)."""
    seat = seat_of(game, index)
    if seat.resigned:
        raise AlreadyResigned(_("you have already resigned"))
    seat.resigned = True
    game.version += 1
    rows = [append_event(game, seat.index, "resigned", {})]
    if game.state is None:
        write_history(rows)
    else:
        state = Game.from_dict(game.state)
        after_move(game, state, TurnMark.of(state), rows)


def play_waiting_bots(game: GameRow, now: datetime) -> bool:
    """The worker plays the bots whose turn it is (``game`` locked), WORKER_BOT_ACTIONS at
    most; True if it did."""
    state = engine_state(game)
    if not bot_to_play(game, state):
        return False
    game.version += 1
    after_move(game, state, TurnMark.of(state), [], now, in_worker=True)
    return True


def apply_timeout(game: GameRow, now: datetime) -> None:
    """The current turn's time is up: the game's timeout policy plays it (locked ``game``).

    The seat may be forfeited (resigned) after ``forfeit_after`` timeouts in a row (its
    person's own move starts the count again).
    """
    state = engine_state(game)
    before = TurnMark.of(state)
    seat = seat_of(game, state.current)
    seat.timeouts += 1
    attention.timed_out(seat)
    game.version += 1
    rows = [append_event(game, seat.index, "timed_out",
                         {"policy": game.timeout_policy, "timeouts": seat.timeouts})]
    strategy = make_strategy(game.timeout_policy, f"{state.seed}:{state.actions_played}:timeout")
    while not state.is_over and state.turn_no == before.turn_no:
        action = strategy(state.view(seat.index), state.legal_actions(seat.index))
        rows.append(append_action(game, seat.index, action.text()))
        rows += append_events(game, state.play(action, seat.index))
    if game.forfeit_after and seat.timeouts >= game.forfeit_after and not seat.resigned:
        seat.resigned = True
        rows.append(append_event(game, seat.index, "forfeited", {"timeouts": seat.timeouts}))
    metrics.count_actions(rows, "deadline")
    after_move(game, state, before, rows, now)
    notify.enqueue(game, "timed_out", [seat], state, {"policy": game.timeout_policy})


__all__ = [
    "BEFORE_DEAL",
    "Turn",
    "TurnMark",
    "after_move",
    "append_event",
    "apply_timeout",
    "apply_turn",
    "bot_to_play",
    "deal",
    "end_now",
    "play_waiting_bots",
    "resign",
    "resign_seat",
    "seat_plays",
    "submit_actions",
    "write_game",
    "write_history",
]
