"""Benchmark of the DOS server under gunicorn. A measurement, not a test: it never fails on time.

Run it from the repository root::

    .venv/bin/python bench/server.py                       # both backends (a few minutes)
    .venv/bin/python bench/server.py --quick               # a smoke run (about half a minute)
    .venv/bin/python bench/server.py --backend sqlite      # or postgresql, or both (default)

For each backend it creates a fresh database (PostgreSQL: a new database ``dos_bench_<pid>`` on
``--pg-url``, dropped at the end; SQLite: a file in a temporary directory), upgrades the schema
with ``flask db upgrade``, starts gunicorn with the product's own serving configuration
(``--config python:dos_server.gunicorn_conf``: 2 gevent workers, as ``make run`` and the Procfile
do; ``--threads N`` measures the older sync ``gthread`` model instead) on a free loopback port as a
subprocess, waits for ``/readyz`` and always stops it at the end. A short warm-up of every phase
(not recorded) comes first: the first requests of a worker import and connect. Then:

* ceiling: ``--clients`` client processes (one keep-alive connection each) call the no-op
  ``GET /api/ping`` for ``--seconds``, before the other phases and again after them (the
  machine is shared and its load drifts: the ratios use the mean of the two);
* play: the same clients each own a few games (two people, every other game with a random bot),
  created with ``POST /api/games`` and joined with the invites (not timed). Each step is
  ``GET .../actions`` with the current seat's token, a uniformly random legal action, then
  ``POST .../actions {"version", "actions": [text]}``; a finished game is replaced by a new one.
  A turn is one GET and its POST: turns per second count the POSTs (the aim is 0.30x
  the ceiling on PostgreSQL), the request rate counts both;
* reads: the same clients read their games (``GET /api/games/<id>`` with a player token; aim
  0.60x the ceiling), and then again sending the ``ETag`` they hold as ``If-None-Match``
  (nothing changed: each answer is a ``304``);
* a read's floor: the same clients call ``GET /readyz``, which makes one database round trip
  (``SELECT 1`` on a pooled connection in autocommit, as a game read does) and nothing else. No
  request that asks the database can beat its ratio: what a state read costs beyond it is the
  token check, the tag and the answer;
* ``--rounds N`` repeats these phases N times in the same server and prints the median ratios;
* scaling, one sequential client: state-read (and submission) latency with the few games the
  phases above left, then after inserting ``--filler`` games directly with SQL (PostgreSQL
  ``COPY``, SQLite ``executemany``; the ``state`` column holds ``Game.new(...).to_dict()``), and
  for one game with ``--events`` history rows inserted directly next to a fresh game.

Figures are printed with their ratio to the ceiling (or to the small-database figure) and are
written to ``bench/results/server.json`` (git-ignored). The clients share the machine with the
server: on a small machine the client processes take a good part of the CPU, in every phase alike.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import json
import multiprocessing as mp
import os
import platform
import random
import secrets
import signal
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import common
from common import RESULTS_DIR, percentile, proc_stat

RESULTS = RESULTS_DIR / "server.json"
DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"

AIM_TURN_RATIO = 0.30  # turns (GET .../actions + POST) per second / ceiling requests per second
AIM_READ_RATIO = 0.60  # state reads per second / ceiling requests per second (PostgreSQL)


@dataclass(frozen=True)
class Settings:
    seconds: float  # each concurrent phase
    clients: int
    games_per_client: int
    max_requests_per_client: int  # a bound on every concurrent phase besides the time
    sequential: int  # GETs per scaling measurement
    sequential_submits: int  # POSTs per scaling measurement
    filler: int  # games inserted for the scaling measurement
    events: int  # history rows of the long game
    workers: int
    threads: int  # 0: the product's gevent workers; N: sync workers with N threads each
    rounds: int = 1  # the concurrent phases, repeated (each round has its own ceiling)


FULL = Settings(seconds=12.0, clients=8, games_per_client=3, max_requests_per_client=200_000,
                sequential=400, sequential_submits=150, filler=100_000, events=5_000,
                workers=2, threads=0)
QUICK = Settings(seconds=2.0, clients=8, games_per_client=2, max_requests_per_client=20_000,
                 sequential=100, sequential_submits=40, filler=2_000, events=5_000,
                 workers=2, threads=0)


# -- HTTP client ------------------------------------------------------------------------------


class ServerError(RuntimeError):
    """The server answered something the benchmark cannot go on with."""


class Http:
    """One keep-alive connection (http.client: far cheaper per request than requests)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.etag: str | None = None

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                etag: str | None = None) -> tuple[int, Any]:
        """The status and JSON body; ``etag`` is sent as ``If-None-Match`` (``self.etag``: the
        answer's ``ETag``)."""
        headers = {"Accept": "application/json"}
        if etag:
            headers["If-None-Match"] = etag
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=data, headers=headers)
                response = self.conn.getresponse()
                raw = response.read()
                self.etag = response.getheader("ETag")
                return response.status, (json.loads(raw) if raw else None)
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def ok(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        status, payload = self.request(method, path, body, token)
        if status >= 300:
            raise ServerError(f"{method} {path} -> {status}: {payload}")
        return payload

    def close(self) -> None:
        self.conn.close()


@dataclass
class Seat:
    index: int
    token: str


@dataclass
class PlayGame:
    id: str
    seats: dict[int, Seat]  # the people's seats, by index
    version: int
    current: int
    status: str


def new_game(client: Http, rng: random.Random, *, bot: bool) -> PlayGame:
    seats: list[dict[str, Any]] = [{"name": "ann"}, {"name": "bob"}]
    if bot:
        seats.insert(rng.randrange(3), {"bot": "random"})
    created = client.ok("POST", "/api/games", {"seats": seats})
    game_id = created["id"]
    people: dict[int, Seat] = {}
    body: dict[str, Any] = created
    for invite in created["invites"]:
        joined = client.ok("POST", f"/api/games/{game_id}/join", {"invite": invite["invite"]})
        people[joined["seat"]] = Seat(joined["seat"], joined["player_token"])
        body = joined["game"]
    return _refresh(PlayGame(game_id, people, body["version"], -1, body["status"]), body)


def _refresh(game: PlayGame, body: dict[str, Any]) -> PlayGame:
    game.version = body["version"]
    game.status = body["status"]
    game.current = body["view"]["current"] if body.get("view") else -1
    return game


def any_token(game: PlayGame) -> str:
    return next(iter(game.seats.values())).token


@dataclass
class Step:
    """One turn step's outcome: latencies in seconds, None where the request was not made."""

    actions_latency: float | None = None
    submit_latency: float | None = None
    submit_done_at: float = 0.0
    error: str | None = None


def play_step(client: Http, game: PlayGame, rng: random.Random) -> Step:
    """GET the current seat's legal actions, POST a random one."""
    step = Step()
    seat = game.seats.get(game.current)
    if seat is None:  # only a bot's turn could be here, and bots move inside requests
        _refresh(game, client.ok("GET", f"/api/games/{game.id}", token=any_token(game)))
        step.error = "no person to move"
        return step
    t0 = time.perf_counter()
    status, listed = client.request("GET", f"/api/games/{game.id}/actions", token=seat.token)
    step.actions_latency = time.perf_counter() - t0
    if status != 200 or not listed["your_turn"] or not listed["actions"]:
        step.error = f"actions {status}"
        _refresh(game, client.ok("GET", f"/api/games/{game.id}", token=seat.token))
        return step
    choice = rng.choice(listed["actions"])["action"]
    t0 = time.perf_counter()
    status, body = client.request("POST", f"/api/games/{game.id}/actions",
                                  {"version": listed["version"], "actions": [choice]},
                                  token=seat.token)
    step.submit_done_at = time.perf_counter()
    step.submit_latency = step.submit_done_at - t0
    if status == 200:
        _refresh(game, body["game"])
    else:
        step.error = f"submit {status} {body.get('type') if isinstance(body, dict) else ''}"
        _refresh(game, client.ok("GET", f"/api/games/{game.id}", token=seat.token))
    return step


# -- concurrent phases ------------------------------------------------------------------------


@dataclass
class WorkerResult:
    latencies: list[float] = field(default_factory=list)  # the measured request kind
    side_latencies: list[float] = field(default_factory=list)  # play: the GET .../actions
    side_count: int = 0
    games_finished: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    cpu_seconds: float = 0.0  # this client process's CPU during the timed part


def _worker(mode: str, port: int, seed: int, settings: Settings, barrier: Barrier,
            queue: Any) -> None:
    """One client process: set up (untimed), wait for the others, then run ``mode``."""
    result = WorkerResult()
    client = Http(port)
    rng = random.Random(seed)
    try:
        games = [new_game(client, rng, bot=bool(i % 2)) for i in range(settings.games_per_client)]
        tags: dict[tuple[str, int], str | None] = {}
        if mode in ("read", "cread"):  # read games in the middle of play, not just dealt
            for game in games:
                for _ in range(rng.randrange(5, 25)):
                    if game.status == "active":
                        play_step(client, game, rng)
                for seat in game.seats.values():  # the tags a polling client would hold
                    client.ok("GET", f"/api/games/{game.id}", token=seat.token)
                    tags[game.id, seat.index] = client.etag
        client.ok("GET", "/api/ping")  # warm the connection
        barrier.wait(timeout=300)
        cpu_start = time.process_time()
        start = time.perf_counter()
        end = start + settings.seconds
        done = 0
        turn = 0
        while done < settings.max_requests_per_client:
            if mode in ("ping", "ready"):
                t0 = time.perf_counter()
                status, _ = client.request("GET", "/api/ping" if mode == "ping" else "/readyz")
                t1 = time.perf_counter()
                if t1 > end:
                    break
                if status != 200:
                    result.errors[f"{mode} {status}"] = result.errors.get(f"{mode} {status}", 0) + 1
                result.latencies.append(t1 - t0)
            elif mode in ("read", "cread"):
                game = games[turn % len(games)]
                seat = game.seats[min(game.seats)] if turn % 2 else game.seats[max(game.seats)]
                tag = tags[game.id, seat.index] if mode == "cread" else None
                t0 = time.perf_counter()
                status, _ = client.request("GET", f"/api/games/{game.id}", token=seat.token,
                                           etag=tag)
                t1 = time.perf_counter()
                if t1 > end:
                    break
                if status != (304 if tag else 200):
                    result.errors[f"read {status}"] = result.errors.get(f"read {status}", 0) + 1
                result.latencies.append(t1 - t0)
            else:
                index = turn % len(games)
                game = games[index]
                if game.status != "active":
                    result.games_finished += 1
                    games[index] = game = new_game(client, rng, bot=bool(rng.randrange(2)))
                step = play_step(client, game, rng)
                if time.perf_counter() > end:
                    break
                if step.actions_latency is not None:
                    result.side_latencies.append(step.actions_latency)
                if step.submit_latency is not None and step.error is None:
                    result.latencies.append(step.submit_latency)
                if step.error:
                    result.errors[step.error] = result.errors.get(step.error, 0) + 1
            done += 1
            turn += 1
        result.cpu_seconds = time.process_time() - cpu_start
    except Exception as error:  # reported, never hidden
        result.errors[f"worker: {error!r}"[:300]] = 1
        with contextlib.suppress(Exception):
            barrier.abort()
    finally:
        client.close()
        queue.put(asdict(result))


@dataclass
class Throughput:
    requests: int
    seconds: float
    per_second: float
    p50_ms: float
    p99_ms: float
    errors: dict[str, int]
    side_per_second: float = 0.0
    side_p50_ms: float = 0.0
    side_p99_ms: float = 0.0
    games_finished: int = 0
    # CPU per measured operation (a request; in play a turn: its GET and POST), in ms: the
    # server's (gunicorn workers and, on PostgreSQL, the database's backends for its database)
    # and the clients'. Unlike the rates, it hardly moves with the rest of the machine's load.
    server_cpu_ms: float = 0.0
    client_cpu_ms: float = 0.0


@dataclass(frozen=True)
class Server:
    port: int
    pid: int  # gunicorn's master: its workers are its children
    database: str | None = None  # PostgreSQL: the database whose backends count as the server's


def server_cpu(server: Server) -> float:
    """CPU seconds used so far by the gunicorn workers and the PostgreSQL backends serving them
    (0.0 where /proc is not there)."""
    total = 0.0
    if not os.path.isdir("/proc"):
        return total
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        stat = proc_stat(pid)
        if stat is None:
            continue
        if stat[0] == server.pid or int(pid) == server.pid:
            total += stat[1]
        elif server.database is not None:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    command = cmdline.read().decode(errors="replace")
            except OSError:
                continue
            if command.startswith("postgres:") and f" {server.database} " in command:
                total += stat[1]
    return total


def concurrent_phase(mode: str, server: Server, settings: Settings, seed: int) -> Throughput:
    port = server.port
    context = mp.get_context("fork")
    barrier = context.Barrier(settings.clients + 1)  # and this process: it starts the CPU count
    queue = context.Queue()
    processes = [
        context.Process(target=_worker, args=(mode, port, seed * 1000 + i, settings, barrier, queue))
        for i in range(settings.clients)
    ]
    for process in processes:
        process.start()
    results: list[dict[str, Any]] = []
    with contextlib.suppress(threading.BrokenBarrierError):  # a client failed: it says why
        barrier.wait(timeout=300)
    cpu_before = server_cpu(server)
    try:
        deadline = time.monotonic() + settings.seconds + 600
        while len(results) < len(processes) and time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                results.append(queue.get(timeout=5))
            if len(results) < len(processes) and not any(p.is_alive() for p in processes):
                with contextlib.suppress(Exception):
                    while True:
                        results.append(queue.get(timeout=1))
                break
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGKILL)
                process.join()
    cpu_used = server_cpu(server) - cpu_before
    latencies = [x for r in results for x in r["latencies"]]
    side = [x for r in results for x in r["side_latencies"]]
    operations = max(1, len(latencies))
    errors: dict[str, int] = {}
    for r in results:
        for key, count in r["errors"].items():
            errors[key] = errors.get(key, 0) + count
    if len(results) < len(processes):
        errors["missing worker results"] = len(processes) - len(results)
    return Throughput(
        requests=len(latencies), seconds=settings.seconds,
        per_second=len(latencies) / settings.seconds,
        p50_ms=percentile(latencies, 0.50) * 1000, p99_ms=percentile(latencies, 0.99) * 1000,
        errors=errors, side_per_second=len(side) / settings.seconds,
        side_p50_ms=percentile(side, 0.50) * 1000, side_p99_ms=percentile(side, 0.99) * 1000,
        games_finished=sum(r["games_finished"] for r in results),
        server_cpu_ms=cpu_used * 1000 / operations,
        client_cpu_ms=sum(r["cpu_seconds"] for r in results) * 1000 / operations,
    )


# -- sequential latency (scaling) -------------------------------------------------------------


@dataclass
class Latency:
    count: int
    p50_ms: float
    p99_ms: float


def sequential_reads(client: Http, game: PlayGame, count: int) -> Latency:
    token = any_token(game)
    for _ in range(20):  # warm-up
        client.ok("GET", f"/api/games/{game.id}", token=token)
    times: list[float] = []
    for _ in range(count):
        t0 = time.perf_counter()
        client.ok("GET", f"/api/games/{game.id}", token=token)
        times.append(time.perf_counter() - t0)
    return Latency(count, percentile(times, 0.50) * 1000, percentile(times, 0.99) * 1000)


def sequential_submits(client: Http, game: PlayGame, count: int, rng: random.Random) -> Latency:
    times: list[float] = []
    while len(times) < count and game.status == "active":
        step = play_step(client, game, rng)
        if step.submit_latency is not None and step.error is None:
            times.append(step.submit_latency)
    return Latency(len(times), percentile(times, 0.50) * 1000, percentile(times, 0.99) * 1000)


# -- databases --------------------------------------------------------------------------------


@dataclass
class Backend:
    name: str
    url: str  # DATABASE_URL for the server
    fill_games: Callable[[int], float]  # inserts n filler games, returns seconds taken
    add_events: Callable[[str, int], float]  # appends n history rows to a game
    analyze: Callable[[], None]
    database: str | None = None  # PostgreSQL: the database's name (its backends' CPU counts)


def filler_states(count: int) -> list[str]:
    from dos_engine import Game

    return [json.dumps(Game.new(["ann", "bob"], f"filler-{i}").to_dict()) for i in range(count)]


OPTIONS_JSON = json.dumps({"after_draw": "drawn_card", "dos_call": True, "target_score": 200})


def _filler_rows(n: int) -> Iterator[tuple[tuple[Any, ...], list[tuple[Any, ...]]]]:
    """(game row, seat rows) for ``n`` filler games, ids ``fNNNNNNNN`` (no clash with _new_id)."""
    states = filler_states(min(n, 500))
    now = dt.datetime.now(dt.UTC)
    prefix = secrets.token_hex(2)
    for i in range(n):
        game_id = f"f{prefix}{i:09d}"
        game = (game_id, "active", 3 + i % 50, OPTIONS_JSON, states[i % len(states)],
                secrets.token_hex(32), f"fill{prefix}{i:09d}", 1, None, None, 20 + i % 100, now, now)
        seats = [(game_id, index, f"{game_id}{'xy'[index]}", name, None, None, None, 1, True,
                  False) for index, name in enumerate(("ann", "bob"))]
        yield game, seats


GAME_COLUMNS = ("id, status, version, options, state, seed, invite_code, host_token_version, "
                "turn_time_limit, turn_deadline, next_seq, created_at, updated_at")
SEAT_COLUMNS = ('game_id, "index", public_id, name, email, webhook_url, bot, token_version, claimed, '
                'resigned')


def _event_rows(game_id: str, first_seq: int, n: int, version: int) -> Iterator[tuple[Any, ...]]:
    now = dt.datetime.now(dt.UTC)
    texts = ("m1 R5", "draw", "play", "m2 G3+Y2", "end", "c1 B7", "dos")
    for k in range(n):
        yield (game_id, first_seq + k, version, k % 2, "action",
               json.dumps({"action": texts[k % len(texts)]}), None, now)


EVENT_COLUMNS = "game_id, seq, version, seat, kind, data, secret, created_at"


def postgres_backend(admin_url: str, name: str) -> tuple[Backend, Callable[[], None]]:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = admin_url.rsplit("/", 1)[0]
    db_url = f"{base}/{name}"

    def fill(n: int) -> float:
        t0 = time.perf_counter()
        with psycopg.connect(db_url) as conn, conn.cursor() as cur:
            seat_rows: list[tuple[Any, ...]] = []
            with cur.copy(f"COPY games ({GAME_COLUMNS}) FROM STDIN") as copy:
                for game, seats in _filler_rows(n):
                    copy.write_row(game)
                    seat_rows.extend(seats)
            with cur.copy(f"COPY seats ({SEAT_COLUMNS}) FROM STDIN") as copy:
                for row in seat_rows:
                    copy.write_row(row)
        return time.perf_counter() - t0

    def add_events(game_id: str, n: int) -> float:
        t0 = time.perf_counter()
        with psycopg.connect(db_url) as conn, conn.cursor() as cur:
            row = cur.execute("SELECT next_seq, version FROM games WHERE id = %s FOR UPDATE",
                              (game_id,)).fetchone()
            assert row is not None
            with cur.copy(f"COPY game_events ({EVENT_COLUMNS}) FROM STDIN") as copy:
                for event in _event_rows(game_id, row[0], n, row[1]):
                    copy.write_row(event)
            cur.execute("UPDATE games SET next_seq = next_seq + %s WHERE id = %s", (n, game_id))
        return time.perf_counter() - t0

    def analyze() -> None:
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")

    def drop() -> None:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    url = "postgresql+psycopg://" + db_url.split("://", 1)[1]
    return Backend("postgresql", url, fill, add_events, analyze, name), drop


def sqlite_backend(path: Path) -> Backend:
    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=60, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 60000")
        return conn

    def stamp(value: dt.datetime) -> str:  # SQLAlchemy's SQLite DateTime storage format
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")

    def fill(n: int) -> float:
        t0 = time.perf_counter()
        conn = connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            games: list[tuple[Any, ...]] = []
            seats: list[tuple[Any, ...]] = []
            for game, seat_rows in _filler_rows(n):
                games.append((*game[:11], stamp(game[11]), stamp(game[12])))
                seats.extend(seat_rows)
            conn.executemany(f"INSERT INTO games ({GAME_COLUMNS}) VALUES ({', '.join('?' * 13)})",
                             games)
            conn.executemany(f"INSERT INTO seats ({SEAT_COLUMNS}) VALUES ({', '.join('?' * 10)})", seats)
            conn.execute("COMMIT")
        finally:
            conn.close()
        return time.perf_counter() - t0

    def add_events(game_id: str, n: int) -> float:
        t0 = time.perf_counter()
        conn = connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute("SELECT next_seq, version FROM games WHERE id = ?", (game_id,)).fetchone()
            rows = [(*e[:7], stamp(e[7])) for e in _event_rows(game_id, row[0], n, row[1])]
            conn.executemany(f"INSERT INTO game_events ({EVENT_COLUMNS}) VALUES ({', '.join('?' * 8)})",
                             rows)
            conn.execute("UPDATE games SET next_seq = next_seq + ? WHERE id = ?", (n, game_id))
            conn.execute("COMMIT")
        finally:
            conn.close()
        return time.perf_counter() - t0

    def analyze() -> None:
        conn = connect()
        try:
            conn.execute("ANALYZE")
        finally:
            conn.close()

    return Backend("sqlite", f"sqlite:///{path}", fill, add_events, analyze)


# -- the server -------------------------------------------------------------------------------


@contextlib.contextmanager
def gunicorn(env: dict[str, str], settings: Settings, log: Path,
             database: str | None = None) -> Iterator[Server]:
    serving = (["--threads", str(settings.threads), "--worker-class", "gthread"]
               if settings.threads else ["--config", "python:dos_server.gunicorn_conf"])
    arguments = [*serving, "--workers", str(settings.workers), "--graceful-timeout", "5"]
    with common.gunicorn(arguments, env, log) as (port, process):
        yield Server(port, process.pid, database)


# -- one backend ------------------------------------------------------------------------------


def ratio(value: float, base: float) -> float:
    return value / base if base else 0.0


def run_backend(backend: Backend, settings: Settings, log: Path) -> dict[str, Any]:
    env = common.server_env(backend.url)
    common.upgrade_schema(env)
    out: dict[str, Any] = {}
    with gunicorn(env, settings, log, backend.database) as server:
        serving = (f"--threads {settings.threads}" if settings.threads
                   else "the product's gevent config")
        print(f"\n== {backend.name}: gunicorn -w {settings.workers}, {serving}, on "
              f"127.0.0.1:{server.port}, {settings.clients} client processes, "
              f"{settings.seconds:g} s per phase")
        warm_up(server, settings)
        out["rounds"] = [one_round(server, settings, n) for n in range(settings.rounds)]
        if settings.rounds > 1:
            print(f"\nmedian of {settings.rounds} rounds: " + ", ".join(
                f"{key} {statistics.median(r['ratios'][key] for r in out['rounds']):.2f}"
                for key in out["rounds"][0]["ratios"]))
        if settings.filler:
            out["scaling"] = scaling(backend, server.port, settings)
    return out


def warm_up(server: Server, settings: Settings) -> None:
    """Every phase briefly, not recorded: a worker's first requests import modules and open
    database connections, which made the first ceiling read low (1,150 against 2,488 req/s)."""
    short = Settings(**{**asdict(settings), "seconds": min(settings.seconds, 2.0)})
    for number, mode in enumerate(("ping", "play", "read", "cread", "ready")):
        concurrent_phase(mode, server, short, 900 + number)


def one_round(server: Server, settings: Settings, number: int) -> dict[str, Any]:
    """The concurrent phases once. The ceiling is measured before and after the others (the
    machine is shared: its load drifts) and the ratios use the mean of the two."""
    seed = 10 * number
    before = concurrent_phase("ping", server, settings, seed + 1)
    play = concurrent_phase("play", server, settings, seed + 2)
    reads = concurrent_phase("read", server, settings, seed + 3)
    unchanged = concurrent_phase("cread", server, settings, seed + 4)
    floor = concurrent_phase("ready", server, settings, seed + 6)
    after = concurrent_phase("ping", server, settings, seed + 5)
    ceiling = (before.per_second + after.per_second) / 2
    ping_cpu = (before.server_cpu_ms + after.server_cpu_ms) / 2
    ping_all = ping_cpu + (before.client_cpu_ms + after.client_cpu_ms) / 2
    out: dict[str, Any] = {
        "ceiling_before": asdict(before), "ceiling_after": asdict(after), "play": asdict(play),
        "reads": asdict(reads), "conditional_reads": asdict(unchanged), "round_trip": asdict(floor),
        "ratios": {
            "turns_to_ceiling": ratio(play.per_second, ceiling),
            "play_requests_to_ceiling": ratio(play.per_second + play.side_per_second, ceiling),
            "reads_to_ceiling": ratio(reads.per_second, ceiling),
            "conditional_reads_to_ceiling": ratio(unchanged.per_second, ceiling),
            "round_trip_to_ceiling": ratio(floor.per_second, ceiling),
            # The same ratios from CPU per operation (ping's / the operation's): what the rates
            # would be on a machine this benchmark had to itself, CPU-bound.
            "turns_to_ceiling_by_server_cpu": ratio(ping_cpu, play.server_cpu_ms),
            "reads_to_ceiling_by_server_cpu": ratio(ping_cpu, reads.server_cpu_ms),
            "conditional_reads_to_ceiling_by_server_cpu": ratio(ping_cpu,
                                                                unchanged.server_cpu_ms),
            "round_trip_to_ceiling_by_server_cpu": ratio(ping_cpu, floor.server_cpu_ms),
            "turns_to_ceiling_by_cpu": ratio(ping_all, play.server_cpu_ms + play.client_cpu_ms),
            "reads_to_ceiling_by_cpu": ratio(ping_all, reads.server_cpu_ms + reads.client_cpu_ms),
        },
    }
    r = out["ratios"]
    print(f"\nround {number + 1}:")
    print(f"{'':36}{'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'/ceiling':>9}  aim")
    print(f"{'ceiling GET /api/ping, before':36}{before.per_second:9.0f} {before.p50_ms:8.2f} "
          f"{before.p99_ms:8.2f}")
    print(f"{'ceiling GET /api/ping, after':36}{after.per_second:9.0f} {after.p50_ms:8.2f} "
          f"{after.p99_ms:8.2f}")
    print(f"{'turns (GET actions + POST)':36}{play.per_second:9.0f} {play.p50_ms:8.2f} "
          f"{play.p99_ms:8.2f} {r['turns_to_ceiling']:9.2f}  >= {AIM_TURN_RATIO:.2f}")
    print(f"{'  their POST (latency)':36}{'':9} {play.p50_ms:8.2f} {play.p99_ms:8.2f}")
    print(f"{'  their GET .../actions (latency)':36}{'':9} {play.side_p50_ms:8.2f} "
          f"{play.side_p99_ms:8.2f}")
    print(f"{'  play requests together':36}{play.per_second + play.side_per_second:9.0f} "
          f"{'':8} {'':8} {r['play_requests_to_ceiling']:9.2f}")
    print(f"{'state reads (GET /api/games/<id>)':36}{reads.per_second:9.0f} {reads.p50_ms:8.2f} "
          f"{reads.p99_ms:8.2f} {r['reads_to_ceiling']:9.2f}  >= {AIM_READ_RATIO:.2f}")
    print(f"{'  the same with If-None-Match: 304':36}{unchanged.per_second:9.0f} "
          f"{unchanged.p50_ms:8.2f} {unchanged.p99_ms:8.2f} "
          f"{r['conditional_reads_to_ceiling']:9.2f}")
    print(f"{'one database round trip (/readyz)':36}{floor.per_second:9.0f} "
          f"{floor.p50_ms:8.2f} {floor.p99_ms:8.2f} {r['round_trip_to_ceiling']:9.2f}  "
          "(a read's floor)")
    print(f"(games finished during play: {play.games_finished})")
    print(f"{'CPU per operation, ms':36}{'server':>9} {'clients':>8} {'':8} {'/ceiling':>9}")
    for label, phase, key in (("ping (mean of both)", None, None), ("turn", play, "turns"),
                              ("state read", reads, "reads"),
                              ("state read, 304", unchanged, "conditional_reads"),
                              ("one round trip (/readyz)", floor, "round_trip")):
        if phase is None:
            print(f"  {label:34}{ping_cpu:9.2f} {ping_all - ping_cpu:8.2f}")
            continue
        print(f"  {label:34}{phase.server_cpu_ms:9.2f} {phase.client_cpu_ms:8.2f} {'':8} "
              f"{r[f'{key}_to_ceiling_by_server_cpu']:9.2f}  (server CPU)")
    for name, phase in (("ceiling", before), ("play", play), ("reads", reads),
                        ("conditional reads", unchanged), ("round trip", floor),
                        ("ceiling after", after)):
        if phase.errors:
            print(f"  {name} errors: {phase.errors}")
    return out


def scaling(backend: Backend, port: int, settings: Settings) -> dict[str, Any]:
    client = Http(port)
    rng = random.Random(7)
    try:
        base = new_game(client, rng, bot=False)
        for _ in range(10):
            play_step(client, base, rng)
        small = sequential_reads(client, base, settings.sequential)
        small_submit = sequential_submits(client, new_game(client, rng, bot=False),
                                          settings.sequential_submits, rng)
        fill_seconds = backend.fill_games(settings.filler)
        backend.analyze()
        big_old = sequential_reads(client, base, settings.sequential)
        newer = new_game(client, rng, bot=False)
        big_new = sequential_reads(client, newer, settings.sequential)
        big_submit = sequential_submits(client, new_game(client, rng, bot=False),
                                        settings.sequential_submits, rng)
        long_game = new_game(client, rng, bot=False)
        fresh = new_game(client, rng, bot=False)
        events_seconds = backend.add_events(long_game.id, settings.events)
        backend.analyze()
        long_reads = sequential_reads(client, long_game, settings.sequential)
        fresh_reads = sequential_reads(client, fresh, settings.sequential)
        long_submit = sequential_submits(client, long_game, settings.sequential_submits, rng)
        fresh_submit = sequential_submits(client, fresh, settings.sequential_submits, rng)
    finally:
        client.close()
    print(f"\nscaling ({settings.sequential} sequential GETs, {settings.sequential_submits} "
          f"sequential submissions; one client):")
    print(f"  inserted {settings.filler:,} filler games in {fill_seconds:.1f} s, "
          f"{settings.events:,} events in {events_seconds:.2f} s")
    print(f"{'':38}{'p50 ms':>8} {'p99 ms':>8}   {'p50 ratio':>9} {'p99 ratio':>9}")

    def line(label: str, value: Latency, base_value: Latency | None = None) -> None:
        extra = ""
        if base_value is not None:
            extra = (f"   {ratio(value.p50_ms, base_value.p50_ms):9.2f} "
                     f"{ratio(value.p99_ms, base_value.p99_ms):9.2f}")
        print(f"  {label:36}{value.p50_ms:8.2f} {value.p99_ms:8.2f}{extra}")

    line("read, few games", small)
    line(f"read, {settings.filler:,} games (same game)", big_old, small)
    line(f"read, {settings.filler:,} games (newer game)", big_new, small)
    line("submit, few games", small_submit)
    line(f"submit, {settings.filler:,} games", big_submit, small_submit)
    line("read, fresh game", fresh_reads)
    line(f"read, game with {settings.events:,} events", long_reads, fresh_reads)
    line("submit, fresh game", fresh_submit)
    line(f"submit, game with {settings.events:,} events", long_submit, fresh_submit)
    return {
        "filler_games": settings.filler, "filler_insert_seconds": fill_seconds,
        "events": settings.events, "events_insert_seconds": events_seconds,
        "read_few_games": asdict(small), "read_many_games_same_game": asdict(big_old),
        "read_many_games_newer_game": asdict(big_new),
        "submit_few_games": asdict(small_submit), "submit_many_games": asdict(big_submit),
        "read_fresh_game": asdict(fresh_reads), "read_long_game": asdict(long_reads),
        "submit_fresh_game": asdict(fresh_submit), "submit_long_game": asdict(long_submit),
        "ratios": {
            "read_p50_many_to_few": ratio(big_old.p50_ms, small.p50_ms),
            "read_p99_many_to_few": ratio(big_old.p99_ms, small.p99_ms),
            "read_p50_long_to_fresh": ratio(long_reads.p50_ms, fresh_reads.p50_ms),
            "read_p99_long_to_fresh": ratio(long_reads.p99_ms, fresh_reads.p99_ms),
            "submit_p50_many_to_few": ratio(big_submit.p50_ms, small_submit.p50_ms),
            "submit_p50_long_to_fresh": ratio(long_submit.p50_ms, fresh_submit.p50_ms),
        },
    }


def run(settings: Settings, backends: Sequence[str], pg_url: str, output: Path) -> None:
    report: dict[str, Any] = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "settings": asdict(settings),
        "backends": {},
    }
    with tempfile.TemporaryDirectory(prefix="dos-bench-") as tmp:
        for name in backends:
            log = Path(tmp) / f"gunicorn-{name}.log"
            try:
                if name == "sqlite":
                    report["backends"][name] = run_backend(
                        sqlite_backend(Path(tmp) / "bench.sqlite3"), settings, log)
                else:
                    backend, drop = postgres_backend(pg_url, f"dos_bench_{os.getpid()}")
                    try:
                        report["backends"][name] = run_backend(backend, settings, log)
                    finally:
                        drop()
            except Exception as error:
                print(f"\n{name}: FAILED: {error!r}")
                if log.exists():
                    print(log.read_text()[-3000:])
                report["backends"][name] = {"error": repr(error)}
            if log.exists():
                tail = [line for line in log.read_text().splitlines()
                        if "ERROR" in line or "Traceback" in line]
                if tail:
                    print(f"  gunicorn log: {len(tail)} error lines, first: {tail[0][:200]}")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {output}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--seconds", type=float, help="seconds of each concurrent phase")
    parser.add_argument("--clients", type=int, help="concurrent client processes")
    parser.add_argument("--filler", type=int,
                        help="games inserted for the scaling measurement (0: no scaling part)")
    parser.add_argument("--workers", type=int, help="gunicorn workers")
    parser.add_argument("--threads", type=int,
                        help="sync gthread workers with N threads each instead of the product's "
                             "gevent workers")
    parser.add_argument("--rounds", type=int, help="repeat the concurrent phases (default 1)")
    parser.add_argument("--pg-url", default=os.environ.get("DOS_BENCH_PG_URL", DEFAULT_PG_URL),
                        help="an admin URL of the PostgreSQL server (a database is created on it)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON file ({RESULTS})")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    names = ("seconds", "clients", "filler", "workers", "threads", "rounds")
    overrides = {key: getattr(args, key) for key in names if getattr(args, key) is not None}
    if any(value <= 0 for key, value in overrides.items() if key not in ("filler", "threads")) \
            or overrides.get("filler", 0) < 0 or overrides.get("threads", 0) < 0:
        parser.error("numbers must be positive")
    settings = Settings(**{**asdict(settings), **overrides})
    backends = ("postgresql", "sqlite") if args.backend == "both" else (args.backend,)
    run(settings, backends, args.pg_url, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
