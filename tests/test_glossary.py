"""One word for one thing: wherever a catalog's English says a game word of docs/glossary.md, its
Lao says the glossary's Lao word, in the server's, the engine's and the client's catalogs alike.

Placeholders, backquoted commands and options, and the email commands (English keywords a
reply may hold) are no words to translate; the few English uses of a glossary word for
something else are listed with what they mean.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ("server/dos_server/translations/{code}/LC_MESSAGES/messages.po",
            "server/dos_engine/locale/{code}/LC_MESSAGES/dos_engine.po",
            "client/dos_client/locale/{code}/LC_MESSAGES/dos_client.po")
COLUMN = {"lo": 1}  # the glossary's column of each shipped language
# The glossary's rows whose word is checked (the English cell, as the glossary writes it).
CHECKED = ("Center Row", "draw pile", "discard pile", "colour bonus", "double match", "time zone",
           "host", "spectator", "rematch", "resign", "vacation", "seat", "round")
# English that uses a glossary word for something else.
OTHER_SENSE = {
    "this server does not answer for that host name; use the address in your emails: %(url)s",
    "the URL has no host",
}
_NOT_WORDS = re.compile(r"%\(\w+\)[sd]|\{[^}]*\}|`[^`]*`|--[\w-]+|\b\w+[_:]\w+\b|"
                        r"\bshow, moves, history, resign\b")


def glossary() -> dict[str, list[str]]:
    rows = {}
    for line in (ROOT / "docs" / "glossary.md").read_text("utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("English", "---"):
            rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.parametrize("code", sorted(COLUMN))
def test_every_catalog_says_the_glossarys_word(code: str) -> None:
    rows = glossary()
    terms = {english: rows[english][COLUMN[code] - 1] for english in CHECKED}
    wrong = []
    for pattern in CATALOGS:
        with (ROOT / pattern.format(code=code)).open("rb") as po:
            catalog = read_po(po)
        for message in catalog:
            if not message.id or message.id in OTHER_SENSE:
                continue
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            for english, word in terms.items():
                said = any(re.search(rf"\b{re.escape(english)}", _NOT_WORDS.sub(" ", text), re.I)
                           for text in ids)
                if said and not any(word in text for text in strings):
                    wrong.append(f"{pattern.format(code=code)}: {ids[0]!r} says {english!r}, "
                                 f"its translation not {word!r}")
    assert not wrong, "\n".join(wrong)
