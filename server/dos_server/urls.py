"""Every absolute address the product gives out, built on ``PUBLIC_URL`` and never on a
request's Host header (a forged Host must not reach an email, an invite or a redirect).

Low level on purpose: services, delivery and the web all import it; it imports only Flask's
``current_app``. A link that carries a token takes the token ready-made from the caller.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from flask import current_app


def public_base() -> str:
    """``PUBLIC_URL`` without its trailing slash: the scheme and host people reach us at."""
    return str(current_app.config["PUBLIC_URL"]).rstrip("/")


def absolute(path: str) -> str:
    """``path`` (starting with ``/``) on the public address."""
    return f"{public_base()}{path}"


def game_url(game_id: str) -> str:
    """The game's page without signing in (a spectator, or a browser already signed in)."""
    return absolute(f"/games/{quote(game_id, safe='')}")


def signin_url(game_id: str, signin_token: str) -> str:
    """What a "your turn" email links to: the seat's table after one "Continue" press."""
    return f"{game_url(game_id)}?{urlencode({'token': signin_token})}"


def emailed_move_url(game_id: str, signin_token: str, version: int, number: int) -> str:
    """A move of a "your turn" email: a page showing it, whose one button plays it at that
    version (opening the link changes nothing, whoever fetches it)."""
    return (f"{game_url(game_id)}/emailed-move/{version}/{number}?"
            f"{urlencode({'token': signin_token})}")


def join_url(game_id: str, invite: str) -> str:
    """The invite link: a join page on this server (the invite is a token, not a command)."""
    return f"{game_url(game_id)}/join?{urlencode({'invite': invite})}"


def join_code_url(game_id: str, code: str) -> str:
    """The open seats' shared link: anyone with it may take a free seat."""
    return f"{game_url(game_id)}/join?{urlencode({'code': code})}"


def rematch_url(game_id: str, signin_token: str) -> str:
    """The game-over email's rematch link: a page whose one button makes or accepts the
    finished game's rematch for the seat (opening it changes nothing)."""
    return f"{game_url(game_id)}/rematch?{urlencode({'token': signin_token})}"


def record_url(game_id: str) -> str:
    """The game's record page: final scores, the revealed seed and its commitments checked."""
    return f"{game_url(game_id)}/record"


def api_game_urls(game_id: str) -> dict[str, str]:
    """The game's page and its API resources, as webhooks and emails list them."""
    api = absolute(f"/api/games/{quote(game_id, safe='')}")
    return {"page": game_url(game_id), "game": api, "actions": f"{api}/actions",
            "events": f"{api}/events"}


def unsubscribe_url(token: str) -> str:
    """The page that stops a seat's emails (a button; List-Unsubscribe posts to the API)."""
    return absolute(f"/unsubscribe/{token}")


def one_click_unsubscribe_url(token: str) -> str:
    """The RFC 8058 one-click address of ``List-Unsubscribe`` (a POST stops the emails)."""
    return absolute(f"/api/unsubscribe/{token}")


def confirm_url(token: str) -> str:
    """The page that confirms a seat's new address (a button)."""
    return absolute(f"/confirm-email/{token}")


def account_signin_url(token: str) -> str:
    """The sign-in link of an account email (a button signs the browser in)."""
    return absolute(f"/account/signin/{token}")


def all_games_url() -> str:
    """Every game of the signed-in address."""
    return absolute("/me")


def play_line(game_id: str, number: int | str, version: int) -> str:
    """The command that plays move ``number`` of the list shown at ``version``, and no other."""
    return f"dos-client move {game_id} {number} --at {version}"


__all__ = ["absolute", "account_signin_url", "all_games_url", "api_game_urls", "confirm_url",
           "game_url", "join_code_url", "join_url", "one_click_unsubscribe_url", "play_line",
           "public_base", "record_url", "rematch_url", "signin_url", "unsubscribe_url"]
