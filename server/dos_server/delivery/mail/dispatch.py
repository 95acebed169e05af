"""What the worker calls for an email row: read what its builder needs from the database,
build, render, send.

The database is read here and only here (in a short read, rolled back: the worker holds no
transaction while it talks SMTP); builders get the values as :class:`~.builders.Facts`.

Every email is built and rendered in its reader's language (``force_locale``), whatever the
request or worker that sends it: the payload's ``language`` (the seat's, written with the row),
else, for the emails of signing in and rows written before payloads had one, the seat's or the
identity's (by the address) language, read here; English when none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from email.message import EmailMessage
from typing import Any

from dos_server.delivery import DeliveryError
from dos_server.delivery.mail import builders, headers, render, smtp
from dos_server.extensions import db
from dos_server.models import IdentityRow, LoginCodeRow, SeatRow
from dos_server.validation import email_key


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


# The kinds whose rows are written without the reader's language (services/account.py): it is
# read here, the seat's or the address's identity's.
def language_of(payload: Mapping[str, Any], target: str | None = None) -> str | None:
    """The language the reader of this row reads: the payload's; for the emails of signing
    in, and for a row written before payloads carried one, the seat's (a game and seat
    named), else the identity's of the address (``target``, or the payload's ``address``);
    None for none (English)."""
    if "language" in payload:
        language = payload.get("language")
        return language if isinstance(language, str) else None
    found: str | None = None
    game_id, seat = payload.get("game_id"), payload.get("seat")
    if isinstance(game_id, str) and isinstance(seat, int):
        found = db.session.execute(
            db.select(SeatRow.language).where(SeatRow.game_id == game_id, SeatRow.index == seat)
        ).scalar_one_or_none()
    address = target or payload.get("address")
    if found is None and isinstance(address, str) and "@" in address:
        try:
            key = email_key(address)
        except ValueError:
            key = None
        identity = db.session.get(IdentityRow, key) if key else None
        found = identity.language if identity is not None else None
    db.session.rollback()  # the worker holds no transaction while it talks SMTP
    return found


def build(payload: Mapping[str, Any], message_id: str,
          target: str | None = None) -> EmailMessage:
    """The email of one outbox row in its reader's language, every header but ``To`` set."""
    kind = payload["event"]
    builder = builders.KINDS.get(kind)
    if builder is None:
        raise DeliveryError(f"no email is written for {kind!r} events", permanent=True)
    reader = READERS.get(kind)
    facts = reader(payload) if reader is not None else builders.Facts()
    with render.in_language(language_of(payload, target)):
        letter = builder(payload, facts)
        parts = render.render(kind, letter.context)
    message = headers.new_message(parts.subject, message_id, kind, letter.headers)
    message.set_content(parts.text)
    message.add_alternative(parts.html, subtype="html")
    return message


def send(target: str, payload: dict[str, Any], message_id: str,
         timeout: float | None = None) -> None:
    """Deliver one email row: over SMTP, or (no SMTP_HOST) to the log and the instance folder.
    ``timeout`` caps each SMTP operation (the worker keeps a send inside its lease)."""
    message = build(payload, message_id, target)
    message["To"] = target
    smtp.send_message(message, message_id, timeout)


__all__ = ["READERS", "build", "language_of", "send"]
