"""Several workers, a slow relay and receiver, a short lease: every row is
delivered, none twice (counted at the SMTP sink by Message-ID, at the receiver by
``webhook-id``). Real worker processes, a real aiosmtpd relay, a real HTTP receiver."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from notify_helpers import (
    Receiver,
    attempts,
    create,
    rows,
    stop_process,
    verify,
    wait_for,
    worker_process,
)

from testkit import SmtpSink

SLOW = 0.6  # seconds the relay and the receiver take per message
LEASE = "3"  # seconds: a worker with many rows claimed would outlive it (1.5 s left too
# little margin after a 0.6 s send on a loaded 2-core machine: a stalled worker recorded late)


class SlowSink(SmtpSink):
    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        await asyncio.sleep(SLOW)
        return await super().handle_DATA(server, session, envelope)




@pytest.mark.parametrize("count", [2, 3])
def test_workers_with_a_short_lease_never_send_a_row_twice(
        make_app: Callable[..., Flask], db_url: str, tmp_path: Path, count: int) -> None:
    sink = SlowSink().start()
    receiver = Receiver(delay=SLOW).start()
    app = make_app()
    try:
        client = app.test_client()
        secrets: dict[str, str] = {}
        for number in range(2):
            paths = [f"/g{number}/a", f"/g{number}/b"]
            game = create(client, [
                {"name": "ann", "email": f"ann{number}@example.org",
                 "webhook_url": receiver.url(paths[0])},
                {"name": "bob", "email": f"bob{number}@example.org",
                 "webhook_url": receiver.url(paths[1])}])
            for invite in game["invites"]:
                secrets[paths[invite["seat"]]] = invite["webhook_secret"]
        queued = rows(app)
        assert len(queued) == 12
        assert {r.channel for r in queued} == {"email", "webhook"}
        env = {"DOS_WORKER_LEASE_SECONDS": LEASE, "DOS_SMTP_HOST": "127.0.0.1",
               "DOS_SMTP_PORT": str(sink.port), "DOS_SMTP_SECURITY": "none"}
        workers = [worker_process(db_url, tmp_path, **env) for _ in range(count)]
        try:
            wait_for(lambda: {r.status for r in rows(app)} == {"sent"}, 90, "every row sent")
        finally:
            for process in workers:
                stop_process(process)
        by_id = Counter(m["Message-ID"] for m in sink.messages)
        emails = [r for r in queued if r.channel == "email"]
        assert by_id == Counter({f"<{r.message_id}@localhost>": 1 for r in emails})
        hooks = Counter(r.webhook_id for r in receiver.all())
        assert hooks == Counter({r.message_id: 1 for r in queued if r.channel == "webhook"})
        for received in receiver.all():
            verify(received, secrets[received.path])
        for row in rows(app):
            assert row.attempts == 1
            assert row.lease_owner is None
            assert [a.ok for a in attempts(app, row.id)] == [True]
        names = {a.worker for r in queued for a in attempts(app, r.id)}
        assert len(names) >= 2  # the work really was shared
    finally:
        sink.stop()
        receiver.stop()
