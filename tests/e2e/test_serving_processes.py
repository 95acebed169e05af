"""gunicorn's processes under the product's settings (dos_server.gunicorn_conf): the master only
starts and watches its workers, so it never loads gevent; each worker runs gunicorn's own gevent
worker, where a parked long-poll does not hold up another request."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import requests
from e2e_server import Server, call, move, new_game, ok


def _loaded_libraries(pid: int) -> set[str]:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {line.split()[-1] for line in maps.splitlines() if line.endswith(".so")
            or ".so." in line}


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def test_master_loads_no_gevent_and_workers_serve_with_it(gunicorn_server: Server) -> None:
    workers = _children(gunicorn_server.pid)
    assert len(workers) == 2
    assert not [lib for lib in _loaded_libraries(gunicorn_server.pid) if "/gevent/" in lib]
    for worker in workers:
        assert [lib for lib in _loaded_libraries(worker) if "/gevent/" in lib]

    port = gunicorn_server.port
    game_id, tokens = new_game(port)
    newest = ok(port, "GET", f"/api/games/{game_id}/events?limit=1", token=tokens[0])["last"]
    answers: list[tuple[int, Any]] = []
    parked = [threading.Thread(target=lambda: answers.append(call(
        port, "GET", f"/api/games/{game_id}/events?after={newest}&wait=60", token=tokens[0],
        timeout=90))) for _ in range(8)]
    for thread in parked:
        thread.start()
    time.sleep(0.5)  # to park them (were one still on its way, this would test less, not fail)
    # 8 long-polls parked on 2 workers: ordinary requests are answered meanwhile...
    ok(port, "GET", "/readyz")
    assert answers == []  # ...while they wait, until a move wakes them
    move(port, game_id, tokens)
    for thread in parked:
        thread.join()
    assert [status for status, _ in answers] == [200] * 8
    assert all(body["events"] for _, body in answers)


def test_a_long_polls_refusal_is_a_problem_not_a_logged_failure(gunicorn_server: Server) -> None:
    """A long-poll's look runs in a greenlet of its own (services/watch.py): what it raises
    reaches the request as the usual problem, and gevent reports no greenlet's failure."""
    url = gunicorn_server.url
    game_id, _ = new_game(gunicorn_server.port)
    _, other_tokens = new_game(gunicorn_server.port)
    for token, status in ((other_tokens[0], 403), ("not-a-token", 401)):
        refused = requests.get(f"{url}/api/games/{game_id}/events?after=0&wait=5",
                               headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert refused.status_code == status, refused.text
        assert refused.headers["Content-Type"] == "application/problem+json"
    log = (gunicorn_server.database.parent / "gunicorn.log").read_text()
    assert "Traceback" not in log
    assert "failed with" not in log
