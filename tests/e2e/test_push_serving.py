"""The long-poll under the real serving model (gunicorn, ``dos_server.gunicorn_conf``): 200 clients
long-polling at once hold neither the database pool nor the workers. A turn goes through while
they wait, and a move in their game then wakes every one of them. On SQLite and PostgreSQL.

Two gunicorn workers, each with its pool and its gate sized by dos_server/serving.py, and again
with a gate of one request: had a waiter held a connection or a slot of the gate, the turn would
queue behind 200 of them for the whole of their wait.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_server import BIN, SERVE, call, move, new_game, ok, wait_ready

from testkit import PYTHONPATH, ROOT, SECRET, build_app, dispose, free_port
from testkit import backend as backend  # the fixtures: both backends
from testkit import db_url as db_url

WAITERS = 200


@pytest.fixture(params=[None, "1"], ids=["product-gate", "gate-of-one"])
def served(db_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[int]:
    """gunicorn as ``make run`` and the Procfile start it, on this test's migrated database."""
    dispose(build_app(db_url))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": PYTHONPATH, "DATABASE_URL": db_url, "SECRET_KEY": SECRET,
           "DOS_RATELIMIT_ENABLED": "false", "WEB_CONCURRENCY": "2"}
    if request.param is not None:
        env["DOS_REQUESTS_AT_ONCE"] = request.param
    log = tmp_path / "gunicorn.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), "--config", SERVE, "--bind", f"127.0.0.1:{port}",
             "dos_server.wsgi:app"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_ready(port, process, log)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=60)
    assert "Traceback" not in log.read_text(), log.read_text()[-5000:]


class Waiter(threading.Thread):
    def __init__(self, port: int, path: str) -> None:
        super().__init__(daemon=True)
        self.port, self.path = port, path
        self.answer: tuple[int, Any] | None = None

    def run(self) -> None:
        self.answer = call(self.port, "GET", self.path)


def test_200_waiters_hold_no_pool_or_worker_and_are_all_woken(served: int) -> None:
    port = served
    played, played_tokens = new_game(port)
    watched, watched_tokens = new_game(port)
    last = ok(port, "GET", f"/api/games/{watched}/events?limit=1")["last"]
    waiters = [Waiter(port, f"/api/games/{watched}/events?after={last}&wait=60")
               for _ in range(WAITERS)]
    for waiter in waiters:
        waiter.start()
    for _ in range(3):  # turns on another game go through while the 200 wait
        move(port, played, played_tokens)
    ok(port, "GET", "/readyz")
    assert not [w for w in waiters if w.answer is not None]  # still waiting, all of them
    move(port, watched, watched_tokens)
    for waiter in waiters:
        waiter.join(120)
    answers = [w.answer for w in waiters]
    assert all(a is not None and a[0] == 200 for a in answers), answers[:3]
    assert {a[1]["events"][0]["seq"] for a in answers if a} == {last + 1}
