"""Benchmark of the ``dos-client`` command. A measurement, not a test: it never fails on time.

Run it from the repository root::

    .venv/bin/python bench/client.py

It upgrades a fresh SQLite database, starts gunicorn with the product's serving configuration
(``--config python:dos_server.gunicorn_conf``, 2 gevent workers, as ``make run`` does) on a free
loopback port (always stopped at the end), creates a game with two human seats (two profiles in
a temporary config file) and measures:

* the wall time from launching ``dos-client move N`` to its exit (it prints the new table),
  over ``--moves`` moves: p50, p90, p99, and the p50's ratio to a bare ``python -c pass`` timed
  in the same run (aim: p50 under 200 ms); N is the first listed action of the seat to move
  (listed by an untimed ``moves --json``); a finished game is replaced by a new one;
* the same for a text move, alternating with them: ``dos-client move "<that action's
  notation>"`` (one request, like ``move N``, when the profile's last list is current);
* the client process's CPU time (user + system) for each ``move N`` against that of a bare
  ``python -c pass``: on a shared machine wall times follow the other jobs, CPU time much less;
* the start-up time of ``dos-client --help`` (median over ``--runs``) against a bare
  ``python -c pass``, and their ratio. Aim: ``--help`` under 150 ms.

Before timing, the client's and the engine's modules are byte-compiled (``compileall``), as
``pip install`` does for an installed client: a checkout run with ``PYTHONDONTWRITEBYTECODE``
would otherwise compile ``cli.py`` at every start (``--no-compile`` measures that instead).

Results go to ``bench/results/client.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import BIN, RESULTS_DIR, ROOT, NotReady, gunicorn, percentile

RESULTS = RESULTS_DIR / "client.json"
CLIENT = str(BIN / "dos-client")
AIM_HELP_MS = 150.0
AIM_MOVE_MS = 200.0


class Client:
    def __init__(self, config: Path) -> None:
        self.env = {**os.environ, "DOS_CLIENT_CONFIG": str(config), "NO_COLOR": "1"}

    def run(self, profile: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CLIENT, "--profile", profile, *args], env=self.env,
                              capture_output=True, text=True, timeout=120, check=False)

    def json(self, profile: str, *args: str) -> Any:
        done = self.run(profile, "--json", *args)
        if done.returncode != 0:
            raise RuntimeError(f"dos-client {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return json.loads(done.stdout)


def new_game(client: Client, url: str) -> None:
    for profile in ("ann", "bob"):
        client.run(profile, "server", url)
    created = client.json("ann", "new", "--seat", "Ann", "--seat", "Bob", "--me", "Ann",
                          "--target", "10000")
    client.json("bob", "join", created["invites"]["Bob"])


def children_cpu() -> float:
    """CPU seconds (user + system) of the child processes that ended so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_moves(client: Client, url: str, count: int
               ) -> tuple[list[float], list[float], list[float]]:
    """Wall times of ``move N`` and the client process's CPU time for each, and the wall times
    of text moves (``move "m1 R5"``) made in turn with them."""
    new_game(client, url)
    timings: list[float] = []
    cpu: list[float] = []
    texts: list[float] = []
    while len(timings) < count or len(texts) < count:
        state = client.json("ann", "show")
        if state["status"] != "active":
            new_game(client, url)
            continue
        profile = ("ann", "bob")[state["view"]["current"]]
        listing = client.json(profile, "moves")
        if not listing["actions"]:
            continue
        by_text = len(texts) < len(timings)
        cpu_before = children_cpu()
        started = time.perf_counter()
        done = client.run(profile, "move", listing["actions"][0]["action"] if by_text else "1")
        elapsed = time.perf_counter() - started
        if done.returncode == 0 and by_text:
            texts.append(elapsed)
        elif done.returncode == 0:
            timings.append(elapsed)
            cpu.append(children_cpu() - cpu_before)
    return timings, cpu, texts


def time_command(command: list[str], runs: int, cpu: list[float] | None = None) -> list[float]:
    """Wall times of ``runs`` runs; their CPU times are appended to ``cpu`` if given."""
    timings = []
    for _ in range(runs):
        cpu_before = children_cpu()
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False, timeout=60)
        timings.append(time.perf_counter() - started)
        if cpu is not None:
            cpu.append(children_cpu() - cpu_before)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--moves", type=int, default=50)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-compile", action="store_true",
                        help="Do not byte-compile the client first (see above).")
    options = parser.parse_args()
    if not options.no_compile:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "client" / "dos_client"),
                        str(ROOT / "server" / "dos_engine")], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'server'}{os.pathsep}{ROOT / 'client'}",
               "DATABASE_URL": f"sqlite:///{Path(tmp) / 'dos.sqlite3'}",
               "SECRET_KEY": secrets.token_urlsafe(32),
               "DOS_RATE_LIMIT_CREATE": "1000000 per minute",
               "DOS_RATE_LIMIT_JOIN": "1000000 per minute"}
        subprocess.run([str(BIN / "flask"), "--app", "dos_server", "db", "upgrade"], cwd=ROOT,
                       env=env, check=True, capture_output=True, timeout=120)
        serving = ["--config", "python:dos_server.gunicorn_conf", "-w", "2", "--graceful-timeout", "5"]
        try:
            with gunicorn(serving, env, Path(tmp) / "gunicorn.log") as (port, _):
                client = Client(Path(tmp) / "client.json")
                moves, move_cpu, texts = time_moves(client, f"http://127.0.0.1:{port}",
                                                    options.moves)
        except NotReady as error:  # its message ends with gunicorn's log
            print(error, file=sys.stderr)
            sys.exit(1)
    help_runs = time_command([CLIENT, "--help"], options.runs)
    bare_cpu: list[float] = []
    bare_runs = time_command([sys.executable, "-c", "pass"], options.runs, bare_cpu)
    help_ms = statistics.median(help_runs) * 1000
    bare_ms = statistics.median(bare_runs) * 1000
    move_ms = statistics.median(moves) * 1000
    move_cpu_ms = statistics.median(move_cpu) * 1000
    bare_cpu_ms = statistics.median(bare_cpu) * 1000
    results: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count()},
        "compiled": not options.no_compile,
        "move": {"count": len(moves), "median_ms": move_ms,
                 "p90_ms": percentile(moves, 0.9) * 1000, "p99_ms": percentile(moves, 0.99) * 1000,
                 "python_pass_median_ms": bare_ms, "ratio": move_ms / bare_ms if bare_ms else 0.0,
                 "aim_ms": AIM_MOVE_MS, "meets_aim": move_ms < AIM_MOVE_MS,
                 # CPU time of the client process: what the client itself costs, much less
                 # disturbed than wall time by other jobs on a shared machine
                 "cpu_median_ms": move_cpu_ms, "python_pass_cpu_median_ms": bare_cpu_ms},
        "text_move": {"count": len(texts), "median_ms": statistics.median(texts) * 1000,
                      "p90_ms": percentile(texts, 0.9) * 1000,
                      "p99_ms": percentile(texts, 0.99) * 1000},
        "help": {"runs": options.runs, "median_ms": help_ms, "python_pass_median_ms": bare_ms,
                 "ratio": help_ms / bare_ms if bare_ms else 0.0, "aim_ms": AIM_HELP_MS,
                 "meets_aim": help_ms < AIM_HELP_MS},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"dos-client move N: p50 {move_ms:.0f} ms, p90 {results['move']['p90_ms']:.0f} ms, "
          f"p99 {results['move']['p99_ms']:.0f} ms over {len(moves)} moves; python -c pass "
          f"{bare_ms:.0f} ms; ratio {results['move']['ratio']:.2f} (aim p50 < {AIM_MOVE_MS:.0f} ms)"
          + ("" if not options.no_compile else "; client not byte-compiled"))
    text = results["text_move"]
    print(f"dos-client move \"<notation>\": p50 {text['median_ms']:.0f} ms, p90 "
          f"{text['p90_ms']:.0f} ms, p99 {text['p99_ms']:.0f} ms over {len(texts)} moves")
    print(f"  client process CPU time (user + system): p50 {move_cpu_ms:.0f} ms; python -c pass "
          f"{bare_cpu_ms:.0f} ms; ratio {move_cpu_ms / bare_cpu_ms if bare_cpu_ms else 0:.2f}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"dos-client --help: median {help_ms:.0f} ms; python -c pass {bare_ms:.0f} ms; "
          f"ratio {results['help']['ratio']:.2f} (aim < {AIM_HELP_MS:.0f} ms)")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
