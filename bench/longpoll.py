"""Benchmark of ordinary requests while long-polls are parked, under the real serving model.
A measurement, not a test: it prints figures and ratios and never fails on time.

Run it from the repository root::

    .venv/bin/python bench/longpoll.py                       # PostgreSQL, a few minutes
    .venv/bin/python bench/longpoll.py --backend sqlite      # or both
    .venv/bin/python bench/longpoll.py --quick               # a smoke run

Its own database (PostgreSQL: ``dos_longpoll_<pid>`` on ``--pg-url``, dropped at the end;
SQLite: a file in a temporary directory), upgraded, and gunicorn started as ``make run`` and the
Procfile do (``--config python:dos_server.gunicorn_conf``: 2 gevent workers) on a free loopback
port. Then ``--drivers`` threads each play their own two-person game, one step after another:
``GET /api/games/<id>``, ``GET .../actions``, ``POST .../actions`` (a random legal action), each
request timed on its own. Phases of ``--seconds``, taken in turn (``--rounds`` times):

* ``baseline``: nothing else;
* ``parked``: ``--polls`` long-polls (``GET .../events?after=<newest>&wait=60``) spread over
  ``--poll-games`` games, from one asyncio process, one connection each; the phase starts once
  the server has parked them all;
* ``herd``: the same polls, and every ``--herd-every`` seconds the bench commits one history
  row to each of their games (one transaction per game, with the ``NOTIFY`` the server's write
  path sends on PostgreSQL), so that every parked poll wakes at once, reads, answers, and is
  asked again (``after`` = the answer's ``next_after``).

For each phase and request kind: p50, p99 and the worst latency, and the ratio to the baseline
of the same run; for the herd, how long each long-poll's answer came after the commit of a row
it carries (the rows hold their commit's wall-clock time: waiters come second, but promptly).
Errors (a status >= 500, a reset connection) are counted. Figures go to
``bench/results/longpoll-<backend>.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import platform
import random
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import common
from common import RESULTS_DIR, percentile

SERVE = "python:dos_server.gunicorn_conf"  # the Makefile's GUNICORN_CONF, the Procfile's --config
KINDS = ("game", "actions", "turn")
PHASES = ("baseline", "parked", "herd")


bs = common.bench_server()


@dataclass(frozen=True)
class Settings:
    seconds: float  # each phase
    rounds: int  # of the three phases
    drivers: int
    polls: int
    poll_games: int
    herd_every: float  # seconds between two wakes of every poll


FULL = Settings(seconds=15.0, rounds=3, drivers=4, polls=300, poll_games=30, herd_every=2.0)
QUICK = Settings(seconds=4.0, rounds=1, drivers=2, polls=300, poll_games=30, herd_every=2.0)


def figures(values: Sequence[float]) -> dict[str, float]:
    return {"count": len(values), "p50_ms": round(percentile(values, 0.50) * 1000, 2),
            "p99_ms": round(percentile(values, 0.99) * 1000, 2),
            "max_ms": round(max(values, default=float("nan")) * 1000, 2)}


# -- the parked polls: one asyncio process, one connection each --------------------------------


async def _poller(port: int, game_id: str, after: int, asked: list[int],
                  answered: list[int], delays: list[float]) -> None:
    """Long-polls the game's events with ``wait=60``, again and again, following ``next_after``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    first = True
    try:
        while True:
            writer.write(f"GET /api/games/{game_id}/events?after={after}&wait=60 HTTP/1.1\r\n"
                         "Host: 127.0.0.1\r\n\r\n".encode())
            await writer.drain()
            if first:
                asked[0] += 1
                first = False
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            body = json.loads(await reader.readexactly(length))
            answered[0] += 1
            now = time.time()  # the herd's rows carry their commit's wall-clock time
            # From the newest commit the answer holds (the one that woke it): an answer that
            # also holds rows of earlier phases (a poll asked again after its old `after`)
            # says nothing of how fast this wake-up was answered.
            stamps = [e["data"]["bench_at"] for e in body.get("events", ())
                      if isinstance(e.get("data"), dict) and "bench_at" in e["data"]]
            if stamps:
                delays.append(now - max(stamps))
            after = int(body.get("next_after", after))
    finally:
        writer.close()


def _poll_process(port: int, targets: list[tuple[str, int]], ready: Any, stop: Any,
                  answers: Any, delays_to: str) -> None:
    async def main() -> None:
        asked, answered = [0], [0]
        delays: list[float] = []
        tasks = []
        for game_id, after in targets:
            tasks.append(asyncio.create_task(_poller(port, game_id, after, asked, answered,
                                                     delays)))
            await asyncio.sleep(0)  # let it connect before the next (no SYN burst)
        while asked[0] < len(targets):
            await asyncio.sleep(0.05)
        ready.set()
        while not stop.is_set():
            answers.value = answered[0]
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        answers.value = answered[0]
        Path(delays_to).write_text(json.dumps(delays))

    asyncio.run(main())


@dataclass
class Polls:
    answers: Any  # a shared count of the answers so far
    delays: list[float]  # from each herd row's commit to its answer: filled once they stop


@contextlib.contextmanager
def parked_polls(port: int, targets: list[tuple[str, int]], probe: Any) -> Iterator[Polls]:
    """The polls, asked by one process, once the server has parked them all: every request is
    sent, then reads of ``probe`` are back to their usual speed."""
    client = bs.Http(port)
    usual = percentile([common.read_latency(client, probe) for _ in range(20)], 0.50)
    context = mp.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    answers = context.Value("i", 0)
    polls = Polls(answers, [])
    delays_to = Path(tempfile.mkdtemp()) / "delays.json"
    process = context.Process(target=_poll_process,
                              args=(port, targets, ready, stop, answers, str(delays_to)),
                              daemon=True)
    process.start()
    t0 = time.perf_counter()
    if not ready.wait(300):
        raise bs.ServerError("the polls did not all connect")
    fast = 0
    while fast < 10 and time.perf_counter() - t0 < 120:
        fast = fast + 1 if common.read_latency(client, probe) < 2 * usual else 0
    print(f"    {len(targets)} polls parked in {time.perf_counter() - t0:.1f} s", flush=True)
    client.close()
    try:
        yield polls
    finally:
        stop.set()
        process.join(30)
        if process.is_alive():
            process.kill()
        if delays_to.exists():
            polls.delays += json.loads(delays_to.read_text())
            delays_to.unlink()
        delays_to.parent.rmdir()


# -- waking every poll: one commit per game --------------------------------------------------


def committer(backend: str, url: str) -> tuple[Callable[[str], None], Callable[[], None]]:
    """(commit one history row to a game, close): the row and ``next_seq`` in one transaction,
    with the ``NOTIFY`` the server's write path sends (PostgreSQL)."""
    insert = (f"INSERT INTO game_events ({bs.EVENT_COLUMNS}) VALUES ({{0}}, {{0}}, {{0}}, 0, "
              "'action', {0}, NULL, CURRENT_TIMESTAMP)")
    def data() -> str:
        return json.dumps({"action": "draw", "bench_at": time.time()})

    if backend == "postgresql":
        import psycopg

        pg = psycopg.connect("postgresql://" + url.split("://", 1)[1])

        def commit_pg(game_id: str) -> None:
            row = pg.execute("SELECT next_seq, version FROM games WHERE id = %s FOR UPDATE",
                             (game_id,)).fetchone()
            assert row is not None
            pg.execute(insert.format("%s"), (game_id, row[0], row[1], data()))
            pg.execute("UPDATE games SET next_seq = next_seq + 1 WHERE id = %s", (game_id,))
            pg.execute("SELECT pg_notify('dos_games', %s)", (game_id,))
            pg.commit()

        return commit_pg, pg.close
    # Made here, used by herd()'s thread only.
    lite = sqlite3.connect(url.removeprefix("sqlite:///"), timeout=60, isolation_level=None,
                           check_same_thread=False)
    lite.execute("PRAGMA busy_timeout = 60000")

    def commit_sqlite(game_id: str) -> None:
        lite.execute("BEGIN IMMEDIATE")
        row = lite.execute("SELECT next_seq, version FROM games WHERE id = ?",
                           (game_id,)).fetchone()
        lite.execute(insert.format("?"), (game_id, row[0], row[1], data()))
        lite.execute("UPDATE games SET next_seq = next_seq + 1 WHERE id = ?", (game_id,))
        lite.execute("COMMIT")

    return commit_sqlite, lite.close


@contextlib.contextmanager
def herd(commit: Callable[[str], None], game_ids: list[str], every: float) -> Iterator[list[int]]:
    """Every ``every`` seconds, one commit to each game, one after another; yields [wakes]."""
    stop = threading.Event()
    wakes = [0]

    def run() -> None:
        while not stop.wait(every):
            for game_id in game_ids:
                commit(game_id)
            wakes[0] += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield wakes
    finally:
        stop.set()
        thread.join()


# -- ordinary requests ------------------------------------------------------------------------


@dataclass
class Measured:
    latencies: dict[str, list[float]]
    errors: int


def drive_phase(port: int, games: list[Any], seconds: float, seed: int) -> Measured:
    """Every driver plays its game for ``seconds``: read it, list its actions, play one."""
    latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
    errors = [0]
    lock = threading.Lock()

    def drive(index: int) -> None:
        client = bs.Http(port)
        rng = random.Random(seed * 1000 + index)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            game = games[index]
            try:
                if game.status != "active":
                    games[index] = game = bs.new_game(client, rng, bot=False)
                t0 = time.perf_counter()
                status, _ = client.request("GET", f"/api/games/{game.id}",
                                           token=bs.any_token(game))
                read = time.perf_counter() - t0
                step = bs.play_step(client, game, rng)
            except (OSError, bs.ServerError):
                with lock:
                    errors[0] += 1
                client.close()
                client = bs.Http(port)
                continue
            with lock:
                if status == 200:
                    latencies["game"].append(read)
                else:
                    errors[0] += 1
                if step.actions_latency is not None:
                    latencies["actions"].append(step.actions_latency)
                if step.submit_latency is not None:
                    latencies["turn"].append(step.submit_latency)
                if step.error and step.error.startswith(("actions 5", "submit 5")):
                    errors[0] += 1
        client.close()

    threads = [threading.Thread(target=drive, args=(i,)) for i in range(len(games))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Measured(latencies, errors[0])


# -- the run ----------------------------------------------------------------------------------


@contextlib.contextmanager
def database(backend: str, pg_url: str, tmp: Path) -> Iterator[str]:
    if backend == "postgresql":
        made, drop = bs.postgres_backend(pg_url, f"dos_longpoll_{int(time.time())}_"
                                                 f"{mp.current_process().pid}")
        try:
            yield made.url
        finally:
            drop()
    else:
        yield bs.sqlite_backend(tmp / "longpoll.sqlite").url


def newest(client: Any, game: Any) -> int:
    return int(client.ok("GET", f"/api/games/{game.id}/events?limit=1")["last"])


def run_backend(backend: str, settings: Settings, pg_url: str) -> dict[str, Any]:
    out: dict[str, Any] = {"backend": backend, "machine": platform.platform(),
                           "settings": settings.__dict__,
                           "serving": f"gunicorn --config {SERVE} (2 gevent workers)"}
    with tempfile.TemporaryDirectory() as tmp, database(backend, pg_url, Path(tmp)) as url:
        env = common.server_env(url)
        env.update({"DOS_RATELIMIT_ENABLED": "false", "WEB_CONCURRENCY": "2"})
        common.upgrade_schema(env)
        with common.gunicorn(["--config", SERVE], env, Path(tmp) / "g.log",
                             stop_timeout=30) as (port, _):
            client = bs.Http(port)
            rng = random.Random(1)
            poll_games = [bs.new_game(client, rng, bot=False) for _ in range(settings.poll_games)]
            starts = [(game.id, newest(client, game)) for game in poll_games]
            targets = [starts[i % len(starts)] for i in range(settings.polls)]
            games = [bs.new_game(client, rng, bot=False) for _ in range(settings.drivers)]
            drive_phase(port, games, 1.0, 0)  # warm-up: pools, caches
            commit, close = committer(backend, url)
            pooled: dict[str, dict[str, list[float]]] = {
                phase: {kind: [] for kind in KINDS} for phase in PHASES}
            errors = dict.fromkeys(PHASES, 0)
            herd_delays: list[float] = []
            number = 0
            for _round in range(settings.rounds):
                for phase in PHASES:
                    number += 1
                    note = ""
                    if phase == "baseline":
                        measured = drive_phase(port, games, settings.seconds, number)
                    else:
                        with parked_polls(port, targets, poll_games[0]) as polls:
                            before = polls.answers.value
                            if phase == "parked":
                                measured = drive_phase(port, games, settings.seconds, number)
                            else:
                                with herd(commit, [g.id for g in poll_games],
                                          settings.herd_every) as wakes:
                                    measured = drive_phase(port, games, settings.seconds, number)
                                note = f", {wakes[0]} wakes"
                            note += f", {polls.answers.value - before} polls answered"
                        if phase == "herd":
                            herd_delays += polls.delays
                            shown_delays = figures(polls.delays)
                            out[f"phase{number}_poll_answers"] = shown_delays
                            note += (f"; poll answers from the commit: p50 "
                                     f"{shown_delays['p50_ms']} ms, max {shown_delays['max_ms']} ms")
                    errors[phase] += measured.errors
                    shown = {kind: figures(measured.latencies[kind]) for kind in KINDS}
                    out[f"phase{number}_{phase}"] = {**shown, "errors": measured.errors}
                    for kind in KINDS:
                        pooled[phase][kind] += measured.latencies[kind]
                    every = [v for kind in KINDS for v in measured.latencies[kind]]
                    whole = figures(every)
                    print(f"  phase {number} {phase:>8}: {whole['count']} requests, p50 "
                          f"{whole['p50_ms']} ms, p99 {whole['p99_ms']} ms, max "
                          f"{whole['max_ms']} ms ({measured.errors} errors{note})", flush=True)
            close()
            client.close()
    for phase in PHASES:
        every = [v for kind in KINDS for v in pooled[phase][kind]]
        out[phase] = {"all": figures(every), **{k: figures(pooled[phase][k]) for k in KINDS},
                      "errors": errors[phase]}
    base = out["baseline"]["all"]
    for phase in ("parked", "herd"):
        mine = out[phase]["all"]
        out[f"{phase}_ratios"] = {q: round(mine[q] / base[q], 3)
                                  for q in ("p50_ms", "p99_ms", "max_ms")}
    out["herd_poll_answers"] = figures(herd_delays)
    print(f"{backend}: ordinary requests (all kinds), p50 / p99 / max in ms")
    for phase in PHASES:
        shown = out[phase]
        ratios = out.get(f"{phase}_ratios")
        tail = (f"  = {ratios['p50_ms']}x / {ratios['p99_ms']}x / {ratios['max_ms']}x baseline"
                if ratios else "")
        print(f"  {phase:>8}: {shown['all']['p50_ms']} / {shown['all']['p99_ms']} / "
              f"{shown['all']['max_ms']}{tail}  ({shown['errors']} errors)")
        for kind in KINDS:
            print(f"      {kind:>8}: {shown[kind]['p50_ms']} / {shown[kind]['p99_ms']} / "
                  f"{shown[kind]['max_ms']}")
    answered = out["herd_poll_answers"]
    print(f"  herd's long-polls, from a commit to its answer: {answered['p50_ms']} / "
          f"{answered['p99_ms']} / {answered['max_ms']} ({answered['count']} answers)")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--backend", choices=("postgresql", "sqlite", "both"),
                        default="postgresql")
    parser.add_argument("--pg-url", default=bs.DEFAULT_PG_URL, help="PostgreSQL admin URL")
    parser.add_argument("--polls", type=int, help="parked long-polls")
    parser.add_argument("--seconds", type=float, help="each phase")
    parser.add_argument("--rounds", type=int, help="of the three phases")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    changes = {k: v for k, v in (("polls", args.polls), ("seconds", args.seconds),
                                 ("rounds", args.rounds)) if v is not None}
    settings = Settings(**{**settings.__dict__, **changes})
    backends = ["postgresql", "sqlite"] if args.backend == "both" else [args.backend]
    for backend in backends:
        out = run_backend(backend, settings, args.pg_url)
        output = RESULTS_DIR / f"longpoll-{backend}.json"
        common.write_results(output, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
