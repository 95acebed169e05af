"""The one order in which every writer takes row locks, so that no two transactions can wait
for each other (PostgreSQL would abort one of them as a deadlock after ``deadlock_timeout``).

A transaction takes its locks in this order, skipping what it does not need:

1. ``inbound_messages``: the one emailed message being processed (services/inbound.py);
   forgetting an identity deletes its old ones first.
2. ``identities``: the account's own row (settings, forgetting).
3. ``games``, by ascending id: one game (:func:`access.locked`, ``access.get_game(...,
   for_update=True)``) or several (:func:`lock_games`).
4. ``seats``: only ever locked or written by a transaction that holds their game's lock
   (``access._lock_game`` locks them with it, by index). So two writers never queue for a
   seat: the game's lock has queued them already. A bulk update of seats across games
   (an account's settings, forgetting an identity) locks those games first. One exception: a
   look (services/attention.py) writes one seat's ``last_seen_at`` alone, in autocommit, and
   on PostgreSQL skips the seat if a writer holds it, so it never waits and is never waited
   for longer than that one UPDATE.
5. What belongs to a locked game: its events, idempotency keys, archive, and its outbox rows
   (``notifications``; the worker locks the game before a failed delivery's row when the
   failure may change the game's seats).
6. ``ratings``, by ascending ``email_key``, each row created (if missing) just before it is
   locked: a game's end (services/ratings.py, holding the game), forgetting an identity
   (after its games). ``dos-server ratings rebuild`` locks the whole table on PostgreSQL,
   holding no game.
7. What belongs to an address: ``digests``, ``login_codes`` (by ascending creation, then id:
   :func:`services.account` ``_lock_codes``), ``account_sessions``.

Inserting a row takes no lock that another writer waits for, except on the same new unique
key (two sign-ins creating one identity), and both sides of that follow the same order.
SQLite needs none of this: a write transaction holds the whole database (``BEGIN
IMMEDIATE``), and ``FOR UPDATE`` compiles to nothing there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement, Select, select

from dos_server.extensions import db
from dos_server.models import GameRow


def lock_games(game_ids: Select[Any] | Iterable[str],
               *where: ColumnElement[bool]) -> list[str]:
    """Lock the rows of these games (those that also match ``where``) in ascending id order,
    inside the caller's transaction; returns their ids in that order.

    On PostgreSQL a row that another writer held is checked against ``where`` again as that
    writer committed it.
    """
    ids = game_ids if isinstance(game_ids, Select) else list(game_ids)
    return list(db.session.execute(
        select(GameRow.id).where(GameRow.id.in_(ids), *where)
        .order_by(GameRow.id).with_for_update()
    ).scalars())


__all__ = ["lock_games"]
