"""Actions: the atomic steps of a turn, and their canonical text notation.

Canonical notation (ASCII, case-insensitive, one line; several actions separated by ``;``):

=================  ====================================================================
``m1 R5``          match Center Row card 1 with R5 (single match, 3.1)
``m2 B3+Y4``       match CR card 2 with B3 and Y4 (double match, 3.2)
``draw``           draw one card (3.6)
``add G7``         after drawing, add G7 from your hand to the Center Row (3.6)
``place Y9``       place Y9 into the Center Row as a colour-bonus card (3.5, 4.3)
``end``            end the turn (or, after earning bonuses, finish placing them)
``dos``            call "DOS" holding two cards (5.1, option ``dos_call``), in or out of turn
``catch 2``        catch seat 2 (0-based seat index), exposed without a DOS call (5.2)
=================  ====================================================================

CR positions count from 1, left to right, and stay fixed during a turn (3.3). Seats are the
0-based indices of the players. Declarations of wild cards are not part of canonical actions:
the engine declares them (see ``Game.declare``), always so as to earn the colour bonus when one
is possible. The lenient parser (``Game.parse_action``) accepts declarations such as ``R#=7``,
``W2=B`` or ``m1=R`` and checks them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dos_engine.cards import Card
from dos_engine.errors import InvalidActionError, Phrase
from dos_engine.translation import N_


class Action:
    """Base class of the actions. Every action has one canonical text: ``parse(a.text()) == a``."""

    __slots__ = ()

    def text(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"Action.parse({self.text()!r})"

    @staticmethod
    def parse(text: str) -> Action:
        """The same as :func:`parse_action`; raises ``InvalidActionError`` for non-notation."""
        return parse_action(text)


@dataclass(frozen=True, slots=True, repr=False)
class Match(Action):
    """Match the CR card at ``position`` (1-based) with one or two cards from hand."""

    position: int
    cards: tuple[Card, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.cards) <= 2:
            raise InvalidActionError(
                N_("a match uses one card (3.1) or two cards (3.2) from hand"))
        if self.position < 1:
            raise InvalidActionError(N_("Center Row positions start at 1"))
        if len(self.cards) == 2 and self.cards[1].id < self.cards[0].id:
            object.__setattr__(self, "cards", (self.cards[1], self.cards[0]))

    @property
    def is_double(self) -> bool:
        return len(self.cards) == 2

    def text(self) -> str:
        return f"m{self.position} " + "+".join(card.code for card in self.cards)


@dataclass(frozen=True, slots=True, repr=False)
class Draw(Action):
    def text(self) -> str:
        return "draw"


@dataclass(frozen=True, slots=True, repr=False)
class Add(Action):
    """After a draw with no match, add a card from hand to the CR (3.6)."""

    card: Card

    def text(self) -> str:
        return f"add {self.card.code}"


@dataclass(frozen=True, slots=True, repr=False)
class Place(Action):
    """Place a colour-bonus card into the CR at the end of the turn (3.5, 4.3)."""

    card: Card

    def text(self) -> str:
        return f"place {self.card.code}"


@dataclass(frozen=True, slots=True, repr=False)
class End(Action):
    def text(self) -> str:
        return "end"


@dataclass(frozen=True, slots=True, repr=False)
class CallDos(Action):
    def text(self) -> str:
        return "dos"


@dataclass(frozen=True, slots=True, repr=False)
class Catch(Action):
    """Catch ``seat`` (0-based), who holds two cards without a DOS call (5.2; under the first
    reading, ``dos_rule="v1"``: who ended a turn on two cards without calling)."""

    seat: int

    def __post_init__(self) -> None:
        if self.seat < 0:
            raise InvalidActionError(N_("seats are numbered from 0"))

    def text(self) -> str:
        return f"catch {self.seat}"


DRAW = Draw()
END = End()
CALL_DOS = CallDos()

_CARD = r"(?:[rgby](?:10|[13-9]|#)|w2)"
_CANONICAL = re.compile(
    rf"^(?:m(?P<pos>\d{{1,3}})\s+(?P<c1>{_CARD})(?:\s*\+\s*(?P<c2>{_CARD}))?"
    rf"|(?P<verb>add|place)\s+(?P<card>{_CARD})"
    r"|catch\s+(?P<seat>\d{1,2})"
    r"|(?P<word>draw|end|dos))$",
    re.IGNORECASE | re.ASCII,  # ASCII only: "ſ" must not pass for "s"
)

NOTATION_HELP = Phrase(N_(
    "Actions are: m<CR position> <card>[+<card>] (m1 R5, m2 B3+Y4), draw, add <card>, "
    "place <card>, end, dos, catch <seat>. Separate the actions of a turn with ';'."
))


def parse_action(text: str) -> Action:
    """Parse one action in canonical notation (case and spacing are free), whatever the position.

    Raises:
        InvalidActionError: the text is not one action in the canonical notation.
    """
    found = _CANONICAL.match(text.strip())
    if found is None:
        raise InvalidActionError(N_("{text} is not an action. {help}"),
                                 text=repr(text.strip()), help=NOTATION_HELP)
    if found.group("pos"):
        cards = [Card.from_code(found.group("c1"))]
        if found.group("c2"):
            cards.append(Card.from_code(found.group("c2")))
        return Match(int(found.group("pos")), tuple(cards))
    verb = found.group("verb")
    if verb:
        card = Card.from_code(found.group("card"))
        return Add(card) if verb.lower() == "add" else Place(card)
    if found.group("seat"):
        return Catch(int(found.group("seat")))
    return {"draw": DRAW, "end": END, "dos": CALL_DOS}[found.group("word").lower()]


def split_turn(text: str) -> list[str]:
    """Split a one-line turn (``"m1 R5; m2 B3+Y4; end"``) into its action texts."""
    parts = [part.strip() for part in re.split(r"[;\n]", text)]
    return [part for part in parts if part]


def parse_turn(text: str) -> list[Action]:
    """Parse several canonical actions separated by ``;`` (or new lines).

    Raises:
        InvalidActionError: no action at all, or a part that is not canonical notation.
    """
    actions = [parse_action(part) for part in split_turn(text)]
    if not actions:
        raise InvalidActionError(N_("no action given. {help}"), help=NOTATION_HELP)
    return actions


def format_turn(actions: list[Action]) -> str:
    return "; ".join(action.text() for action in actions)
