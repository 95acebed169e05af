"""Email notifications: plain text and HTML, threaded per game and seat, one-click unsubscribe."""

from __future__ import annotations

import html
import logging
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any

from flask import current_app

log = logging.getLogger("dos_server.email")

SUBJECTS = {
    "your_turn": "Your turn in DOS game {game}",
    "reminder": "Reminder: your turn in DOS game {game} is running out",
    "timed_out": "Your turn in DOS game {game} timed out",
    "caught": "You were caught without calling DOS in game {game}",
    "round_over": "Round over in DOS game {game}",
    "game_over": "DOS game {game} is over",
    "invited": "You are invited to a game of DOS ({game})",
    "undeliverable": "We could not reach you for DOS game {game}",
}


class DeliveryError(Exception):
    """A failed attempt; ``retry_after`` (seconds) when the other side asked for a pause."""

    def __init__(self, message: str, status: int | None = None,
                 retry_after: float | None = None, permanent: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.permanent = permanent


def thread_id(game_id: str, seat: int, domain: str) -> str:
    """The Message-ID every email of one game and seat refers to, so they thread together."""
    return f"<game-{game_id}.seat-{seat}@{domain}>"


def build(payload: dict[str, Any], message_id: str) -> EmailMessage:
    if payload["event"] == "digest":
        return _build_digest(payload, message_id)
    if payload["event"] == "mail_reply":  # the answer to a player's email (issue #6)
        from dos_server.delivery.mailreply import build_reply

        return build_reply(payload, message_id)
    domain = current_app.config["MAIL_DOMAIN"]
    game = payload["game_id"]
    message = new_message(
        SUBJECTS.get(payload["event"], "DOS game {game}").format(game=game), message_id,
        payload["event"], thread=thread_id(game, payload["seat"], domain),
        unsubscribe=payload["unsubscribe"],
    )
    message["List-Id"] = f"DOS game {game} <{game}.games.{domain}>"
    message["X-DOS-Game"] = game
    if payload.get("reply_to"):
        message["Reply-To"] = payload["reply_to"]
    message.set_content(text_body(payload))
    message.add_alternative(html_body(payload), subtype="html")
    return message


def _summary(payload: dict[str, Any]) -> list[str]:
    event = payload["event"]
    data = payload.get("data") or {}
    names = payload["names"]
    if event == "your_turn":
        return ["It is your turn."]
    if event == "reminder":
        return [f"Your turn is still waiting; the deadline is {payload['deadline']}."]
    if event == "timed_out":
        return ["Your turn ran out of time, so it was played for you."]
    if event == "caught":
        return ["You ended a turn on two cards without calling DOS and were caught: "
                "you drew two cards."]
    if event == "round_over":
        return ["The round is over. Scores: " + ", ".join(
            f"{names[i]} {s}" for i, s in enumerate(data.get("scores", [])))]
    if event == "game_over":
        winner = data.get("winner")
        return [f"The game is over: {names[winner] if winner is not None else '?'} won. Scores: "
                + ", ".join(f"{names[i]} {s}" for i, s in enumerate(data.get("scores", [])))]
    if event == "invited":
        return ["You are invited to a game of DOS.", f"Join with: {data.get('join')}"]
    if event == "mail_reply":
        return list(data.get("lines", []))
    if event == "undeliverable":
        return [f"We could not deliver your {data.get('channel')} notifications "
                f"({data.get('target')}): {data.get('error')}. Check the address."]
    return []


def text_body(payload: dict[str, Any]) -> str:
    lines = [f"Hello {payload.get('name') or ''},", "", *_summary(payload), ""]
    view = payload.get("view")
    if view is not None:
        names = payload["names"]
        lines.append(f"Round {view['round']} - {names[view['current']]} to play - "
                     f"version {payload['version']}")
        if payload.get("deadline"):
            lines.append(f"Deadline: {payload['deadline']}")
        lines.append("Scores: " + ", ".join(f"{names[i]} {s}"
                                            for i, s in enumerate(view["scores"])))
        lines.append("Center Row: " + "  ".join(
            f"{c['position']}:[{c['card']}]" for c in view["center_row"]))
        if view.get("hand") is not None:
            lines.append("Your hand:  " + " ".join(f"[{c}]" for c in view["hand"]))
        lines.append("")
    moves = payload.get("moves") or []
    if moves and view is not None and view.get("current") == payload["seat"]:
        lines.append("Your moves:")
        lines += [f"  {m['number']:>2}. {m['action']:<12} {m['description']}" for m in moves]
        lines.append("")
        lines.append("To play move 1 from a terminal:")
        lines.append(f"  dos-client move {payload['game_id']} 1")
        lines.append("")
    if payload.get("reply_to"):
        lines.append("Or reply to this email with a move number, a move (like: m1 R5; end), "
                     "or one of: show, moves, history, resign, help.")
        lines.append("")
    lines.append(f"Game: {payload['links']['game']}")
    lines.append(f"Stop these emails: {payload['unsubscribe']}")
    return "\n".join(lines) + "\n"


def html_body(payload: dict[str, Any]) -> str:
    return pre_html(text_body(payload),
                    f"<p><a href=\"{html.escape(payload['links']['game'])}\">Open the game</a> · "
                    f"<a href=\"{html.escape(payload['unsubscribe'])}\">Unsubscribe</a></p>")


def pre_html(text: str, footer: str = "") -> str:
    """The HTML part: the plain text, monospaced (the table lines up), and a footer."""
    return ("<!doctype html><html><body>"
            f"<pre style=\"font-family: ui-monospace, monospace\">{html.escape(text)}</pre>"
            f"{footer}</body></html>")


def new_message(subject: str, message_id: str, event: str, *, thread: str | None = None,
                references: str | None = None, unsubscribe: str | None = None) -> EmailMessage:
    """The headers every email of ours has: threading, one-click unsubscribe, the event."""
    config = current_app.config
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = config["MAIL_FROM"]
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = f"<{message_id}@{config['MAIL_DOMAIN']}>"
    if thread:
        message["In-Reply-To"] = thread
        message["References"] = references or thread
    if unsubscribe:
        message["List-Unsubscribe"] = f"<{unsubscribe}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message["X-DOS-Event"] = event
    return message


def send(target: str, payload: dict[str, Any], message_id: str,
         timeout: float | None = None) -> None:
    """Deliver one email over SMTP, or (no SMTP_HOST) to the log and the instance folder.

    ``timeout``: at most this many seconds per SMTP operation (the worker keeps a send
    inside its lease), besides ``SMTP_TIMEOUT``.
    """
    config = current_app.config
    message = build(payload, message_id)
    message["To"] = target
    host = config.get("SMTP_HOST")
    if not host:
        folder = Path(current_app.instance_path) / "outbox"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{message_id}.eml").write_bytes(bytes(message))
        log.info("email written to %s (no SMTP_HOST set): %s to %s",
                 folder, message["Subject"], target)
        return
    port = int(config["SMTP_PORT"])
    security = str(config["SMTP_SECURITY"]).lower()
    limit = float(config["SMTP_TIMEOUT"])
    timeout = limit if timeout is None else min(limit, timeout)
    try:
        # SMTP_CA_FILE: trust a private CA (a self-hosted relay) besides the system's.
        context = ssl.create_default_context(cafile=config.get("SMTP_CA_FILE") or None)
        smtp: smtplib.SMTP
        if security == "ssl":
            smtp = smtplib.SMTP_SSL(host, port, timeout=timeout, context=context)
        else:
            smtp = smtplib.SMTP(host, port, timeout=timeout)
        with smtp:
            if security == "starttls":
                smtp.starttls(context=context)
            if config.get("SMTP_USERNAME"):
                smtp.login(config["SMTP_USERNAME"], config.get("SMTP_PASSWORD") or "")
            smtp.send_message(message)
    except smtplib.SMTPRecipientsRefused as error:
        raise DeliveryError(f"the mail server refused {target}: {error}",
                            permanent=True) from None
    except (OSError, smtplib.SMTPException) as error:
        raise DeliveryError(f"SMTP {host}:{port}: {error}") from None


def _build_digest(payload: dict[str, Any], message_id: str) -> EmailMessage:
    """The daily digest: every game waiting on this address, one thread per address."""
    games = payload["games"]
    count = len(games)
    message = new_message(
        f"DOS: {count} game{'s' if count != 1 else ''} waiting on you", message_id, "digest",
        thread=f"<digest.{payload['thread']}@{current_app.config['MAIL_DOMAIN']}>",
        unsubscribe=payload["unsubscribe"],
    )
    lines = ["These DOS games are waiting on you:", ""]
    for game in games:
        deadline = f" (deadline {game['deadline']})" if game.get("deadline") else ""
        lines += [f"- game {game['id']} as {game['name']}{deadline}",
                  f"  see your moves: dos-client moves {game['id']}",
                  f"  play move 1:    {game['line']}",
                  f"  {game['link']}",
                  f"  stop emails for this game: {game['unsubscribe']}", ""]
    text = "\n".join(lines) + "\n"
    message.set_content(text)
    message.add_alternative(pre_html(text), subtype="html")
    return message
