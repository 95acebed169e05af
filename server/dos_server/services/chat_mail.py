"""Table talk by email: a reply's ``say ...`` lines (services/inbound.py runs them in the
transaction of the reply, after the move or command the reply also carries, and makes a
refusal of one the reply's refusal)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from dos_server.errors import InvalidInput
from dos_server.models import GameRow, SeatRow
from dos_server.services import chat
from dos_server.services.access import Viewer
from dos_server.services.words import _

MAX_MESSAGES = 3  # per reply
_SAY = re.compile(r"say\s*:?\s+(?P<text>.+)", re.I | re.S)


def said_lines(lines: Sequence[str]) -> tuple[list[str], list[str]]:
    """The texts of a reply's ``say ...`` lines (as written), and its other lines."""
    said: list[str] = []
    rest: list[str] = []
    for line in lines:
        found = _SAY.fullmatch(line.strip())
        if found:
            said.append(found.group("text").strip())
        else:
            rest.append(line)
    return said, rest


def say(game: GameRow, seat: SeatRow, texts: Sequence[str]) -> list[str]:
    """Post the messages as the seat (the game locked); the answer's lines. A refused one
    (muted, too long, too many) raises its DomainError: the caller applies nothing."""
    if len(texts) > MAX_MESSAGES:
        raise InvalidInput(_("at most %(count)s say lines in one reply", count=MAX_MESSAGES))
    return [_("Said at the table: %(text)s",
              text=chat.post_locked(game, Viewer(seat=seat.index), text)["text"])
            for text in texts]


__all__ = ["MAX_MESSAGES", "said_lines", "say"]
