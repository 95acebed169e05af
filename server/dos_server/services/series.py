"""The games of a rematch series (services/rematch.py): the series' score, and the standing
challenge made from a finished game. Reads only, in the caller's session; one function
(:func:`score`) counts the wins for the API, the pages and the emails alike."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from dos_server import validation
from dos_server.extensions import db
from dos_server.models import GameRow
from dos_server.services.words import _


def challenge_body(rematch_id: str | None) -> dict[str, Any] | None:
    """The standing challenge made from a finished game, and who accepted: in the game's
    answer and on its table (reads in the caller's session)."""
    if rematch_id is None:
        return None
    new = db.session.execute(
        select(GameRow).options(selectinload(GameRow.seats)).where(GameRow.id == rematch_id)
    ).scalar_one_or_none()
    if new is None:
        return None
    return {"game_id": new.id, "status": new.status,
            "seats": [{"seat": s.index, "name": s.name, "bot": s.bot,
                       "accepted": bool(s.claimed)} for s in new.seats]}


def series_body(series_id: str | None, series_no: int | None, names: list[str | None],
                current: GameRow | None = None) -> dict[str, Any] | None:
    """``{"id", "no", "score"}`` of a game of a series (None for a game of none)."""
    if series_id is None:
        return None
    return {"id": series_id, "no": series_no or 1, "score": score(series_id, names, current)}


def score(series_id: str, names: list[str | None],
          current: GameRow | None = None) -> list[dict[str, Any]]:
    """Wins per player over the series' finished games, for the players ``names`` (a game's
    seats, in order). A game's winner is the one its state names (the target reached), else
    the one alone at the top of the scores (a game ended by a vote); players are matched by
    name across the games, bots by their seat's name too. ``current``: a game of the series
    as the caller's transaction has it (one that just ended counts before it is written)."""
    query = select(GameRow).options(selectinload(GameRow.seats)).where(
        GameRow.series_id == series_id, GameRow.status == "finished")
    if current is not None:
        query = query.where(GameRow.id != current.id)
    games = list(db.session.execute(query).scalars().all())
    if current is not None and current.status == "finished":
        games.append(current)
    wins: dict[str, int] = {}
    for game in games:
        winner = _winner(game)
        seat = next((s for s in game.seats if s.index == winner), None)
        if seat is not None and seat.name:
            key = validation.name_key(seat.name)
            wins[key] = wins.get(key, 0) + 1
    return [{"name": name, "wins": wins.get(validation.name_key(name), 0) if name else 0}
            for name in names]


def _winner(game: GameRow) -> int | None:
    state = game.state or {}
    winner = state.get("winner")
    if isinstance(winner, int):
        return winner
    scores = list(state.get("scores") or [])
    if not scores:
        return None
    top = max(scores)
    return scores.index(top) if scores.count(top) == 1 else None


def score_line(series: dict[str, Any] | None) -> str | None:
    """"Game 2 of the series: Ann 1, Bob 0": the series as the emails say it."""
    if not series:
        return None
    score_text = ", ".join(f"{entry['name']} {entry['wins']}" for entry in series["score"])
    return _("Game %(no)s of the series, wins so far: %(score)s", no=series["no"],
             score=score_text)


def standing_line(challenge: dict[str, Any] | None) -> str | None:
    """The standing challenge and who accepted, as the emails say it."""
    if not challenge or challenge["status"] == "cancelled":  # the next press asks anew
        return None
    yes = ", ".join(s["name"] for s in challenge["seats"] if s["accepted"] and s["name"])
    no = ", ".join(s["name"] for s in challenge["seats"] if not s["accepted"] and s["name"])
    if challenge["status"] != "waiting":
        return _("The rematch %(game)s has started.", game=challenge["game_id"])
    if no:
        return _("The rematch %(game)s is waiting: accepted by %(yes)s; not yet: %(no)s.",
                 game=challenge["game_id"], yes=yes or "-", no=no)
    return _("The rematch %(game)s: everyone accepted.", game=challenge["game_id"])


__all__ = ["challenge_body", "score", "score_line", "series_body", "standing_line"]
