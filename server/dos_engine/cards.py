"""Cards of DOS (RULES.md 1): colours, kinds, the 108-card deck and the card notation.

Card codes (case-insensitive when parsed):

* ``R5``, ``G10``: a number card, colour letter then number (there are no coloured 2s, 1.1).
* ``R#``: the red **Wild #** (a number 1–10 chosen when played or matched, 1.3/1.5).
* ``W2``: a **Wild DOS**: always a 2, colour chosen when played or matched (1.4/1.6).

There are only 41 distinct cards; each exists once as an object, so cards compare and hash by
a small integer ``id`` that also gives the display order (by colour, then number, wilds last).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from dos_engine.errors import InvalidActionError
from dos_engine.translation import N_


class Colour(Enum):
    RED = "R"
    GREEN = "G"
    BLUE = "B"
    YELLOW = "Y"

    letter: str  # the value, as a plain attribute (Enum's value is a property of Python code)

    def __init__(self, letter: str) -> None:
        self.letter = letter


class CardKind(Enum):
    NUMBER = "number"
    WILD_NUMBER = "wild_number"  # "Wild #"
    WILD_DOS = "wild_dos"


COLOURS: tuple[Colour, ...] = tuple(Colour)
NUMBERS: tuple[int, ...] = (1, 3, 4, 5, 6, 7, 8, 9, 10)
# How many of each number card one colour has (1.1).
COPIES_PER_COLOUR: dict[int, int] = {1: 3, 3: 3, 4: 3, 5: 3, 6: 2, 7: 2, 8: 2, 9: 2, 10: 2}
WILD_NUMBER_PER_COLOUR = 2
WILD_DOS_COUNT = 12
DECK_SIZE = 108


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Card:
    """One of the 41 distinct cards. Build it with :meth:`from_code` or the ``CARD`` table."""

    kind: CardKind
    colour: Colour | None  # None only for Wild DOS, whose colour is declared when used
    number: int | None  # None only for Wild #, whose number is declared when used
    id: int = field(default=-1, compare=False)
    # A plain attribute, not a property: codes are read on every event of the hot path.
    code: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.id < 0:
            object.__setattr__(self, "id", _card_id(self.kind, self.colour, self.number))
        if not self.code:
            object.__setattr__(self, "code", _card_code(self.kind, self.colour, self.number))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Card) and other.id == self.id

    def __hash__(self) -> int:
        return self.id

    def __lt__(self, other: Card) -> bool:
        return self.id < other.id

    def __repr__(self) -> str:
        return f"Card.from_code({self.code!r})"

    def __str__(self) -> str:
        return self.code

    @property
    def value(self) -> int | None:
        """The number this card counts as in a match, or None if the player declares it."""
        return self.number

    @property
    def points(self) -> int:
        """Scoring value (1.7)."""
        if self.kind is CardKind.WILD_DOS:
            return 20
        if self.kind is CardKind.WILD_NUMBER:
            return 40
        assert self.number is not None
        return self.number

    @property
    def is_wild(self) -> bool:
        return self.kind is not CardKind.NUMBER

    @property
    def dealer_value(self) -> int:
        """Value when drawing for first dealer: wild cards count as 0 (2.2)."""
        return self.number if self.kind is CardKind.NUMBER and self.number else 0

    def name(self) -> str:
        """A human name: 'red 5', 'red Wild #', 'Wild DOS'."""
        if self.kind is CardKind.WILD_DOS:
            return "Wild DOS"
        assert self.colour is not None
        colour = self.colour.name.lower()
        if self.kind is CardKind.WILD_NUMBER:
            return f"{colour} Wild #"
        return f"{colour} {self.number}"

    @staticmethod
    def from_code(code: str) -> Card:
        """Parse a canonical card code (``R5``, ``g10``, ``B#``, ``W2``).

        Raises:
            InvalidActionError: not a card code (the message explains the codes).
        """
        card = _BY_CODE.get(code.strip().upper())
        if card is None:
            raise InvalidActionError(
                N_("{code} is not a card. Cards are a colour letter R/G/B/Y and a number "
                   "1, 3-10 (R5, G10), a colour and # for a Wild # (B#), or W2 for a Wild DOS."),
                code=repr(code),
            )
        return card


def _card_id(kind: CardKind, colour: Colour | None, number: int | None) -> int:
    if kind is CardKind.WILD_DOS:
        if colour is not None or number not in (None, 2):
            raise ValueError("a Wild DOS has no printed colour and always counts as 2")
        return 40
    if colour is None:
        raise ValueError(f"a {kind.value} card needs a colour")
    base = COLOURS.index(colour) * 10
    if kind is CardKind.WILD_NUMBER:
        if number is not None:
            raise ValueError("a Wild # has no printed number")
        return base + 9
    if number not in NUMBERS:
        raise ValueError(f"there is no coloured {number} (1.1)")
    return base + NUMBERS.index(number)


def _card_code(kind: CardKind, colour: Colour | None, number: int | None) -> str:
    if kind is CardKind.WILD_DOS:
        return "W2"
    assert colour is not None
    return f"{colour.letter}{'#' if kind is CardKind.WILD_NUMBER else number}"


def _build_table() -> tuple[tuple[Card, ...], tuple[str, ...]]:
    cards: list[Card] = []
    codes: list[str] = []
    for colour in COLOURS:
        for number in NUMBERS:
            cards.append(Card(CardKind.NUMBER, colour, number))
            codes.append(f"{colour.letter}{number}")
        cards.append(Card(CardKind.WILD_NUMBER, colour, None))
        codes.append(f"{colour.letter}#")
    cards.append(Card(CardKind.WILD_DOS, None, 2))
    codes.append("W2")
    assert [c.id for c in cards] == list(range(41))
    return tuple(cards), tuple(codes)


ALL_CARDS, _CODES = _build_table()
_BY_CODE: dict[str, Card] = {code: card for code, card in zip(_CODES, ALL_CARDS, strict=True)}
CARDS_BY_CODE: Mapping[str, Card] = MappingProxyType(_BY_CODE)  # canonical code -> card
WILD_DOS = ALL_CARDS[40]


def parse_card(code: str) -> Card:
    """Canonical card parser; the pair of :attr:`Card.code`.

    Raises:
        InvalidActionError: not a card code (the message explains the codes).
    """
    return Card.from_code(code)


def _deck_template() -> tuple[Card, ...]:
    deck: list[Card] = []
    for colour_index in range(4):
        for offset, number in enumerate(NUMBERS):
            deck.extend([ALL_CARDS[colour_index * 10 + offset]] * COPIES_PER_COLOUR[number])
        deck.extend([ALL_CARDS[colour_index * 10 + 9]] * WILD_NUMBER_PER_COLOUR)
    deck.extend([WILD_DOS] * WILD_DOS_COUNT)
    assert len(deck) == DECK_SIZE
    return tuple(deck)


def new_deck() -> list[Card]:
    """The 108 cards in their documented unshuffled order.

    For each colour R, G, B, Y: the number cards in ascending order with their copies
    (1,1,1,3,3,3,4,4,4,5,5,5,6,6,...,10,10), then its two Wild #; then the twelve Wild DOS.
    """
    return list(_DECK)


# -- lenient card names for humans ------------------------------------------------------------

_COLOUR_WORDS = {
    "r": "R", "red": "R", "g": "G", "green": "G", "b": "B", "blue": "B", "y": "Y", "yellow": "Y",
}
_LENIENT_CARD = re.compile(
    r"^(?:(?P<wd>w2|w|wd|dos|wilddos|wild dos|wild-dos)"
    r"|(?P<col>red|green|blue|yellow|r|g|b|y)[\s-]*(?P<rest>\d{1,2}|#|w|wild|wild ?#))$"
,
    re.ASCII,
)


def parse_card_lenient(text: str) -> Card:
    """Parse a card the way people write it: ``r5``, ``Red 5``, ``blue#``, ``yellow wild``, ``dos``.

    Raises:
        InvalidActionError: not a card, even leniently read.
    """
    cleaned = " ".join(text.strip().lower().split())
    found = _LENIENT_CARD.match(cleaned)
    if found is None:
        return Card.from_code(text)  # raises with the explanation of card codes
    if found.group("wd"):
        return WILD_DOS
    colour = _COLOUR_WORDS[found.group("col")]
    rest = found.group("rest")
    code = f"{colour}{rest}" if rest.isdigit() else f"{colour}#"
    return Card.from_code(code)


def parse_colour(text: str) -> Colour:
    """``R``, ``red``, ``Blue``... as a colour.

    Raises:
        InvalidActionError: not a colour.
    """
    letter = _COLOUR_WORDS.get(text.strip().lower())
    if letter is None:
        raise InvalidActionError(
            N_("{text} is not a colour: use R, G, B or Y (or red, green...)."), text=repr(text))
    return Colour(letter)


_DECK = _deck_template()
