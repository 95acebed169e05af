"""Addresses of the web pages, for emails and other messages (``PUBLIC_URL`` based).

``signin_url`` is what a "your turn" email should link to: it opens the seat's table after
one "Continue" press, with a short-lived token (``WEB_SIGNIN_MAX_AGE_DAYS``) of its own
purpose that the seat's token rotation revokes. ``game_url`` is the page without signing in
(the spectator view, or the table of a browser already signed in). Every link an email
shows a person opens one of these pages, never the JSON API.
"""

from __future__ import annotations

from urllib.parse import urlencode

from flask import current_app

from dos_server.models import GameRow, SeatRow
from dos_server.services import access


def _base() -> str:
    return str(current_app.config["PUBLIC_URL"]).rstrip("/")


def game_url(game_id: str) -> str:
    return f"{_base()}/games/{game_id}"


def signin_url(game: GameRow, seat: SeatRow) -> str:
    token = access.seat_token("signin", game, seat)
    return f"{game_url(game.id)}?{urlencode({'token': token})}"


def join_url(game_id: str, invite: str) -> str:
    """The invite link: a join page on this server (the invite is a token, not a command)."""
    return f"{game_url(game_id)}/join?{urlencode({'invite': invite})}"


def record_url(game_id: str) -> str:
    """The game's record page: final scores, the revealed seed and its commitments checked."""
    return f"{game_url(game_id)}/record"


def unsubscribe_url(token: str) -> str:
    """The page that stops a seat's emails (a button; List-Unsubscribe posts to the API)."""
    return f"{_base()}/unsubscribe/{token}"


def confirm_url(token: str) -> str:
    """The page that confirms a seat's new address (a button)."""
    return f"{_base()}/confirm-email/{token}"


__all__ = ["confirm_url", "game_url", "join_url", "record_url", "signin_url",
           "unsubscribe_url"]
