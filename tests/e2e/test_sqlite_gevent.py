"""SQLite under gevent (make run's serving model): a request waiting for SQLite's write lock
waits cooperatively, so the other requests of its process go on. One gunicorn worker, real
HTTP; the lock is held by another connection, as a long write of another process would."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
import requests
from e2e_server import running_gunicorn, serving
from prometheus_client.parser import text_string_to_metric_families

from testkit import wait_for

TOKEN = "lock-watch-" + "w" * 20


def waits(url: str) -> float:
    answer = requests.get(f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=20)
    answer.raise_for_status()
    return sum(sample.value for family in text_string_to_metric_families(answer.text)
               for sample in family.samples if sample.name == "dos_sqlite_write_waits")


@pytest.mark.parametrize("gate", [None, "1"], ids=["product-gate", "gate-of-one"])
def test_a_writer_waiting_for_the_lock_does_not_stop_the_others(tmp_path: Path,
                                                                 gate: str | None) -> None:
    """Also with a gate of one request (dos_server/serving.py): the waiting writer leaves it."""
    extra = {"DOS_METRICS_TOKEN": TOKEN, "DOS_SQLITE_BUSY_TIMEOUT_SECONDS": "60"}
    if gate is not None:
        extra["DOS_REQUESTS_AT_ONCE"] = gate
    with running_gunicorn(tmp_path, serving(1), extra) as server:
        url = server.url
        created = requests.post(f"{url}/api/games", json={"seats": [{"name": "ann"},
                                                                    {"name": "bob"}]},
                                timeout=20).json()
        tokens = {}
        for invite in created["invites"]:
            joined = requests.post(f"{url}/api/games/{created['id']}/join",
                                   json={"invite": invite["invite"]}, timeout=20).json()
            tokens[joined["seat"]] = joined["player_token"]
        listings = {seat: requests.get(f"{url}/api/games/{created['id']}/actions",
                                       headers={"Authorization": f"Bearer {token}"},
                                       timeout=20).json() for seat, token in tokens.items()}
        mover = next(seat for seat, listing in listings.items() if listing["your_turn"])

        holder = sqlite3.connect(server.database, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the write lock, as another process's long write
        answers: dict[str, Any] = {}

        def move() -> None:
            answers["move"] = requests.post(
                f"{url}/api/games/{created['id']}/actions",
                headers={"Authorization": f"Bearer {tokens[mover]}"},
                json={"version": listings[mover]["version"], "number": 1}, timeout=90)

        writer = threading.Thread(target=move)
        writer.start()
        try:
            # /metrics is answered by the same process while its writer waits: a wait inside
            # SQLite's C code would hold this answer back until the busy timeout ends it.
            wait_for(lambda: waits(url) == 1, 30, "the move to wait for the lock")
            read = requests.get(f"{url}/api/games/{created['id']}",
                                headers={"Authorization": f"Bearer {tokens[1 - mover]}"},
                                timeout=20)
            assert read.status_code == 200
            assert waits(url) == 1  # still waiting: the read did not wait behind it
        finally:
            holder.rollback()
            holder.close()
            writer.join(timeout=90)
        assert answers["move"].status_code == 200, answers["move"].text
        assert waits(url) == 0
