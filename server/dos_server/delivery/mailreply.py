"""The email that answers a player's emailed move (issue #6): in the same thread, what was
applied or what was wrong, and (when the sender is a seat's player) the table and the moves."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

from dos_server.delivery.email import html_body, new_message, pre_html, text_body


def build_reply(payload: dict[str, Any], message_id: str) -> EmailMessage:
    message = new_message(payload["subject"], message_id, "mail_reply",
                          thread=payload.get("in_reply_to"),
                          references=payload.get("references"),
                          unsubscribe=payload.get("unsubscribe"),
                          unsubscribe_mailto=payload.get("unsubscribe_mailto"))
    # RFC 3834: an automatic answer; mail-in never answers automatic mail, so no loops.
    message.replace_header("Auto-Submitted", "auto-replied")
    if payload.get("game_id"):
        message["X-DOS-Game"] = payload["game_id"]
    if payload.get("reply_to"):
        message["Reply-To"] = payload["reply_to"]
    if payload.get("view") is not None or payload.get("links"):
        text = text_body(payload)
        markup = html_body(payload)
    else:  # no game to show (unknown address, From mismatch...): only what was wrong
        text = "\n".join([*payload["data"]["lines"], ""]) + "\n"
        markup = pre_html(text)
    message.set_content(text)
    message.add_alternative(markup, subtype="html")
    return message
