"""Behind a real MTA, as the README tells operators to run it.

Debian's Postfix (a private instance configured with the README's recipe, started without
systemd), the real ``dos-server worker`` and ``dos-server mail-in`` processes, over SMTP and
over LMTP: notifications reach a player's mailbox through Postfix, a reply sent with
Postfix's ``sendmail`` applies the move, and a message to an unknown play address is refused
at RCPT. CI (``.ci/run``) installs Postfix; elsewhere the test needs root and the package
(``DOS_REQUIRE_POSTFIX=1`` turns a missing one into a failure instead of a skip).
"""

from __future__ import annotations

import email
import email.policy
import os
import shutil
import smtplib
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path

import flask_migrate
import pytest
import sqlalchemy as sa
from flask import Flask
from postfix_helpers import PLAYERS, Postfix, available

from dos_engine import Game
from dos_server import create_app
from dos_server.extensions import db
from dos_server.models import GameRow, InboundMessageRow
from testkit import free_port, start_by_host, wait_for

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FLASK = str(Path(sys.executable).parent / "flask")
SECRET = "postfix-test-secret"
DOMAIN = "play.test"
DORA = f"dora@{PLAYERS}"


@pytest.fixture
def postfix_ok() -> None:
    reason = available()
    if reason is not None:
        if os.environ.get("DOS_REQUIRE_POSTFIX"):
            pytest.fail(reason)
        # The one allowed skip: running a second Postfix needs root and Debian's package, which
        # a developer's machine may lack. CI (.ci/run, as root) sets DOS_REQUIRE_POSTFIX, so
        # there a missing Postfix fails instead.
        pytest.skip(reason)


def _process(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen([FLASK, "--app", "dos_server", *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT, cwd=log.parent)


@pytest.fixture
def stack(postfix_ok: None, db_url: str, tmp_path: Path,
          request: pytest.FixtureRequest) -> Iterator[tuple[Flask, Postfix, Callable[[], str]]]:
    lmtp = bool(request.param)
    mailin_port, smtp_port = free_port(), free_port()
    # Postfix's users must reach its folders: not under pytest's private (0700) tmp_path.
    home = Path(tempfile.mkdtemp(prefix="dos-postfix-"))
    home.chmod(0o755)
    postfix = Postfix(home, smtp_port, DOMAIN, mailin_port, lmtp)
    postfix.setup(["dora"]).start()
    app = create_app({"TESTING": True, "SECRET_KEY": SECRET, "SQLALCHEMY_DATABASE_URI": db_url,
                      "RATELIMIT_ENABLED": False, "INSTANCE_PATH": str(tmp_path / "instance"),
                      "MAIL_DOMAIN": DOMAIN, "MAIL_FROM": f"DOS by mail <dos@{DOMAIN}>",
                      "SMTP_HOST": "127.0.0.1", "SMTP_PORT": smtp_port,
                      "SMTP_SECURITY": "none"})
    with app.app_context():
        flask_migrate.upgrade()
        db.session.remove()
    env = {**os.environ, "DATABASE_URL": db_url, "SECRET_KEY": SECRET,
           "DOS_INSTANCE_PATH": str(tmp_path / "instance"), "DOS_MAIL_DOMAIN": DOMAIN,
           "DOS_MAIL_FROM": f"DOS by mail <dos@{DOMAIN}>", "DOS_SMTP_HOST": "127.0.0.1",
           "DOS_SMTP_PORT": str(smtp_port), "DOS_SMTP_SECURITY": "none",
           "DOS_WORKER_POLL_SECONDS": "0.1",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "client")])}
    mailin = _process(["mail-in", "--port", str(mailin_port), *(["--lmtp"] if lmtp else [])],
                      env, tmp_path / "mailin.log")
    worker = _process(["worker"], env, tmp_path / "worker.log")

    def logs() -> str:
        return "\n".join(f"--- {name}\n{text}" for name, text in [
            ("postfix", postfix.log()),
            ("mail-in", (tmp_path / "mailin.log").read_text(errors="replace")),
            ("worker", (tmp_path / "worker.log").read_text(errors="replace"))])

    try:
        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", mailin_port), timeout=1).close()
            except OSError:
                return False
            return True

        wait_for(listening, 30, "mail-in to listen", logs)
        yield app, postfix, logs
    finally:
        for process in (mailin, worker):
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        postfix.stop()
        shutil.rmtree(home, ignore_errors=True)
        with app.app_context():
            db.session.remove()
            db.engine.dispose()


def _inbox(postfix: Postfix) -> list[EmailMessage]:
    out = []
    for raw in postfix.mailbox("dora"):
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        out.append(message)
    return out


def _game(app: Flask, game_id: str) -> tuple[int, Game]:
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        assert row.state is not None
        out = (row.version, Game.from_dict(row.state))
        db.session.remove()
    return out


@pytest.mark.parametrize("stack", [False, True], ids=["smtp", "lmtp"], indirect=True)
def test_the_loop_through_postfix(stack: tuple[Flask, Postfix, Callable[[], str]]) -> None:
    app, postfix, logs = stack
    answer = app.test_client().post("/api/games", json={
        "seats": [{"name": "dora", "email": DORA}, {"bot": "greedy"}]})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    game_id = answer.get_json()["id"]
    start_by_host(app.test_client(), answer.get_json())  # dora plays from her emails

    def turn_emails() -> list[EmailMessage]:
        return [m for m in _inbox(postfix) if m["X-DOS-Event"] == "your_turn"]

    wait_for(lambda: bool(turn_emails()), 60, "the your-turn email in dora's mailbox", logs)
    turn = turn_emails()[-1]
    assert turn["List-Unsubscribe"].startswith("<https://") or \
        turn["List-Unsubscribe"].startswith("<http://")
    version, _ = _game(app, game_id)

    reply = EmailMessage()
    reply["From"] = f"Dora <{DORA}>"
    reply["To"] = str(turn["Reply-To"])
    reply["Subject"] = f"Re: {turn['Subject']}"
    reply["Message-ID"] = email.utils.make_msgid(domain=PLAYERS)
    reply["In-Reply-To"] = str(turn["Message-ID"])
    reply.set_content("1\n\nDora\n")
    postfix.sendmail(DORA, bytes(reply))
    wait_for(lambda: _game(app, game_id)[0] > version, 60, "the emailed move to apply", logs)
    wait_for(lambda: any(m["X-DOS-Event"] == "mail_reply" for m in _inbox(postfix)), 60,
          "the answer in dora's mailbox", logs)
    answer_mail = next(m for m in _inbox(postfix) if m["X-DOS-Event"] == "mail_reply")
    assert answer_mail["In-Reply-To"] == reply["Message-ID"]
    with app.app_context():
        sources = db.session.execute(sa.select(InboundMessageRow.source,
                                               InboundMessageRow.outcome)).all()
        db.session.remove()
    assert [tuple(s) for s in sources] == [("lmtp" if postfix.lmtp else "smtp", "applied")]

    # Unknown play addresses are refused at RCPT, before Postfix takes the message.
    forged = str(turn["Reply-To"]).replace("@", "x@")
    with smtplib.SMTP("127.0.0.1", postfix.port, timeout=60) as smtp:
        smtp.ehlo()
        smtp.mail(DORA)
        for address in (f"someone@{DOMAIN}", forged, f"play+nothing.1.1.aa@{DOMAIN}"):
            code, text = smtp.rcpt(address)
            assert code == 550, (address, code, text, logs()[-3000:])
        code, text = smtp.rcpt(str(turn["Reply-To"]))
        assert code == 250, (code, text, logs()[-3000:])
        smtp.rset()
