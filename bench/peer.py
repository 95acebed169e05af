"""Benchmark of the DOS server against a peer, boardgame.io, side by side on the same machine and
the same PostgreSQL. A measurement, not a test: it prints figures and ratios, never fails on time.

Run it from the repository root::

    .venv/bin/python bench/peer.py            # 15-second phases (about ten minutes)
    .venv/bin/python bench/peer.py --quick    # 3-second phases (a few minutes)

It needs Node and npm (it says so and stops where they are missing): it copies ``bench/peer_js``
into a temporary folder and installs its pinned packages there with npm (boardgame.io 0.50.2,
bgio-postgres 1.0.16). For one server process and then for two it creates two fresh databases on
``--pg-url`` (dropped at the end), upgrades ours with ``flask db upgrade``, starts gunicorn with
the product's configuration (``dos_server.gunicorn_conf``: gevent workers, ``--workers`` 1 or 2)
and boardgame.io's ``Server`` on ``PostgresStore`` (one Node process, or two on their own ports
sharing the database, each match served by one of them), and then alternates the two servers
phase by phase, ``--rounds`` times (3): 8 concurrent matches in closed loop, then 64, then a
light fixed rate (8 matches at 2 moves a second each).

One load generator serves both (``bench/peer_js/load.js``, one Node process per phase; each
match is one loop that makes one move at a time). The games differ as the servers do: ours plays
real DOS turns (two people; ``POST .../actions`` with a random legal action is the move; the
seat to move asks ``GET .../actions`` first only when the turn has just passed to it, since the
answer to a move holds the mover's next legal actions while its turn goes on, as the table page
and ``dos-client`` use them), boardgame.io a counter game (one ``increment`` over its socket
transport). What an acknowledgement waits for: ours answers the POST once the move is committed;
boardgame.io sends its ``update`` to the client first and writes to PostgreSQL after, so its
acknowledgement comes before its move is stored; its request-to-stored latency runs from the
move to the end of that write as its server notes it (``bgio_server.js`` wraps the store's
``setState`` and serves the times at ``GET /bench/stored``; one clock, one machine). Both counts
of moves are of moves found in PostgreSQL after the phase (ours: history rows of kind
``action``; theirs: the sum of the counters), read once the count stops moving. Server CPU is
the server processes' (gunicorn's master and workers; the Node servers) and the PostgreSQL
backends of that server's database, from /proc (read every 50 ms, so that backends that exit
during a phase count too), per 1,000 stored moves; a phase also prints the connections to that
database that ended during it.
Memory: the servers' resident set (RSS) with 1,000 idle waiting clients (ours: long-polls on
``GET /api/games/<id>/events?after=<newest>&wait=60``; theirs: connected socket clients), and
without; the aim's figure is RSS added up over the server's processes. PSS is printed beside
it: it divides a page shared by several processes (gunicorn's master and workers share the
interpreter's) among them, where RSS counts it in each.

Figures go to ``bench/results/peer.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import common
from common import RESULTS_DIR, ROOT, percentile, proc_stat

RESULTS = RESULTS_DIR / "peer.json"
JS = ROOT / "bench" / "peer_js"
DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
KINDS = ("c8", "c64", "rate")
SERVERS = ("dos", "bgio")


@dataclass(frozen=True)
class Settings:
    seconds: float  # each phase
    rounds: int
    processes: tuple[int, ...]
    rate: float  # moves a second per match in the fixed-rate phase
    rate_matches: int
    idle: int  # waiting clients for the memory measurement


FULL = Settings(seconds=15.0, rounds=3, processes=(1, 2), rate=2.0, rate_matches=8, idle=1000)
QUICK = Settings(seconds=3.0, rounds=3, processes=(1, 2), rate=2.0, rate_matches=8, idle=1000)


# -- processes and /proc ----------------------------------------------------------------------


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().decode(errors="replace")
    except OSError:
        return ""


def _kib(path: str, key: str) -> int:
    """The ``key:`` line's figure of a /proc file in kB, as bytes (0 if the process is gone)."""
    try:
        with open(path) as figures:
            for line in figures:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _rss(pid: str) -> int:
    """Resident set size in bytes: every page the process maps, shared ones included."""
    return _kib(f"/proc/{pid}/status", "VmRSS:")


def _pss(pid: str) -> int:
    """Proportional set size in bytes: a page shared by n processes counts 1/n in each."""
    return _kib(f"/proc/{pid}/smaps_rollup", "Pss:")


@dataclass
class Served:
    """One server under test: the process roots whose children count too, and its database."""

    name: str
    roots: set[int]
    database: str
    ports: list[int]

    def processes(self) -> tuple[list[str], list[str]]:
        """(server pids, PostgreSQL backend pids of its database)."""
        own: list[str] = []
        backends: list[str] = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            stat = proc_stat(pid)
            if stat is None:
                continue
            if int(pid) in self.roots or stat[0] in self.roots:
                own.append(pid)
            else:
                command = _cmdline(pid)
                if command.startswith("postgres:") and f" {self.database} " in command:
                    backends.append(pid)
        return own, backends

    def cpu(self) -> dict[tuple[str, str], float]:
        """CPU seconds so far of each server process and backend, by ("server" or "database",
        pid)."""
        own, backends = self.processes()
        return {(kind, pid): (proc_stat(pid) or (0, 0.0))[1]
                for kind, pids in (("server", own), ("database", backends)) for pid in pids}

    def memory(self) -> tuple[int, int]:
        """The server processes' resident and proportional set sizes together, in bytes."""
        own = self.processes()[0]
        return sum(map(_rss, own)), sum(map(_pss, own))


class CpuMeter:
    """The CPU a server and its backends use between start and stop. /proc is read every
    ``every`` seconds, so that a PostgreSQL backend that exits in between (a connection a pool
    opens and closes) still counts, up to its last reading."""

    def __init__(self, served: Served, every: float = 0.05) -> None:
        self.served = served
        self.every = every
        self.start = served.cpu()
        self.last = dict(self.start)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.done.wait(self.every):
            self.last.update(self.served.cpu())

    def stop(self) -> tuple[float, float]:
        """CPU seconds used by (the server processes, their PostgreSQL backends)."""
        self.done.set()
        self.thread.join()
        self.last.update(self.served.cpu())
        used = {"server": 0.0, "database": 0.0}
        for (kind, pid), value in self.last.items():
            used[kind] += value - self.start.get((kind, pid), 0.0)
        return used["server"], used["database"]


def create_database(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return f"{admin_url.rsplit('/', 1)[0]}/{name}"


def drop_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


STORED = {
    "dos": "SELECT count(*) FROM game_events WHERE kind = 'action'",
    "bgio": """SELECT coalesce(sum((state->'G'->>'count')::int), 0) FROM "Games\"""",
}


def sessions(conn: Any) -> int:
    """Connections to the database that have ended so far (``pg_stat_database.sessions``,
    PostgreSQL 14 and later). A backend that exits between two CPU readings takes its CPU out
    of /proc: new connections during a phase mean its server CPU is under-counted."""
    row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = "
                       "current_database()").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def stored_moves(conn: Any, server: str) -> int:
    """Moves found in PostgreSQL; read again until it stops moving (boardgame.io writes after
    it acknowledges)."""
    last = -1
    while True:
        row = conn.execute(STORED[server]).fetchone()
        count = int(row[0]) if row else 0
        if count == last:
            return count
        last = count
        time.sleep(0.2)


@contextlib.contextmanager
def bgio_servers(node_dir: Path, url: str, count: int, log: Path) -> Iterator[Served]:
    """``count`` boardgame.io server processes on one database; the first creates the table
    (Sequelize's ``sync``) before the others start."""
    processes: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    try:
        with log.open("ab") as out:
            for _ in range(count):
                port = common.free_port()
                processes.append(subprocess.Popen(
                    ["node", "bgio_server.js", str(port), url], cwd=node_dir,
                    stdout=out, stderr=subprocess.STDOUT))
                ports.append(port)
                _wait_http(port, "/games", processes[-1], log)
        yield Served("bgio", {p.pid for p in processes}, url.rsplit("/", 1)[1], ports)
    finally:
        for process in processes:
            common.stop(process)


def _wait_http(port: int, path: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()[-2000:]}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.1)
    raise RuntimeError(f"server not ready: {log.read_text()[-2000:]}")


# -- the load generator -----------------------------------------------------------------------


class Load:
    """One ``load.js`` process: started, ready, told to go, its answer read."""

    def __init__(self, node_dir: Path, config: dict[str, Any]) -> None:
        self.process = subprocess.Popen(
            ["node", "load.js", json.dumps(config)], cwd=node_dir, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)

    def line(self, key: str) -> Any:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            message = json.loads(raw)
            if "error" in message:
                raise RuntimeError(f"load.js: {message['error']}")
            if key in message:
                return message[key]
        raise RuntimeError(f"load.js exited ({self.process.wait()}) before {key!r}")

    def say(self, word: str) -> None:
        stdin: IO[str] | None = self.process.stdin
        assert stdin is not None
        stdin.write(word + "\n")
        stdin.flush()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Phase:
    server: str
    kind: str
    processes: int
    round: int
    stored: int
    acked: int
    seconds: float
    server_cpu: float  # the server processes and their PostgreSQL backends
    client_cpu: float
    resent: int
    errors: dict[str, int]
    latencies_ms: list[float] = field(repr=False)  # request to acknowledgement
    stored_ms: list[float] = field(repr=False)  # request to stored (ours: the same)
    unstored: int = 0  # boardgame.io: acknowledged moves whose write it never noted
    sessions: int = 0  # PostgreSQL connections closed during the phase (opened and closed)
    listed: int = 0  # ours: GET .../actions asked during the phase
    database_cpu: float = 0.0  # the PostgreSQL backends' share of server_cpu

    @property
    def per_second(self) -> float:
        return self.stored / self.seconds if self.seconds else 0.0


def phase(node_dir: Path, served: Served, url: str, kind: str, processes: int, number: int,
          settings: Settings) -> Phase:
    matches = {"c8": 8, "c64": 64, "rate": settings.rate_matches}[kind]
    load = Load(node_dir, {"target": served.name, "ports": served.ports, "matches": matches,
                           "seconds": settings.seconds,
                           "rate": settings.rate if kind == "rate" else 0, "idle": 0})
    import psycopg

    try:
        load.line("ready")
        probe = psycopg.connect(url, autocommit=True)  # one connection, opened before
        opened = sessions(probe)
        before = stored_moves(probe, served.name)
        meter = CpuMeter(served)
        load.say("go")
        result = load.line("result")
        after = stored_moves(probe, served.name)  # boardgame.io's last writes land first
        server_cpu, database_cpu = meter.stop()
        opened = sessions(probe) - opened
        probe.close()
    finally:
        load.close()
    return Phase(served.name, kind, processes, number, after - before, result["acked"],
                 result["elapsed"], server_cpu + database_cpu, result["client_cpu"], result["resent"],
                 result["errors"], result["latencies"],
                 result.get("stored_latencies", result["latencies"]) if served.name == "bgio"
                 else result["latencies"], result.get("unstored", 0), opened,
                 listed=result.get("listed", 0), database_cpu=database_cpu)


def phase_line(done: Phase) -> str:
    """A phase's figures on one line."""
    per_1000 = 1000 / max(1, done.stored)
    parts = [f"{done.per_second:7.1f} stored moves/s ({done.stored} stored, {done.acked} "
             f"acknowledged), to stored p50 {percentile(done.stored_ms, 0.5):6.1f} ms, "
             f"p99 {percentile(done.stored_ms, 0.99):6.1f} ms, "
             f"ack p50 {percentile(done.latencies_ms, 0.5):6.1f} ms, "
             f"CPU {done.server_cpu * per_1000:5.2f} s/1,000 "
             f"(PostgreSQL {done.database_cpu * per_1000:4.2f})"]
    if done.listed:
        parts.append(f"GET .../actions {done.listed / max(1, done.acked):.2f} a move")
    for label, value in (("resent", done.resent), ("unstored", done.unstored),
                         ("new connections", done.sessions), ("errors", done.errors)):
        if value:
            parts.append(f"{label} {value}")
    return ", ".join(parts)


def idle_memory(node_dir: Path, served: Served, count: int) -> dict[str, Any]:
    """The servers' RSS (and PSS) before and with ``count`` waiting clients."""
    alone, pss_alone = served.memory()
    load = Load(node_dir, {"target": served.name, "ports": served.ports, "matches": 0,
                           "seconds": 0, "rate": 0, "idle": count})
    try:
        info = load.line("ready")
        time.sleep(3)  # the last requests reach their worker and park
        waiting, pss_waiting = served.memory()
        backends = len(served.processes()[1])
        load.say("stop")
    finally:
        load.close()
    return {"server": served.name, "clients": info["clients"], "rss_alone": alone,
            "rss_waiting": waiting, "pss_alone": pss_alone, "pss_waiting": pss_waiting,
            "postgres_backends": backends}


# -- a run ------------------------------------------------------------------------------------


def install(node_dir: Path) -> None:
    for name in ("package.json", "bgio_server.js", "counter.js", "load.js"):
        shutil.copy(JS / name, node_dir / name)
    print("installing boardgame.io and bgio-postgres with npm ...", flush=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
                   cwd=node_dir, check=True, timeout=600, stdout=subprocess.DEVNULL)


def run_processes(node_dir: Path, tmp: Path, admin_url: str, processes: int,
                  settings: Settings) -> tuple[list[Phase], list[dict[str, Any]]]:
    names = {server: f"{server}_peer_{os.getpid()}_{processes}" for server in SERVERS}
    urls = {server: create_database(admin_url, name) for server, name in names.items()}
    phases: list[Phase] = []
    memory: list[dict[str, Any]] = []
    try:
        env = common.server_env("postgresql+psycopg://" + urls["dos"].split("://", 1)[1])
        common.upgrade_schema(env)
        serving = ["--config", "python:dos_server.gunicorn_conf", "--workers", str(processes)]
        with common.gunicorn(serving, env, tmp / "gunicorn.log") as (port, master), \
                bgio_servers(node_dir, urls["bgio"], processes, tmp / "bgio.log") as bgio:
            served = {"dos": Served("dos", {master.pid}, names["dos"], [port]), "bgio": bgio}
            print(f"\n== {processes} server process(es) each: gunicorn on {port}, "
                  f"boardgame.io on {', '.join(map(str, bgio.ports))}", flush=True)
            for server in SERVERS:  # a warm-up, not recorded
                phase(node_dir, served[server], urls[server], "c8", processes, -1,
                      Settings(**{**asdict(settings), "seconds": 1.0}))
            for number in range(settings.rounds):
                for kind in KINDS:
                    order = SERVERS if number % 2 == 0 else SERVERS[::-1]
                    for server in order:
                        done = phase(node_dir, served[server], urls[server], kind, processes,
                                     number, settings)
                        phases.append(done)
                        print(f"  round {number + 1} {kind:4} {server:4}: {phase_line(done)}",
                              flush=True)
            for server in SERVERS:
                memory.append(idle_memory(node_dir, served[server], settings.idle))
                memory[-1]["processes"] = processes
                m = memory[-1]
                print(f"  memory {server:4}: RSS {m['rss_alone'] / 2**20:6.1f} MiB alone, "
                      f"{m['rss_waiting'] / 2**20:6.1f} MiB with {m['clients']} waiting clients "
                      f"(PSS {m['pss_alone'] / 2**20:.1f} / {m['pss_waiting'] / 2**20:.1f}; "
                      f"{m['postgres_backends']} PostgreSQL backends)", flush=True)
    finally:
        for name in names.values():
            drop_database(admin_url, name)
    return phases, memory


def summary(phases: list[Phase], memory: list[dict[str, Any]],
            settings: Settings) -> dict[str, Any]:
    out: dict[str, Any] = {}
    print("\n== pooled over the rounds; ratios are ours / boardgame.io's "
          "(aims: moves/s >= 1.0, the others <= 1.0)")
    print("(p50/p99: request to stored move; ack: request to acknowledgement)")
    print(f"{'':22}{'server':>7} {'moves/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU s/1k':>9}"
          f" {'ack p50':>8} {'ack p99':>8}")
    for processes in settings.processes:
        for kind in KINDS:
            figures: dict[str, dict[str, float]] = {}
            for server in SERVERS:
                mine = [p for p in phases if p.server == server and p.kind == kind
                        and p.processes == processes]
                latencies = [x for p in mine for x in p.stored_ms]
                acks = [x for p in mine for x in p.latencies_ms]
                stored = sum(p.stored for p in mine)
                figures[server] = {
                    "moves_per_second": stored / max(1e-9, sum(p.seconds for p in mine)),
                    "p50_ms": percentile(latencies, 0.5), "p99_ms": percentile(latencies, 0.99),
                    "ack_p50_ms": percentile(acks, 0.5), "ack_p99_ms": percentile(acks, 0.99),
                    "cpu_seconds_per_1000": sum(p.server_cpu for p in mine) * 1000 / max(1, stored),
                    "database_cpu_seconds_per_1000":
                        sum(p.database_cpu for p in mine) * 1000 / max(1, stored),
                    "stored": stored, "acknowledged": sum(p.acked for p in mine),
                }
            ratios = {key: (figures["dos"][key] / figures["bgio"][key]
                            if figures["bgio"][key] else float("nan"))
                      for key in ("moves_per_second", "p50_ms", "p99_ms", "cpu_seconds_per_1000",
                                  "ack_p50_ms", "ack_p99_ms")}
            label = {"c8": "8 matches", "c64": "64 matches",
                     "rate": f"{settings.rate_matches} x {settings.rate:g}/s"}[kind]
            for server in SERVERS:
                f = figures[server]
                print(f"{processes} proc, {label:14}{server:>7} {f['moves_per_second']:9.1f} "
                      f"{f['p50_ms']:8.1f} {f['p99_ms']:8.1f} {f['cpu_seconds_per_1000']:9.2f} "
                      f"{f['ack_p50_ms']:8.1f} {f['ack_p99_ms']:8.1f}")
            print(f"{'':22}{'ratio':>7} {ratios['moves_per_second']:8.2f}x "
                  f"{ratios['p50_ms']:7.2f}x {ratios['p99_ms']:7.2f}x "
                  f"{ratios['cpu_seconds_per_1000']:8.2f}x {ratios['ack_p50_ms']:7.2f}x "
                  f"{ratios['ack_p99_ms']:7.2f}x")
            out[f"{processes}/{kind}"] = {"figures": figures, "ratios": ratios}
        mem = {m["server"]: m for m in memory if m["processes"] == processes}
        if set(mem) == set(SERVERS):
            ratio = mem["dos"]["rss_waiting"] / mem["bgio"]["rss_waiting"]
            print(f"{processes} proc, RSS with {settings.idle} waiting clients: ours "
                  f"{mem['dos']['rss_waiting'] / 2**20:.1f} MiB, boardgame.io "
                  f"{mem['bgio']['rss_waiting'] / 2**20:.1f} MiB, ratio {ratio:.2f}x")
            # RSS added up counts a page each process maps in each of them (gunicorn's master
            # and its workers share the interpreter's); PSS divides it among them.
            pss_ratio = mem["dos"]["pss_waiting"] / mem["bgio"]["pss_waiting"]
            print(f"{'':8}PSS, shared pages divided: ours "
                  f"{mem['dos']['pss_waiting'] / 2**20:.1f} MiB, boardgame.io "
                  f"{mem['bgio']['pss_waiting'] / 2**20:.1f} MiB, ratio {pss_ratio:.2f}x")
            out[f"{processes}/memory"] = {"ratio": ratio, "pss_ratio": pss_ratio}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3-second phases")
    parser.add_argument("--seconds", type=float, help="seconds of each phase")
    parser.add_argument("--rounds", type=int, help="phases of each kind per server (>= 3)")
    parser.add_argument("--processes", choices=("1", "2", "both"), default="both",
                        help="server processes of each server")
    parser.add_argument("--idle", type=int, help="waiting clients for the memory measurement")
    parser.add_argument("--pg-url", default=os.environ.get("DOS_BENCH_PG_URL", DEFAULT_PG_URL),
                        help="an admin URL of the PostgreSQL server (databases are created on it)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON file ({RESULTS})")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    overrides: dict[str, Any] = {key: getattr(args, key) for key in ("seconds", "rounds", "idle")
                                 if getattr(args, key) is not None}
    if any(value <= 0 for value in overrides.values()):
        parser.error("numbers must be positive")
    if args.processes != "both":
        overrides["processes"] = (int(args.processes),)
    settings = Settings(**{**asdict(settings), **overrides})
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        print(f"skipped: bench/peer.py needs {' and '.join(missing)} (Node.js) to run "
              "boardgame.io; install Node.js 18 or later and run it again")
        return 0
    phases: list[Phase] = []
    memory: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dos-peer-") as folder:
        tmp = Path(folder)
        node_dir = tmp / "node"
        node_dir.mkdir()
        install(node_dir)
        for processes in settings.processes:
            done, mem = run_processes(node_dir, tmp, args.pg_url, processes, settings)
            phases += done
            memory += mem
    report = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
        "settings": asdict(settings),
        "summary": summary(phases, memory, settings),
        "phases": [{**asdict(p), "latencies_ms": None, "stored_ms": None,
                    "p50_ms": percentile(p.stored_ms, 0.5), "p99_ms": percentile(p.stored_ms, 0.99),
                    "ack_p50_ms": percentile(p.latencies_ms, 0.5),
                    "ack_p99_ms": percentile(p.latencies_ms, 0.99)} for p in phases],
        "memory": memory,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
