"""Ratings: each signed-in player's skill on this server, from the finishing order of rated
games (OpenSkill's Plackett-Luce model, which rates 2-4 player finishing orders).

- **Who is rated.** A finished game whose ``rated`` flag was set at creation, counting only
  its *signed-in humans*: seats that are no bot and whose ``owner_key`` names an identity
  (an address that signed in here). Bots and seats of nobody's identity are left out, and the
  rest keep their order among themselves. An identity holding several seats of one game is
  left out of it (a player cannot rate against themselves). Fewer than two left: the game
  changes no rating.
- **Finishing order.** By final score, higher first (RULES.md 6.4); equal scores share a
  rank. Resigned and forfeited seats rank last, tied with each other, whatever their score.
- **Model.** :func:`model`, its parameters fixed here (OpenSkill's defaults, written out so
  a new release of the library does not move every rating). A new player starts at
  ``MU``/``SIGMA``. The number a person reads is :func:`shown`: the ordinal ``mu - 3 sigma``
  rounded to one decimal place (0.0 for a new player; it rises as the model grows sure).
- **Incremental and rebuilt.** :func:`apply` runs at every game end, in the game's
  transaction, and writes one ``rating_changes`` row per rated seat (with the rank it took:
  the stored result). :func:`rebuild` replays those ranks, rated games in ``finished_at``
  then id order, from the starting values, and rewrites every rating: what the incremental
  updates gave, as long as games ended in that order (two games with a common player ending
  at the same moment may commit in the other order).
- **Locks** (services/locks.py): the game's first (the caller holds it), then the players'
  ``ratings`` rows one by one in ascending ``email_key`` order, each created if missing before
  it is locked, so two game ends with common players queue instead of deadlocking.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dos_engine import Game
from dos_server.database import write_transaction
from dos_server.errors import PlayerNameTaken, PlayerNotFound
from dos_server.extensions import db
from dos_server.models import GameRow, IdentityRow, RatingChangeRow, RatingRow, SeatRow, utcnow
from dos_server.services.words import _
from dos_server.validation import clean_player_name

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

# The model's parameters, in one place (OpenSkill 6's defaults for Plackett-Luce).
MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
KAPPA = 0.0001
TAU = MU / 300  # each game first widens sigma a little: ratings can keep moving
MIN_PLAYERS = 2
NAME_LOCK = 0x444F5352  # "DOSR": the advisory lock of player-name changes (PostgreSQL)
RECENT = 20  # the changes a player's page lists


def shown(mu: float, sigma: float) -> float:
    """The rating a person reads: the ordinal ``mu - 3 sigma``, to one decimal place."""
    return round(mu - 3 * sigma, 1)


def change_of(mu_before: float, sigma_before: float, mu_after: float,
              sigma_after: float) -> dict[str, float]:
    """A game's effect on a rating as answers show it (``rating`` of a seat)."""
    before, after = shown(mu_before, sigma_before), shown(mu_after, sigma_after)
    return {"before": before, "after": after, "change": round(after - before, 1)}


@dataclass(frozen=True)
class Placed:
    """A rated seat of a finished game: whose, and the rank it finished at (1 is first)."""

    seat: int
    email_key: str
    rank: int


def finishing_order(game: GameRow, scores: Sequence[int], identities: set[str]) -> list[Placed]:
    """The rated seats of ``game`` and their ranks (see the module's rules); [] if fewer than
    two."""
    owners: dict[str, list[SeatRow]] = {}
    for seat in game.seats:
        if not seat.bot and seat.owner_key and seat.owner_key in identities:
            owners.setdefault(seat.owner_key, []).append(seat)
    rated = [seats[0] for seats in owners.values() if len(seats) == 1]
    if len(rated) < MIN_PLAYERS:
        return []
    playing = [seat for seat in rated if not seat.resigned]

    def score(seat: SeatRow) -> int:
        return scores[seat.index] if seat.index < len(scores) else 0

    placed = []
    for seat in sorted(rated, key=lambda s: s.index):
        if seat.resigned:
            rank = len(playing) + 1
        else:
            rank = 1 + sum(1 for other in playing if score(other) > score(seat))
        placed.append(Placed(seat.index, seat.owner_key or "", rank))
    return placed


@functools.cache
def model() -> PlackettLuce:
    """The rating model, made (and openskill imported: 1 MiB) when a game is first rated."""
    from openskill.models import PlackettLuce

    return PlackettLuce(mu=MU, sigma=SIGMA, beta=BETA, kappa=KAPPA, tau=TAU, limit_sigma=False,
                        balance=False)


def _rate(before: Sequence[tuple[float, float]], ranks: Sequence[int]) -> list[tuple[float, float]]:
    rater = model()
    teams = [[rater.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    rated = rater.rate(teams, ranks=[float(rank) for rank in ranks])
    return [(team[0].mu, team[0].sigma) for team in rated]


def _insert_missing(key: str) -> None:
    """The player's rating row at the starting values, unless it exists (a row another
    transaction is inserting is waited for: that is the lock on a new key)."""
    values = {"email_key": key, "mu": MU, "sigma": SIGMA, "games": 0, "updated_at": utcnow()}
    dialect = db.session.connection().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    db.session.execute(insert(RatingRow).values(**values)
                       .on_conflict_do_nothing(index_elements=["email_key"]))


def _lock_ratings(keys: Sequence[str]) -> dict[str, RatingRow]:
    """Each key's rating row, created if missing, locked one at a time in ascending key
    order (services/locks.py)."""
    rows = {}
    for key in sorted(set(keys)):
        _insert_missing(key)
        rows[key] = db.session.execute(
            select(RatingRow).where(RatingRow.email_key == key).with_for_update()
            .execution_options(populate_existing=True)
        ).scalar_one()
    return rows


def apply(game: GameRow, state: Game) -> list[RatingChangeRow]:
    """Move the ratings of the finished, locked ``game``'s rated seats (inside the caller's
    transaction); returns the changes written. Idempotent: a game rated already (its
    ``rating_changes`` rows exist) changes nothing again."""
    if not game.rated:
        return []
    done = db.session.execute(
        select(func.count()).select_from(RatingChangeRow)
        .where(RatingChangeRow.game_id == game.id)).scalar_one()
    if done:
        return []
    keys = {seat.owner_key for seat in game.seats if seat.owner_key and not seat.bot}
    identities = set(db.session.execute(
        select(IdentityRow.email_key).where(IdentityRow.email_key.in_(keys))).scalars()) \
        if keys else set()
    placed = finishing_order(game, list(state.scores), identities)
    if not placed:
        return []
    rows = _lock_ratings([p.email_key for p in placed])
    before = [(rows[p.email_key].mu, rows[p.email_key].sigma) for p in placed]
    after = _rate(before, [p.rank for p in placed])
    now = utcnow()
    changes = []
    for p, (mu0, sigma0), (mu1, sigma1) in zip(placed, before, after, strict=True):
        rating = rows[p.email_key]
        rating.mu, rating.sigma, rating.games, rating.updated_at = mu1, sigma1, rating.games + 1, now
        change = RatingChangeRow(game_id=game.id, email_key=p.email_key, seat=p.seat,
                                 rank=p.rank, mu_before=mu0, sigma_before=sigma0,
                                 mu_after=mu1, sigma_after=sigma1, created_at=now)
        db.session.add(change)
        changes.append(change)
    db.session.flush()
    return changes


def rebuild() -> int:
    """Recompute every rating from the stored results (own transaction); returns how many
    games were replayed.

    Rated games are replayed in ``finished_at`` then id order, each from its
    ``rating_changes`` rows' ranks; every row's before and after values and every rating
    are rewritten. A game left with one rated player (the others' identities were deleted,
    and their rows with them) counts no more: its last row is deleted. On PostgreSQL the two
    tables are locked for the run: game ends wait for it (reads do not).
    """
    with write_transaction():
        if db.session.connection().dialect.name == "postgresql":
            db.session.execute(text("LOCK TABLE ratings, rating_changes IN EXCLUSIVE MODE"))
        changes = db.session.execute(
            select(RatingChangeRow).join(GameRow, GameRow.id == RatingChangeRow.game_id)
            .order_by(func.coalesce(GameRow.finished_at, GameRow.updated_at), GameRow.id,
                      RatingChangeRow.seat)
        ).scalars().all()
        games: list[list[RatingChangeRow]] = []
        for change in changes:
            if games and games[-1][0].game_id == change.game_id:
                games[-1].append(change)
            else:
                games.append([change])
        current: dict[str, tuple[float, float]] = {}
        played: dict[str, int] = {}
        last: dict[str, Any] = {}
        lone = [group[0] for group in games if len(group) < MIN_PLAYERS]
        for change in lone:  # its other players' identities were deleted: it counts no more
            db.session.delete(change)
        games = [group for group in games if len(group) >= MIN_PLAYERS]
        for group in games:
            before = [current.get(c.email_key, (MU, SIGMA)) for c in group]
            after = _rate(before, [c.rank for c in group])
            for change, (mu0, sigma0), (mu1, sigma1) in zip(group, before, after, strict=True):
                change.mu_before, change.sigma_before = mu0, sigma0
                change.mu_after, change.sigma_after = mu1, sigma1
                current[change.email_key] = (mu1, sigma1)
                played[change.email_key] = played.get(change.email_key, 0) + 1
                last[change.email_key] = change.created_at
        db.session.execute(delete(RatingRow))
        db.session.flush()
        for key in sorted(current):
            mu, sigma = current[key]
            db.session.add(RatingRow(email_key=key, mu=mu, sigma=sigma, games=played[key],
                                     updated_at=last[key] or utcnow()))
    return len(games)


def forget(key: str) -> None:
    """Delete an identity's rating and its rating changes (inside the caller's transaction,
    after the games it locks: services/locks.py)."""
    db.session.execute(delete(RatingChangeRow).where(RatingChangeRow.email_key == key))
    db.session.execute(delete(RatingRow).where(RatingRow.email_key == key))


# -- player names and the leaderboard -----------------------------------------------------------


def claim_name(identity: IdentityRow, name: str | None) -> None:
    """Give the locked ``identity`` the player name ``name`` (clean; None: none), unless another
    identity goes by it, case aside (PlayerNameTaken). Inside the caller's transaction.

    Name changes are serialized (SQLite: the write transaction; PostgreSQL: one advisory
    lock, after the identity's row), so two identities never take "Ann" and "ann" at once.
    """
    if name is not None:
        if db.session.connection().dialect.name == "postgresql":
            db.session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": NAME_LOCK})
        taken = db.session.execute(
            select(IdentityRow.email_key).where(func.lower(IdentityRow.player_name)
                                                == name.lower(),
                                                IdentityRow.email_key != identity.email_key)
        ).first()
        if taken is not None:
            raise PlayerNameTaken(_("the player name %(name)s is taken; choose another",
                                    name=name))
    identity.player_name = name


def _identity_named(name: str) -> IdentityRow:
    """The identity going by ``name``; a string that could be nobody's name (too long, a
    NUL PostgreSQL refuses in a literal, a space) is not looked up."""
    try:
        wanted = clean_player_name(name)
    except ValueError:
        found = None
    else:
        found = db.session.execute(
            select(IdentityRow).where(func.lower(IdentityRow.player_name) == wanted.lower())
        ).scalars().first()
    if found is None:
        raise PlayerNotFound(_("no player goes by the name %(name)s on this server",
                               name=name))
    return found


def player(name: str) -> dict[str, Any]:
    """A player's page: their rating (None before a rated game) and latest changes. Hiding
    from the leaderboard does not hide this: it is reached by the name."""
    identity = _identity_named(name)
    rating = rating_of(identity.email_key)
    return {"name": identity.player_name, "rating": rating["rating"] if rating else None,
            "mu": rating["mu"] if rating else None, "sigma": rating["sigma"] if rating else None,
            "games": rating["games"] if rating else 0,
            "on_leaderboard": not identity.leaderboard_hidden and rating is not None,
            "recent": recent_changes(identity.email_key)}


def leaderboard(limit: int, offset: int) -> dict[str, Any]:
    """The named players with a rated game who did not hide, the highest rating first."""
    listed = (RatingRow.games > 0, IdentityRow.player_name.is_not(None),
              IdentityRow.leaderboard_hidden.is_(False))
    joined = select(RatingRow, IdentityRow.player_name).join(
        IdentityRow, IdentityRow.email_key == RatingRow.email_key).where(*listed)
    total = db.session.execute(select(func.count()).select_from(joined.subquery())).scalar_one()
    rows = db.session.execute(
        joined.order_by((RatingRow.mu - 3 * RatingRow.sigma).desc(), RatingRow.games.desc(),
                        IdentityRow.player_name).limit(limit).offset(offset)).all()
    return {"total": total, "limit": limit, "offset": offset,
            "players": [{"rank": offset + number, "name": name,
                         "rating": shown(row.mu, row.sigma), "games": row.games}
                        for number, (row, name) in enumerate(rows, start=1)]}


# -- reading ------------------------------------------------------------------------------------


def game_changes(game_id: str) -> dict[int, dict[str, float]]:
    """Seat index -> its rating change in this game (rated seats only)."""
    rows = db.session.execute(
        select(RatingChangeRow).where(RatingChangeRow.game_id == game_id)
        .order_by(RatingChangeRow.seat)).scalars().all()
    return {row.seat: change_of(row.mu_before, row.sigma_before, row.mu_after, row.sigma_after)
            for row in rows}


def rating_of(key: str) -> dict[str, Any] | None:
    """An identity's rating as answers show it; None before its first rated game."""
    row = db.session.get(RatingRow, key)
    if row is None or not row.games:
        return None
    return {"rating": shown(row.mu, row.sigma), "mu": row.mu, "sigma": row.sigma,
            "games": row.games}


def recent_changes(key: str, limit: int = RECENT) -> list[dict[str, Any]]:
    """An identity's latest rating changes, newest first, with each game's id and players."""
    rows = db.session.execute(
        select(RatingChangeRow, GameRow).join(GameRow, GameRow.id == RatingChangeRow.game_id)
        .where(RatingChangeRow.email_key == key)
        .order_by(func.coalesce(GameRow.finished_at, GameRow.updated_at).desc(),
                  GameRow.id.desc())
        .limit(limit)).all()
    out = []
    for change, game in rows:
        finished = game.finished_at or game.updated_at
        out.append({"game_id": game.id, "game_title": game.title, "seat": change.seat,
                    "rank": change.rank, "players": len(game.seats),
                    "finished_at": finished.isoformat() if finished else None,
                    **change_of(change.mu_before, change.sigma_before, change.mu_after,
                                change.sigma_after)})
    return out


def export(key: str) -> dict[str, Any]:
    """Everything stored about an identity's rating (its export)."""
    row = db.session.get(RatingRow, key)
    changes = db.session.execute(
        select(RatingChangeRow).where(RatingChangeRow.email_key == key)
        .order_by(RatingChangeRow.id)).scalars().all()
    return {
        "rating": None if row is None else {
            "mu": row.mu, "sigma": row.sigma, "shown": shown(row.mu, row.sigma),
            "games": row.games, "updated_at": row.updated_at.isoformat()},
        "changes": [{"game_id": c.game_id, "seat": c.seat, "rank": c.rank,
                     "mu_before": c.mu_before, "sigma_before": c.sigma_before,
                     "mu_after": c.mu_after, "sigma_after": c.sigma_after,
                     "created_at": c.created_at.isoformat()} for c in changes],
    }


__all__ = [
    "BETA",
    "MU",
    "SIGMA",
    "TAU",
    "Placed",
    "apply",
    "change_of",
    "claim_name",
    "export",
    "finishing_order",
    "forget",
    "game_changes",
    "leaderboard",
    "model",
    "player",
    "rating_of",
    "rebuild",
    "recent_changes",
    "shown",
]
