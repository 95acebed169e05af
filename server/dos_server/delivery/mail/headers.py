"""The headers of our emails: threading per game and seat, one-click unsubscribe (RFC 8058),
the reply address that plays, and the headers of automatic mail.

Headers are written as they must appear on the wire: the message policy allows lines up to
RFC 5322's 998 characters, so ``List-Unsubscribe`` stays the plain ``<https://...>,
<mailto:...>`` form that mail clients look for (folding at 78 turned it into RFC 2047
encoded-words, which no client reads as a link).

Automatic mail: every email carries ``Auto-Submitted: auto-generated`` (RFC 3834; answers to
a player's email ``auto-replied``) and ``X-Auto-Response-Suppress: All`` (Exchange: no
out-of-office or read receipts back). ``Precedence: bulk`` is not sent: it is not a standard,
RFC 3834 discourages it, and large providers file "bulk" mail as promotions while these are
personal, transactional emails.
"""

from __future__ import annotations

import email.policy
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate

from flask import current_app

# RFC 5322's hard line limit: long headers are never folded into encoded-words.
POLICY = email.policy.default.clone(max_line_length=998)


@dataclass(frozen=True)
class Headers:
    """What sets one email's headers apart from the others'."""

    thread: str | None = None  # the Message-ID it answers (In-Reply-To)
    references: str | None = None  # References, when more than ``thread``
    unsubscribe: str | None = None  # the RFC 8058 one-click URL
    unsubscribe_mailto: str | None = None  # the address that unsubscribes by email
    game: str | None = None  # X-DOS-Game
    game_list: bool = False  # a List-Id naming the game (needs ``game``)
    reply_to: str | None = None  # the address whose replies play (tokens.reply_address)
    auto_reply: bool = False  # an answer to a player's email (RFC 3834 auto-replied)


def domain() -> str:
    return str(current_app.config["MAIL_DOMAIN"])


def game_thread(game_id: str, seat: int) -> str:
    """The Message-ID every email of one game and seat refers to, so they thread together."""
    return f"<game-{game_id}.seat-{seat}@{domain()}>"


def digest_thread(thread: str) -> str:
    """The Message-ID the daily digests of one address refer to."""
    return f"<digest.{thread}@{domain()}>"


def new_message(subject: str, message_id: str, event: str, headers: Headers) -> EmailMessage:
    """An email with every header of ours set and no body yet."""
    message = EmailMessage(policy=POLICY)
    message["Subject"] = subject
    message["From"] = current_app.config["MAIL_FROM"]
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = f"<{message_id}@{domain()}>"
    if headers.thread:
        message["In-Reply-To"] = headers.thread
        message["References"] = headers.references or headers.thread
    if headers.unsubscribe:
        links = [f"<{headers.unsubscribe}>"]
        if headers.unsubscribe_mailto:
            links.append(f"<mailto:{headers.unsubscribe_mailto}>")
        message["List-Unsubscribe"] = ", ".join(links)
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    # RFC 3834: mail-in never answers automatic mail, so an answer of ours starts no loop.
    message["Auto-Submitted"] = "auto-replied" if headers.auto_reply else "auto-generated"
    message["X-Auto-Response-Suppress"] = "All"
    message["X-DOS-Event"] = event
    if headers.game and headers.game_list:
        message["List-Id"] = f"DOS game {headers.game} <{headers.game}.games.{domain()}>"
    if headers.game:
        message["X-DOS-Game"] = headers.game
    if headers.reply_to:
        message["Reply-To"] = headers.reply_to
    return message


__all__ = ["POLICY", "Headers", "digest_thread", "game_thread", "new_message"]
