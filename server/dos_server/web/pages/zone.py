"""The browser's time zone, sent by the page (``dos.js``) the first time: it fills the seat's
(or the signed-in identity's) zone when none is stored, and never replaces a chosen one. An
unknown zone is ignored: the answer is always 204, there is nothing for a person to read."""

from __future__ import annotations

import contextlib

from flask import Response, request

from dos_server import timefmt
from dos_server.errors import DomainError
from dos_server.services import access, account, lobby
from dos_server.web import auth
from dos_server.web.blueprint import bp


def browser_zone() -> str | None:
    """The form's ``time_zone`` when it is a zone this server knows; None otherwise."""
    try:
        return timefmt.clean_time_zone(request.form.get("time_zone", "")[:80])
    except ValueError:
        return None


def _done() -> Response:
    response = Response(status=204)
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/games/<game_id>/zone")
def seat_zone(game_id: str) -> Response:
    zone = browser_zone()
    token = auth.player_token(game_id)
    if zone is None or token is None:
        return _done()
    try:
        game = access.get_game(game_id)
        viewer = access.authenticate(game, token, allow_host=False)
        if viewer.seat is not None:
            lobby.set_notifications(game_id, token, viewer.seat, None, None, None,
                                    {"time_zone"}, time_zone=zone, fill_only=True)
    except DomainError:  # signed out or closed since the page: nothing to fill
        pass
    return _done()


@bp.post("/me/zone")
def me_zone() -> Response:
    zone = browser_zone()
    token = auth.account_token()
    if zone is None or token is None:
        return _done()
    with contextlib.suppress(DomainError):  # signed out since the page: nothing to fill
        account.set_settings(token, None, fields=("time_zone",), time_zone=zone, fill_only=True)
    return _done()


__all__ = ["browser_zone", "me_zone", "seat_zone"]
