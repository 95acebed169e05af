"""What the worker calls for an email row: read what its builder needs from the database,
build, render, send.

The database is read here and only here (in a short read, rolled back: the worker holds no
transaction while it talks SMTP); builders get the values as :class:`~.builders.Facts`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from email.message import EmailMessage
from typing import Any

from dos_server.delivery import DeliveryError
from dos_server.delivery.mail import builders, headers, render, smtp
from dos_server.extensions import db
from dos_server.models import LoginCodeRow


def _login_facts(payload: Mapping[str, Any]) -> builders.Facts:
    row = db.session.get(LoginCodeRow, payload["login_id"])
    nonce = row.nonce if row is not None and row.used_at is None else None
    db.session.rollback()
    if nonce is None:  # used or deleted before the worker got to it: nothing worth sending
        raise DeliveryError("the sign-in request was used or withdrawn", permanent=True)
    return builders.Facts(login_nonce=nonce)


# The kinds whose builder needs something from the database, and how it is read.
READERS: dict[str, Callable[[Mapping[str, Any]], builders.Facts]] = {
    "login_code": _login_facts,
}


def build(payload: Mapping[str, Any], message_id: str) -> EmailMessage:
    """The email of one outbox row, every header but ``To`` set."""
    kind = payload["event"]
    builder = builders.KINDS.get(kind)
    if builder is None:
        raise DeliveryError(f"no email is written for {kind!r} events", permanent=True)
    reader = READERS.get(kind)
    letter = builder(payload, reader(payload) if reader is not None else builders.Facts())
    parts = render.render(kind, letter.context)
    message = headers.new_message(parts.subject, message_id, kind, letter.headers)
    message.set_content(parts.text)
    message.add_alternative(parts.html, subtype="html")
    return message


def send(target: str, payload: dict[str, Any], message_id: str,
         timeout: float | None = None) -> None:
    """Deliver one email row: over SMTP, or (no SMTP_HOST) to the log and the instance folder.
    ``timeout`` caps each SMTP operation (the worker keeps a send inside its lease)."""
    message = build(payload, message_id)
    message["To"] = target
    smtp.send_message(message, message_id, timeout)


__all__ = ["READERS", "build", "send"]
