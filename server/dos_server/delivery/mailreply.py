"""The email that answers a player's emailed move (issue #6): in the same thread, what was
applied or what was wrong, and (when the sender is a seat's player) the table and the moves."""

from __future__ import annotations

import html
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any

from flask import current_app

from dos_server.delivery.email import text_body


def build_reply(payload: dict[str, Any], message_id: str) -> EmailMessage:
    config = current_app.config
    domain = config["MAIL_DOMAIN"]
    message = EmailMessage()
    message["Subject"] = payload["subject"]
    message["From"] = config["MAIL_FROM"]
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = f"<{message_id}@{domain}>"
    if payload.get("in_reply_to"):
        message["In-Reply-To"] = payload["in_reply_to"]
        message["References"] = payload.get("references") or payload["in_reply_to"]
    # RFC 3834: an automatic answer; mail-in never answers automatic mail, so no loops.
    message["Auto-Submitted"] = "auto-replied"
    message["X-DOS-Event"] = "mail_reply"
    if payload.get("game_id"):
        message["X-DOS-Game"] = payload["game_id"]
    if payload.get("reply_to"):
        message["Reply-To"] = payload["reply_to"]
    if payload.get("unsubscribe"):
        message["List-Unsubscribe"] = f"<{payload['unsubscribe']}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    if payload.get("view") is not None or payload.get("links"):
        text = text_body(payload)
    else:  # no game to show (unknown address, From mismatch...): only what was wrong
        text = "\n".join([*payload["data"]["lines"], ""]) + "\n"
    message.set_content(text)
    message.add_alternative(
        "<!doctype html><html><body><pre style=\"font-family: ui-monospace, monospace\">"
        + html.escape(text) + "</pre></body></html>", subtype="html")
    return message
