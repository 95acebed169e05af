"""The server's resident memory, idle and with parked long-polls, under the real serving model.
A measurement, not a test: it prints figures and never fails on them.

Run it from the repository root::

    .venv/bin/python bench/memory.py                       # 1 and 2 workers, 1,000 polls
    .venv/bin/python bench/memory.py --workers 1 --polls 200

Its own PostgreSQL database (``dos_memory_<pid>`` on ``--pg-url``, dropped at the end), upgraded,
and gunicorn started as ``make run`` and the Procfile do (``--config python:dos_server.gunicorn_conf``,
gevent workers, ``WEB_CONCURRENCY`` of them). For each worker count:

* idle: the resident set of the master and of each worker once it has served ``--turns`` turns
  of two-person games (``GET .../actions`` and ``POST .../actions``, on new connections every 10
  turns, so that every worker plays some) and a few long-polls (its imports are done, its pool
  is open): RSS, which bench/peer.py adds up and which counts a
  page the master shares with its workers (the interpreter, gunicorn, gevent) in each of them;
  USS, the pages no other process shares; and PSS, each shared page divided among its sharers,
  so that the processes' PSS add up to the memory they take together;
* parked: ``--polls`` clients each long-poll ``GET /api/games/<id>/events?after=<newest>&wait=60``
  with a player's token (as bench/peer.py's memory phase does: the seats of ``polls / 5`` games
  of two people, one connection per client, from one asyncio process); once the server has
  parked them all, the same figures, and the cost per parked poll.

Figures go to ``bench/results/memory.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import common
from common import RESULTS_DIR

SERVE = "python:dos_server.gunicorn_conf"  # the Makefile's GUNICORN_CONF, the Procfile's --config
MIB = 2**20


bs = common.bench_server()


# -- /proc ------------------------------------------------------------------------------------


def memory_of(pid: int) -> dict[str, int]:
    """RSS, PSS and USS (private pages) of a process in bytes (zeros if it is gone)."""
    out = {"rss": 0, "pss": 0, "uss": 0}
    with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            name, _, rest = line.partition(":")
            if name in ("Rss", "Pss"):
                out[name.lower()] = int(rest.split()[0]) * 1024
            elif name in ("Private_Clean", "Private_Dirty"):
                out["uss"] += int(rest.split()[0]) * 1024
    return out


def workers_of(master: int) -> list[int]:
    return sorted(int(pid) for pid in os.listdir("/proc")
                  if pid.isdigit() and (common.proc_stat(pid) or (0, 0.0))[0] == master)


def snapshot(master: int) -> dict[str, Any]:
    workers = workers_of(master)
    return {"master": memory_of(master), "workers": [memory_of(pid) for pid in workers]}


def total(snap: dict[str, Any], key: str = "rss") -> int:
    return int(snap["master"][key] + sum(w[key] for w in snap["workers"]))


def show(label: str, snap: dict[str, Any]) -> None:
    workers = ", ".join(f"{w['rss'] / MIB:.1f} (USS {w['uss'] / MIB:.1f})" for w in snap["workers"])
    print(f"  {label:>7}: total RSS {total(snap) / MIB:6.1f} MiB (PSS {total(snap, 'pss') / MIB:.1f})"
          f" = master "
          f"{snap['master']['rss'] / MIB:.1f} (USS {snap['master']['uss'] / MIB:.1f}) "
          f"+ workers {workers}", flush=True)


# -- the parked polls: one asyncio process, one connection each --------------------------------


async def _poller(port: int, game_id: str, token: str, after: int, asked: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET /api/games/{game_id}/events?after={after}&wait=60 HTTP/1.1\r\n"
                     f"Host: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        await writer.drain()
        asked[0] += 1
        await reader.read(1)  # the answer (after 60 s) or the end: either ends the measurement
    finally:
        writer.close()


def _poll_process(port: int, targets: list[tuple[str, str, int]], ready: Any, stop: Any) -> None:
    async def main() -> None:
        asked = [0]
        tasks = []
        for game_id, token, after in targets:
            tasks.append(asyncio.create_task(_poller(port, game_id, token, after, asked)))
            await asyncio.sleep(0)  # let it connect before the next (no SYN burst)
        while asked[0] < len(targets):
            await asyncio.sleep(0.05)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


@contextlib.contextmanager
def parked_polls(port: int, targets: list[tuple[str, str, int]], probe: Any) -> Iterator[None]:
    """The polls, once the server has parked them all: every request is sent, reads of
    ``probe`` are back to their usual speed, and a moment more for the last to settle."""
    client = bs.Http(port)
    usual = sorted(common.read_latency(client, probe) for _ in range(20))[10]
    context = mp.get_context("spawn")
    ready, stop = context.Event(), context.Event()
    process = context.Process(target=_poll_process, args=(port, targets, ready, stop), daemon=True)
    process.start()
    t0 = time.perf_counter()
    try:
        if not ready.wait(300):
            raise bs.ServerError("the polls did not all connect")
        fast = 0
        while fast < 10 and time.perf_counter() - t0 < 120:
            fast = fast + 1 if common.read_latency(client, probe) < 2 * usual else 0
        time.sleep(2)
        print(f"  {len(targets)} polls parked in {time.perf_counter() - t0:.1f} s", flush=True)
        yield
    finally:
        client.close()
        stop.set()
        process.join(30)
        if process.is_alive():
            process.kill()


# -- the run ----------------------------------------------------------------------------------


def newest(client: Any, game: Any, token: str) -> int:
    return int(client.ok("GET", f"/api/games/{game.id}/events?limit=1", token=token)["last"])


def measure(url: str, workers: int, polls: int, turns: int, log: Path) -> dict[str, Any]:
    env = common.server_env(url)
    env.update({"DOS_RATELIMIT_ENABLED": "false", "WEB_CONCURRENCY": str(workers)})
    with common.gunicorn(["--config", SERVE], env, log, stop_timeout=30) as (port, process):
        client = bs.Http(port)
        rng = random.Random(1)
        games = [bs.new_game(client, rng, bot=False) for _ in range(max(1, polls // 5))]
        seats = [(game.id, seat.token, newest(client, game, seat.token))
                 for game in games for seat in game.seats.values()]
        targets = [seats[i % len(seats)] for i in range(polls)]
        # Every worker plays and serves a few of everything the polls ask before the idle figure.
        played = bs.new_game(client, rng, bot=False)
        for turn in range(turns):
            if turn % 10 == 0:
                client.close()
                client = bs.Http(port)
            if played.status != "active":
                played = bs.new_game(client, rng, bot=False)
            bs.play_step(client, played, rng)
        for _ in range(20 * workers):
            common.read_latency(client, games[0])
            client.ok("GET", f"/api/games/{games[0].id}/events?after=0&wait=1",
                      token=bs.any_token(games[0]))
            client.close()
            client = bs.Http(port)
        client.close()
        time.sleep(1)
        idle = snapshot(process.pid)
        show("idle", idle)
        with parked_polls(port, targets, games[0]):
            parked = snapshot(process.pid)
        show("parked", parked)
    per_poll = (total(parked) - total(idle)) / polls if polls else 0.0
    print(f"  {per_poll / 1024:.1f} KiB of RSS per parked poll", flush=True)
    return {"workers": workers, "polls": polls, "turns": turns, "idle": idle, "parked": parked,
            "idle_rss": total(idle), "parked_rss": total(parked), "per_poll_rss": per_poll,
            "idle_pss": total(idle, "pss"), "parked_pss": total(parked, "pss")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-url", default=bs.DEFAULT_PG_URL, help="PostgreSQL admin URL")
    parser.add_argument("--polls", type=int, default=1000, help="parked long-polls")
    parser.add_argument("--turns", type=int, default=300, help="turns played before measuring")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                        help="gunicorn worker counts, each measured in turn")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"machine": platform.platform(), "python": sys.version,
                           "serving": f"gunicorn --config {SERVE}", "runs": []}
    made, drop = bs.postgres_backend(args.pg_url, f"dos_memory_{int(time.time())}_{os.getpid()}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            env = common.server_env(made.url)
            common.upgrade_schema(env)
            for workers in args.workers:
                print(f"{workers} worker(s), {args.polls} polls:", flush=True)
                out["runs"].append(measure(made.url, workers, args.polls, args.turns,
                                           Path(tmp) / "g.log"))
    finally:
        drop()
    print("summary (RSS of master and workers together, MiB):")
    for run in out["runs"]:
        print(f"  {run['workers']} worker(s): {run['idle_rss'] / MIB:.1f} idle, "
              f"{run['parked_rss'] / MIB:.1f} with {run['polls']} parked polls "
              f"({run['per_poll_rss'] / 1024:.1f} KiB each); PSS {run['idle_pss'] / MIB:.1f} "
              f"and {run['parked_pss'] / MIB:.1f}")
    output = RESULTS_DIR / "memory.json"
    common.write_results(output, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
