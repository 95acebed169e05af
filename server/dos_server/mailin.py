"""``dos-server mail-in``: the SMTP (or LMTP) listener for play by email.

Point an MX, or a Postfix transport (``transport_maps``: ``play.example.org smtp:[127.0.0.1]:2525``,
or ``lmtp:...`` with ``--lmtp``), at it. At RCPT time it accepts only the addresses it can
act on: ``play+<token>@MAIL_DOMAIN`` whose token verifies and whose game exists, and the
``unsubscribe+<token>@MAIL_DOMAIN`` of List-Unsubscribe; everything else gets 550 there, so
a forged sender is never answered (no backscatter). It refuses messages over
``INBOUND_MAX_BYTES`` (552), stores each message once per accepted recipient (deduplicated by
Message-ID and recipient) and then processes it (:mod:`dos_server.services.inbound`).

After DATA, SMTP answers once (250 when every recipient's copy is stored, else 451); LMTP
answers once per accepted recipient, in RCPT order (RFC 2033), so an MTA delivering a
message to two ``play+`` addresses gets both answers and acts on each.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click
from flask import Flask

from dos_server import tokens
from dos_server.extensions import db

if TYPE_CHECKING:
    from aiosmtpd.controller import Controller

log = logging.getLogger("dos_server.mailin")


class MailInHandler:
    """The aiosmtpd handler (the CLI and the tests use this same class)."""

    def __init__(self, app: Flask, lmtp: bool = False) -> None:
        self.app = app
        self.lmtp = lmtp

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any,  # noqa: N802
                          address: str, rcpt_options: list[str]) -> str:
        loop = asyncio.get_running_loop()
        answer = await loop.run_in_executor(None, self.check_recipient, address)
        if answer.startswith("250"):
            envelope.rcpt_tos.append(address)
        return answer

    def check_recipient(self, address: str) -> str:
        """250 for an address this server acts on, 550 (with the reason) for any other."""
        domain = str(self.app.config["MAIL_DOMAIN"]).lower()
        local, _, host = address.rpartition("@")
        if host.lower() != domain:
            return f"550 5.7.1 this server only accepts mail for {domain}"
        lowered = local.lower()
        with self.app.app_context():
            try:
                if lowered.startswith(tokens.MAIL_LOCAL_PREFIX):
                    claims = tokens.read_mail(local[len(tokens.MAIL_LOCAL_PREFIX):])
                    game_id = claims.game_id if claims is not None else None
                elif lowered.startswith(tokens.UNSUBSCRIBE_LOCAL_PREFIX):
                    found = tokens.read_unsubscribe_mail(
                        local[len(tokens.UNSUBSCRIBE_LOCAL_PREFIX):])
                    game_id = found[0] if found is not None else None
                else:
                    return "550 5.1.1 no such mailbox: reply to an email from a DOS game to play"
                if game_id is None:
                    return "550 5.1.1 no such mailbox: this reply address is not valid"
                if not _game_exists(game_id):
                    return "550 5.1.1 no such mailbox: this game is gone"
            except Exception:
                log.exception("could not check a recipient")
                return "451 4.3.0 could not check this address; try again later"
            finally:
                db.session.remove()
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        loop = asyncio.get_running_loop()
        answers = await loop.run_in_executor(None, self.deliver, bytes(raw), envelope.mail_from,
                                             list(envelope.rcpt_tos))
        if self.lmtp:
            return "\r\n".join(answers)  # one answer per accepted recipient (RFC 2033)
        failed = [a for a in answers if not a.startswith("250")]
        return failed[0] if failed else answers[0]

    def deliver(self, raw: bytes, mail_from: str | None, rcpt_to: Sequence[str]) -> list[str]:
        """Store and process the message for each recipient; one answer per recipient."""
        return [self.deliver_one(raw, mail_from, rcpt) for rcpt in rcpt_to] or [
            "554 5.5.1 no valid recipients"]

    def deliver_one(self, raw: bytes, mail_from: str | None, rcpt: str) -> str:
        """Store, answer for it, then process (blocking: runs in a thread)."""
        from dos_server.services import inbound

        with self.app.app_context():
            try:
                stored = inbound.store(raw, "lmtp" if self.lmtp else "smtp", mail_from, [rcpt])
            except Exception:
                log.exception("could not store an inbound message")
                db.session.remove()
                return "451 4.3.0 could not store the message; try again later"
            try:
                if not stored.duplicate:
                    inbound.process(stored.id)
            except Exception:  # stored: the worker processes it later; never bounce it (5xx)
                log.exception("inbound message #%s stored, processing deferred", stored.id)
            finally:
                db.session.remove()
        return f"250 2.0.0 OK: message #{stored.id} received"


def _game_exists(game_id: str) -> bool:
    from dos_server.models import GameRow

    return db.session.get(GameRow, game_id) is not None


def make_controller(app: Flask, host: str | None = None, port: int | None = None,
                    lmtp: bool = False) -> Controller:
    """An aiosmtpd controller (not started) with the mail-in handler and the size limit."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.lmtp import LMTP

    class LmtpController(Controller):
        def factory(self) -> LMTP:
            return LMTP(self.handler, **self.SMTP_kwargs)

    kind = LmtpController if lmtp else Controller
    return kind(
        MailInHandler(app, lmtp),
        hostname=host or str(app.config["MAILIN_HOST"]),
        port=int(port or app.config["MAILIN_PORT"]),
        data_size_limit=int(app.config["INBOUND_MAX_BYTES"]),
        server_hostname=str(app.config["MAIL_DOMAIN"]),
        ident="DOS by mail mail-in",
    )


def register_cli(app: Flask) -> None:
    @app.cli.command("mail-in")
    @click.option("--host", default=None, help="Listen address (default: MAILIN_HOST).")
    @click.option("--port", type=int, default=None, help="Port (default: MAILIN_PORT).")
    @click.option("--lmtp", is_flag=True, help="Speak LMTP instead of SMTP (for Postfix).")
    def mail_in_command(host: str | None, port: int | None, lmtp: bool) -> None:
        """Receive players' emailed moves (SMTP/LMTP) for MAIL_DOMAIN."""
        from dos_server.services import inbound

        with app.app_context():  # messages a crash left unprocessed
            inbound.process_pending(older_than=0)
            db.session.remove()
        controller = make_controller(app, host, port, lmtp)
        # SIGINT/SIGTERM are taken with sigwait, not by a handler: a handler setting a
        # threading.Event deadlocks when a second signal lands while the main thread holds the
        # Event's lock (Ctrl-C, then make run's SIGTERM). Blocked before the listener starts,
        # so its threads never take them either.
        stop_signals = {signal.SIGINT, signal.SIGTERM}
        signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
        controller.start()
        click.echo(f"mail-in listening on {controller.hostname}:{controller.port} "
                   f"({'LMTP' if lmtp else 'SMTP'}) for play+...@{app.config['MAIL_DOMAIN']}")
        try:
            signal.sigwait(stop_signals)
        finally:
            controller.stop()

    @app.cli.group("inbound")
    def inbound_group() -> None:
        """Inbound emails (play by email): list the failed ones, replay one."""

    @inbound_group.command("failed")
    def failed_command() -> None:
        """List the messages whose processing failed on an error (after every retry)."""
        from dos_server.services import inbound

        with app.app_context():
            rows = inbound.failed_messages()
            if not rows:
                click.echo("no failed inbound messages")
            for row in rows:
                click.echo(f"{row.id}\t{row.received_at:%Y-%m-%d %H:%M}\t{row.source}\t"
                           f"from {row.mail_from or '?'}\tgame {row.game_id or '?'}\t"
                           f"{row.attempts} tries\t{(row.error or '')[:120]}")
            db.session.remove()

    @inbound_group.command("replay")
    @click.argument("message_id", type=int)
    def replay_command(message_id: int) -> None:
        """Process a failed message again (its answer goes out as usual)."""
        from dos_server.services import inbound

        with app.app_context():
            status = inbound.replay(message_id)
            db.session.remove()
        click.echo(f"inbound message #{message_id}: {status}")
        if status in ("missing", "received", "failed"):
            raise SystemExit(1)
