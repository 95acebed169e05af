"""Real parts for the play-by-email tests: the app on a migrated database, the mail-in
listener (the CLI's handler, in-process on a free port), an SMTP sink for what the worker
sends, and replies written the way real mail clients write them. The SMTP sink, ports and app
config are testkit.py's."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from flask import Flask

from dos_engine import Game
from dos_server import worker
from dos_server.extensions import db
from dos_server.mailin import make_controller
from dos_server.models import EventRow, GameRow, InboundMessageRow, NotificationRow
from testkit import MAIL_DOMAIN, SmtpSink, build_app, dispose, listen, start_by_host

# The player's mail client is shared with the soak (tests/soak): it lives in testkit.py.
from testkit import STYLES as STYLES
from testkit import moves_of as moves_of
from testkit import reply_to as reply_to
from testkit import text_of as text_of
from testkit import token_version as token_version
from testkit import write_reply as write_reply

DOMAIN = MAIL_DOMAIN
INBOUND_SECRET = "inbound-secret-for-tests"
ANN, BJORN = "ann@example.org", "bjorn@example.org"
SEATS = [{"name": "Ann", "email": ANN}, {"name": "Bjørn Ødegård", "email": BJORN},
         {"bot": "greedy"}]


class MailWorld:
    def __init__(self, url: str, tmp_path: Path) -> None:
        self.sink = SmtpSink().start()  # its port goes into the app's configuration
        self.app: Flask = build_app(
            url, INSTANCE_PATH=str(tmp_path / "instance"),
            SMTP_HOST="127.0.0.1", SMTP_PORT=self.sink.port, SMTP_SECURITY="none",
            MAIL_DOMAIN=DOMAIN, MAIL_FROM=f"DOS by mail <dos@{DOMAIN}>",
            INBOUND_SECRET=INBOUND_SECRET)
        self.client = self.app.test_client()

    def start(self) -> MailWorld:
        self.listener = listen(lambda port: make_controller(self.app, "127.0.0.1", port))
        return self

    def stop(self) -> None:
        self.listener.stop()
        self.sink.stop()
        dispose(self.app)

    # -- the server side ----------------------------------------------------------------------

    def run_worker(self) -> int:
        with self.app.app_context():
            delivered = worker.run_once()
            db.session.remove()
        return delivered

    def create(self, seats: list[dict[str, Any]], **options: Any) -> str:
        response = self.client.post("/api/games", json={"seats": seats, "options": options})
        assert response.status_code == 201, response.get_data(as_text=True)
        start_by_host(self.client, response.get_json())
        return str(response.get_json()["id"])

    def game(self, game_id: str) -> tuple[int, str, Game]:
        with self.app.app_context():
            row = db.session.get(GameRow, game_id)
            assert row is not None
            assert row.state is not None
            out = (row.version, row.status, Game.from_dict(row.state))
            db.session.remove()
        return out

    def event_count(self, game_id: str) -> int:
        with self.app.app_context():
            count = db.session.execute(sa.select(sa.func.count()).select_from(EventRow)
                                       .where(EventRow.game_id == game_id)).scalar_one()
            db.session.remove()
        return int(count)

    def inbound(self) -> list[tuple[str, str | None]]:
        with self.app.app_context():
            rows = db.session.execute(sa.select(InboundMessageRow.status, InboundMessageRow.outcome)
                                      .order_by(InboundMessageRow.id)).all()
            db.session.remove()
        return [(r[0], r[1]) for r in rows]

    def replies(self) -> int:
        with self.app.app_context():
            count = db.session.execute(sa.select(sa.func.count()).select_from(NotificationRow)
                                       .where(NotificationRow.event == "mail_reply")).scalar_one()
            db.session.remove()
        return int(count)

    # -- the player's side --------------------------------------------------------------------

    def send(self, message: EmailMessage | bytes, sender: str, to: str) -> None:
        with smtplib.SMTP("127.0.0.1", self.listener.port, timeout=30) as smtp:
            if isinstance(message, bytes):
                smtp.sendmail(sender, [to], message)
            else:
                smtp.send_message(message, sender, [to])


# -- a game of SEATS: Ann and Bjørn by email, and a bot ------------------------------------------


def new_game(world: MailWorld, **options: Any) -> str:
    """A game of ``SEATS``, its first emails sent."""
    game_id = world.create(SEATS, **options)
    world.run_worker()
    return game_id


def current(world: MailWorld, game_id: str) -> tuple[int, str, Game]:
    """The game's version, the address of the seat to move ("" for the bot), and its state."""
    version, _, state = world.game(game_id)
    return version, [ANN, BJORN, ""][state.current], state


def latest(world: MailWorld, address: str) -> EmailMessage:
    """The last email to ``address`` that can be answered."""
    messages = [m for m in world.sink.to(address) if m["Reply-To"]]
    assert messages, f"no email with a reply address reached {address}"
    return messages[-1]


def emails(world: MailWorld, address: str, event: str) -> list[EmailMessage]:
    """The emails to ``address`` about ``event`` (their X-DOS-Event)."""
    return [m for m in world.sink.to(address) if m["X-DOS-Event"] == event]
