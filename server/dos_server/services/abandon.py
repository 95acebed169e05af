"""A way out of an abandoned game: the other players vote on an absent seat.

A seat is absent when its turns timed out ``ABANDON_TIMEOUTS`` times in a row, or when its
player has neither looked at the game nor moved for ``ABANDON_DAYS`` days. The other people
still playing (not bots, not resigned) may then vote to hand the seat to a bot for the rest
of the game, or to end the game now with the scores as they stand. A strict majority of them
decides; the absent player is told (kind ``abandoned``) and the history says what was decided
and by whose votes (``seat_handed_to_bot``, or ``game_ended`` with its ``reason``).

A vote counts only while its seat is absent since before the vote: a seat that moved or
looked after a vote drops it (the votes are deleted when it is next counted). Votes are cast
under the game's row lock, so two votes at once complete a majority exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import delete, select

from dos_server.database import write_transaction
from dos_server.errors import GameNotActive, InvalidInput, NotAbsent, NotAVoter, PlayersOnly
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow, SeatRow, SeatVoteRow, as_utc, utcnow
from dos_server.services import notify, play
from dos_server.services.access import (
    authenticate,
    engine_state,
    game_is,
    get_game,
    locked,
    seat_of,
)
from dos_server.services.words import N_, _

CHOICES = ("bot", "end")
# Why the game ended or the seat went to a bot (the history's ``reason``: the engine words it).
VOTED_END = N_("the other players voted to end the game")
HANDED_BOT = "random"  # the bot that plays a seat handed over, as for a resignation


@dataclass(frozen=True)
class Absence:
    """Why a seat is absent, and since when its votes count."""

    timeouts: int
    last_active: datetime
    absent: bool


def thresholds() -> tuple[int, int]:
    """(timeouts in a row, days without a look or a move) that make a seat absent."""
    return (int(current_app.config["ABANDON_TIMEOUTS"]),  # checked at start-up (config.py)
            int(current_app.config["ABANDON_DAYS"]))


def absence(game: GameRow, seat: SeatRow, now: datetime) -> Absence:
    """Whether ``seat``'s player is absent now: only a person still playing can be.

    The last sign of them is their last look (``last_seen_at``; none yet: the game's start) or
    their last own move, whichever is later.
    """
    timeouts, days = thresholds()
    active = _last_active(game, seat)
    absent = play.seat_plays(seat) and (seat.timeouts >= timeouts
                                        or now - active >= timedelta(days=days))
    return Absence(seat.timeouts, active, absent)


def _last_active(game: GameRow, seat: SeatRow) -> datetime:
    marks = [as_utc(game.created_at)]
    if seat.last_seen_at is not None:
        marks.append(as_utc(seat.last_seen_at))
    if seat.timeouts == 0:  # no timeout since its last move: its newest action is its own
        moved = db.session.execute(
            select(EventRow.created_at).where(EventRow.game_id == game.id,
                                              EventRow.kind == "action",
                                              EventRow.seat == seat.index)
            .order_by(EventRow.seq.desc()).limit(1)).scalar_one_or_none()
        if moved is not None:
            marks.append(as_utc(moved))
    return max(marks)


def voters(game: GameRow, target: SeatRow) -> list[SeatRow]:
    """Who votes on ``target``: the other people still playing."""
    return [seat for seat in game.seats if play.seat_plays(seat) and seat.index != target.index]


def _votes(game: GameRow, target: SeatRow, since: datetime,
           drop: bool = True) -> list[SeatVoteRow]:
    """The votes on ``target`` cast since its last sign of life; older ones are deleted
    (``drop``: in a write)."""
    rows = db.session.execute(select(SeatVoteRow).where(
        SeatVoteRow.game_id == game.id, SeatVoteRow.target_seat == target.index)
        .order_by(SeatVoteRow.id)).scalars().all()
    stale = [row.id for row in rows if as_utc(row.created_at) < since]
    if stale and drop:
        db.session.execute(delete(SeatVoteRow).where(SeatVoteRow.id.in_(stale)))
    return [row for row in rows if row.id not in stale]


def _tally(game: GameRow, target: SeatRow, now: datetime, drop: bool = True) -> dict[str, Any]:
    seen = absence(game, target, now)
    counted = {seat.index for seat in voters(game, target)}
    votes = [row for row in _votes(game, target, seen.last_active, drop)
             if row.voter_seat in counted]
    return {"seat": target.index, "name": target.name, "absent": seen.absent,
            "timeouts_in_a_row": seen.timeouts, "last_active": seen.last_active.isoformat(),
            "voters": sorted(counted), "needed": len(counted) // 2 + 1,
            "votes": {str(row.voter_seat): row.choice for row in votes},
            "bot": sum(row.choice == "bot" for row in votes),
            "end": sum(row.choice == "end" for row in votes)}


def looks_absent(game: GameRow, seat: SeatRow, now: datetime) -> bool:
    """:func:`absence` without reading the history (for the table page, which reads it once):
    the look alone stands for the last sign of the player; a vote checks the move too."""
    timeouts, days = thresholds()
    last = max(as_utc(game.created_at),
               as_utc(seat.last_seen_at) if seat.last_seen_at else as_utc(game.created_at))
    return play.seat_plays(seat) and (seat.timeouts >= timeouts
                                      or now - last >= timedelta(days=days))


def page_tallies(game: GameRow, viewer: int, now: datetime) -> list[dict[str, Any]]:
    """The seats the viewer may vote on as the table shows them: who, the votes so far (read
    only) and how many decide."""
    me = next((seat for seat in game.seats if seat.index == viewer), None)
    if me is None or not play.seat_plays(me):
        return []
    shown = []
    for seat in game.seats:
        if seat.index == viewer or not looks_absent(game, seat, now):
            continue
        counted = {s.index for s in voters(game, seat)}
        since = as_utc(seat.last_seen_at) if seat.last_seen_at else as_utc(game.created_at)
        votes = [row for row in db.session.execute(select(SeatVoteRow).where(
            SeatVoteRow.game_id == game.id, SeatVoteRow.target_seat == seat.index)).scalars()
            if row.voter_seat in counted and as_utc(row.created_at) >= since]
        shown.append({"seat": seat.index, "name": _name(seat), "needed": len(counted) // 2 + 1,
                      "bot": sum(v.choice == "bot" for v in votes),
                      "end": sum(v.choice == "end" for v in votes),
                      "mine": next((v.choice for v in votes if v.voter_seat == viewer), None)})
    return shown


def standing(game_id: str, bearer: str | None, now: datetime | None = None) -> dict[str, Any]:
    """Each seat that is absent or has votes, with its tally (players only; a read)."""
    now = now or utcnow()
    game = get_game(game_id)
    viewer = authenticate(game, bearer)
    if viewer.seat is None:
        raise PlayersOnly(_("only a seat's player token can see the votes"))
    seats = []
    if game.status == "active":
        for seat in game.seats:
            tally = _tally(game, seat, now, drop=False)  # a read: the next vote drops them
            if tally["absent"] or tally["votes"]:
                seats.append(tally)
    return {"game_id": game.id, "seats": seats, "thresholds": dict(zip(
        ("timeouts", "days"), thresholds(), strict=True))}


def vote(game_id: str, bearer: str | None, target: int, choice: str,
         now: datetime | None = None) -> dict[str, Any]:
    """The token's seat votes on seat ``target`` (own transaction)."""
    try:
        with write_transaction():
            game, viewer = locked(game_id, bearer)
            if viewer.seat is None:
                raise PlayersOnly(_("only a seat's player token can vote"))
            return vote_seat(game, viewer.seat, target, choice, now)
    except NotAbsent:
        drop_stale_votes(game_id, now or utcnow())
        raise


def drop_stale_votes(game_id: str, now: datetime) -> None:
    """Delete the votes on seats whose player came back since (own transaction): a refused
    vote rolled its own transaction back, deletions included."""
    with write_transaction():
        game = get_game(game_id, for_update=True)
        for seat in game.seats:
            _votes(game, seat, absence(game, seat, now).last_active)


def vote_seat(game: GameRow, voter: int, target: int, choice: str,
              now: datetime | None = None) -> dict[str, Any]:
    """Seat ``voter`` of the locked ``game`` votes ``choice`` on seat ``target``; a majority
    applies the choice at once. Returns the tally and ``decided`` (None, "bot" or "end")."""
    now = now or utcnow()
    if choice not in CHOICES:
        raise InvalidInput(_("vote bot (a bot plays the seat) or end (the game ends now)"),
                           errors={"json": {"choice": [_("Must be one of: %(choices)s.",
                                                         choices="bot, end")]}})
    if game.status != "active":
        raise GameNotActive(game_is(game))
    engine_state(game)
    me = seat_of(game, voter)
    seat = seat_of(game, target)
    if seat.index == me.index:
        raise NotAVoter(_("you cannot vote on your own seat"))
    if not play.seat_plays(me):
        raise NotAVoter(_("only players still playing vote; you have resigned"))
    seen = absence(game, seat, now)
    if not seen.absent:
        timeouts, days = thresholds()
        raise NotAbsent(_("%(name)s is not absent: a vote needs %(timeouts)s timeouts in a row "
                          "or %(days)s days without a look or a move", name=_name(seat),
                          timeouts=timeouts, days=days))
    mine = db.session.execute(select(SeatVoteRow).where(
        SeatVoteRow.game_id == game.id, SeatVoteRow.target_seat == seat.index,
        SeatVoteRow.voter_seat == me.index)).scalar_one_or_none()
    if mine is None:
        db.session.add(SeatVoteRow(game_id=game.id, target_seat=seat.index,
                                   voter_seat=me.index, choice=choice, created_at=now))
    else:  # a vote may be changed while it counts
        mine.choice = choice
        mine.created_at = now
    db.session.flush()
    tally = _tally(game, seat, now)
    decided = next((c for c in CHOICES if tally[c] >= tally["needed"]), None)
    if decided is not None:
        _decide(game, seat, decided, tally)
    return {**tally, "decided": decided, "version": game.version, "status": game.status}


def _decide(game: GameRow, seat: SeatRow, choice: str, tally: dict[str, Any]) -> None:
    """Apply what the majority chose; the absent player is told, the history says why."""
    state = engine_state(game)
    votes = {int(voter): made for voter, made in tally["votes"].items()}
    data = {"choice": choice, "votes": {str(k): v for k, v in sorted(votes.items())},
            "timeouts": tally["timeouts_in_a_row"], "last_active": tally["last_active"]}
    db.session.execute(delete(SeatVoteRow).where(SeatVoteRow.game_id == game.id,
                                                 SeatVoteRow.target_seat == seat.index))
    game.version += 1
    if choice == "bot":
        seat.resigned = True  # the resignation's bot plays on (play.run_bots)
        play.after_move(game, state, play.TurnMark.of(state), [play.append_event(
            game, seat.index, "seat_handed_to_bot", {**data, "bot": HANDED_BOT})])
    else:
        play.end_now(game, state, VOTED_END, {"seat": seat.index, **data})
    # Told with the table as the decision left it (no moves of theirs to list any more).
    notify.enqueue(game, "abandoned", [seat], state, data, key=f"abandoned-{seat.public_id}")


def _name(seat: SeatRow) -> str:
    return seat.name or _("seat %(number)s", number=seat.index)


__all__ = ["CHOICES", "Absence", "absence", "looks_absent", "page_tallies", "standing",
           "thresholds", "vote", "vote_seat", "voters"]
