"""The soak's moving parts: the server's processes, started as the Procfile
starts them, and the scripted players (by API over both web instances, by email through the
mail-in listener). The test and its checks are in test_soak.py."""

from __future__ import annotations

import base64
import heapq
import json
import os
import random
import re
import signal
import smtplib
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default as default_policy
from pathlib import Path
from typing import Any

import requests
from soak_sinks import SinkLog

from dos_server.services.orders import ORDERS
from testkit import (
    BIN,
    MAIL_DOMAIN,
    PYTHONPATH,
    ROOT,
    SECRET,
    STYLES,
    free_port,
    moves_of,
    parse_email,
    reply_to,
    token_version,
    wait_for,
    wait_ready,
    write_reply,
)

# -- the server's processes ----------------------------------------------------------------


def procfile_command(name: str) -> str:
    """The Procfile's command for process ``name`` (web, worker, mailin), as a shell line.

    The soak starts every process with the Procfile's own command line, so a change of the
    serving model there (worker class, threads, another process) is what the soak runs.
    The web line binds 0.0.0.0: the soak binds loopback only.
    """
    for line in (ROOT / "Procfile").read_text().splitlines():
        key, _, command = line.partition(":")
        if key.strip() == name:
            return command.strip().replace("0.0.0.0:", "127.0.0.1:")
    raise AssertionError(f"no {name!r} process in the Procfile")


@dataclass
class Process:
    """One server process in its own process group (a SIGKILL takes its children too)."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    port: int | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def kill(self) -> float:
        """SIGKILL the whole group (gunicorn's master and its workers); returns when."""
        at = time.monotonic()
        os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=30)
        return at

    def stop(self) -> None:
        """SIGTERM to the group, then SIGKILL after 15 s."""
        if self.popen.poll() is not None:
            return
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()


class Fleet:
    """The web instances, workers and mail-in listener on one database, as real processes."""

    def __init__(self, database_url: str, tmp: Path, smtp_port: int, env: dict[str, str]) -> None:
        self.tmp = tmp
        self.mailin_port = free_port()
        self.env = {
            **os.environ,
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": PYTHONPATH,
            "DATABASE_URL": database_url,
            "SECRET_KEY": SECRET,
            "DOS_INSTANCE_PATH": str(tmp / "instance"),
            "DOS_SMTP_HOST": "127.0.0.1",
            "DOS_SMTP_PORT": str(smtp_port),
            "DOS_SMTP_SECURITY": "none",
            "DOS_MAIL_DOMAIN": MAIL_DOMAIN,
            "DOS_MAIL_FROM": f"DOS by mail <dos@{MAIL_DOMAIN}>",
            "DOS_MAILIN_HOST": "127.0.0.1",
            "DOS_MAILIN_PORT": str(self.mailin_port),
            "DOS_WEBHOOK_ALLOW_PRIVATE": "true",
            **env,
        }
        self.processes: list[Process] = []
        self.count = 0

    def _start(self, name: str, port: int | None = None) -> Process:
        self.count += 1
        log = self.tmp / f"{name}-{self.count}.log"
        env = dict(self.env)
        if port is not None:
            env["PORT"] = str(port)
        with log.open("wb") as out:
            popen = subprocess.Popen(["bash", "-c", "exec " + procfile_command(name)], cwd=ROOT,
                                     env=env, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        process = Process(name, popen, log, port)
        self.processes.append(process)
        return process

    def web(self, port: int | None = None) -> Process:
        """A web instance (the Procfile's ``web``), ready when it returns."""
        process = self._start("web", port or free_port())
        assert process.port is not None
        wait_ready(process.port, process.popen, process.log, timeout=90)
        return process

    def worker(self) -> Process:
        return self._start("worker")

    def mailin(self) -> Process:
        process = self._start("mailin")

        def listening() -> bool:
            if process.popen.poll() is not None:
                raise AssertionError(f"mail-in exited:\n{process.log.read_text()[-3000:]}")
            try:
                with smtplib.SMTP("127.0.0.1", self.mailin_port, timeout=5):
                    return True
            except OSError:
                return False

        wait_for(listening, 90, "the mail-in listener")
        return process

    def stop(self) -> None:
        for process in self.processes:
            process.stop()

    def logs(self) -> str:
        return "\n".join(p.log.read_text(errors="replace") for p in self.processes)


# -- the players ---------------------------------------------------------------------------


class ServerError(AssertionError):
    """A 5xx answer: the soak found a bug."""


class Api:
    """The API players' HTTP: round-robin over the web instances; a connection refused or cut
    (an instance killed) is retried on the next one, a POST with its Idempotency-Key."""

    def __init__(self, bases: list[str]) -> None:
        self.bases = list(bases)
        self.next = 0
        self.lock = threading.Lock()
        self.local = threading.local()
        self.connection_errors = 0
        self.problems: list[str] = []  # 5xx answers (bugs)
        self.served: dict[str, float] = {}  # base URL -> when it last answered

    def replace(self, old: str, new: str) -> None:
        with self.lock:
            self.bases[self.bases.index(old)] = new

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self.local, "session", None)
        if session is None:
            session = self.local.session = requests.Session()
        return session

    def call(self, method: str, path: str, token: str | None = None,
             body: dict[str, Any] | None = None, key: str | None = None) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if key:
            headers["Idempotency-Key"] = key
        ends = time.monotonic() + 120
        while True:
            with self.lock:
                base = self.bases[self.next % len(self.bases)]
                self.next += 1
            try:
                response = self._session().request(method, base + path, json=body,
                                                   headers=headers, timeout=60)
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                with self.lock:
                    self.connection_errors += 1
                self.local.session = None  # its pooled connections may be dead
                if time.monotonic() > ends:
                    raise
                time.sleep(0.05)
                continue
            with self.lock:
                self.served[base] = time.monotonic()
            if response.status_code >= 500:
                with self.lock:
                    self.problems.append(f"{method} {path}: {response.status_code} "
                                         f"{response.text[:500]}")
                raise ServerError(f"{method} {path} answered {response.status_code}")
            return response


@dataclass
class SoakGame:
    """One game of the soak and what its scripted players did."""

    number: int
    kind: str  # "api": two API seats and a bot; "mail": an email seat, an API seat and a bot
    receiver: str  # the base URL of its webhook receiver
    rng: random.Random
    id: str = ""
    tokens: dict[int, str] = field(default_factory=dict)  # API seats
    secrets: dict[int, str] = field(default_factory=dict)  # their webhook secrets
    paths: dict[int, str] = field(default_factory=dict)  # their webhook paths
    email: dict[int, str] = field(default_factory=dict)  # email seats: seat -> address
    version: int = 0
    current: int | None = None  # None: to be read
    status: str = "new"
    # What the players saw applied: version -> (seat, actions); for email, actions are None.
    applied: dict[int, tuple[int, list[str] | None]] = field(default_factory=dict)
    replied: set[int] = field(default_factory=set)  # email: the versions answered
    said: list[tuple[int, str]] = field(default_factory=list)  # table talk: (seat, text) posted
    waiting_since: float = 0.0

    def seats(self) -> list[dict[str, Any]]:
        hook = {seat: self.receiver + path for seat, path in self.paths.items()}
        if self.kind == "api":
            return [{"name": "ann", "webhook_url": hook[0]},
                    {"name": "bob", "webhook_url": hook[1]}, {"bot": "greedy"}]
        return [{"name": "eve", "email": self.email[0]},
                {"name": "bob", "webhook_url": hook[1]}, {"bot": "greedy"}]


class MailIndex:
    """The emails with a list of moves the SMTP sink got, by (address, version of the reply
    token): an email player answers the email for the game's present version."""

    def __init__(self, sinks: SinkLog) -> None:
        self.sinks = sinks
        self.lock = threading.Lock()
        self.found: dict[tuple[str, int], EmailMessage] = {}

    def get(self, address: str, version: int) -> EmailMessage | None:
        with self.lock:
            for record in self.sinks.new("mail"):
                message = parse_email(base64.b64decode(record["raw"]))
                if message["Reply-To"] and moves_of(message):
                    for rcpt in record["rcpts"]:
                        self.found[(rcpt, token_version(reply_to(message)))] = message
            return self.found.get((address, version))


class Players:
    """Scripted players for every game, on a pool of threads: API seats list their actions
    and post one at random; email seats answer their latest email with a number from its
    list; bots play inside the server."""

    def __init__(self, api: Api, mail: MailIndex, mailin_port: int, games: list[SoakGame],
                 target: int, threads: int) -> None:
        self.api = api
        self.mail = mail
        self.mailin_port = mailin_port
        self.games = games
        self.target = target
        self.threads = threads
        self.lock = threading.Condition()
        self.queue: list[tuple[float, int]] = [(0.0, game.number) for game in games]
        self.running = 0
        self.finished = 0
        self.turns = 0  # requests that applied a turn (API posts, emailed moves)
        self.stale = 0  # 409 stale-version answers
        self.errors: list[str] = []
        self.failed: list[SoakGame] = []
        self.sent_mail: dict[str, str] = {}  # Message-ID of each emailed move -> game id

    # -- scheduling ----------------------------------------------------------------------

    def run(self, on_progress: Callable[[Players], None], timeout: float) -> None:
        workers = [threading.Thread(target=self._loop, daemon=True) for _ in range(self.threads)]
        for worker in workers:
            worker.start()
        ends = time.monotonic() + timeout
        while any(w.is_alive() for w in workers):
            on_progress(self)
            if time.monotonic() > ends:
                self.errors.append(f"not finished within {timeout:.0f} s: "
                                   f"{self.finished}/{len(self.games)} games")
                with self.lock:
                    self.queue.clear()
                    self.lock.notify_all()
            time.sleep(0.2)

    def _loop(self) -> None:
        while True:
            with self.lock:
                while True:
                    if (not self.queue and not self.running) or self.errors:
                        self.lock.notify_all()
                        return
                    if self.queue and self.queue[0][0] <= time.monotonic():
                        _, number = heapq.heappop(self.queue)
                        self.running += 1
                        break
                    wait = self.queue[0][0] - time.monotonic() if self.queue else 0.5
                    self.lock.wait(min(max(wait, 0.001), 0.5))
            game = self.games[number]
            delay: float | None = None
            try:
                delay = self.step(game)
            except Exception as error:  # a bug in the server or here: stop the soak
                self.errors.append(f"game #{number} {game.id}: {type(error).__name__}: {error}")
                self.failed.append(game)
            with self.lock:
                self.running -= 1
                if delay is not None:
                    heapq.heappush(self.queue, (time.monotonic() + delay, number))
                else:
                    self.finished += game.status == "finished"
                self.lock.notify_all()

    # -- one step of one game ------------------------------------------------------------

    def step(self, game: SoakGame) -> float | None:
        """Do what the game needs now; returns the delay before its next step (None: over)."""
        if game.status == "new":
            self.create(game)
            return 0.0
        if game.current is None:
            any_token = next(iter(game.tokens.values()))
            body = self.api.call("GET", f"/api/games/{game.id}", any_token).json()
            self.learn(game, body)
        if game.status != "active":
            return None
        assert game.current is not None
        if game.current in game.tokens:
            self.api_turn(game, game.current)
            return 0.0
        if game.current in game.email:
            return self.email_turn(game, game.current)
        raise AssertionError(f"seat {game.current} of {game.id} is nobody's to play")

    def create(self, game: SoakGame) -> None:
        # Every other game has the DOS call, and standing orders may call and catch in it.
        answer = self.api.call("POST", "/api/games", body={
            "seats": game.seats(), "options": {"target_score": self.target,
                                               "dos_call": game.number % 2 == 1}})
        assert answer.status_code == 201, answer.text
        created = answer.json()
        game.id = created["id"]
        for invite in created["invites"]:
            seat = invite["seat"]
            if seat in game.email:
                continue
            joined = self.api.call("POST", f"/api/games/{game.id}/join",
                                   body={"invite": invite["invite"]})
            assert joined.status_code == 200, joined.text
            game.tokens[seat] = joined.json()["player_token"]
            game.secrets[seat] = invite["webhook_secret"]
            if len(game.tokens) == 1:  # the first API seat holds every standing order
                # (set before the game is dealt: setting them plays nothing then)
                orders = self.api.call("PUT", f"/api/games/{game.id}/seats/{seat}/orders",
                                       game.tokens[seat], {"orders": list(ORDERS)})
                assert orders.status_code == 200, orders.text
        if game.email:  # the email players play from their emails: the host starts the game
            started = self.api.call("POST", f"/api/games/{game.id}/start",
                                    created["host_token"])
            assert started.status_code == 200, started.text
        game.status = "active"

    @staticmethod
    def learn(game: SoakGame, body: dict[str, Any]) -> None:
        game.status = body["status"]
        game.version = body["version"]
        game.current = body["view"]["current"] if body["view"] else None

    def api_turn(self, game: SoakGame, seat: int) -> None:
        token = game.tokens[seat]
        listing = self.api.call("GET", f"/api/games/{game.id}/actions", token)
        assert listing.status_code == 200, listing.text
        listed = listing.json()
        if not listed["your_turn"]:  # moved on since we read it
            game.current = None
            return
        number = game.rng.randint(1, len(listed["actions"]))
        answer = self.api.call("POST", f"/api/games/{game.id}/actions", token,
                               {"version": listed["version"], "number": number},
                               key=str(uuid.uuid4()))
        if answer.status_code == 409:
            with self.lock:
                self.stale += 1
            game.current = None
            return
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["version"] not in game.applied, f"version {body['version']} answered twice"
        game.applied[body["version"]] = (seat, list(body["applied"]))
        self.learn(game, body["game"])
        with self.lock:
            self.turns += 1
        if game.rng.random() < 0.25:  # now and then a word at the table, after the move
            text = f"v{body['version']} from seat {seat} <ok> & done"
            said = self.api.call("POST", f"/api/games/{game.id}/messages", token,
                                 {"text": text}, key=str(uuid.uuid4()))
            assert said.status_code == 201, said.text
            assert said.json()["text"] == text
            game.said.append((seat, text))

    def email_turn(self, game: SoakGame, seat: int) -> float:
        address = game.email[seat]
        if game.version in game.replied:  # answered, and the answer not applied yet?
            if not game.waiting_since:
                game.waiting_since = time.monotonic()
            assert time.monotonic() - game.waiting_since < 120, (
                f"the email move at version {game.version} was not applied in 120 s")
            game.current = None
            return 0.05
        message = self.mail.get(address, game.version)
        if message is None:  # the worker has not sent it yet
            if not game.waiting_since:
                game.waiting_since = time.monotonic()
            assert time.monotonic() - game.waiting_since < 120, (
                f"no email for {address} at version {game.version} in 120 s")
            return 0.1
        game.waiting_since = 0.0
        listed = moves_of(message)
        command = str(game.rng.randint(1, len(listed)))
        if game.version % 3 == 0:  # a move and a message in one reply
            text = f"v{game.version} by email"
            command += f"\nsay {text}"
            game.said.append((seat, text))
        reply = write_reply(STYLES[game.version % len(STYLES)], message, command, address,
                            name="Eve")
        with smtplib.SMTP("127.0.0.1", self.mailin_port, timeout=60) as smtp:
            refused = smtp.send_message(reply, address, [reply_to(message)])
        assert not refused, refused
        game.replied.add(game.version)
        game.applied[game.version + 1] = (seat, None)
        with self.lock:
            self.sent_mail[str(reply["Message-ID"])] = game.id
            self.turns += 1
        game.current = None
        return 0.0


def header_index(mail: list[tuple[list[str], bytes]]) -> list[tuple[list[str], str]]:
    """(envelope recipients, Message-ID) of each message the SMTP sink got."""
    parser = BytesParser(policy=default_policy)
    return [(rcpts, str(parser.parsebytes(content, headersonly=True)["Message-ID"]))
            for rcpts, content in mail]


def start_sinks(folder: Path, fail_rate: float) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """The SMTP sink and webhook receivers as a process (soak_sinks.py); returns it and the
    ports it printed."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), PYTHONPATH])}
    with (folder / "sinks.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("soak_sinks.py")), str(folder),
             str(fail_rate)], env=env, stdout=subprocess.PIPE, stderr=log)
    assert process.stdout is not None
    line = process.stdout.readline()
    process.stdout.close()
    assert line, (folder / "sinks.log").read_text()
    return process, dict(json.loads(line))


def message_id_of(header: str) -> str:
    """The local part of ``<id@domain>``: the outbox row's ``message_id``."""
    found = re.fullmatch(r"<([^@>]+)@[^>]+>", header.strip())
    assert found, header
    return found.group(1)
