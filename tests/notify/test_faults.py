"""Faults: SMTP down then up, a failing receiver, dead letters, killed and concurrent workers."""

from __future__ import annotations

import logging
import signal
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient
from notify_helpers import (
    FakeClock,
    Receiver,
    attempts,
    create,
    rows,
    run_worker,
    stop_process,
    verify,
    wait_for,
    worker_process,
)

from testkit import SmtpSink, free_port


def test_smtp_down_then_up_loses_nothing(make_app: Callable[..., Flask]) -> None:
    port = free_port()  # nothing listens here yet
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=port, SMTP_SECURITY="none", SMTP_TIMEOUT=2)
    client = app.test_client()
    for _ in range(3):
        create(client, [{"name": "ann", "email": "ann@example.org"},
                        {"name": "bob", "email": "bob@example.org"}])
    queued = rows(app)
    clock = FakeClock()
    assert run_worker(app, clock) == 0
    clock.advance(6)  # the 5 s retry: still down
    assert run_worker(app, clock) == 0
    for row in rows(app):
        assert row.status == "pending"
        assert row.attempts == 2
        assert "SMTP" in (row.last_error or "")
        assert [a.ok for a in attempts(app, row.id)] == [False, False]
    sink = SmtpSink(port).start()
    try:
        clock.advance(200)  # before the 300 s step: nothing is tried
        assert run_worker(app, clock) == 0
        assert sink.messages == []
        clock.advance(200)
        assert run_worker(app, clock, passes=3) == len(queued)
        received = sorted(m["Message-ID"] for m in sink.messages)
    finally:
        sink.stop()
    assert received == sorted(f"<{r.message_id}@localhost>" for r in queued)
    for row in rows(app):
        assert row.status == "sent"
        assert [a.ok for a in attempts(app, row.id)] == [False, False, True]


def test_dead_letter_tells_the_seat_by_email(make_app: Callable[..., Flask], receiver: Receiver,
                                             smtp: SmtpSink) -> None:
    receiver.script["/broken"] = [(500, {})]
    app = make_app(RETRY_SCHEDULE=[0, 1, 1], SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port,
                   SMTP_SECURITY="none")
    client = app.test_client()
    game = create(client, [{"name": "ann", "webhook_url": receiver.url("/broken"),
                            "email": "ann@example.org"}, {"bot": "random"}])
    answer = client.put(f"/api/games/{game['id']}/seats/0/notifications", json={"events": {
        "webhook": ["invited"], "email": []}}, headers={"Authorization": f"Bearer {_host(game)}"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    hooks = rows(app, channel="webhook")
    clock = FakeClock()
    for _ in range(4):
        run_worker(app, clock)
        clock.advance(1.2)
    run_worker(app, clock)
    for row in rows(app, channel="webhook"):
        assert row.status == "dead"
        assert row.attempts == 3
        assert len(attempts(app, row.id)) == 3
    sorry = [m for m in smtp.to("ann@example.org") if m["X-DOS-Event"] == "undeliverable"]
    assert len(sorry) == len(hooks)
    assert "could not deliver your webhook" in sorry[0].get_body(("plain",)).get_content()
    assert len(receiver.at("/broken")) == 3 * len(hooks)


def _host(game: dict[str, object]) -> str:
    return str(game["host_token"])


def _games_with_webhooks(client: FlaskClient, receiver: Receiver, games: int) -> dict[str, str]:
    """Games whose seats all have webhooks; returns webhook path -> secret."""
    out = {}
    for number in range(games):
        paths = [f"/g{number}/a", f"/g{number}/b"]
        game = create(client, [{"name": "ann", "webhook_url": receiver.url(paths[0])},
                               {"name": "bob", "webhook_url": receiver.url(paths[1])}])
        for invite in game["invites"]:
            out[paths[invite["seat"]]] = invite["webhook_secret"]
    return out




def test_worker_killed_mid_batch_loses_nothing(make_app: Callable[..., Flask], db_url: str,
                                               tmp_path: Path) -> None:
    receiver = Receiver(delay=0.25).start()  # slow: the worker is mid-batch when killed
    app = make_app()
    try:
        secrets = _games_with_webhooks(app.test_client(), receiver, 4)
        queued = rows(app)
        assert len(queued) == 12
        first = worker_process(db_url, tmp_path, DOS_WORKER_LEASE_SECONDS="2")
        try:
            wait_for(lambda: len(receiver.all()) >= 2, 30, "the first deliveries")
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        finally:
            stop_process(first)
        assert len(receiver.all()) < len(queued)  # it really died mid-batch
        second = worker_process(db_url, tmp_path, DOS_WORKER_LEASE_SECONDS="2")
        try:
            wait_for(lambda: {r.status for r in rows(app)} == {"sent"}, 40, "every row sent")
        finally:
            stop_process(second)
        seen = Counter(r.webhook_id for r in receiver.all())
        assert set(seen) == {r.message_id for r in queued}  # every id at least once
        for received in receiver.all():
            verify(received, secrets[received.path])
    finally:
        receiver.stop()


def test_concurrent_workers_never_deliver_a_row_twice(
        make_app: Callable[..., Flask], db_url: str, backend: str, tmp_path: Path) -> None:
    """Two workers on PostgreSQL (SKIP LOCKED); one on SQLite, where one worker is the rule."""
    receiver = Receiver(delay=0.01).start()
    app = make_app()
    try:
        secrets = _games_with_webhooks(app.test_client(), receiver, 12)
        queued = rows(app)
        count = 2 if backend == "postgresql" else 1
        workers = [worker_process(db_url, tmp_path, DOS_WORKER_BATCH="4") for _ in range(count)]
        try:
            wait_for(lambda: {r.status for r in rows(app)} == {"sent"}, 40, "every row sent")
        finally:
            for process in workers:
                stop_process(process)
        seen = Counter(r.webhook_id for r in receiver.all())
        assert seen == Counter({r.message_id: 1 for r in queued})  # exactly once each
        for received in receiver.all():
            verify(received, secrets[received.path])
        names = {a.worker for r in queued for a in attempts(app, r.id)}
        assert 1 <= len(names) <= count
    finally:
        receiver.stop()


def test_a_relay_without_starttls_is_reported_at_start_and_on_every_attempt(
        make_app: Callable[..., Flask], smtp: SmtpSink, db_url: str, tmp_path: Path,
        ) -> None:
    """The default security (starttls) against a relay that offers none."""
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port)  # DOS_SMTP_SECURITY unset
    create(app.test_client(), [{"name": "ann", "email": "ann@example.org"}, {"bot": "random"}])
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("dos_server.worker")
    logger.addHandler(handler)
    try:
        run_worker(app, FakeClock())
    finally:
        logger.removeHandler(handler)
    failed = [line for line in seen if "failed (attempt 1)" in line]
    assert failed
    assert all("offers no STARTTLS" in m and "DOS_SMTP_SECURITY=none" in m and "next try at" in m
               for m in failed)
    assert smtp.messages == []
    process = worker_process(db_url, tmp_path, DOS_SMTP_HOST="127.0.0.1",
                             DOS_SMTP_PORT=str(smtp.port))
    try:
        wait_for(lambda: any("does not work" in p.read_text()
                             for p in tmp_path.glob("worker-*.log")), 30, "the start-up report")
    finally:
        stop_process(process)
    text = "".join(p.read_text() for p in tmp_path.glob("worker-*.log"))
    assert "offers no STARTTLS" in text
    assert "DOS_SMTP_SECURITY=none" in text
