"""The restore drill, on SQLite and PostgreSQL, with real processes: the server (werkzeug on
loopback), the worker (``flask --app dos_server worker``), an SMTP server (aiosmtpd) and a
webhook receiver.

Games are played over HTTP: some finished (the worker archives them), some mid-turn with
deadlines and outbox rows the receivers refuse for now (so they are pending), and one played
on while ``dos-server backup`` runs. The backup is restored into a fresh database (a restore
into one that is not empty is refused). Then: every game replays from its record to its
stored state; a turn is played on a restored game; the receivers accept again and a new worker
delivers. No Message-ID or webhook-id delivered before the backup is delivered after the
restore; each is delivered once after it; every row pending at backup time goes out under its
own id, so a row the old worker sent after the backup arrives twice under one id (and only
such a row), which the receiver dedupes.
"""

from __future__ import annotations

import collections
import os
import secrets
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
import sqlalchemy as sa
from ops_helpers import Api

from dos_engine import Game, GameRecord, replay
from dos_server.extensions import db
from dos_server.models import GameArchiveRow, GameRow, NotificationRow
from dos_server.services import archive
from testkit import (
    BIN,
    MAIL_DOMAIN,
    PG_URL,
    PYTHONPATH,
    ROOT,
    SECRET,
    Receiver,
    SmtpSink,
    build_app,
    dispose,
    serving,
    stop_process,
    wait_for,
)

ANN, LATE = "ann@example.org", "late@example.org"
RETRIES = ",".join(["0"] + ["1"] * 200)  # a refused row is retried every second for minutes


class GreySink(SmtpSink):
    """An SMTP server that answers 451 (try again later) to mail for ``refuse``; it keeps
    only the messages it accepted."""

    def __init__(self, refuse: set[str]) -> None:
        super().__init__()
        self.refuse = refuse

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        if set(envelope.rcpt_tos) & self.refuse:
            return "451 4.7.1 try again later"
        return await super().handle_DATA(server, session, envelope)

    def ids(self) -> list[str]:
        """The outbox ids (Message-ID without its domain) of every accepted message."""
        return [str(m["Message-ID"]).strip("<>").split("@")[0] for m in self.messages]


def _env(url: str, tmp: Path, sink: SmtpSink) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": PYTHONPATH, "DATABASE_URL": url, "SECRET_KEY": SECRET,
            "DOS_INSTANCE_PATH": str(tmp / "instance"), "DOS_WORKER_POLL_SECONDS": "0.05",
            "DOS_WEBHOOK_ALLOW_PRIVATE": "true", "DOS_SMTP_HOST": "127.0.0.1",
            "DOS_SMTP_PORT": str(sink.port), "DOS_SMTP_SECURITY": "none",
            "DOS_MAIL_DOMAIN": MAIL_DOMAIN, "DOS_ARCHIVE_AFTER_SECONDS": "0",
            "DOS_RETRY_SCHEDULE": RETRIES}


@contextmanager
def _worker(url: str, tmp: Path, sink: SmtpSink, name: str) -> Iterator[Path]:
    log = tmp / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(BIN / "flask"), "--app", "dos_server", "worker"],
                                   cwd=ROOT, env=_env(url, tmp, sink), stdout=out,
                                   stderr=subprocess.STDOUT)
    try:
        yield log
    finally:
        stop_process(process)


def _command(url: str, tmp: Path, sink: SmtpSink, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "flask"), "--app", "dos_server", *args], cwd=ROOT,
                          env=_env(url, tmp, sink), capture_output=True, text=True, timeout=300,
                          check=False)


@contextmanager
def _fresh_database(backend: str, source: str, tmp: Path) -> Iterator[str]:
    """An empty database of ``backend``; on PostgreSQL a new database, whose URL names the
    source's schema (a schema backup restores into the schema it was taken from)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp / 'restored.sqlite3'}"
        return
    assert PG_URL
    name = "dos_restore_" + secrets.token_hex(5)
    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.make_url(source).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _rows(url: str, query: Any) -> list[Any]:
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return list(conn.execute(query).all())
    finally:
        engine.dispose()


def _http(base: str) -> Api:
    session = requests.Session()
    return Api(lambda path, headers: session.get(base + path, headers=headers, timeout=60),
               lambda path, json, headers: session.post(base + path, json=json, headers=headers,
                                                        timeout=60),
               lambda answer: answer.json())


def _delivered(sink: GreySink, receiver: Receiver) -> list[str]:
    """Every id a receiver accepted: emails' Message-IDs, webhooks answered 200."""
    return sink.ids() + [r.webhook_id for r in receiver.all() if r.status == 200]


def _replays(url: str) -> dict[str, int]:
    """Replay every game of the database at ``url`` from its record; its version by id."""
    app = build_app(url, migrate=False)
    versions = {}
    try:
        with app.app_context():
            for game in db.session.execute(sa.select(GameRow)).scalars():
                assert game.state is not None
                stored = Game.from_dict(game.state)
                record = GameRecord(stored.players, stored.seed, stored.options,
                                    tuple(archive.action_list(game)))
                assert replay(record) == stored, game.id
                versions[game.id] = game.version
            db.session.remove()
    finally:
        dispose(app)
    return versions


def test_a_backup_taken_while_serving_restores_and_sends_nothing_twice(
        backend: str, db_url: str, tmp_path: Path) -> None:
    sink = GreySink(refuse={LATE}).start()
    receiver = Receiver(script={"/flaky": [(503, {})]}).start()
    try:
        _drill(backend, db_url, tmp_path, sink, receiver)
    finally:
        sink.stop()
        receiver.stop()


def _drill(backend: str, db_url: str, tmp_path: Path, sink: GreySink, receiver: Receiver) -> None:
    app = build_app(db_url, SMTP_HOST="127.0.0.1", SMTP_PORT=sink.port, SMTP_SECURITY="none",
                    MAIL_DOMAIN=MAIL_DOMAIN, ARCHIVE_AFTER_SECONDS=0)
    backup = tmp_path / "dos.backup"
    try:
        with serving(app) as base, _worker(db_url, tmp_path, sink, "worker-before") as log:
            api = _http(base)
            finished = []
            for _ in range(2):
                game = api.create([{"name": "ann", "email": ANN},
                                   {"name": "hal", "webhook_url": receiver.url("/ok")},
                                   {"bot": "random"}], options={"target_score": 1})
                api.play_to_end(game["id"], api.join_all(game))
                finished.append(game["id"])
            waiting: dict[str, dict[int, str]] = {}
            for _ in range(2):
                game = api.create([{"name": "cat", "email": LATE},
                                   {"name": "dan", "webhook_url": receiver.url("/flaky")},
                                   {"bot": "greedy"}], turn_time_limit=3600)
                waiting[game["id"]] = tokens = api.join_all(game)
                for _ in range(3):
                    api.play_one(game["id"], tokens)
            busy = api.create([{"name": "pat"}, {"bot": "random"}, {"bot": "greedy"}])
            busy_tokens = api.join_all(busy)

            def settled() -> bool:
                archived = _rows(db_url, sa.select(sa.func.count()).select_from(GameRow)
                                 .where(GameRow.archived_at.is_not(None)))[0][0]
                stuck = _rows(db_url, sa.select(NotificationRow.target).where(
                    NotificationRow.status == "pending",
                    sa.or_(NotificationRow.attempts == 0,
                           NotificationRow.target.not_in([LATE, receiver.url("/flaky")]))))
                return archived == 2 and not stuck

            wait_for(settled, 120, "the finished games archived and the rest refused once",
                     lambda: log.read_text())

            # The backup runs while a person plays on and the worker retries the refused rows.
            stop = threading.Event()

            def play_on() -> None:
                while not stop.is_set() and api.play_one(busy["id"], busy_tokens):
                    pass

            player = threading.Thread(target=play_on)
            player.start()
            try:
                made = _command(db_url, tmp_path, sink, "backup", str(backup))
            finally:
                stop.set()
                player.join(120)
            assert made.returncode == 0, made.stderr
            assert "backed up" in made.stdout
            again = _command(db_url, tmp_path, sink, "backup", str(backup))
            assert again.returncode != 0
            assert "exists already" in again.stderr
            # After the backup: a turn whose rows the restored database will not know; and the
            # webhook receiver accepts again, so the old worker sends rows the backup holds as
            # pending: the restored worker sends them once more, under the same webhook-id.
            api.play_one(next(iter(waiting)), next(iter(waiting.values())))
            receiver.script["/flaky"] = [(200, {})]

            def flaky_sent() -> bool:
                return not _rows(db_url, sa.select(NotificationRow.id).where(
                    NotificationRow.status == "pending",
                    NotificationRow.target == receiver.url("/flaky")))

            wait_for(flaky_sent, 120, "the old worker to send the webhooks", log.read_text)
        before = _delivered(sink, receiver)
        seen = len(receiver.all())
    finally:
        dispose(app)

    with _fresh_database(backend, db_url, tmp_path) as fresh:
        restored = _command(fresh, tmp_path, sink, "restore", str(backup))
        assert restored.returncode == 0, restored.stderr
        refused = _command(fresh, tmp_path, sink, "restore", str(backup))
        assert refused.returncode != 0
        assert "not empty" in refused.stderr

        # What the backup holds: every game, the finished ones archived, deadlines kept.
        versions = _replays(fresh)
        assert set(finished) | set(waiting) | {busy["id"]} <= set(versions)
        # (the busy game may have ended and been archived too while the backup ran)
        assert set(finished) <= {game for (game,) in _rows(fresh, sa.select(
            GameArchiveRow.game_id))}
        deadlines = _rows(fresh, sa.select(GameRow.turn_deadline)
                          .where(GameRow.id.in_(list(waiting))))
        assert all(deadline is not None for (deadline,) in deadlines)
        outbox = _rows(fresh, sa.select(NotificationRow.message_id, NotificationRow.status,
                                        NotificationRow.lease_until, NotificationRow.channel))
        pending = {mid for mid, status, _, _ in outbox if status == "pending"}
        sent = {mid for mid, status, _, _ in outbox if status == "sent"}
        assert {channel for mid, _, _, channel in outbox if mid in pending} == {"email",
                                                                                "webhook"}
        assert all(lease is None for mid, _, lease, _ in outbox if mid in pending)
        assert sent <= set(before)  # what the backup calls sent had been delivered
        hooks = {mid for mid, status, _, channel in outbox
                 if status == "pending" and channel == "webhook"}
        assert not (pending - hooks) & set(before)  # the refused emails never went out
        assert hooks <= set(before)  # the webhooks went out after the backup

        # The receivers accept again; the restored server and a new worker carry on.
        sink.refuse.clear()
        receiver.script["/flaky"] = [(200, {})]
        app2 = build_app(fresh, migrate=False, SMTP_HOST="127.0.0.1", SMTP_PORT=sink.port,
                         SMTP_SECURITY="none", MAIL_DOMAIN=MAIL_DOMAIN)
        try:
            with serving(app2) as base, _worker(fresh, tmp_path, sink, "worker-after") as log:
                api = _http(base)
                game_id, tokens = next(iter(waiting.items()))
                assert api.play_one(game_id, tokens)  # the old tokens open the restored game
                # Turns go on until one notifies someone (a seat told of its turn already is
                # not told again until it looks).
                for _ in range(40):
                    if len(_rows(fresh, sa.select(NotificationRow.id))) > len(outbox):
                        break
                    assert api.play_one(game_id, tokens)
                assert api.get(f"/api/games/{game_id}", next(iter(tokens.values())))[
                    "version"] > versions[game_id]

                def delivered() -> bool:
                    return not _rows(fresh, sa.select(NotificationRow.id)
                                     .where(NotificationRow.status == "pending"))

                wait_for(delivered, 120, "the restored worker to deliver every pending row",
                         lambda: log.read_text())
        finally:
            dispose(app2)
        _replays(fresh)  # the turn played after the restore replays too
        after = [i for i in sink.ids() if i not in before] + [
            r.webhook_id for r in receiver.all()[seen:] if r.status == 200]
        # Once after the restore each; never a row sent before the backup; twice (once by
        # each worker, under one id, which the receiver dedupes) only a row pending at backup
        # time that the old worker sent after the backup.
        assert all(count == 1 for count in collections.Counter(after).values())
        assert not sent & set(after)
        counts = collections.Counter(_delivered(sink, receiver))
        assert {key for key, count in counts.items() if count > 1} == hooks
        assert max(counts.values()) == 2
        assert pending <= set(after)  # each pending row went out under the id it had
        newest = {mid for (mid,) in _rows(fresh, sa.select(NotificationRow.message_id))
                  if mid not in pending and mid not in sent}
        assert newest
        assert newest <= set(after)


def test_restore_refuses_what_it_cannot_restore_and_force_replaces(
        db_url: str, tmp_path: Path) -> None:
    app = build_app(db_url)
    try:
        api = Api(app.test_client().get, app.test_client().post, lambda a: a.get_json())
        kept = api.create([{"name": "ann"}, {"bot": "random"}])
        cli = app.test_cli_runner()
        backup = tmp_path / "dos.backup"
        assert cli.invoke(args=["backup", str(backup)]).exit_code == 0
        later = api.create([{"name": "bob"}, {"bot": "greedy"}])  # not in the backup

        for path, words in ((tmp_path / "missing", "there is no backup"),
                            (Path(__file__), "is not a backup made by dos-server backup")):
            refused = cli.invoke(args=["restore", str(path)])
            assert refused.exit_code == 1
            assert words in refused.output
        refused = cli.invoke(args=["restore", str(backup)])
        assert refused.exit_code == 1
        assert "is not empty" in refused.output
        assert api.get(f"/api/games/{later['id']}")["status"] == "waiting"  # nothing changed

        replaced = cli.invoke(args=["restore", "--force", str(backup)])
        assert replaced.exit_code == 0, replaced.output
        assert api.get(f"/api/games/{kept['id']}")["status"] == "waiting"
        assert app.test_client().get(f"/api/games/{later['id']}").status_code == 404
    finally:
        dispose(app)
