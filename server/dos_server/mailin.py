"""``flask --app dos_server mail-in``: the SMTP (or LMTP) listener for play by email (issue #6).

Point an MX, or a Postfix transport (``transport_maps``: ``play.example.org smtp:[127.0.0.1]:2525``,
or ``lmtp:...`` with ``--lmtp``), at it. It accepts recipients ``play+<token>@MAIL_DOMAIN``
only (550 otherwise), refuses messages over ``INBOUND_MAX_BYTES`` (552), stores each message
and then processes it (:mod:`dos_server.services.inbound`). It answers 250 once the message
is stored; 451 (try again later) if it could not be.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click
from flask import Flask

from dos_server.extensions import db
from dos_server.tokens import MAIL_LOCAL_PREFIX

if TYPE_CHECKING:
    from aiosmtpd.controller import Controller

log = logging.getLogger("dos_server.mailin")


class MailInHandler:
    """The aiosmtpd handler (the CLI and the tests use this same class)."""

    def __init__(self, app: Flask) -> None:
        self.app = app

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any,  # noqa: N802
                          address: str, rcpt_options: list[str]) -> str:
        domain = str(self.app.config["MAIL_DOMAIN"]).lower()
        local, _, host = address.rpartition("@")
        if host.lower() != domain:
            return f"550 5.7.1 this server only accepts mail for {domain}"
        if not local.lower().startswith(MAIL_LOCAL_PREFIX):
            return "550 5.1.1 no such mailbox: reply to an email from a DOS game to play"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.deliver, bytes(raw), envelope.mail_from,
                                          list(envelope.rcpt_tos))

    def deliver(self, raw: bytes, mail_from: str | None, rcpt_to: Sequence[str]) -> str:
        """Store, answer for it, then process (blocking: runs in a thread)."""
        from dos_server.services import inbound

        with self.app.app_context():
            try:
                stored = inbound.store(raw, "smtp", mail_from, rcpt_to)
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
        MailInHandler(app),
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
        stopping = threading.Event()

        def _stop(signum: int, _frame: Any) -> None:
            stopping.set()

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        controller.start()
        click.echo(f"mail-in listening on {controller.hostname}:{controller.port} "
                   f"({'LMTP' if lmtp else 'SMTP'}) for play+...@{app.config['MAIL_DOMAIN']}")
        try:
            stopping.wait()
        finally:
            controller.stop()
