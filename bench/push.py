"""Benchmark of push on PostgreSQL under the real serving model. A measurement, not
a test: it prints figures and ratios and never fails on time.

Run it from the repository root::

    .venv/bin/python bench/push.py             # about five minutes
    .venv/bin/python bench/push.py --quick     # a smoke run

It creates a database ``dos_push_<pid>`` on ``--pg-url`` (dropped at the end), upgrades it, and
starts gunicorn exactly as ``make run`` and the Procfile do (``--config
python:dos_server.gunicorn_conf``: gevent workers, 2 of them) on a free loopback port. Then:

* turns: ``--drivers`` threads each play their own two-person game, one turn after another
  (``GET .../actions`` then ``POST .../actions`` with a random legal action; a turn's latency
  is both requests). Six phases of ``--seconds`` each, alternating: without idle waiters, and
  with ``--idle`` clients long-polling (``GET .../events?after=<newest>&wait=60``, the first
  wait of each drawn from 1-60 s so that they ask again spread out, as in a steady state) on
  games where nothing happens (alternating, so that a shared machine's load falls on both).
  The idle clients are one asyncio process of their own with one connection each; a phase
  with them starts once the server has parked them all. The ratio is pooled "with" over
  pooled "without", p50 and p99 (aim: within 1.2x).
* wake-up, exact: a waiter thread long-polls a game; once it has waited 0.2 s the bench itself
  commits a history row to that game with the ``NOTIFY`` the server's write path sends (psycopg,
  one transaction): ``committed -> woken`` runs from ``commit()`` returning to the waiter's
  answer. Measured without and with the idle clients (aim: p50 < 50 ms).
* wake-up by a real move: the same waiter, and the bench plays a move through the API.
  ``answered -> woken``: from the mover's POST answer to the waiter's answer (the commit lies
  between the POST being sent and answered: this is commit-to-woken less the POST's tail after
  its commit, an under-estimate); ``sent -> woken`` adds the whole POST (an over-estimate).

Figures go to ``bench/results/push.json`` (git-ignored). The machine is shared: report ratios
measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import platform
import random
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import common
from common import RESULTS_DIR, percentile

RESULTS = RESULTS_DIR / "push.json"
SERVE = "python:dos_server.gunicorn_conf"  # the Makefile's GUNICORN_CONF, the Procfile's --config


bs = common.bench_server()


@dataclass(frozen=True)
class Settings:
    seconds: float  # each turn phase
    drivers: int
    idle: int
    wakes: int  # wake-up samples per condition


FULL = Settings(seconds=12.0, drivers=4, idle=1000, wakes=100)
QUICK = Settings(seconds=3.0, drivers=2, idle=200, wakes=15)


def figures(values: Sequence[float]) -> dict[str, float]:
    return {"count": len(values), "p50_ms": round(percentile(values, 0.50) * 1000, 2),
            "p99_ms": round(percentile(values, 0.99) * 1000, 2)}


# -- the server -------------------------------------------------------------------------------


@contextlib.contextmanager
def gunicorn(url: str, log: Path) -> Iterator[int]:
    env = common.server_env(url)
    env.update({"DOS_RATELIMIT_ENABLED": "false", "WEB_CONCURRENCY": "2"})
    common.upgrade_schema(env)
    with common.gunicorn(["--config", SERVE], env, log, stop_timeout=30) as (port, _):
        yield port


def newest(client: Any, game_id: str) -> int:
    return int(client.ok("GET", f"/api/games/{game_id}/events?limit=1")["last"])


# -- idle waiters: one asyncio process, one connection each ------------------------------------


async def _idle_client(port: int, path: str, sent: list[int], stop: asyncio.Event) -> None:
    """Long-polls ``path`` with ``wait=60`` one after another; the first wait is drawn from
    1-60 s, so that a thousand clients ask again spread out, as they would in a real server's
    steady state (about idle/60 requests a second), not all at once every minute."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    def request(wait: float) -> bytes:
        return f"GET {path}&wait={wait:.2f} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()

    first = True
    try:
        while not stop.is_set():
            writer.write(request(random.uniform(1, 60) if first else 60))
            await writer.drain()
            if first:
                sent[0] += 1
                first = False
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            await reader.readexactly(length)
    finally:
        writer.close()


def _idle_process(port: int, paths: list[str], ready: Any, stop: Any) -> None:
    async def main() -> None:
        stopping = asyncio.Event()
        sent = [0]
        tasks = []
        for path in paths:
            tasks.append(asyncio.create_task(_idle_client(port, path, sent, stopping)))
            await asyncio.sleep(0)  # let it connect before the next (no SYN burst)
        while sent[0] < len(paths):
            await asyncio.sleep(0.05)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        stopping.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


@contextlib.contextmanager
def idle_waiters(port: int, paths: list[str], probe: Any) -> Iterator[None]:
    """``paths`` long-polled by one process, each on its own connection, once the server has
    parked them: every request is sent, then reads of ``probe`` are back to their usual speed
    (each waiter's first look is a history read: a thousand take the server a while)."""
    client = bs.Http(port)
    usual = percentile([common.read_latency(client, probe) for _ in range(20)], 0.50)
    context = mp.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    process = context.Process(target=_idle_process, args=(port, paths, ready, stop), daemon=True)
    process.start()
    t0 = time.perf_counter()
    if not ready.wait(300):
        raise bs.ServerError("the idle waiters did not all connect")
    fast = 0
    while fast < 10 and time.perf_counter() - t0 < 120:
        fast = fast + 1 if common.read_latency(client, probe) < 2 * usual else 0
    print(f"    {len(paths)} idle waiters parked in {time.perf_counter() - t0:.1f} s", flush=True)
    client.close()
    try:
        yield
    finally:
        stop.set()
        process.join(30)
        if process.is_alive():
            process.kill()


# -- turns ------------------------------------------------------------------------------------


def turn_phase(port: int, games: list[Any], seconds: float, seed: int) -> tuple[list[float], int]:
    """Every driver plays its game for ``seconds``; returns turn latencies and errors."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def drive(index: int) -> None:
        client = bs.Http(port)
        rng = random.Random(seed * 1000 + index)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            game = games[index]
            if game.status != "active":
                games[index] = game = bs.new_game(client, rng, bot=False)
            step = bs.play_step(client, game, rng)
            with lock:
                if step.error or step.submit_latency is None:
                    errors[0] += 1
                else:
                    latencies.append(step.actions_latency + step.submit_latency)
        client.close()

    threads = [threading.Thread(target=drive, args=(i,)) for i in range(len(games))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors[0]


# -- wake-up latency --------------------------------------------------------------------------


def wake_phase(port: int, count: int, seed: int) -> dict[str, Any]:
    client = bs.Http(port)
    rng = random.Random(seed)
    game = bs.new_game(client, rng, bot=False)
    lower: list[float] = []
    upper: list[float] = []
    missed = 0
    for _ in range(count):
        if game.status != "active":
            game = bs.new_game(client, rng, bot=False)
        watcher = bs.Http(port)
        after = newest(client, game.id)
        woken: list[float] = []
        answer: list[Any] = []

        def wait(watcher: Any = watcher, after: int = after, game_id: str = game.id,
                 woken: list[float] = woken, answer: list[Any] = answer) -> None:
            answer.append(watcher.ok("GET", f"/api/games/{game_id}/events?after={after}&wait=30"))
            woken.append(time.perf_counter())

        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(0.2)  # the waiter is parked
        sent = time.perf_counter()
        step = bs.play_step(client, game, rng)
        thread.join()
        watcher.close()
        if step.error or not answer or not answer[0]["events"]:
            missed += 1
            continue
        lower.append(woken[0] - step.submit_done_at)
        upper.append(woken[0] - sent)
    client.close()
    return {"answered_to_woken": figures(lower), "sent_to_woken": figures(upper),
            "missed": missed}


def sql_wake_phase(port: int, db_url: str, count: int, seed: int) -> dict[str, Any]:
    """The commit made by the bench itself (psycopg): one history row appended to a game of its
    own and ``NOTIFY`` as the server's write path sends it, so the commit's end is known to the
    microsecond. ``committed -> woken``: from ``commit()`` returning to the waiter's answer."""
    import psycopg

    client = bs.Http(port)
    game = bs.new_game(client, random.Random(seed), bot=False)
    client.close()
    conninfo = "postgresql://" + db_url.split("://", 1)[1]
    samples: list[float] = []
    missed = 0
    with psycopg.connect(conninfo) as conn:
        for _ in range(count):
            watcher = bs.Http(port)
            after = newest(watcher, game.id)
            woken: list[float] = []
            answer: list[Any] = []

            def wait(watcher: Any = watcher, after: int = after, woken: list[float] = woken,
                     answer: list[Any] = answer) -> None:
                answer.append(watcher.ok("GET", f"/api/games/{game.id}/events?after={after}&wait=30"))
                woken.append(time.perf_counter())

            thread = threading.Thread(target=wait)
            thread.start()
            time.sleep(0.2)  # the waiter is parked
            row = conn.execute("SELECT next_seq, version FROM games WHERE id = %s FOR UPDATE",
                               (game.id,)).fetchone()
            assert row is not None
            conn.execute(
                f"INSERT INTO game_events ({bs.EVENT_COLUMNS}) VALUES (%s, %s, %s, 0, 'action', "
                "%s, NULL, now())", (game.id, row[0], row[1], json.dumps({"action": "draw"})))
            conn.execute("UPDATE games SET next_seq = next_seq + 1 WHERE id = %s", (game.id,))
            conn.execute("SELECT pg_notify('dos_games', %s)", (game.id,))
            conn.commit()
            committed = time.perf_counter()
            thread.join()
            watcher.close()
            if not answer or not answer[0]["events"]:
                missed += 1
                continue
            samples.append(woken[0] - committed)
    return {"committed_to_woken": figures(samples), "missed": missed}


# -- the run ----------------------------------------------------------------------------------


def run(settings: Settings, pg_url: str, output: Path) -> dict[str, Any]:
    name = f"dos_push_{int(time.time())}_{mp.current_process().pid}"
    backend, drop = bs.postgres_backend(pg_url, name)
    out: dict[str, Any] = {"machine": platform.platform(), "settings": settings.__dict__,
                           "serving": f"gunicorn --config {SERVE} (2 gevent workers)"}
    try:
        with tempfile.TemporaryDirectory() as tmp, gunicorn(backend.url, Path(tmp) / "g.log") as port:
            client = bs.Http(port)
            rng = random.Random(1)
            idle_games = [bs.new_game(client, rng, bot=False) for _ in range(10)]
            paths = [f"/api/games/{g.id}/events?after={newest(client, g.id)}" for g in idle_games]
            idle_paths = [paths[i % len(paths)] for i in range(settings.idle)]
            games = [bs.new_game(client, rng, bot=False) for _ in range(settings.drivers)]
            turn_phase(port, games, 1.0, 0)  # warm-up: pools, caches
            phases: dict[str, list[float]] = {"without": [], "with": []}
            for number, kind in enumerate(["without", "with"] * 3, start=1):
                if kind == "with":
                    with idle_waiters(port, idle_paths, idle_games[0]):
                        latencies, errors = turn_phase(port, games, settings.seconds, number)
                else:
                    latencies, errors = turn_phase(port, games, settings.seconds, number)
                phases[kind] += latencies
                shown = figures(latencies)
                out[f"phase{number}_{kind}"] = {**shown, "errors": errors}
                print(f"  phase {number} {kind:>7} {settings.idle} idle waiters: "
                      f"{shown['count']} turns, p50 {shown['p50_ms']} ms, p99 {shown['p99_ms']} ms"
                      f" ({errors} errors)", flush=True)
            without, with_ = figures(phases["without"]), figures(phases["with"])
            out["turns_without"], out["turns_with"] = without, with_
            out["ratio_p50"] = round(with_["p50_ms"] / without["p50_ms"], 3)
            out["ratio_p99"] = round(with_["p99_ms"] / without["p99_ms"], 3)
            # each "with" phase over the "without" phase just before it: the shared machine's
            # load changes from minute to minute, less within a pair
            pairs = [(out[f"phase{n + 1}_with"], out[f"phase{n}_without"]) for n in (1, 3, 5)]
            out["pair_ratios_p50"] = [round(w["p50_ms"] / o["p50_ms"], 3) for w, o in pairs]
            out["pair_ratios_p99"] = [round(w["p99_ms"] / o["p99_ms"], 3) for w, o in pairs]
            print(f"turn latency with/without {settings.idle} idle waiters: "
                  f"p50 {out['ratio_p50']}x, p99 {out['ratio_p99']}x (aim <= 1.2x); "
                  f"pair by pair p50 {out['pair_ratios_p50']}, p99 {out['pair_ratios_p99']}")
            out["wake_without"] = wake_phase(port, settings.wakes, 7)
            with idle_waiters(port, idle_paths, idle_games[0]):
                out["wake_with"] = wake_phase(port, settings.wakes, 8)
            out["sql_wake_without"] = sql_wake_phase(port, backend.url, settings.wakes, 9)
            with idle_waiters(port, idle_paths, idle_games[0]):
                out["sql_wake_with"] = sql_wake_phase(port, backend.url, settings.wakes, 10)
            for key in ("sql_wake_without", "sql_wake_with"):
                wake = out[key]["committed_to_woken"]
                print(f"commit (SQL) -> waiter woken ({key.removeprefix('sql_wake_')} idle "
                      f"waiters): p50 {wake['p50_ms']} ms, p99 {wake['p99_ms']} ms "
                      f"(aim p50 < 50 ms); missed {out[key]['missed']}")
            for key in ("wake_without", "wake_with"):
                wake = out[key]
                print(f"commit -> waiter woken ({key.removeprefix('wake_')} idle waiters): "
                      f"answered->woken p50 {wake['answered_to_woken']['p50_ms']} ms "
                      f"p99 {wake['answered_to_woken']['p99_ms']} ms; "
                      f"sent->woken p50 {wake['sent_to_woken']['p50_ms']} ms "
                      f"p99 {wake['sent_to_woken']['p99_ms']} ms; missed {wake['missed']}")
            client.close()
    finally:
        drop()
    common.write_results(output, out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--pg-url", default=bs.DEFAULT_PG_URL, help="PostgreSQL admin URL")
    parser.add_argument("--idle", type=int, help="idle waiting clients")
    parser.add_argument("--seconds", type=float, help="each turn phase")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    changes = {k: v for k, v in (("idle", args.idle), ("seconds", args.seconds)) if v is not None}
    settings = Settings(**{**settings.__dict__, **changes})
    run(settings, args.pg_url, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
