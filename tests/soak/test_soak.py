"""A soak across processes.

Two web instances (the Procfile's gunicorn line), two workers and the mail-in listener run as
real processes on one fresh PostgreSQL database, with Redis holding the rate limits. GAMES
games are created and played at once to the end by scripted players: by API over both web
instances, by email replies (read from a real SMTP sink, sent to the mail-in listener) and by
bot seats. Every API seat has a webhook on a receiver that answers 500 at random. The first
API seat of each game holds every standing order, and every other game has the DOS call (so
orders draw, play forced moves, call and catch there). Now and then an API player says
something at the table after its move, and every third emailed move carries a say line.
Midway one web instance and one worker are killed with SIGKILL and started again.

Then: every game replays from its record to its stored state; every message said is stored
once; every turn a player saw applied is in the history exactly once and nothing else is,
beside the actions standing orders played in the same transactions; every outbox row was
delivered exactly once (or, for webhooks, dead-lettered after the whole retry schedule), or, a
your-turn row held while its player was looking, dropped unsent because the player moved
meanwhile; every emailed move was stored and processed once. Throughput and the kill/recovery
times are figures: printed in the test summary, never asserted.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import socket
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis
import sqlalchemy as sa
from flask import Flask
from soak_fleet import (
    Api,
    Fleet,
    MailIndex,
    Players,
    Process,
    SoakGame,
    header_index,
    message_id_of,
    start_sinks,
)
from soak_sinks import SinkLog

from dos_engine import GameRecord, replay
from dos_server.extensions import db
from dos_server.models import (
    DeliveryAttemptRow,
    EventRow,
    GameRow,
    InboundMessageRow,
    MessageRow,
    NotificationRow,
    SeatRow,
)
from testkit import (
    PG_URL,
    REDIS_URL,
    build_app,
    dispose,
    moves_of,
    parse_email,
    pg_schema,
    stop_process,
    verify,
    wait_for,
)

GAMES = int(os.environ.get("DOS_SOAK_GAMES", "200"))  # fewer only to try the soak out locally
MAIL_EVERY = 4  # every 4th game has an email seat (and one API seat); the others two API seats
TARGET_SCORE = 20  # ~25 turns a game: short games, many of them
PLAYER_THREADS = 24
WEBHOOK_FAIL_RATE = 0.2
RETRY_SCHEDULE = [0, 0.2, 0.5, 1]  # seconds: four tries, then dead-lettered
LEASE_SECONDS = 10  # a killed worker's claimed rows are due again after this
KILL_AFTER = GAMES // 10  # games finished when the kills happen (most are mid-game then)
ACTIVE_SECONDS = 1  # a seat that read its game this recently when its turn began is held

pytestmark = pytest.mark.slow


@dataclass
class Chaos:
    """Midway, SIGKILL one web instance and one worker and start them again (as a
    supervisor would); measures how long each took to be back."""

    fleet: Fleet
    api: Api
    app: Flask
    webs: list[Process]
    workers: list[Process]
    done: bool = False
    figures: dict[str, Any] = field(default_factory=dict)
    at_risk: set[int] = field(default_factory=set)  # rows the killed worker held
    killed_worker: str = ""
    new_worker: str = ""
    worker_killed_at: datetime | None = None
    web_base: str = ""
    web_killed_at: float = 0.0
    web_ready_at: float = 0.0

    def __call__(self, players: Players) -> None:
        if self.web_ready_at and "web_kill_to_first_answer_s" not in self.figures:
            served = self.api.served.get(self.web_base, 0.0)
            if served > self.web_ready_at:
                self.figures["web_kill_to_first_answer_s"] = round(served - self.web_killed_at, 2)
        if self.done or players.finished < KILL_AFTER:
            return
        self.done = True
        self.figures["killed_at_turns"] = players.turns
        self.figures["killed_at_games_finished"] = players.finished
        # a web instance: its master and workers die at once, requests in flight are cut
        web = self.webs[0]
        assert web.port is not None
        self.web_base = f"http://127.0.0.1:{web.port}"
        self.web_killed_at = web.kill()
        # a worker, possibly between a send and recording it
        worker = self.workers[0]
        self.worker_killed_at = datetime.now(UTC)
        worker.kill()
        self.killed_worker = f"{socket.gethostname()}:{worker.pid}"
        with self.app.app_context():
            self.at_risk = set(db.session.execute(
                sa.select(NotificationRow.id).where(
                    NotificationRow.status == "pending",
                    NotificationRow.lease_owner.like(f"{self.killed_worker}:%"))).scalars())
            db.session.remove()
        replacement = self.fleet.worker()
        self.new_worker = f"{socket.gethostname()}:{replacement.pid}"
        self.workers[0] = replacement
        self.webs[0] = self.fleet.web(port=web.port)  # on the same address, ready on return
        self.web_ready_at = time.monotonic()
        self.figures["web_kill_to_ready_s"] = round(self.web_ready_at - self.web_killed_at, 2)


def test_soak_across_processes(tmp_path: Path, record_property: Any) -> None:
    if not PG_URL:
        pytest.fail("the soak runs on PostgreSQL: set TEST_DATABASE_URL (CI's .ci/run does), "
                    "e.g. postgresql+psycopg://postgres@127.0.0.1:5432/test")
    limits = redis.Redis.from_url(REDIS_URL)
    try:
        limits.ping()
    except redis.RedisError as error:
        pytest.fail(f"the soak keeps its rate limits in Redis at {REDIS_URL}: {error}")
    prefix = f"soak-{secrets.token_hex(4)}"
    figures: dict[str, Any] = {}
    with pg_schema() as url, running(url, tmp_path, prefix) as world:
        try:
            world.play(figures)
            world.check(figures)
            assert limits.keys(f"*{prefix}*"), "the rate limits were not kept in Redis"
        finally:
            for key in limits.scan_iter(f"*{prefix}*"):
                limits.delete(key)
            text = "soak: " + ", ".join(f"{name}={value}" for name, value in figures.items())
            record_property("figures", text)
            print(text)


class World:
    """Everything the soak runs, and its checks."""

    def __init__(self, url: str, tmp: Path, prefix: str) -> None:
        self.app = build_app(url, INSTANCE_PATH=str(tmp / "instance-test"))
        self.sinks_process, ports = start_sinks(tmp / "sinks", WEBHOOK_FAIL_RATE)
        self.sinks = SinkLog(tmp / "sinks")
        self.receivers: list[str] = ports["receivers"]
        self.fleet = Fleet(url, tmp, ports["smtp"], {
            "DOS_RATELIMIT_STORAGE_URI": REDIS_URL,
            "DOS_RATELIMIT_KEY_PREFIX": prefix,
            # limits shared by both instances in Redis, high enough for one address's games,
            # per day so that their keys are still there to be checked at the end
            "DOS_RATE_LIMIT_CREATE": "100000 per day",
            "DOS_RATE_LIMIT_JOIN": "100000 per day",
            "DOS_WORKER_POLL_SECONDS": "0.1",
            "DOS_WORKER_LEASE_SECONDS": str(LEASE_SECONDS),
            "DOS_RETRY_SCHEDULE": ",".join(str(s) for s in RETRY_SCHEDULE),
            # Attention: the API seats read their games, so their your-turn rows are held
            # (then sent, pushed back or dropped when they moved meanwhile)
            "DOS_ACTIVE_SECONDS": str(ACTIVE_SECONDS),
            "DOS_LOOK_EVERY_SECONDS": "0.2",
            # table talk: the players' words never meet the per-seat rate limit
            "DOS_CHAT_PER_MINUTE": "10000",
        })
        self.games: list[SoakGame] = []
        self.players: Players | None = None
        self.chaos: Chaos | None = None

    def stop(self) -> None:
        self.fleet.stop()
        stop_process(self.sinks_process)
        dispose(self.app)

    # -- playing -------------------------------------------------------------------------

    def play(self, figures: dict[str, Any]) -> None:
        started = time.monotonic()
        webs = [self.fleet.web(), self.fleet.web()]
        workers = [self.fleet.worker(), self.fleet.worker()]
        self.fleet.mailin()
        figures["startup_s"] = round(time.monotonic() - started, 1)
        api = Api([f"http://127.0.0.1:{web.port}" for web in webs])
        for number in range(GAMES):
            game = SoakGame(number, "mail" if number % MAIL_EVERY == 0 else "api",
                            self.receivers[number % 2], random.Random(number))
            if game.kind == "mail":
                game.email[0] = f"eve{number}@example.org"
            game.paths = {seat: f"/g{number}/s{seat}"
                          for seat in ((0, 1) if game.kind == "api" else (1,))}
            self.games.append(game)
        self.players = players = Players(api, MailIndex(self.sinks), self.fleet.mailin_port,
                                         self.games, TARGET_SCORE, PLAYER_THREADS)
        self.chaos = chaos = Chaos(self.fleet, api, self.app, webs, workers)
        began = time.monotonic()
        players.run(chaos, timeout=480)
        seconds = time.monotonic() - began
        assert not api.problems, "server errors:\n" + "\n".join(api.problems[:20])
        assert not players.errors, "\n".join(
            players.errors[:20] + [self.diagnose(game) for game in players.failed[:3]])
        assert chaos.done, "the games ended before the kills"
        figures.update({
            "games": GAMES, "games_finished": players.finished, "play_s": round(seconds, 1),
            "turns": players.turns, "turns_per_s": round(players.turns / seconds, 1),
            "games_per_min": round(players.finished / seconds * 60, 1),
            "connection_errors_retried": api.connection_errors, "stale_409": players.stale,
            **chaos.figures,
        })
        drained = time.monotonic()
        wait_for(self.settled, 180, "every notification and inbound message settled")
        figures["drain_after_play_s"] = round(time.monotonic() - drained, 1)

    def diagnose(self, game: SoakGame) -> str:
        """What the database and the SMTP sink hold about ``game``, for a failure message."""
        lines = [f"game #{game.number} {game.id} at version {game.version}, seat "
                 f"{game.current} to move; players saw {sorted(game.applied)}"]
        with self.app.app_context():
            for row in db.session.execute(sa.select(NotificationRow).where(
                    NotificationRow.game_id == game.id).order_by(NotificationRow.id)).scalars():
                payload = row.payload
                lines.append(f"  outbox #{row.id} {row.channel} {row.event} {row.status} "
                             f"v{payload.get('version')} moves={len(payload.get('moves') or [])} "
                             f"reply_to={payload.get('reply_to')} to={row.target[-30:]}")
            for event in db.session.execute(sa.select(EventRow).where(
                    EventRow.game_id == game.id).order_by(EventRow.seq)).scalars():
                lines.append(f"  event {event.seq} v{event.version} seat {event.seat} "
                             f"{event.kind} {event.data}")
            for message in db.session.execute(sa.select(InboundMessageRow).where(
                    InboundMessageRow.game_id == game.id)).scalars():
                lines.append(f"  inbound #{message.id} {message.status} {message.outcome} "
                             f"{message.error}")
            db.session.remove()
        for rcpts, raw in self.sinks.mail():
            if set(rcpts) & set(game.email.values()):
                message = parse_email(raw)
                lines.append(f"  sink: {message['X-DOS-Event']} {message['Reply-To']} "
                             f"moves={len(moves_of(message))}")
        return "\n".join(lines)

    def settled(self) -> bool:
        with self.app.app_context():
            pending = db.session.execute(sa.select(sa.func.count()).select_from(NotificationRow)
                                         .where(NotificationRow.status == "pending")).scalar_one()
            received = db.session.execute(
                sa.select(sa.func.count()).select_from(InboundMessageRow)
                .where(InboundMessageRow.status == "received")).scalar_one()
            db.session.remove()
        return pending == 0 and received == 0

    # -- checks --------------------------------------------------------------------------

    def check(self, figures: dict[str, Any]) -> None:
        assert self.players is not None
        assert self.chaos is not None
        with self.app.app_context():
            self.check_games(figures)
            self.check_outbox(figures)
            self.check_inbound(figures)
            db.session.remove()
        self.check_recovery(figures)
        tracebacks = self.fleet.logs().count("Traceback")
        assert tracebacks == 0, f"{tracebacks} tracebacks in the logs under {self.fleet.tmp}"

    def check_games(self, figures: dict[str, Any]) -> None:
        """Every game replays from its record to its stored state; the history holds each
        turn a player saw applied exactly once, and no other turn."""
        assert self.players is not None
        api = self.players.api
        actions = by_order = messages = 0
        bots = {(seat.game_id, seat.index) for seat in db.session.execute(
            sa.select(SeatRow).where(SeatRow.bot.is_not(None))).scalars()}
        for game in self.games:
            row = db.session.get(GameRow, game.id)
            assert row is not None, game.id
            assert row.status == "finished", (game.id, row.status)
            record = api.call("GET", f"/api/games/{game.id}/record")
            assert record.status_code == 200, record.text
            replayed = replay(GameRecord.from_dict(record.json()))
            assert json.loads(json.dumps(replayed.to_dict())) == row.state, game.id
            events = db.session.execute(sa.select(EventRow).where(EventRow.game_id == game.id)
                                        .order_by(EventRow.seq)).scalars().all()
            assert [e.seq for e in events] == list(range(1, row.next_seq)), game.id
            versions = [e.version for e in events]
            assert versions == sorted(versions), f"{game.id}: versions out of order"
            turns: dict[int, tuple[int, list[str]]] = {}
            ordered: set[int] = set()  # versions in which standing orders played
            for event in events:
                if event.kind != "action":
                    continue
                actions += 1
                if event.data.get("by") == "order":
                    by_order += 1
                    ordered.add(event.version)
                    continue
                if (game.id, event.seat) in bots:
                    continue
                seat, texts = turns.setdefault(event.version, (event.seat, []))
                assert seat == event.seat, f"{game.id} v{event.version}: two seats moved"
                texts.append(event.data["action"])
            # one request of a person per version after the deal (the lobby's versions come
            # before it), none lost
            dealt = next(e.version for e in events if e.kind == "game_started")
            assert sorted(turns) == list(range(dealt + 1, row.version + 1)), game.id
            # an order plays in the transaction of the deal or of a person's move, never alone
            assert ordered <= {dealt, *turns}, (game.id, sorted(ordered - {dealt, *turns}))
            assert sorted(game.applied) == sorted(turns), game.id
            for version, (seat, applied) in game.applied.items():
                assert turns[version][0] == seat, (game.id, version)
                if applied is not None:  # an API turn: exactly the actions it was told
                    assert turns[version][1] == applied, (game.id, version)
            # table talk: every message said (by API or in an emailed move) stored once
            stored = db.session.execute(sa.select(MessageRow).where(
                MessageRow.game_id == game.id).order_by(MessageRow.id)).scalars().all()
            assert sorted((m.seat, m.body) for m in stored) == sorted(game.said), game.id
            assert row.last_message_id == (stored[-1].id if stored else 0), game.id
            messages += len(stored)
        figures["actions"] = actions
        figures["messages"] = messages
        assert messages, "no table talk in the soak"
        figures["actions_by_standing_order"] = by_order
        assert by_order, "no standing order played in the soak"

    def check_outbox(self, figures: dict[str, Any]) -> None:
        """Every row sent exactly once, or (webhooks) dead after the whole schedule."""
        assert self.chaos is not None
        rows = db.session.execute(sa.select(NotificationRow)).scalars().all()
        tries: dict[int, list[DeliveryAttemptRow]] = defaultdict(list)
        for attempt in db.session.execute(sa.select(DeliveryAttemptRow)).scalars():
            tries[attempt.notification_id].append(attempt)
        hooks = self.sinks.hooks()
        received = [receipt for _, receipt in hooks]
        hooks_ok = Counter(r.webhook_id for r in received if r.status < 300)
        hooks_all = Counter(r.webhook_id for r in received)
        raw = self.sinks.mail()
        headers = header_index(raw)
        mail = Counter(message_id_of(mid) for _, mid in headers)
        mail_to = {message_id_of(mid): rcpts for rcpts, mid in headers}
        ours = {row.message_id for row in rows}
        assert set(hooks_all) <= ours, "webhooks no outbox row sent"
        assert set(mail) <= ours, "emails no outbox row sent"
        twice = excuses = 0
        statuses: Counter[str] = Counter()
        for row in rows:
            statuses[f"{row.channel}_{row.status}"] += 1
            attempts = tries[row.id]
            ok = [a for a in attempts if a.ok]
            got = hooks_ok[row.message_id] if row.channel == "webhook" else mail[row.message_id]
            # The documented exceptions to exactly once (worker.py): the killed worker sent
            # the row and died before recording it, or a receiver took a message after the
            # worker gave up waiting (a timed-out attempt). Then more than once is allowed.
            excused = row.id in self.chaos.at_risk or any(
                "timed out" in (a.error or "") for a in attempts)
            if row.status == "dropped":  # held while the player looked, who then moved
                assert row.event == "your_turn", (row.id, row.event)
                assert row.payload["data"]["held"] is True, row.id
                assert row.attempts == len(attempts) == 0, row.id
                assert got == 0, (row.id, row.channel, got)
                continue
            if row.status == "sent" and row.event == "your_turn" \
                    and row.payload["data"].get("held"):
                statuses[f"{row.channel}_held_then_sent"] += 1
            if row.status == "sent":
                assert len(ok) == 1, (row.id, row.event, len(ok))
                assert row.attempts == len(attempts), (row.id, row.attempts, len(attempts))
                if excused:
                    assert got >= 1, (row.id, row.channel, got)
                    twice += got - 1
                    excuses += 1
                else:
                    assert got == 1, (row.id, row.channel, row.event, got)
                    if row.channel == "webhook":
                        assert hooks_all[row.message_id] == len(attempts), row.id
                if row.channel == "email":
                    assert mail_to[row.message_id] == [row.target], row.id
            else:
                assert row.status == "dead", (row.id, row.status, row.last_error)
                assert row.channel == "webhook", (row.id, row.last_error)
                assert row.attempts == len(attempts) == len(RETRY_SCHEDULE), row.id
                assert not ok, row.id
                assert all(a.status_code == 500 or "timed out" in (a.error or "")
                           for a in attempts), row.id
                assert got == 0 or excused, row.id
        secret_of = {game.receiver + path: game.secrets[seat]
                     for game in self.games for seat, path in game.paths.items()}
        for number, receipt in hooks:
            verify(receipt, secret_of[self.receivers[number] + receipt.path])
        lags = sorted((row.sent_at - row.created_at).total_seconds()
                      for row in rows if row.sent_at is not None)
        assert statuses["email_dropped"] + statuses["webhook_dropped"], \
            "no your-turn row was held and dropped: the soak does not exercise attention"
        assert statuses["email_held_then_sent"] + statuses["webhook_held_then_sent"], \
            "no held your-turn row was sent"
        figures.update({
            "delivery_lag_p50_s": round(lags[len(lags) // 2], 2),
            "delivery_lag_p99_s": round(lags[len(lags) * 99 // 100], 2),
            "notifications": len(rows), **dict(sorted(statuses.items())),
            "webhook_500s": sum(1 for r in received if r.status >= 500),
            "emails_at_sink": len(raw), "killed_worker_rows": len(self.chaos.at_risk),
            "rows_killed_or_timed_out": excuses, "duplicates_of_those": twice,
        })

    def check_inbound(self, figures: dict[str, Any]) -> None:
        """Every emailed move stored once and applied once, and answered once."""
        assert self.players is not None
        rows = db.session.execute(sa.select(InboundMessageRow)).scalars().all()
        sent = self.players.sent_mail
        assert sorted(str(row.message_id) for row in rows) == sorted(sent)
        for row in rows:
            assert (row.status, row.outcome) == ("processed", "applied"), (row.id, row.error)
            assert row.game_id == sent[str(row.message_id)], row.id
        answers = db.session.execute(
            sa.select(NotificationRow.dedupe_key).where(NotificationRow.event == "mail_reply")
        ).scalars().all()
        assert sorted(answers) == sorted(f"inbound:{row.id}:reply" for row in rows)
        figures["emailed_moves"] = len(rows)

    def check_recovery(self, figures: dict[str, Any]) -> None:
        """When the restarted worker first delivered, and when the killed one's rows went."""
        chaos = self.chaos
        assert chaos is not None
        assert chaos.worker_killed_at is not None
        with self.app.app_context():
            first = db.session.execute(sa.select(sa.func.min(DeliveryAttemptRow.at)).where(
                DeliveryAttemptRow.worker == chaos.new_worker)).scalar_one()
            last = db.session.execute(sa.select(sa.func.max(NotificationRow.sent_at)).where(
                NotificationRow.id.in_(chaos.at_risk))).scalar_one() if chaos.at_risk else None
            db.session.remove()
        assert first is not None, "the restarted worker delivered nothing"
        figures["worker_kill_to_first_delivery_s"] = round(
            (first - chaos.worker_killed_at).total_seconds(), 2)
        if last is not None:
            figures["worker_kill_to_its_rows_delivered_s"] = round(
                (last - chaos.worker_killed_at).total_seconds(), 2)


@contextmanager
def running(url: str, tmp: Path, prefix: str) -> Iterator[World]:
    world = World(url, tmp, prefix)
    try:
        yield world
    finally:
        world.stop()
