"""Card chips: how a card code is drawn for people, the same on the pages and in emails.

A chip is the card's code as text, a colour (never the only signal) and a spoken name. The
``card`` macro of ``templates/cards.html`` draws one: with the web's CSS classes on a page,
or with :attr:`Chip.style` inline in an email (mail clients get no stylesheet).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dos_engine import DosError, parse_card
from dos_engine.wording import card_name
from dos_server.services.words import language as reading_language

COLOURS = {"R": "red", "G": "green", "B": "blue", "Y": "yellow"}
_CARD = re.compile(r"^([RGBYW])(#|\d{1,2})$")

# Inline colours (background, text) by colour class: explicit, so that a chip reads the same
# in a mail client's dark mode and needs no image.
_INLINE = {
    "red": ("#c62828", "#ffffff"),
    "green": ("#2e7d32", "#ffffff"),
    "blue": ("#1565c0", "#ffffff"),
    "yellow": ("#f9d71c", "#000000"),
    "wild": ("#000000", "#ffffff"),
}


@dataclass(frozen=True)
class Chip:
    """A card as people see it: its code as text, a colour class and a spoken name."""

    code: str
    colour: str  # red | green | blue | yellow | wild: a CSS class, never the only signal
    name: str  # "red 5", "blue Wild #", "Wild DOS"

    @property
    def style(self) -> str:
        """The chip's look as an inline ``style`` (emails)."""
        background, colour = _INLINE[self.colour]
        return ("display:inline-block;min-width:2.2em;padding:2px 4px;margin:1px;"
                f"border:1px solid #555555;border-radius:4px;background:{background};"
                f"color:{colour};font-family:ui-monospace,Menlo,Consolas,monospace;"
                "font-weight:bold;text-align:center")


def chip(code: str) -> Chip:
    match = _CARD.match(code.upper())
    if match is None:  # not a card code we know: show it as it is
        return Chip(code, "wild", code)
    letter, rank = match.groups()
    if letter == "W" and rank != "2":  # no card of the game: said as it is written
        return Chip(code, "wild", code)
    try:
        card = parse_card(code)
    except DosError:  # a number no card has (R42): said as it is written
        return Chip(code, COLOURS.get(letter, "wild"), code)
    # Spoken in the reader's language (the page's, or the email's force_locale).
    return Chip(card.code, "wild" if letter == "W" else COLOURS[letter],
                card_name(card, reading_language()))


def words(notation: str) -> list[tuple[str, list[str]]]:
    """A move's notation word by word, with the card codes of a word made of cards:
    ``m2 B3+Y4`` -> ``[("m2", []), ("B3+Y4", ["B3", "Y4"])]`` (chips draw the codes)."""
    out: list[tuple[str, list[str]]] = []
    for word in notation.split(" "):
        codes = word.split("+")
        out.append((word, codes if all(_CARD.match(c.upper()) for c in codes) else []))
    return out


__all__ = ["COLOURS", "Chip", "chip", "words"]
