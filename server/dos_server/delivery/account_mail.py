"""The emails of signing in (issue #14): the one-time code and link, and the link that
confirms a seat's new address. Built by the worker when it delivers the outbox row, so the
code itself is never stored: it is recomputed from the row's nonce and the secret key."""

from __future__ import annotations

import html
from email.message import EmailMessage
from typing import Any

from flask import current_app

from dos_server.delivery.email import DeliveryError, new_message, pre_html
from dos_server.extensions import db
from dos_server.models import LoginCodeRow
from dos_server.services import account

EVENTS = ("login_code", "confirm_email")


def build_account_mail(payload: dict[str, Any], message_id: str) -> EmailMessage:
    if payload["event"] == "login_code":
        return _login(payload, message_id)
    return _confirm(payload, message_id)


def _login(payload: dict[str, Any], message_id: str) -> EmailMessage:
    row = db.session.get(LoginCodeRow, payload["login_id"])
    nonce = row.nonce if row is not None and row.used_at is None else None
    db.session.rollback()  # the worker holds no transaction while it talks SMTP
    if nonce is None:  # used or deleted before the worker got to it: nothing worth sending
        raise DeliveryError("the sign-in request was used or withdrawn", permanent=True)
    code = account.login_code(nonce)
    shown = f"{code[:4]} {code[4:]}"
    link = account.login_link(payload["login_id"])
    base = current_app.config["PUBLIC_URL"].rstrip("/")
    message = new_message("Your DOS sign-in code", message_id, "login_code")  # not in logs
    text = "\n".join([
        "Someone (we hope you) asked to sign in to DOS by mail with this address.",
        "",
        f"Your code: {shown}",
        "",
        f"Or open this link to sign in: {link}",
        "",
        f"The code and the link work once, for {payload['minutes']} minutes.",
        f"From a terminal: dos-client --server {base} login {payload['address']}",
        "",
        "If it was not you, ignore this email: nothing happens without the code.",
    ]) + "\n"
    message.set_content(text)
    message.add_alternative(pre_html(text, f'<p><a href="{html.escape(link)}">Sign in</a></p>'),
                            subtype="html")
    return message


def _confirm(payload: dict[str, Any], message_id: str) -> EmailMessage:
    game = payload["game_id"]
    message = new_message(f"Confirm your address for DOS game {game}", message_id,
                          "confirm_email")
    message["X-DOS-Game"] = game
    text = "\n".join([
        f"Hello {payload.get('name') or ''},",
        "",
        f"The player of seat {payload['seat']} in DOS game {game} gave this address for the "
        "game's emails.",
        "Open this link to confirm it; the address then opens the game when you sign in "
        "with it, on any device:",
        "",
        f"  {payload['link']}",
        "",
        "If it was not you, ignore this email.",
    ]) + "\n"
    message.set_content(text)
    message.add_alternative(
        pre_html(text, f'<p><a href="{html.escape(payload["link"])}">Confirm</a></p>'),
        subtype="html")
    return message
