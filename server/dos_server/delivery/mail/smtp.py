"""Sending a built email: over SMTP as configured (security, login, timeouts), or, with no
``SMTP_HOST``, to the log and a ``.eml`` file in the instance folder's ``outbox``."""

from __future__ import annotations

import fcntl
import logging
import smtplib
import ssl
from email.message import EmailMessage
from pathlib import Path

from flask import current_app

from dos_server.delivery import DeliveryError

log = logging.getLogger("dos_server.email")


def send_message(message: EmailMessage, message_id: str, timeout: float | None = None) -> None:
    """Deliver ``message`` (its ``To`` set) once; failures become :class:`DeliveryError`.

    ``timeout``: at most this many seconds per SMTP operation (the worker keeps a send
    inside its lease), besides ``SMTP_TIMEOUT``.
    """
    config = current_app.config
    target = message["To"]
    host = config.get("SMTP_HOST")
    if not host:
        folder = Path(current_app.instance_path) / "outbox"
        path = write_to_outbox(folder, message_id, bytes(message))
        log.info("email written to %s (no SMTP_HOST set): %s to %s",
                 path, message["Subject"], target)
        return
    limit = float(config["SMTP_TIMEOUT"])
    with connect(timeout=limit if timeout is None else min(limit, timeout)) as smtp:
        try:
            smtp.send_message(message)
        except smtplib.SMTPRecipientsRefused as error:
            raise DeliveryError(f"the mail server refused {target}: {error}",
                                permanent=True) from None
        except (OSError, smtplib.SMTPException) as error:
            raise DeliveryError(f"SMTP {host}:{config['SMTP_PORT']}: {error}") from None


def write_to_outbox(folder: Path, message_id: str, content: bytes) -> Path:
    """``folder/NNNN-<message_id>.eml``, numbered in the order written so that a person finds
    the latest (``dos-server mail list``); a retried row keeps its file and number."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".numbering.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # workers in other processes number one at a time
        earlier = sorted(folder.glob(f"[0-9]*-{message_id}.eml"))
        if earlier:
            path = earlier[0]
        else:
            numbers = [int(p.name.partition("-")[0]) for p in folder.glob("[0-9]*-*.eml")
                       if p.name.partition("-")[0].isdigit()]
            path = folder / f"{max(numbers, default=0) + 1:04d}-{message_id}.eml"
        path.write_bytes(content)
    return path


class connect:  # noqa: N801 - used as a context manager like smtplib.SMTP
    """An SMTP session as configured (security, login); failures become DeliveryError."""

    def __init__(self, timeout: float | None = None) -> None:
        self.config = current_app.config
        self.timeout = float(self.config["SMTP_TIMEOUT"]) if timeout is None else timeout
        self.smtp: smtplib.SMTP | None = None

    def _where(self) -> str:
        return f"SMTP {self.config['SMTP_HOST']}:{self.config['SMTP_PORT']}"

    def __enter__(self) -> smtplib.SMTP:
        config = self.config
        host, port = str(config["SMTP_HOST"]), int(config["SMTP_PORT"])
        security = str(config["SMTP_SECURITY"]).lower()
        try:
            # SMTP_CA_FILE: trust a private CA (a self-hosted relay) besides the system's.
            context = ssl.create_default_context(cafile=config.get("SMTP_CA_FILE") or None)
            if security == "ssl":
                self.smtp = smtplib.SMTP_SSL(host, port, timeout=self.timeout, context=context)
            else:
                self.smtp = smtplib.SMTP(host, port, timeout=self.timeout)
            if security == "starttls":
                self.smtp.ehlo()
                if not self.smtp.has_extn("starttls"):
                    raise DeliveryError(
                        f"{self._where()} offers no STARTTLS, and DOS_SMTP_SECURITY is "
                        "starttls: for a relay on this host set DOS_SMTP_SECURITY=none")
                self.smtp.starttls(context=context)
            if config.get("SMTP_USERNAME"):
                self.smtp.login(config["SMTP_USERNAME"], config.get("SMTP_PASSWORD") or "")
        except DeliveryError:
            self._close()
            raise
        except (OSError, smtplib.SMTPException) as error:
            self._close()
            raise DeliveryError(f"{self._where()}: {error}") from None
        return self.smtp

    def _close(self) -> None:
        if self.smtp is not None:
            try:
                self.smtp.quit()
            except (OSError, smtplib.SMTPException):
                self.smtp.close()
            self.smtp = None

    def __exit__(self, *exc: object) -> None:
        self._close()


__all__ = ["connect", "send_message", "write_to_outbox"]
