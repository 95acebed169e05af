"""Prometheus metrics: ``GET /metrics`` in the text format, for the operator only.

prometheus-client's multiprocess mode when ``PROMETHEUS_MULTIPROC_DIR`` names a folder shared
by every process of one server (``make run`` and deploy/ set it): gunicorn's workers and the
notification worker each write their own files there and a scrape of any web worker adds them
up. Without it, each process counts for itself (one process, the tests).

What the database knows (the outbox, dead letters, games) is read at scrape time, so it is
right whichever process answers. Counters of what a write transaction did are added when it
commits (:func:`after_commit`): a rolled-back turn counts nothing.

Served only to the addresses in ``METRICS_ALLOW`` (IPs or networks, comma-separated) or to a
bearer ``METRICS_TOKEN``; with neither configured the route answers 404.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

from flask import Flask, Response, abort, current_app, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
if MULTIPROCESS:  # the metrics below open their files there as they are made
    try:
        os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)
    except OSError as error:
        raise RuntimeError(f"PROMETHEUS_MULTIPROC_DIR={os.environ['PROMETHEUS_MULTIPROC_DIR']}: "
                           f"{error.strerror}; name a folder every process of this server may "
                           "write, or unset it") from None

REQUESTS = Counter("dos_http_requests", "HTTP requests answered, by route and status",
                   ["method", "route", "status"])
REQUEST_SECONDS = Histogram(
    "dos_http_request_duration_seconds", "Time to answer a request, by route (long-polls "
    "included: their route tells them apart)", ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0))
ACTIONS = Counter("dos_actions_applied", "Actions applied to games (a turn is one or more), by "
                  "who played them: api (pages too), email, bot, deadline, order", ["source"])
WAITERS = Gauge("dos_long_poll_waiters", "Requests waiting for a game to change",
                multiprocess_mode="livesum")
DELIVERIES = Counter("dos_deliveries", "Notification delivery attempts, by channel and "
                     "outcome (sent, failed: retried later, dead, dropped)",
                     ["channel", "outcome"])
INBOUND = Counter("dos_inbound_messages", "Emails to the game handled, by status and outcome",
                  ["status", "outcome"])
WORKER_PASS = Histogram("dos_worker_pass_duration_seconds", "One pass of the notification "
                        "worker (deliveries, deadlines, bots, digests, archiving)",
                        buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0))
ARCHIVED = Counter("dos_games_archived", "Finished games whose history was archived")
POOL_IN_USE = Gauge("dos_db_connections_in_use", "Database connections checked out of the "
                    "pools now", multiprocess_mode="livesum")
SQLITE_WRITE_WAITS = Gauge("dos_sqlite_write_waits", "Requests waiting for SQLite's write lock "
                           "(cooperatively, under gevent)", multiprocess_mode="livesum")
POOL_SIZE = Gauge("dos_db_pool_size", "Connections each process's pool keeps (its size)",
                  multiprocess_mode="max")

_PENDING_KEY = "dos_metrics_pending"
# Who plays the moves a request applies: the API and the pages, or an emailed reply.
_SOURCE: ContextVar[str] = ContextVar("dos_turn_source", default="api")


@contextmanager
def moves_by(source: str) -> Iterator[None]:
    """The moves applied inside are counted as ``source``'s (e.g. ``email``)."""
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def count_actions(rows: Iterable[Any], source: str | None = None) -> None:
    """Count the ``action`` history rows among ``rows`` when the transaction commits."""
    count = sum(1 for row in rows if row.kind == "action")
    if count:
        after_commit(ACTIONS, count, source=source or _SOURCE.get())


def after_commit(counter: Counter, amount: float = 1.0, **labels: str) -> None:
    """Add to ``counter`` once the current transaction commits (nothing if it rolls back)."""
    from dos_server.extensions import db

    pending = db.session.info.setdefault(_PENDING_KEY, [])
    pending.append((counter, labels, amount))


def _committed(session: Session) -> None:
    for counter, labels, amount in session.info.pop(_PENDING_KEY, []):
        (counter.labels(**labels) if labels else counter).inc(amount)


def _rolled_back(session: Session) -> None:
    session.info.pop(_PENDING_KEY, None)


class DatabaseFigures(Collector):
    """What the database says at scrape time: the outbox and the games."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from dos_server.extensions import db
        from dos_server.models import GameRow, NotificationRow, utcnow

        now = utcnow()
        by_status = {status: count for status, count in db.session.execute(
            select(NotificationRow.status, func.count()).group_by(NotificationRow.status))}
        oldest_due = db.session.execute(select(func.min(NotificationRow.next_attempt_at)).where(
            NotificationRow.status == "pending", NotificationRow.next_attempt_at <= now)
        ).scalar_one_or_none()
        games = {status: count for status, count in db.session.execute(
            select(GameRow.status, func.count()).group_by(GameRow.status))}
        archived = db.session.execute(select(func.count()).select_from(GameRow).where(
            GameRow.archived_at.is_not(None))).scalar_one()
        db.session.rollback()
        pending = GaugeMetricFamily("dos_outbox_pending", "Notifications not sent yet")
        pending.add_metric([], by_status.get("pending", 0))
        yield pending
        age = GaugeMetricFamily("dos_outbox_oldest_due_seconds", "How long the oldest "
                                "notification that is due has waited (0: none waits)")
        if oldest_due is not None:
            from dos_server.models import as_utc

            age.add_metric([], max((now - as_utc(oldest_due)) / timedelta(seconds=1), 0.0))
        else:
            age.add_metric([], 0.0)
        yield age
        dead = GaugeMetricFamily("dos_outbox_dead_letters", "Notifications given up on "
                                 "(dos-server admin resend ID sends one again)")
        dead.add_metric([], by_status.get("dead", 0))
        yield dead
        family = GaugeMetricFamily("dos_games", "Games by status", labels=["status"])
        for status in ("waiting", "active", "finished", "cancelled"):
            family.add_metric([status], games.get(status, 0))
        yield family
        kept = GaugeMetricFamily("dos_games_archived_now", "Finished games kept as archives")
        kept.add_metric([], archived)
        yield kept


def exposition() -> bytes:
    """Every figure, in Prometheus' text format (``CONTENT_TYPE_LATEST``)."""
    registry = CollectorRegistry()
    if MULTIPROCESS:
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        for collector in _process_collectors():
            registry.register(collector)
    registry.register(DatabaseFigures())
    return generate_latest(registry)


def _process_collectors() -> list[Collector]:
    return [REQUESTS, REQUEST_SECONDS, ACTIONS, WAITERS, DELIVERIES, INBOUND, WORKER_PASS,
            ARCHIVED, POOL_IN_USE, POOL_SIZE, SQLITE_WRITE_WAITS]


def require_operator() -> None:
    """404 unless the operator configured who may scrape; 403 for anyone else."""
    token = str(current_app.config.get("METRICS_TOKEN") or "")
    allowed = _networks(str(current_app.config.get("METRICS_ALLOW") or ""))
    if not token and not allowed:
        abort(404)
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(
            header[len("Bearer "):].encode(), token.encode()):
        return
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        address = None
    if address is not None and any(address in network for network in allowed):
        return
    abort(403, description="The metrics are served only to the addresses and the token the "
                           "operator configured (DOS_METRICS_ALLOW, DOS_METRICS_TOKEN).")


def _networks(text: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(part.strip(), strict=False)
            for part in text.split(",") if part.strip()]


def check_config(app: Flask) -> None:
    """A wrong ``METRICS_ALLOW`` is a start-up error, not a scrape that silently fails."""
    try:
        _networks(str(app.config.get("METRICS_ALLOW") or ""))
    except ValueError as error:
        raise RuntimeError(f"DOS_METRICS_ALLOW: {error} (write addresses or networks, "
                           "comma-separated, e.g. 127.0.0.1,10.0.0.0/8)") from None


def _before() -> None:
    g.metrics_started = time.perf_counter()


def _after(response: Response) -> Response:
    started = g.pop("metrics_started", None)
    if started is not None:
        route = request.url_rule.rule if request.url_rule is not None else "(unrouted)"
        REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        REQUEST_SECONDS.labels(route).observe(time.perf_counter() - started)
    return response


def _watch_pool(engine: Any) -> None:
    size = getattr(engine.pool, "size", None)
    if callable(size):
        POOL_SIZE.set(size())
    event.listen(engine, "checkout", lambda *_args: POOL_IN_USE.inc())
    event.listen(engine, "checkin", lambda *_args: POOL_IN_USE.dec())


def init_app(app: Flask) -> None:
    """The request hooks and the pool's counts (the route is api/metrics.py's)."""
    check_config(app)
    app.before_request(_before)
    app.after_request(_after)
    if not event.contains(Session, "after_commit", _committed):  # once for every app
        event.listen(Session, "after_commit", _committed)
        event.listen(Session, "after_rollback", _rolled_back)
    from dos_server.extensions import db

    with app.app_context():
        _watch_pool(db.engine)


def process_exited(pid: int) -> None:
    """gunicorn's ``child_exit``: a dead worker's live gauges stop counting."""
    if MULTIPROCESS:
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


__all__ = ["CONTENT_TYPE_LATEST", "after_commit", "count_actions", "exposition", "init_app",
           "moves_by", "process_exited", "require_operator"]
