"""Benchmark of notification delivery. A measurement, not a test: it never fails on time.

Run it from the repository root::

    .venv/bin/python bench/notify.py [--pg-url postgresql://postgres@127.0.0.1:5432/test]

It creates a fresh PostgreSQL database ``dos_bench_notify_<pid>`` (dropped at the end), upgrades
it with ``flask db upgrade``, starts ``gunicorn -w 2 --threads 4`` and a local HTTP receiver on
loopback, then:

* latency: one idle-polling worker (``flask --app dos_server worker``, WORKER_POLL_SECONDS
  default 0.25); ``--games`` times, ``POST /api/games`` with two named seats and webhooks (the
  game starts, so the commit enqueues a ``your_turn`` webhook); latency is from the POST's
  answer (after commit) to the receiver getting that ``your_turn``;
* throughput: with 1, then 2 workers idle-polling, ``--rows`` outbox rows are inserted in one
  transaction (copies of a real ``your_turn`` row with fresh ids); deliveries per second is
  rows / time from that commit to the receiver having them all.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import secrets
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from common import BIN, ROOT, free_port, percentile, stop, wait_ready

TURN_RATE = 70.0  # submissions per second measured by bench/server.py on this machine


class Receiver:
    """Records the monotonic receipt time of every webhook, by ``webhook-id``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, float] = {}
        self.turns: dict[str, float] = {}  # game id -> first your_turn receipt
        self.count = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                expected = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(expected)
                if len(body) < expected:  # the sender died mid-request: nothing arrived
                    self.close_connection = True
                    return
                now = time.monotonic()
                data = json.loads(body)
                with receiver.lock:
                    receiver.count += 1
                    receiver.times.setdefault(self.headers.get("webhook-id") or "", now)
                    if data.get("type") == "game.your_turn":
                        receiver.turns.setdefault(str(data.get("game_id")), now)
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def database(pg_url: str) -> Iterator[str]:
    base = pg_url.replace("postgresql://", "postgresql+psycopg://", 1)
    name = f"dos_bench_notify_{os.getpid()}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(base).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def environment(url: str, instance: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": url, "SECRET_KEY": secrets.token_hex(16),
            "DOS_INSTANCE_PATH": str(instance), "DOS_RATE_LIMIT_CREATE": "100000 per minute",
            "DOS_WEBHOOK_ALLOW_PRIVATE": "true",  # the receivers listen on 127.0.0.1
            "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "client")])}


@contextlib.contextmanager
def processes(commands: list[list[str]], env: dict[str, str], log: Path) -> Iterator[None]:
    started: list[subprocess.Popen[bytes]] = []
    with open(log, "ab") as out:
        try:
            for command in commands:
                started.append(subprocess.Popen(command, env=env, stdout=out,
                                                stderr=subprocess.STDOUT))
            yield
        finally:
            for process in started:
                stop(process)


def worker_command() -> list[str]:
    return [str(BIN / "flask"), "--app", "dos_server", "worker"]


def latency(port: int, receiver: Receiver, games: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out: list[float] = []
    for number in range(games):
        seats = [{"name": "ann", "webhook_url": receiver.url(f"/lat/{number}/a")},
                 {"name": "bob", "webhook_url": receiver.url(f"/lat/{number}/b")}]
        conn.request("POST", "/api/games", body=json.dumps({"seats": seats}),
                     headers={"content-type": "application/json"})
        answer = conn.getresponse()
        body = json.loads(answer.read())
        committed = time.monotonic()
        if answer.status != 201:
            raise RuntimeError(f"POST /api/games -> {answer.status}: {body}")
        game_id = str(body["id"])
        ends = committed + 10
        while time.monotonic() < ends:
            with receiver.lock:
                got = receiver.turns.get(game_id)
            if got is not None:
                out.append(got - committed)
                break
            time.sleep(0.002)
        time.sleep(random.uniform(0.05, 0.3))  # land anywhere in the worker's poll interval
    return out


def fill(url: str, rows: int) -> float:
    """Insert ``rows`` copies of a real your_turn webhook row; returns the commit's time."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        template = conn.execute(sa.text(
            "SELECT game_id, seats, channel, target, event, payload FROM notifications "
            "WHERE channel = 'webhook' AND event = 'your_turn' LIMIT 1")).one()
    params = [{"game_id": template.game_id, "seats": json.dumps(template.seats),
               "target": template.target, "event": template.event,
               "key": f"bench:{secrets.token_hex(8)}:{i}", "mid": "msg_" + secrets.token_hex(12),
               "payload": json.dumps(template.payload)} for i in range(rows)]
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO notifications (game_id, seats, channel, target, event, dedupe_key, "
            "message_id, payload, status, attempts, next_attempt_at, created_at) VALUES "
            "(:game_id, :seats, 'webhook', :target, :event, :key, :mid, :payload, 'pending', 0, "
            "now(), now())"), params)
    committed = time.monotonic()
    engine.dispose()
    return committed


def throughput(url: str, env: dict[str, str], log: Path, receiver: Receiver, workers: int,
               rows: int) -> float:
    with processes([worker_command() for _ in range(workers)], env, log):
        time.sleep(3)  # the workers start up and idle-poll
        with receiver.lock:
            start_count = receiver.count
        committed = fill(url, rows)
        ends = committed + 300
        while time.monotonic() < ends:
            with receiver.lock:
                done = receiver.count - start_count
            if done >= rows:
                return rows / (time.monotonic() - committed)
            time.sleep(0.01)
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    receiver = Receiver()
    with tempfile.TemporaryDirectory() as tmp, database(args.pg_url) as url:
        log = Path(tmp) / "processes.log"
        env = environment(url, Path(tmp) / "instance")
        subprocess.run([str(BIN / "flask"), "--app", "dos_server", "db", "upgrade"], env=env,
                       check=True, capture_output=True)
        port = free_port()
        web = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2",
               "--threads", "4", "dos_server.wsgi:app"]
        with processes([web], env, log):
            wait_ready(port, log=log)
            with processes([worker_command()], env, log):
                time.sleep(3)
                lat = latency(port, receiver, args.games)
        one = throughput(url, env, log, receiver, 1, args.rows)
        two = throughput(url, env, log, receiver, 2, args.rows)
    receiver.stop()
    lat.sort()
    p50 = statistics.median(lat) if lat else float("nan")
    p99 = percentile(lat, 0.99)
    print(f"latency commit -> webhook (idle poll 0.25 s, {len(lat)}/{args.games} games): "
          f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {max(lat) * 1000:.0f} ms")
    print(f"throughput, {args.rows} rows: 1 worker {one:.0f}/s, 2 workers {two:.0f}/s, "
          f"ratio 2/1 {two / one if one else float('nan'):.2f}")
    print(f"vs the server's turn rate ~{TURN_RATE:.0f}/s: 1 worker x{one / TURN_RATE:.1f}, "
          f"2 workers x{two / TURN_RATE:.1f}")


if __name__ == "__main__":
    main()
