"""Storage per finished game on PostgreSQL, before and after archiving (issue #15, part 5).

A measurement, not a test. Run it from the repository root::

    .venv/bin/python bench/storage.py                 # 1,000 games to 200 points (minutes)
    .venv/bin/python bench/storage.py --games 50      # a quick look

It creates a fresh database ``dos_storage_<pid>`` on ``--pg-url`` (dropped at the end),
upgrades it to the head migration, and plays ``--games`` games in-process through the service
layer: ``lobby.create_game`` (one person and three bots: random, greedy, random; target
``--target`` points), then every one of the person's turns with ``play.apply_turn`` (a
uniformly random legal action by number), the bots answering in the same call as they do after
a request. To keep the run short each game's turns share one transaction; the rows written
are the ones one request per turn writes.

Then it measures ``pg_total_relation_size`` (heap, TOAST and indexes) of every table that
holds a game's data, archives every game with ``archive.archive_due`` (the worker's pass) and
measures again. Both measurements follow ``VACUUM FULL``, so they count the live data, not
dead row versions (a plain ``VACUUM`` lets new rows reuse the space the deleted ones leave; it
does not give it back to the file system). Figures go to stdout and
``bench/results/storage.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "server")]

from dos_server import create_app  # noqa: E402
from dos_server.database import write_transaction  # noqa: E402
from dos_server.extensions import db  # noqa: E402
from dos_server.models import utcnow  # noqa: E402
from dos_server.services import access, archive, lobby, play  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "storage.json"
TABLES = ("games", "seats", "game_events", "game_archives", "idempotency_keys", "notifications",
          "delivery_attempts")
SEATS = [lobby.SeatSpec(name="pat"), lobby.SeatSpec(bot="random"), lobby.SeatSpec(bot="greedy"),
         lobby.SeatSpec(bot="random")]


def play_one(target: int, rng: random.Random) -> int:
    """One finished game through the service layer; returns how many turns the person took."""
    created = lobby.create_game(SEATS, {"target_score": target}, None)
    turns = 0
    with write_transaction():
        game = access.get_game(created["id"], for_update=True)
        while game.status == "active":
            state = access.engine_state(game)
            listed = state.legal_actions(state.current)
            play.apply_turn(game, state.current, game.version, None, rng.randrange(len(listed)) + 1)
            turns += 1
    return turns


def sizes(admin_url: str, name: str) -> dict[str, int]:
    with psycopg.connect(_db_url(admin_url, name), autocommit=True) as conn:
        conn.execute("VACUUM FULL ANALYZE")
        return {table: int(conn.execute("SELECT pg_total_relation_size(%s)", (table,))
                           .fetchone()[0]) for table in TABLES}  # type: ignore[index]


def counts(admin_url: str, name: str) -> dict[str, Any]:
    with psycopg.connect(_db_url(admin_url, name)) as conn:
        rows = conn.execute("SELECT count(*) FROM game_events").fetchone()
        blobs = conn.execute("SELECT count(*), coalesce(avg(length(data)), 0), "
                             "coalesce(max(length(data)), 0) FROM game_archives").fetchone()
    assert rows is not None
    assert blobs is not None
    return {"event_rows": int(rows[0]), "archives": int(blobs[0]),
            "archive_bytes_avg": float(blobs[1]), "archive_bytes_max": int(blobs[2])}


def _db_url(admin_url: str, name: str) -> str:
    return admin_url.rsplit("/", 1)[0] + "/" + name


def run(games: int, target: int, pg_url: str, output: Path) -> dict[str, Any]:
    name = f"dos_storage_{os.getpid()}"
    admin_url = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        app = create_app({"SQLALCHEMY_DATABASE_URI": "postgresql+psycopg://"
                          + _db_url(admin_url, name).split("://", 1)[1],
                          "SECRET_KEY": "bench", "ARCHIVE_AFTER_SECONDS": 0})
        with app.app_context():
            import flask_migrate

            flask_migrate.upgrade(directory=str(ROOT / "migrations"))
            rng = random.Random(15)
            started = time.perf_counter()
            turns = 0
            for number in range(games):
                turns += play_one(target, rng)
                db.session.remove()
                if (number + 1) % 100 == 0:
                    print(f"  {number + 1} games played ({time.perf_counter() - started:.0f} s)",
                          flush=True)
            played = time.perf_counter() - started
            before = sizes(admin_url, name)
            before_counts = counts(admin_url, name)
            started = time.perf_counter()
            archived = 0
            while True:
                done = archive.archive_due(utcnow() + timedelta(seconds=1), limit=100)
                db.session.remove()
                archived += done
                if not done:
                    break
            archiving = time.perf_counter() - started
            after = sizes(admin_url, name)
            after_counts = counts(admin_url, name)
            db.session.remove()
            db.engine.dispose()
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    result = {
        "games": games, "target": target, "person_turns": turns,
        "play_seconds": round(played, 1), "archive_seconds": round(archiving, 1),
        "archived": archived,
        "before": {"bytes": before, **before_counts},
        "after": {"bytes": after, **after_counts},
        "bytes_per_game_before": sum(before.values()) / games,
        "bytes_per_game_after": sum(after.values()) / games,
        "machine": f"{platform.machine()} {os.cpu_count()} cpu, {platform.python_version()}",
    }
    report(result)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=2) + "\n")
    return result


def report(result: dict[str, Any]) -> None:
    games = result["games"]
    before, after = result["before"], result["after"]
    print(f"\n{games} finished games to {result['target']} points (1 person + 3 bots), "
          f"PostgreSQL, after VACUUM FULL; played in {result['play_seconds']} s, archived in "
          f"{result['archive_seconds']} s ({result['archive_seconds'] / games * 1000:.1f} ms "
          f"a game)")
    print(f"event rows per game before: {before['event_rows'] / games:.0f}; archive blob: "
          f"{after['archive_bytes_avg']:.0f} B average, {after['archive_bytes_max']} B max")
    print(f"{'table':<20}{'before B/game':>15}{'after B/game':>15}")
    for table in TABLES:
        print(f"{table:<20}{before['bytes'][table] / games:>15.0f}"
              f"{after['bytes'][table] / games:>15.0f}")
    b, a = result["bytes_per_game_before"], result["bytes_per_game_after"]
    print(f"{'total':<20}{b:>15.0f}{a:>15.0f}   after/before = {a / b:.3f} "
          f"({b / a:.1f}x smaller); aim <= 10240 B: {'met' if a <= 10240 else 'NOT met'}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--target", type=int, default=200)
    parser.add_argument("--pg-url", default=os.environ.get(
        "BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    run(args.games, args.target, args.pg_url, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
