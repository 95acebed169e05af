"""A seat's private notes on its game (``SeatRow.notes``): plain text that its player alone
reads and writes, in every status of the game (notes on a finished game are the point).

Who: the seat's own player token (a signed-in identity gets that token from
``/api/me/games/<id>/token``, like every other seat route). The host, a spectator and the
other seats get the "not your seat" problem of the seat routes. Notes leave the server in no
other answer: not in the game, its events, its record, an email, a webhook, nor another
identity's export (the owner's export has them: services/account.py).

Transactions: :func:`set_notes` owns its own, like the lobby's seat settings; a read takes no
lock. Writing notes changes no table: the game's ``version`` stays, so no move in the making
goes stale.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from dos_server.database import write_transaction
from dos_server.errors import InvalidInput, NotYourSeat
from dos_server.extensions import db
from dos_server.models import GameRow
from dos_server.services.access import Viewer, authenticate, get_game, locked, seat_of
from dos_server.services.words import _

MAX_CHARS = 10_000
# A note of MAX_CHARS characters in any script fits in a request this size, sent as JSON
# with every character escaped (``\\ud83c\\udca1``: 12 bytes) or as a form (``%XX`` per
# byte); the server's usual limit (MAX_CONTENT_LENGTH) is smaller.
MAX_REQUEST_BYTES = 128 * 1024
_ALLOWED_CONTROLS = frozenset("\n\t")
_NEWLINES = str.maketrans({"\r": "\n"})


def clean_text(text: Any) -> str | None:
    """The notes as stored: line breaks as ``\\n``, spaces at the ends stripped; None for
    empty (the notes cleared). InvalidInput, naming what to change, for anything that is not
    at most :data:`MAX_CHARS` characters of plain text (newlines and tabs allowed)."""
    if not isinstance(text, str):
        raise InvalidInput(_("notes are text: send them as a string"),
                           errors={"json": {"text": ["not a string"]}})
    cleaned = text.replace("\r\n", "\n").translate(_NEWLINES).strip()
    if len(cleaned) > MAX_CHARS:
        raise InvalidInput(
            _("notes have at most %(max)s characters; these have %(count)s",
              max=MAX_CHARS, count=len(cleaned)),
            errors={"json": {"text": ["too long"]}})
    for char in cleaned:
        if char not in _ALLOWED_CONTROLS and unicodedata.category(char) in ("Cc", "Cs"):
            code = "%04X" % ord(char)  # noqa: UP031 - the catalog extractor reads no f-string
            raise InvalidInput(
                _("notes are plain text: control character U+%(code)s is not allowed "
                  "(line breaks and tabs are)", code=code),
                errors={"json": {"text": ["control character"]}})
    return cleaned or None


def own_seat(viewer: Viewer, index: int) -> int:
    """Seat ``index``, which must be the viewer's: notes are for their seat's player alone."""
    if viewer.seat is None or viewer.seat != index:
        raise NotYourSeat(_("only the seat's player can read or write its notes"))
    return viewer.seat


def notes_body(game: GameRow, index: int) -> dict[str, Any]:
    """The seat's notes ("" when it has none) and the most they may hold."""
    seat = seat_of(game, index)
    return {"game_id": game.id, "seat": seat.index, "text": seat.notes or "",
            "max_chars": MAX_CHARS}


def read_notes(game_id: str, bearer: str | None, index: int) -> dict[str, Any]:
    """The seat's notes, for its player only (a read: no lock)."""
    game = get_game(game_id)
    return notes_body(game, own_seat(authenticate(game, bearer), index))


def set_notes(game_id: str, bearer: str | None, index: int, text: Any) -> dict[str, Any]:
    """Replace the seat's notes by ``text`` ("" clears them); for its player only, in any
    status of the game. Own transaction; checked before it, so bad input writes nothing."""
    cleaned = clean_text(text)
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        seat = seat_of(game, own_seat(viewer, index))
        seat.notes = cleaned  # a seat column: the game's version (and every ETag) stays
        db.session.flush()
        return notes_body(game, seat.index)


__all__: Sequence[str] = [
    "MAX_CHARS",
    "MAX_REQUEST_BYTES",
    "clean_text",
    "notes_body",
    "own_seat",
    "read_notes",
    "set_notes",
]
