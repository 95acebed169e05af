"""Storage per finished game on PostgreSQL, before and after archiving.

A measurement, not a test. Run it from the repository root::

    .venv/bin/python bench/storage.py                 # 1,000 games to 200 points (minutes)
    .venv/bin/python bench/storage.py --games 50      # a quick look
    .venv/bin/python bench/storage.py --mix email --games 200

It creates a fresh database ``dos_storage_<pid>`` on ``--pg-url`` (dropped at the end),
upgrades it to the head migration, and plays ``--games`` games in-process through the service
layer, to ``--target`` points. Two seat mixes:

- ``bots`` (the default): one person with neither email nor webhook and three bots (random,
  greedy, random). Every one of the person's turns is ``play.apply_turn`` (a uniformly random
  legal action by number), the bots answering in the same call as they do after a request. To
  keep the run short each game's turns share one transaction; the rows written are the ones
  one request per turn writes. No notifications.
- ``email``: how people play by mail. One person with an email address and per-turn emails
  who plays every turn by *replying* to the latest email (the reply quotes it, as mail
  clients do: ``inbound.store`` then ``inbound.process``, as the mail-in listener does, with
  its raw bytes kept); one person with a webhook who plays by API; two bots (random, greedy).
  One transaction per turn, as requests and emails have. After every turn the worker's own
  delivery (``worker.claim``/``worker.deliver``) sends the outbox to local sinks: emails are
  built (``delivery.mail.dispatch.build``) and kept for the reply; the webhook receiver fails 5% of
  first attempts with a 503, so some rows have two ``delivery_attempts``.

Then it measures ``pg_total_relation_size`` (heap, TOAST and indexes) of every table that
holds a game's data, archives every game with ``archive.archive_due`` (the worker's pass) and
measures again; then it runs the retention rules (services/retention.py) on a clock past
their longest period and measures a third time. The measurements follow ``VACUUM FULL``, so
they count the live data, not dead row versions (a plain ``VACUUM`` lets new rows reuse the
space the deleted ones leave; it does not give it back to the file system); each first waits
for every older transaction on the server to end, which ``VACUUM FULL`` needs to drop what
they might still see. Figures go to stdout and ``bench/results/storage.json``
(``storage-email.json``; git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
import zlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import func, select

from common import RESULTS_DIR, ROOT
from dos_server import create_app, worker
from dos_server.database import write_transaction
from dos_server.delivery import DeliveryError
from dos_server.delivery.mail import dispatch as email_delivery
from dos_server.extensions import db
from dos_server.models import NotificationRow, utcnow
from dos_server.services import access, archive, inbound, lobby, play, retention

TABLES = ("games", "seats", "game_events", "game_archives", "idempotency_keys", "notifications",
          "delivery_attempts", "inbound_messages")
EMAIL = "ann.example@mail.example.org"
WEBHOOK = "https://hooks.example.net/services/T04B7NQ2K/B06F3J9LP/dos-hal"
MIXES = {
    "bots": [lobby.SeatSpec(name="pat"), lobby.SeatSpec(bot="random"),
             lobby.SeatSpec(bot="greedy"), lobby.SeatSpec(bot="random")],
    "email": [lobby.SeatSpec(name="ann", email=EMAIL), lobby.SeatSpec(name="hal", webhook_url=WEBHOOK),
              lobby.SeatSpec(bot="random"), lobby.SeatSpec(bot="greedy")],
}
MIX_LABELS = {"bots": "1 person + 3 bots, no email or webhook",
              "email": "1 person by email replies + 1 by API with a webhook + 2 bots"}


def play_one(target: int, rng: random.Random, mix: str = "bots") -> int:
    """One finished game through the service layer; returns how many turns the people took."""
    if mix == "email":
        return _play_by_mail(target, rng)
    created = _started(MIXES[mix], target)
    turns = 0
    with write_transaction():
        game = access.get_game(created.game.id, for_update=True)
        while game.status == "active":
            state = access.engine_state(game)
            listed = state.legal_actions(state.current)
            play.apply_turn(game, state.current, game.version, None, rng.randrange(len(listed)) + 1)
            turns += 1
    return turns


def _started(seats: list[lobby.SeatSpec], target: int) -> lobby.Created:
    """A new game the host starts at once: its people play from the emails or the API
    without claiming their seats (a game is dealt when all have joined, or by the host)."""
    created = lobby.create_game(lobby.NewGame(seats, {"target_score": target}))
    lobby.start_now(created.game.id, created.host_token)
    return created


class Sinks:
    """The worker's senders, local: emails are built and kept (the last one per address is
    what the player replies to); the webhook receiver fails some first attempts."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.last_email: dict[str, EmailMessage] = {}
        self.clock = utcnow()

    def email(self, target: str, payload: dict[str, Any], message_id: str,
              timeout: float | None = None) -> None:
        self.last_email[target] = email_delivery.build(payload, message_id)

    def webhook(self, target: str, payload: dict[str, Any], message_id: str,
                timeout: float | None = None) -> None:
        if self.rng.random() < 0.05:
            raise DeliveryError("HTTP 503 from https://hooks.example.net/…", status=503)

    def now(self) -> datetime:
        return self.clock

    def deliver_all(self) -> None:
        """Deliver every pending row, the clock moving on to each retry they schedule."""
        self.clock = max(self.clock, utcnow())
        while True:
            due = db.session.execute(select(func.min(NotificationRow.next_attempt_at))
                                     .where(NotificationRow.status == "pending")).scalar()
            db.session.rollback()
            if due is None:
                return
            self.clock = max(self.clock, due)
            for notification_id in worker.claim(self.clock, limit=100):
                worker.deliver(notification_id, self.now)


def _reply(sent: EmailMessage, number: int) -> bytes:
    """A player's reply as a mail client writes it: the move on top, the email quoted below
    (plain and HTML)."""
    reply_to = str(sent["Reply-To"])
    text = sent.get_body(("plain",))
    html = sent.get_body(("html",))
    quoted = "\n".join("> " + line for line in (text.get_content() if text else "").splitlines())
    message = EmailMessage()
    message["From"] = f"Ann Example <{EMAIL}>"
    message["To"] = reply_to
    message["Subject"] = "Re: " + str(sent["Subject"])
    message["Date"] = "Mon, 30 Nov 2026 12:00:00 +0000"
    message["Message-ID"] = f"<{random.getrandbits(96):024x}@mail.example.org>"
    message["In-Reply-To"] = str(sent["Message-ID"])
    message["References"] = " ".join(filter(None, [str(sent.get("References") or ""),
                                                   str(sent["Message-ID"])]))
    message.set_content(f"{number}\n\nOn Mon, 30 Nov 2026 at 11:59, DOS wrote:\n{quoted}\n")
    if html is not None:
        message.add_alternative(f"<div dir=\"ltr\">{number}</div><br><div class=\"gmail_quote\">"
                                f"<blockquote>{html.get_content()}</blockquote></div>",
                                subtype="html")
    return message.as_bytes(policy=SMTP)


def _play_by_mail(target: int, rng: random.Random) -> int:
    """One game of the ``email`` mix, one transaction per turn, the outbox delivered after
    each."""
    sinks = Sinks(rng)
    worker.SENDERS.update(email=sinks.email, webhook=sinks.webhook)
    created = _started(MIXES["email"], target)
    turns = 0
    while True:
        sinks.deliver_all()
        game = access.get_game(created.game.id)
        if game.status != "active":
            break
        state = access.engine_state(game)
        listed = state.legal_actions(state.current)
        number = rng.randrange(len(listed)) + 1
        seat = next(s for s in game.seats if s.index == state.current)
        db.session.rollback()
        # Ann answers the latest email, which shows her turn (the game's start sends only the
        # invitation: her first turn, if the game starts with it, is played on the web page).
        last = sinks.last_email.get(EMAIL)
        if seat.email and last is not None and last["Reply-To"]:
            stored = inbound.store(_reply(last, number), "smtp", EMAIL, [str(last["Reply-To"])])
            outcome = inbound.process(stored.id)
            assert outcome == "processed", outcome
        else:
            with write_transaction():
                game = access.get_game(created.game.id, for_update=True)
                play.apply_turn(game, seat.index, game.version, None, number)
        turns += 1
        db.session.remove()
    db.session.remove()
    return turns


def sizes(admin_url: str, name: str) -> dict[str, int]:
    with psycopg.connect(_db_url(admin_url, name), autocommit=True) as conn:
        _wait_for_older_transactions(conn)
        conn.execute("VACUUM FULL ANALYZE")
        return {table: int(conn.execute("SELECT pg_total_relation_size(%s)", (table,))
                           .fetchone()[0]) for table in TABLES}  # type: ignore[index]


def _wait_for_older_transactions(conn: psycopg.Connection[Any], limit: float = 600) -> None:
    """Wait until every transaction that began before now has ended, in the whole cluster.

    ``VACUUM FULL`` copies a deleted row while any transaction older than its deletion still
    runs, even one in another database (PostgreSQL 15 here): on a server other jobs use, the
    rows archiving deleted were counted as if still there (40 KB a game of game_events with
    none left).
    """
    mark = conn.execute("SELECT txid_current()").fetchone()[0]  # type: ignore[index]
    started = time.perf_counter()
    while conn.execute("SELECT txid_snapshot_xmin(txid_current_snapshot())"
                       ).fetchone()[0] <= mark:  # type: ignore[index]
        if time.perf_counter() - started > limit:
            print(f"  a transaction older than {limit:.0f} s still runs: the sizes include the "
                  "row versions it may see", flush=True)
            return
        time.sleep(0.05)


def counts(admin_url: str, name: str) -> dict[str, Any]:
    with psycopg.connect(_db_url(admin_url, name)) as conn:
        rows = {table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
                for table in ("game_events", "notifications", "delivery_attempts",
                              "inbound_messages")}
        blobs = conn.execute("SELECT count(*), coalesce(avg(length(data)), 0), "
                             "coalesce(max(length(data)), 0) FROM game_archives").fetchone()
        outbox = {str(kind): int(count) for kind, count in conn.execute(
            "SELECT channel || ' ' || status, count(*) FROM notifications GROUP BY 1 ORDER BY 1")}
    assert blobs is not None
    return {"event_rows": rows["game_events"], "rows": rows, "outbox": outbox,
            "archives": int(blobs[0]),
            "archive_bytes_avg": float(blobs[1]), "archive_bytes_max": int(blobs[2])}


def folded(admin_url: str, name: str) -> float:
    """Bytes a game's outbox and inbound rows would take as one zlib-compressed JSON value
    (the columns the archive pass keeps, as they are): what folding them into the game's
    archive would leave, before row and index overhead. Not done: the account export and the
    inbound dedupe read the rows. 0 if no game has any."""
    queries = (
        "SELECT game_id, json_agg(json_build_array(id, seats, channel, target, event, "
        "dedupe_key, message_id, status, attempts, created_at, sent_at, last_error) "
        "ORDER BY id)::text FROM notifications WHERE game_id IS NOT NULL GROUP BY game_id",
        "SELECT game_id, json_agg(json_build_array(id, dedupe_key, message_id, source, "
        "mail_from, rcpt_to, size, status, outcome, seat, received_at, processed_at, attempts) "
        "ORDER BY id)::text FROM inbound_messages WHERE game_id IS NOT NULL GROUP BY game_id",
    )
    per_game: dict[str, list[str]] = {}
    with psycopg.connect(_db_url(admin_url, name)) as conn:
        for query in queries:
            for game_id, rows in conn.execute(query).fetchall():
                per_game.setdefault(game_id, []).append(rows)
    if not per_game:
        return 0.0
    return sum(len(zlib.compress("".join(parts).encode(), 9))
               for parts in per_game.values()) / len(per_game)


def _db_url(admin_url: str, name: str) -> str:
    return admin_url.rsplit("/", 1)[0] + "/" + name


def run(games: int, target: int, pg_url: str, output: Path, mix: str = "bots") -> dict[str, Any]:
    name = f"dos_storage_{os.getpid()}"
    admin_url = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        app = create_app({"SQLALCHEMY_DATABASE_URI": "postgresql+psycopg://"
                          + _db_url(admin_url, name).split("://", 1)[1],
                          "SECRET_KEY": "bench", "ARCHIVE_AFTER_SECONDS": 0,
                          "WEBHOOK_ALLOW_PRIVATE": True,  # no DNS look-up of the sink's name
                          "MAIL_DOMAIN": "dos.example.org"})
        with app.app_context():
            import flask_migrate

            flask_migrate.upgrade(directory=str(ROOT / "migrations"))
            rng = random.Random(15)
            started = time.perf_counter()
            turns = 0
            for number in range(games):
                turns += play_one(target, rng, mix)
                db.session.remove()
                if (number + 1) % 100 == 0:
                    print(f"  {number + 1} games played ({time.perf_counter() - started:.0f} s)",
                          flush=True)
            played = time.perf_counter() - started
            before = sizes(admin_url, name)
            before_counts = counts(admin_url, name)
            started = time.perf_counter()
            archived = 0
            while True:
                done = archive.archive_due(utcnow() + timedelta(seconds=1), limit=100)
                db.session.remove()
                archived += done
                if not done:
                    break
            archiving = time.perf_counter() - started
            after = sizes(admin_url, name)
            after_counts = counts(admin_url, name)
            after_counts["folded_mail_bytes_avg"] = folded(admin_url, name)
            # Then the retention rules as the worker runs them once every period has passed
            # (RETAIN_MAIL_LOG_DAYS is the longest that touches a finished game).
            later = utcnow() + timedelta(days=float(app.config["RETAIN_MAIL_LOG_DAYS"]) + 1)
            retained_by = retention.run_all(later)
            db.session.remove()
            retained = sizes(admin_url, name)
            retained_counts = counts(admin_url, name)
            db.session.remove()
            db.engine.dispose()
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    result = {
        "games": games, "target": target, "mix": mix, "person_turns": turns,
        "play_seconds": round(played, 1), "archive_seconds": round(archiving, 1),
        "archived": archived,
        "before": {"bytes": before, **before_counts},
        "after": {"bytes": after, **after_counts},
        "retained": {"bytes": retained, **retained_counts, "removed": retained_by},
        "bytes_per_game_before": sum(before.values()) / games,
        "bytes_per_game_after": sum(after.values()) / games,
        "bytes_per_game_retained": sum(retained.values()) / games,
        "machine": f"{platform.machine()} {os.cpu_count()} cpu, {platform.python_version()}",
    }
    report(result)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=2) + "\n")
    return result


def report(result: dict[str, Any]) -> None:
    games = result["games"]
    before, after = result["before"], result["after"]
    print(f"\n{games} finished games to {result['target']} points "
          f"({MIX_LABELS[result['mix']]}), "
          f"PostgreSQL, after VACUUM FULL; played in {result['play_seconds']} s, archived in "
          f"{result['archive_seconds']} s ({result['archive_seconds'] / games * 1000:.1f} ms "
          f"a game)")
    print("rows per game before: " + ", ".join(
        f"{table} {count / games:.0f}" for table, count in before["rows"].items())
        + f"; archive blob: {after['archive_bytes_avg']:.0f} B average, "
        f"{after['archive_bytes_max']} B max")
    print("rows per game after: " + ", ".join(
        f"{table} {count / games:.0f}" for table, count in after["rows"].items()))
    print("notifications by channel and status: " + ", ".join(
        f"{kind} {count}" for kind, count in before["outbox"].items()))
    retained = result["retained"]
    print(f"{'table':<20}{'before B/game':>15}{'after B/game':>15}{'retained B/game':>17}")
    for table in TABLES:
        print(f"{table:<20}{before['bytes'][table] / games:>15.0f}"
              f"{after['bytes'][table] / games:>15.0f}{retained['bytes'][table] / games:>17.0f}")
    if after["folded_mail_bytes_avg"]:
        print(f"(the kept outbox and inbound columns, compressed into one value per game: "
              f"{after['folded_mail_bytes_avg']:.0f} B; not done, see folded())")
    b, a = result["bytes_per_game_before"], result["bytes_per_game_after"]
    print(f"{'total':<20}{b:>15.0f}{a:>15.0f}   after/before = {a / b:.3f} "
          f"({b / a:.1f}x smaller); aim <= 10240 B: {'met' if a <= 10240 else 'NOT met'}")
    r = result["bytes_per_game_retained"]
    print(f"{'after retention':<20}{r:>15.0f} B a game once every retention period has passed "
          f"(services/retention.py); aim <= 10240 B: {'met' if r <= 10240 else 'NOT met'}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--target", type=int, default=200)
    parser.add_argument("--pg-url", default=os.environ.get(
        "BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--mix", choices=sorted(MIXES), default="bots",
                        help="the seats: bots (1 person, 3 bots, no notifications) or email "
                             "(play by email, a webhook, 2 bots)")
    parser.add_argument("--output", type=Path, default=None,
                        help="default: bench/results/storage.json (storage-email.json for "
                             "--mix email)")
    args = parser.parse_args(argv)
    output = args.output or RESULTS_DIR / ("storage.json" if args.mix == "bots"
                                           else f"storage-{args.mix}.json")
    run(args.games, args.target, args.pg_url, output, args.mix)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
