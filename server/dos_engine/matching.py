"""Matching and declarations: when cards match a Center Row card, and what the wild cards are
declared as (RULES.md 1.3-1.6, 3.1-3.2, 3.5).

``declare_match`` is the one place that decides whether a match works and which colour bonus it
earns; ``Game.check`` uses it to validate, ``Game.describe`` and the strategies to explain and
weigh, and the lenient parser to check declarations a player typed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from dos_engine.actions import Match
from dos_engine.cards import ALL_CARDS, Card, CardKind, Colour
from dos_engine.errors import IllegalActionError
from dos_engine.translation import N_


class Bonus(StrEnum):
    NONE = "none"
    SINGLE_COLOUR = "single_colour"  # 3.5: place one card at the end of the turn
    DOUBLE_COLOUR = "double_colour"  # 3.5: others draw one now, place one card at the end


@dataclass(frozen=True, slots=True)
class Declaration:
    """What the wild cards of a match were declared as, and the bonus it earns (1.3-1.6, 3.5)."""

    target_number: int
    target_colour: Colour
    numbers: tuple[int, ...]
    colours: tuple[Colour, ...]
    bonus: Bonus

    def to_dict(self) -> dict[str, Any]:
        return {
            "target_number": self.target_number,
            "target_colour": self.target_colour.letter,
            "numbers": list(self.numbers),
            "colours": [colour.letter for colour in self.colours],
            "bonus": self.bonus._value_,  # not .value, a property of Python code
        }


def _number_choices(card: Card, declared: int | None = None) -> Sequence[int]:
    if card.number is not None:
        return (card.number,)
    return (declared,) if declared is not None else range(1, 11)


def declare_match(
    target: Card,
    cards: Sequence[Card],
    target_number: int | None = None,
    numbers: Sequence[int | None] | None = None,
    target_colour: Colour | None = None,
    colours: Sequence[Colour | None] | None = None,
) -> Declaration | None:
    """The canonical declaration that makes ``cards`` match ``target``, or None if none does.

    Optional arguments pin declarations the player made (they must fit the card: only a Wild #
    takes a number, only a Wild DOS a colour). Numbers are the smallest that work; colours are
    chosen to earn a colour bonus when the printed colours allow it (3.5).
    """
    if (target_number is None and numbers is None and target_colour is None and colours is None
            and 1 <= len(cards) <= 2):
        return canonical_declaration(target, cards)
    return _declare(target, cards, target_number, numbers, target_colour, colours)


def _declare(
    target: Card,
    cards: Sequence[Card],
    target_number: int | None,
    numbers: Sequence[int | None] | None,
    target_colour: Colour | None,
    colours: Sequence[Colour | None] | None,
) -> Declaration | None:
    """``declare_match`` worked out, without asking the memo."""
    pinned = list(numbers) if numbers is not None else [None] * len(cards)
    found: tuple[int, tuple[int, ...]] | None = None
    if target_number is None and target.number is not None and numbers is None:
        # Fast path: nothing declared by the player and a fixed target number.
        if len(cards) == 1:
            value = cards[0].number
            if value is None or value == target.number:
                found = (target.number, (target.number,))
            else:
                return None
        elif cards[0].number is not None and cards[1].number is not None:
            if cards[0].number + cards[1].number != target.number:
                return None
            found = (target.number, (cards[0].number, cards[1].number))
    for t in () if found else _number_choices(target, target_number):
        if len(cards) == 1:
            if t in _number_choices(cards[0], pinned[0]):
                found = (t, (t,))
        else:
            for a in _number_choices(cards[0], pinned[0]):
                b = t - a
                if b in _number_choices(cards[1], pinned[1]):
                    found = (t, (a, b))
                    break
        if found:
            break
    if found is None:
        return None
    # Wild DOS cards (colour None) take whichever colour the printed colours agree on.
    printed = [card.colour for card in cards]
    given = [target.colour, target_colour, *printed, *(colours or ())]
    fixed = [colour for colour in given if colour is not None]
    # Whether the colours given agree (counted in the list: a Colour's hash is Python code).
    agree = not fixed or fixed.count(fixed[0]) == len(fixed)
    common = fixed[0] if fixed and agree else None
    if not agree:
        bonus = Bonus.NONE
    elif len(cards) == 1:
        bonus = Bonus.SINGLE_COLOUR
    else:
        bonus = Bonus.DOUBLE_COLOUR
    default = common or Colour.RED
    if colours is None:  # (zip with strict=True, a keyword, is a slower call)
        declared = tuple([colour or default for colour in printed])
    else:
        declared = tuple([colour or pinned_colour or default
                          for colour, pinned_colour in zip(printed, colours, strict=True)])
    # Declaration's fields by position: a call with keywords costs more.
    return Declaration(found[0], target.colour or target_colour or default, found[1], declared,
                       bonus)


def canonical_declaration(target: Card, cards: Sequence[Card]) -> Declaration | None:
    """``declare_match(target, cards)`` with nothing pinned, or None.

    Every match played, listed for a bot or described asks this; the answer depends on the
    three cards alone, so it is worked out once per (target, cards) and kept.
    """
    return _canonical(target.id, cards[0].id, cards[1].id if len(cards) == 2 else -1)


@cache  # at most 41 targets x 902 card sets (5,989 of them match): a few MB at worst
def _canonical(target: int, first: int, second: int) -> Declaration | None:
    cards = (ALL_CARDS[first],) if second < 0 else (ALL_CARDS[first], ALL_CARDS[second])
    return _declare(ALL_CARDS[target], cards, None, None, None, None)


def mismatch_reason(target: Card, action: Match) -> IllegalActionError:
    """Why ``action`` does not match ``target``: the error that says so, with its RULES.md
    section."""
    cards = action.cards
    where = {"position": action.position, "target": target.code}
    if target.kind is CardKind.WILD_NUMBER:
        fixed = sum(c.number or 1 for c in cards)
        return IllegalActionError(
            N_("{cards} make at least {total}, but the Wild # at Center Row card {position} "
               "({target}) can only be declared 1 to 10"),
            rule="1.5", cards="+".join(c.code for c in cards), total=fixed, **where)
    if len(cards) == 1:
        card = cards[0]
        if card.kind is CardKind.WILD_NUMBER:
            return IllegalActionError(
                N_("a Wild # can be declared only 1 to 10, not {number}"), rule="1.3",
                number=target.number)
        return IllegalActionError(
            N_("{card} is a {number}, but Center Row card {position} ({target}) is a "
               "{target_number}"),
            rule="3.1", card=card.code, number=card.number, target_number=target.number,
            **where)
    wild = [c for c in cards if c.kind is CardKind.WILD_NUMBER]
    if wild:
        return IllegalActionError(
            N_("{cards} cannot make {number}: a Wild # can be declared only 1 to 10"),
            rule="1.3", cards="+".join(c.code for c in cards), number=target.number)
    total = sum(c.number or 0 for c in cards)
    return IllegalActionError(
        N_("{cards} make {total}, but Center Row card {position} ({target}) is a "
           "{target_number}"),
        rule="3.2", cards=f"{cards[0].code}+{cards[1].code}", total=total,
        target_number=target.number, **where)
