"""Who reads the page, and how: the language and time zone a page is shown in.

A seat's own pages (the table, settings, host page, history, game over, an emailed move) are
in the seat's stored language and zone when it has them; the pages of a browser signed in with
an address (``/me``, and the others that belong to no seat) in the identity's. Without a
stored language, the browser's ``Accept-Language`` decides (:func:`dos_server.i18n.request_locale`);
without a stored zone, the page sends the browser's own (``dos.js`` posts it to
:attr:`Reader.zone_url`, once), and until then times are in UTC with the zone named, which the
page's script rewrites into the browser's time.

:func:`resolve` runs before every page's view (``hooks.py``); a view that learns the viewer
another way (an emailed move's parked token) calls :func:`as_seat`.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import g, request, url_for

from dos_server import i18n
from dos_server.errors import DomainError
from dos_server.models import GameRow
from dos_server.services import access, account
from dos_server.web import auth

_KEY = "dos_reader"
# Endpoints that answer programs, not people (the live update's long-poll, files): no lookup.
QUIET = {"web.wait", "web.static", "web.manifest", "web.seat_zone", "web.me_zone"}


@dataclass(frozen=True)
class Reader:
    """The reader's stored language and zone (None: none chosen), and where the page sends the
    browser's zone when none is stored (None: nowhere to keep it, or one is stored)."""

    language: str | None = None
    time_zone: str | None = None
    zone_url: str | None = None
    seat: int | None = None


def current() -> Reader:
    """This request's reader (nobody known: the browser's language, times in UTC)."""
    found = g.get(_KEY)
    return found if isinstance(found, Reader) else Reader()


def _use(reader: Reader) -> Reader:
    setattr(g, _KEY, reader)
    i18n.read_in(reader.language)
    return reader


def as_seat(game: GameRow, seat: int | None) -> Reader:
    """The page is the seat's (``seat`` of ``game``): its language and zone from now on."""
    if seat is None or not 0 <= seat < len(game.seats):
        return current()
    row = access.seat_of(game, seat)
    return _use(Reader(row.language, row.time_zone,
                       None if row.time_zone else url_for("web.seat_zone", game_id=game.id),
                       seat))


def _as_identity(token: str) -> Reader:
    me = account.whoami(token)
    zone = me.get("time_zone")
    return _use(Reader(me.get("language"), zone, None if zone else url_for("web.me_zone")))


def resolve() -> Reader:
    """Before a page's view: the browser's seat in the page's game, else its signed-in
    identity, else nobody. A token that no longer works is the view's to answer: here it
    only means the reader is not known."""
    if request.endpoint in QUIET:
        return current()
    game_id = (request.view_args or {}).get("game_id")
    token = auth.player_token(game_id) if isinstance(game_id, str) else None
    if token is not None:
        try:
            game = access.get_game(str(game_id))
            viewer = access.authenticate(game, token, allow_host=False)
        except DomainError:
            viewer = access.Viewer()
        else:
            if viewer.seat is not None:
                return as_seat(game, viewer.seat)
    signed = auth.account_token()
    if signed is not None:
        try:
            return _as_identity(signed)
        except DomainError:
            pass
    return current()


def zone() -> str | None:
    """The zone this page shows times in (None: UTC, named as such)."""
    return current().time_zone


__all__ = ["QUIET", "Reader", "as_seat", "current", "resolve", "zone"]
