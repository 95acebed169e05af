"""Where a turn's server CPU goes on PostgreSQL, by part, in one process. A measurement, not a
test: it prints figures and never fails on time.

Run it from the repository root, with a local PostgreSQL::

    .venv/bin/python bench/turn_parts.py               # 400 turns, about half a minute
    .venv/bin/python bench/turn_parts.py --turns 1000

It creates a schema on ``--pg-url``, migrates it, and plays two-person games through Flask's
test client (no HTTP server: what ``bench/server.py`` measures under gunicorn, less the server's
own per-request cost). A turn is ``GET .../actions`` and ``POST .../actions {"version",
"actions": [text]}`` with a uniformly random legal action; a finished game is replaced. After a
warm-up it prints, per turn:

* the process CPU of the GET and of the POST (``time.process_time``; the test client's share
  is about that of the ``/api/ping`` figure printed next to them), and the CPU the PostgreSQL
  backends of this process spent (``/proc/<pid>/stat`` of the backends: the server must be on
  this machine);
* the inclusive CPU of the named parts (wrapped with a timer each, so no profiler overhead
  distorts them: a part's figure includes the parts it calls);
* each SQL statement sent, how many times per turn and its mean wall time;
* what PostgreSQL stored: the ``games`` updates and how many were HOT, the table sizes, the
  size of the ``state`` column and of a history row.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import functools
import importlib
import os
import pstats
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

from common import ROOT

# testkit (the test suite's PostgreSQL schema and app helpers) is no installed module: it lives in
# tests/, which pytest puts on its own path. The project itself is imported as installed.
sys.path.append(str(ROOT / "tests"))

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"

# (module, attribute): functions as the callers see them (``from x import f`` binds a name).
PARTS = [
    ("dos_server.services.play", "submit_actions"),
    ("dos_server.services.play", "locked"),
    ("dos_server.services.access", "authenticate"),
    ("dos_server.services.play", "apply_turn"),
    ("dos_server.services.play", "engine_state"),
    ("dos_engine.game", "Game.play_text"),
    ("dos_server.services.play", "after_move"),
    ("dos_server.services.play", "write_history"),
    ("dos_server.services.play", "write_game"),
    ("dos_server.services.notify", "after_change"),
    ("dos_server.services.read", "game_body"),
    ("dos_server.services.read", "event_out"),
    ("sqlalchemy.orm.session", "Session.flush"),
    ("sqlalchemy.orm.session", "Session.commit"),
    ("webargs.core", "Parser.parse"),
    ("flask_smorest.response", "jsonify"),
    ("dos_server.api.games", "_conditional"),
    ("dos_server.services.access", "read_game"),
    ("dos_server.services.read", "legal_actions_body"),
]


class Timers:
    """Inclusive process CPU and calls of wrapped functions, between :meth:`reset` and now."""

    def __init__(self) -> None:
        self.cpu: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()

    def wrap(self, module: str, attribute: str) -> None:
        owner: Any = importlib.import_module(module)
        *path, name = attribute.split(".")
        for step in path:
            owner = getattr(owner, step)
        function = getattr(owner, name, None)
        if function is None:  # not in this version of the code (run on an older checkout)
            return
        label = f"{module.rsplit('.', 1)[-1]}.{attribute}"

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.cpu[label] += time.process_time() - start
                self.calls[label] += 1

        setattr(owner, name, timed)

    def reset(self) -> None:
        self.cpu.clear()
        self.calls.clear()


def backend_cpu(pids: list[int]) -> float:
    """User and system CPU seconds of these local processes."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=60)
    parser.add_argument("--pg-url", default=os.environ.get("TEST_DATABASE_URL", DEFAULT_PG_URL))
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also print the N functions of most own CPU (cProfile; slower)")
    args = parser.parse_args()
    os.environ["TEST_DATABASE_URL"] = args.pg_url

    import sqlalchemy as sa

    from testkit import pg_schema

    timers = Timers()
    for module, attribute in PARTS:
        timers.wrap(module, attribute)
    with pg_schema() as url:
        run(url, args.turns, args.warmup, timers, sa, args.profile)
    return 0


def run(url: str, turns: int, warmup: int, timers: Timers, sa: Any, profile: int = 0) -> None:
    from dos_server.extensions import db
    from testkit import build_app

    app_name = f"dos_turn_parts_{os.getpid()}"
    app = build_app(f"{url}&application_name={app_name}")
    client = app.test_client()
    admin = sa.create_engine(url.split("?")[0], poolclass=sa.pool.NullPool)
    schema = url.split("search_path%3D", 1)[1].split("&")[0]
    rng = random.Random(1)
    cpu: collections.Counter[str] = collections.Counter()

    def new_game() -> Iterator[tuple[str, dict[int, str], dict[str, Any]]]:
        while True:
            made = client.post("/api/games", json={"seats": [{"name": "a"}, {"name": "b"}]})
            body = made.get_json()
            tokens, game = {}, {}
            for invite in body["invites"]:
                joined = client.post(f"/api/games/{body['id']}/join",
                                     json={"invite": invite["invite"]}).get_json()
                tokens[joined["seat"]] = joined["player_token"]
                game = joined["game"]
            while game["status"] == "active":
                game = yield body["id"], tokens, game

    def play(games: Any, game: dict[str, Any] | None) -> dict[str, Any]:
        game_id, tokens, game = games.send(game) if game else next(games)
        headers = {"Authorization": f"Bearer {tokens[game['view']['current']]}"}
        start = time.process_time()
        listed = client.get(f"/api/games/{game_id}/actions", headers=headers).get_json()
        middle = time.process_time()
        action = rng.choice(listed["actions"])["action"]
        answer = client.post(f"/api/games/{game_id}/actions", headers=headers,
                             json={"version": listed["version"], "actions": [action]})
        cpu["get"] += middle - start
        cpu["post"] += time.process_time() - middle
        assert answer.status_code == 200, answer.get_json()
        result: dict[str, Any] = answer.get_json()["game"]
        return result

    statements: collections.Counter[str] = collections.Counter()
    statement_wall: collections.Counter[str] = collections.Counter()
    with app.app_context():
        engine = db.engine

    def before(conn: Any, _cursor: Any, _statement: str, *_: Any) -> None:
        conn.info["dos_bench_started"] = time.perf_counter()

    def after(conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        key = " ".join(statement.split())[:100]
        statements[key] += 1
        statement_wall[key] += time.perf_counter() - conn.info["dos_bench_started"]

    games = new_game()
    game: dict[str, Any] | None = None
    for _ in range(warmup):
        game = play(games, game)
    for _ in range(warmup):
        client.get("/api/ping")

    def backends() -> list[int]:
        with admin.connect() as conn:
            return [row[0] for row in conn.execute(sa.text(
                "SELECT pid FROM pg_stat_activity WHERE application_name = :name"),
                {"name": app_name})]

    start = time.process_time()
    for _ in range(turns):
        client.get("/api/ping")
    ping = time.process_time() - start
    cpu.clear()
    timers.reset()
    sa.event.listen(engine, "before_cursor_execute", before)
    sa.event.listen(engine, "after_cursor_execute", after)
    pids = backends()
    backend_start = backend_cpu(pids)
    profiler = cProfile.Profile() if profile else None
    wall = time.perf_counter()
    if profiler:
        profiler.enable()
    for _ in range(turns):
        game = play(games, game)
    if profiler:
        profiler.disable()
    wall = time.perf_counter() - wall
    backend = backend_cpu(pids) - backend_start
    sa.event.remove(engine, "before_cursor_execute", before)
    sa.event.remove(engine, "after_cursor_execute", after)

    ms = 1000 / turns
    print(f"{turns} turns on PostgreSQL, in one process (Flask's test client); load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"per turn, ms CPU: GET .../actions {cpu['get'] * ms:.2f}, POST {cpu['post'] * ms:.2f}, "
          f"PostgreSQL backends {backend * ms:.2f} (wall {wall * ms:.2f}); "
          f"GET /api/ping {ping * ms:.3f}")
    print("parts, inclusive ms CPU per turn (calls per turn):")
    for label, seconds in timers.cpu.most_common():
        print(f"  {seconds * ms:7.3f}  ({timers.calls[label] / turns:4.2f})  {label}")
    print("statements per turn, mean ms wall:")
    for key, count in statements.most_common():
        print(f"  {count / turns:5.2f}  {statement_wall[key] / count * 1000:6.3f}  {key}")
    if profiler:
        print(f"cProfile (its overhead included), the first {profile} functions:")
        order = os.environ.get("PROFILE_SORT", "tottime")  # or cumulative, ...
        shown = os.environ.get("PROFILE_FILTER", "")  # a pattern of file names, or all
        pstats.Stats(profiler).sort_stats(order).print_stats(shown, profile)
    report_storage(admin, schema, sa)


def report_storage(admin: Any, schema: str, sa: Any) -> None:
    time.sleep(0.7)  # the statistics collector reports with a small delay
    with admin.connect() as conn:
        print("what PostgreSQL stored:")
        for name, updates, hot, total, heap in conn.execute(sa.text(
                "SELECT relname, n_tup_upd, n_tup_hot_upd, pg_total_relation_size(relid), "
                "pg_relation_size(relid) FROM pg_stat_user_tables WHERE schemaname = :schema "
                "AND relname IN ('games', 'game_events', 'seats') ORDER BY relname"),
                {"schema": schema}):
            print(f"  {name}: {updates} updates ({hot} HOT), {total // 1024} KB with indexes "
                  f"({heap // 1024} KB heap)")
        stored, text, count = conn.execute(sa.text(
            f'SELECT avg(pg_column_size(state)), avg(length(state::text)), count(*) '
            f'FROM "{schema}".games')).one()
        print(f"  games.state: {stored:.0f} bytes stored on average ({text:.0f} as JSON text), "
              f"{count} games")
        row, rows = conn.execute(sa.text(
            f'SELECT avg(pg_column_size(e.*)), count(*) FROM "{schema}".game_events e')).one()
        print(f"  game_events: {row:.0f} bytes a row on average (before its index entries), "
              f"{rows} rows")

if __name__ == "__main__":
    sys.exit(main())
