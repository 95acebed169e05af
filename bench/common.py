"""What the benchmark scripts share: paths, a free port, a percentile, and a gunicorn to serve.

The scripts run from the repository root with the project installed (``make install``, an
editable install): ``.venv/bin/python bench/server.py``. Python puts the script's folder,
``bench/``, first on ``sys.path``, so they import this module as ``from common import ...``;
ruff's ``src`` lists ``bench`` and so sorts it as first-party.
"""

from __future__ import annotations

import contextlib
import http.client
import importlib.util
import json
import math
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"  # git-ignored
BIN = Path(sys.executable).parent  # the virtual environment's scripts: flask, gunicorn, dos-client
APP = "dos_server.wsgi:app"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile, ``q`` from 0 to 1 (0.99 is p99); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = math.ceil(q * len(ordered))
    return ordered[min(len(ordered), max(1, rank)) - 1]


class NotReady(RuntimeError):
    """The server exited or did not answer ``/readyz`` in time (the message ends with its log)."""


def wait_ready(port: int, process: subprocess.Popen[bytes] | None = None,
               log: Path | None = None, timeout: float = 60.0) -> None:
    """Wait until ``GET /readyz`` on ``port`` answers 200; NotReady (with the log's tail) if
    ``process`` exits first or ``timeout`` seconds pass."""
    def failed(why: str) -> NotReady:
        tail = f":\n{log.read_text()[-3000:]}" if log is not None and log.exists() else ""
        return NotReady(f"gunicorn {why}{tail}")

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise failed(f"exited ({process.returncode})")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", "/readyz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.1)
    raise failed(f"not ready within {timeout:.0f} s")


def stop(process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def gunicorn(arguments: Sequence[str], env: dict[str, str], log: Path,
             stop_timeout: float = 15.0) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """Serve the app under gunicorn with ``arguments`` (workers, worker class, config) on a free
    loopback port, its output appended to ``log``; yields (port, process) once it is ready and
    stops it on the way out."""
    port = free_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), *arguments, "--bind", f"127.0.0.1:{port}", APP],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_ready(port, process, log)
        yield port, process
    finally:
        stop(process, stop_timeout)


def server_env(database_url: str) -> dict[str, str]:
    """The environment of a server process on ``database_url``: a fresh key, and rate
    limits no benchmark reaches."""
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": str(ROOT / "server"),
        "DATABASE_URL": database_url,
        "SECRET_KEY": secrets.token_urlsafe(32),
        "DOS_RATE_LIMIT_CREATE": "1000000 per minute",
        "DOS_RATE_LIMIT_JOIN": "1000000 per minute",
    })
    return env


def upgrade_schema(env: dict[str, str]) -> None:
    """``flask db upgrade`` on the database of ``env``."""
    subprocess.run([str(BIN / "flask"), "--app", "dos_server", "db", "upgrade"], cwd=ROOT,
                   env=env, check=True, capture_output=True, timeout=120)


def proc_stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process from /proc (None if it is gone or unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_server() -> Any:
    """bench/server.py as a module (its HTTP client, games and database helpers), loaded once."""
    loaded = sys.modules.get("bench_server")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("bench_server", ROOT / "bench" / "server.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_server"] = module
    spec.loader.exec_module(module)
    return module


def read_latency(client: Any, game: Any) -> float:
    """Seconds for one read of ``game``'s state (a bench_server client and game)."""
    t0 = time.perf_counter()
    client.ok("GET", f"/api/games/{game.id}", token=bench_server().any_token(game))
    return time.perf_counter() - t0


def write_results(output: Path, results: Any) -> None:
    """Write a bench's figures as JSON (the results folder is git-ignored) and say where."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2))
    print(f"written to {output}")

