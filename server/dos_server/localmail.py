"""``dos-server mail list`` and ``dos-server mail reply``: play by email on one machine.

With no ``SMTP_HOST`` the worker writes every email to ``<instance>/outbox/NNNN-<id>.eml``
(numbered in the order written). ``mail list`` shows them; ``mail reply N "3"`` answers email N
as a mail client would (To its Reply-To, In-Reply-To and References, "Re:" subject, the text on
top and the original quoted below an attribution line) and hands it to the running mail-in
listener over SMTP, or with ``--direct`` straight to the store as ``POST /inbound/email`` does.
It then says what the server made of it and, while a worker runs, shows the answer it wrote.
"""

from __future__ import annotations

import email.policy
import os
import re
import smtplib
import time
from dataclasses import dataclass
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import formatdate, getaddresses, make_msgid
from pathlib import Path

import click
from flask import Flask, current_app
from sqlalchemy import select

from dos_server import i18n
from dos_server.extensions import db
from dos_server.models import InboundMessageRow, NotificationRow
from dos_server.services.words import _

NUMBERED = re.compile(r"(\d+)-[A-Za-z0-9_.]+\.eml")
ANSWER_POLL_SECONDS = 0.2


@dataclass(frozen=True)
class StoredEmail:
    number: int
    path: Path
    to: str
    subject: str
    event: str


def outbox_folder() -> Path:
    """Where the worker writes emails when no SMTP_HOST is set (delivery/mail/smtp.py)."""
    return Path(current_app.instance_path) / "outbox"


def read_email(path: Path) -> EmailMessage:
    message = BytesParser(policy=email.policy.default).parsebytes(path.read_bytes())
    assert isinstance(message, EmailMessage)
    return message


def stored_emails(folder: Path) -> list[StoredEmail]:
    """The numbered emails of the outbox folder, oldest first."""
    found = []
    for path in folder.glob("*.eml") if folder.is_dir() else []:
        match = NUMBERED.fullmatch(path.name)
        if match is None:
            continue
        headers = BytesParser(policy=email.policy.default).parsebytes(
            path.read_bytes(), headersonly=True)
        found.append(StoredEmail(int(match.group(1)), path, str(headers["To"] or ""),
                                 str(headers["Subject"] or ""),
                                 str(headers["X-DOS-Event"] or "")))
    return sorted(found, key=lambda e: e.number)


def find_email(folder: Path, which: str) -> Path:
    """An email named by its number in the outbox (``3``, ``0003``) or by its file's path."""
    if which.isdigit():
        number = int(which)
        for stored in stored_emails(folder):
            if stored.number == number:
                return stored.path
        raise click.UsageError(_("There is no email number %(number)s in %(folder)s: "
                                 "`dos-server mail list` shows the emails there.",
                                 number=number, folder=folder))
    path = Path(which)
    if not path.is_file():
        raise click.UsageError(_("%(file)s is neither an email's number nor a file.",
                                 file=which))
    return path


def build_reply(original: EmailMessage, text: str, sender: str | None = None) -> EmailMessage:
    """The reply a mail client writes: ``text`` on top, the original's text quoted below."""
    reply_to = str(original["Reply-To"] or original["From"] or "")
    to = [address for _name, address in getaddresses([reply_to]) if address]
    own = [address for _name, address in getaddresses([str(original["To"] or "")]) if address]
    sender = sender or (own[0] if own else None)
    if not to or not sender:
        raise click.UsageError(_("This email names no address to reply to."))
    subject = str(original["Subject"] or "")
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to[0]
    message["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    original_id = str(original["Message-ID"] or "").strip()
    if original_id:
        message["In-Reply-To"] = original_id
        message["References"] = " ".join(
            [*str(original["References"] or "").split()[-10:], original_id])
    body = original.get_body(preferencelist=("plain",))
    quoted = str(body.get_content()) if isinstance(body, EmailMessage) else ""
    # The attribution line of English mail clients, which the reader (mailtext.py) skips.
    attribution = f"On {original['Date'] or 'an earlier day'}, {original['From'] or ''} wrote:"
    message.set_content(f"{text}\n\n{attribution}\n"
                        + "".join(f"> {line}\n" for line in quoted.splitlines()))
    return message


def send_to_listener(message: EmailMessage, host: str, port: int) -> str:
    """Hand the reply to the mail-in listener as an MTA would; its answer to DATA."""
    sender, recipient = str(message["From"]), str(message["To"])
    try:
        with smtplib.SMTP(host, port, timeout=30) as smtp:
            smtp.ehlo()
            code, answer = smtp.mail(sender)
            if code == 250:
                code, answer = smtp.rcpt(recipient)
            if code in (250, 251):
                code, answer = smtp.data(message.as_bytes(policy=email.policy.SMTP))
    except (OSError, smtplib.SMTPException) as error:
        raise click.ClickException(_(
            "No mail-in listener answers on %(host)s:%(port)s (%(error)s): start it with "
            "`dos-server mail-in` (`make run` does), or use --direct.",
            host=host, port=port, error=error)) from None
    said = f"{code} {answer.decode('utf-8', 'replace')}"
    if code != 250:
        raise click.ClickException(_("The mail-in listener refused the reply: %(answer)s",
                                     answer=said))
    return said


def store_directly(message: EmailMessage) -> int:
    """Store and process the reply in this process, as ``POST /inbound/email`` does."""
    from dos_server.services import inbound

    stored = inbound.store(message.as_bytes(policy=email.policy.SMTP), "cli",
                           str(message["From"]), [str(message["To"])])
    if not stored.duplicate:
        inbound.process(stored.id)
    return stored.id


def wait_for_answer(row_id: int, seconds: float) -> tuple[bool, Path | None]:
    """Whether the server answers inbound message ``row_id`` and, once the worker wrote it
    (within ``seconds``), the outbox file of that answer."""
    ends = time.monotonic() + seconds
    while True:
        row = db.session.execute(select(NotificationRow).where(
            NotificationRow.dedupe_key == f"inbound:{row_id}:reply")).scalar_one_or_none()
        db.session.rollback()  # the next look sees the worker's commit
        if row is None:
            return False, None
        if row.status == "sent":
            found = sorted(outbox_folder().glob(f"*-{row.message_id}.eml"))
            return True, found[0] if found else None
        if row.status in ("dead", "dropped") or time.monotonic() >= ends:
            return True, None
        time.sleep(ANSWER_POLL_SECONDS)


def register_cli(app: Flask) -> None:
    @app.cli.group("mail")
    def mail_group() -> None:
        """The emails of this machine's outbox (no SMTP_HOST): list them, answer one."""

    @mail_group.command("list")
    @click.option("--to", "to", default=None, help="Only the emails to this address.")
    def list_command(to: str | None) -> None:
        """Every email the worker wrote to the outbox folder: number, to, subject."""
        with app.app_context(), i18n.in_language(os.environ.get("LANG")):
            folder = outbox_folder()
            shown = [e for e in stored_emails(folder)
                     if to is None or to.strip().lower() in e.to.lower()]
            if not shown:
                click.echo(_("No emails in %(folder)s yet.", folder=folder))
            for stored in shown:
                click.echo(f"{stored.number:>4}  {stored.to:<28}  {stored.subject}")

    @mail_group.command("reply")
    @click.argument("which", metavar="NUMBER-OR-FILE")
    @click.argument("text")
    @click.option("--from", "sender", default=None,
                  help="The sender (default: the address the email was sent to).")
    @click.option("--direct", is_flag=True,
                  help="Store the reply in the database, without the mail-in listener.")
    @click.option("--host", default=None, help="The mail-in listener (default: MAILIN_HOST).")
    @click.option("--port", type=int, default=None, help="Its port (default: MAILIN_PORT).")
    @click.option("--wait", "wait", type=click.FloatRange(min=0), default=30, show_default=True,
                  help="Seconds to wait for the worker to write the answer (0: do not wait).")
    def reply_command(which: str, text: str, sender: str | None, direct: bool,
                      host: str | None, port: int | None, wait: float) -> None:
        """Answer a stored email as a mail client would, e.g. `dos-server mail reply 3 "1"`."""
        with app.app_context(), i18n.in_language(os.environ.get("LANG")):
            message = build_reply(read_email(find_email(outbox_folder(), which)), text, sender)
            click.echo(_("Replying to %(to)s from %(sender)s: %(subject)s", to=message["To"],
                         sender=message["From"], subject=message["Subject"]))
            if direct:
                row_id = store_directly(message)
            else:
                where = (host or str(app.config["MAILIN_HOST"]),
                         port or int(app.config["MAILIN_PORT"]))
                said = send_to_listener(message, *where)
                click.echo(_("The mail-in listener answered: %(answer)s", answer=said))
                found = re.search(r"message #(\d+)", said)
                if found is None:
                    return
                row_id = int(found.group(1))
            row = db.session.get(InboundMessageRow, row_id)
            if row is not None:
                click.echo(_("Inbound message #%(id)s: %(status)s (%(outcome)s)", id=row_id,
                             status=row.status, outcome=row.outcome or "-"))
            db.session.rollback()
            answered, answer = wait_for_answer(row_id, wait)
            if not answered:
                click.echo(_("The server sends no answer to this message."))
                return
            if answer is None:
                click.echo(_("No answer in the outbox yet: with a worker running "
                             "(`make run` starts one), `dos-server mail list` shows it."))
                return
            shown = answer.relative_to(Path.cwd()) if answer.is_relative_to(Path.cwd()) \
                else answer
            click.echo(_("The answer: %(file)s", file=shown))
            body = read_email(answer).get_body(preferencelist=("plain",))
            if isinstance(body, EmailMessage):
                click.echo(str(body.get_content()).rstrip())
            db.session.remove()


__all__ = ["build_reply", "find_email", "register_cli", "stored_emails"]
