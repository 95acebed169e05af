"""A real server under gunicorn, as a subprocess, for the end-to-end tests (conftest.py re-exports
the fixture; this module has a unique name so tests can import it)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from testkit import BIN, PYTHONPATH, ROOT, SECRET, free_port, wait_ready

SERVE = "python:dos_server.gunicorn_conf"  # the serving model of `make run` and the Procfile


@dataclass(frozen=True)
class Server:
    url: str
    database: Path
    pid: int  # gunicorn's master

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


def server_env(database: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": PYTHONPATH,
        "DATABASE_URL": f"sqlite:///{database}",
        "SECRET_KEY": SECRET,
        "DOS_RATE_LIMIT_CREATE": "1000000 per minute",
        "DOS_RATE_LIMIT_JOIN": "1000000 per minute",
    })
    return env


@contextmanager
def running_gunicorn(tmp: Path, command: Callable[[int], list[str]],
                     extra_env: dict[str, str] | None = None) -> Iterator[Server]:
    """A new migrated SQLite database in ``tmp``, then ``command(port)`` (gunicorn) serving it,
    its output in ``tmp / "gunicorn.log"``; stopped (and the log flushed) on exit."""
    database = tmp / "dos.sqlite3"
    env = {**server_env(database), **(extra_env or {})}
    subprocess.run([str(BIN / "flask"), "--app", "dos_server", "db", "upgrade"], cwd=ROOT,
                   env=env, check=True, capture_output=True, timeout=120)
    port = free_port()
    log = tmp / "gunicorn.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(command(port), cwd=ROOT, env=env, stdout=log_file,
                                   stderr=subprocess.STDOUT)
        try:
            wait_ready(port, process, log)
            yield Server(f"http://127.0.0.1:{port}", database, process.pid)
        finally:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if the process has not exited within 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def serving(workers: int) -> Callable[[int], list[str]]:
    """The serving model's gunicorn command on a loopback ``port``, with ``workers`` workers (a
    stop waits 5 s for requests in progress), for :func:`running_gunicorn`."""
    return lambda port: [str(BIN / "gunicorn"), "--config", SERVE, "-b", f"127.0.0.1:{port}",
                         "-w", str(workers), "--graceful-timeout", "5", "dos_server.wsgi:app"]


@pytest.fixture(scope="module")
def gunicorn_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_gunicorn(tmp_path_factory.mktemp("gunicorn"), serving(2)) as server:
        yield server


# -- the API over HTTP, for tests that play on a served port ------------------------------------


def call(port: int, method: str, path: str, body: Any = None, token: str | None = None,
         timeout: float = 120) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


def ok(port: int, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    status, answer = call(port, method, path, body, token)
    assert status < 300, (method, path, status, answer)
    return answer


def new_game(port: int) -> tuple[str, dict[int, str]]:
    created = ok(port, "POST", "/api/games", {"seats": [{"name": "ann"}, {"name": "bob"}]})
    tokens = {}
    for invite in created["invites"]:
        joined = ok(port, "POST", f"/api/games/{created['id']}/join", {"invite": invite["invite"]})
        tokens[joined["seat"]] = joined["player_token"]
    return created["id"], tokens


def move(port: int, game_id: str, tokens: dict[int, str]) -> None:
    """The seat to move reads its legal actions and plays the first (a turn's two requests)."""
    current = ok(port, "GET", f"/api/games/{game_id}", token=tokens[0])["view"]["current"]
    listed = ok(port, "GET", f"/api/games/{game_id}/actions", token=tokens[current])
    ok(port, "POST", f"/api/games/{game_id}/actions",
       {"version": listed["version"], "actions": [listed["actions"][0]["action"]]},
       token=tokens[current])
