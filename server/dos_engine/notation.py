"""The lenient parser for people: shorthand resolved against the position, like SAN in chess.

Accepted on top of the canonical notation (``dos_engine.actions``):

* cards as people write them: ``r5``, ``Red 5``, ``blue#``, ``yellow wild``, ``dos`` (Wild DOS);
* a match without its CR position (``R5``, ``R3+Y4``, ``r3 and y4``), when only one CR card fits;
* a CR position without cards (``m2``), when only one match on it is legal;
* ``match 2 r3+y4``, ``on 2: R5``; declarations ``R#=7``, ``W2=B``, ``m1=7`` (a Wild # in the
  CR), ``m1=blue`` (a Wild DOS in the CR), which are checked;
* ``d`` (draw), ``e``/``done`` (end), ``call`` (dos), ``a R5``/``p R5`` (add/place),
  ``catch <name>``.

Shorthand that fits several legal actions raises ``AmbiguousActionError`` with the candidates.

This module only turns text into one action, given a position (any object with the few
attributes of ``Position``, which ``Game`` has); it plays nothing. The turn loop, which resolves
each action of ``m1 R5; m2; end`` in the position the ones before it leave, is ``Game``'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dos_engine.actions import (
    CALL_DOS,
    DRAW,
    END,
    NOTATION_HELP,
    Action,
    Add,
    Catch,
    Match,
    Place,
    parse_action,
)
from dos_engine.cards import Card, CardKind, Colour, parse_card_lenient, parse_colour
from dos_engine.errors import (
    AmbiguousActionError,
    DosError,
    IllegalActionError,
    InvalidActionError,
)
from dos_engine.matching import declare_match
from dos_engine.translation import N_


class Position(Protocol):
    """What the lenient parser needs to know of a game (``dos_engine.Game`` is one)."""

    @property
    def current(self) -> int: ...
    @property
    def players(self) -> tuple[str, ...]: ...
    @property
    def center_row(self) -> Sequence[Card]: ...
    def legal_actions(self, seat: int | None = None) -> list[Action]: ...
    def check(self, action: Action, seat: int | None = None) -> object: ...


_WORDS: dict[str, Action] = {
    "d": DRAW, "draw a card": DRAW, "pick up": DRAW,
    "e": END, "done": END, "end turn": END, "finish": END, "stop": END,
    "call": CALL_DOS, "call dos": CALL_DOS, "dos!": CALL_DOS, "say dos": CALL_DOS,
}
_CATCH = re.compile(r"^catch\s+(?P<who>.+)$", re.ASCII)
_CARD_VERB = re.compile(r"^(?P<verb>add|a|place|p|bonus)\s+(?P<card>.+)$", re.ASCII)
_MATCH = re.compile(
    r"^(?:m|match|on|cr)\s*(?P<pos>\d{1,3})(?:\s*=\s*(?P<decl>[a-z0-9]+))?"
    r"(?:\s*(?:with|:|,)?\s*(?P<cards>.+))?$"
,
    re.ASCII,
)
_CARD_DECL = re.compile(r"^(?P<card>.+?)\s*=\s*(?P<decl>[a-z0-9]+)$", re.ASCII)


@dataclass
class _CardSpec:
    card: Card
    number: int | None = None
    colour: Colour | None = None


def resolve_action(game: Position, text: str, seat: int | None = None) -> Action:
    """One action from what a person typed, resolved in ``game`` for ``seat`` (default: the
    player to move). Nothing is played.

    Raises:
        InvalidActionError: the text is not an action, even leniently read.
        AmbiguousActionError: shorthand that fits several legal actions; ``candidates``.
        IllegalActionError: shorthand for a match that no legal match fits, or declarations
            (``R#=7``) that do not fit; ``rule`` names the RULES.md section.
    """
    seat = game.current if seat is None else seat
    raw = text.strip()
    if not raw:
        raise InvalidActionError(N_("no action given. {help}"), help=NOTATION_HELP)
    try:
        return parse_action(raw)
    except InvalidActionError:
        pass
    low = " ".join(raw.lower().split())
    if low in _WORDS:
        return _WORDS[low]
    found = _CATCH.match(low)
    if found:
        return Catch(_seat_by_name(game, found.group("who")))
    found = _CARD_VERB.match(low)
    if found:
        card = parse_card_lenient(found.group("card"))
        return Add(card) if found.group("verb") in ("add", "a") else Place(card)
    found = _MATCH.match(low)
    if found:
        position = int(found.group("pos"))
        specs = _card_specs(found.group("cards")) if found.group("cards") else None
        return _resolve_match(game, seat, raw, position, found.group("decl"), specs)
    try:
        specs = _card_specs(low)
    except InvalidActionError:
        raise InvalidActionError(N_("{text} is not an action. {help}"), text=repr(raw),
                                 help=NOTATION_HELP) from None
    return _resolve_match(game, seat, raw, None, None, specs)


def _seat_by_name(game: Position, who: str) -> int:
    who = who.strip()
    if who.isdigit():
        return int(who)
    exact = [i for i, name in enumerate(game.players) if name.lower() == who]
    if exact:
        return exact[0]
    prefixed = [i for i, name in enumerate(game.players) if name.lower().startswith(who)]
    if len(prefixed) == 1:
        return prefixed[0]
    if prefixed:
        raise AmbiguousActionError(who, [Catch(i) for i in prefixed])
    raise InvalidActionError(
        N_("no player is called {who}; the players are {players}"), who=repr(who),
        players=", ".join(game.players),
    )


def _card_specs(text: str) -> list[_CardSpec]:
    text = text.strip()
    parts = [p for p in re.split(r"\s*(?:\+|,|&|\band\b)\s*", text) if p]
    if len(parts) == 1 and " " in parts[0]:
        # "r3 y4" - two cards separated by a space, unless it is one card ("red 5").
        try:
            return [_card_spec(parts[0])]
        except InvalidActionError:
            parts = parts[0].split()
    if not 1 <= len(parts) <= 2:
        raise InvalidActionError(N_("a match uses one card (3.1) or two cards (3.2)"))
    return [_card_spec(p) for p in parts]


def _card_spec(text: str) -> _CardSpec:
    found = _CARD_DECL.match(text)
    if not found:
        return _CardSpec(parse_card_lenient(text))
    card = parse_card_lenient(found.group("card"))
    decl = found.group("decl")
    if card.kind is CardKind.WILD_NUMBER:
        if not decl.isdigit() or not 1 <= int(decl) <= 10:
            raise IllegalActionError(N_("a Wild # is declared as a number 1 to 10, not {value}"),
                                     rule="1.3", value=repr(decl))
        return _CardSpec(card, number=int(decl))
    if card.kind is CardKind.WILD_DOS:
        if decl == "2":
            return _CardSpec(card)
        return _CardSpec(card, colour=parse_colour(decl))
    raise InvalidActionError(
        N_("only wild cards take a declaration; {card} is always {name}"), card=card.code,
        name=card.name(),
    )


def _resolve_match(
    game: Position,
    seat: int,
    raw: str,
    position: int | None,
    target_decl: str | None,
    specs: list[_CardSpec] | None,
) -> Action:
    legal = game.legal_actions(seat)
    cards = None if specs is None else Match(1, tuple(s.card for s in specs)).cards
    candidates: list[Action] = [
        a
        for a in legal
        if isinstance(a, Match)
        and (position is None or a.position == position)
        and (cards is None or a.cards == cards)
    ]
    if specs is not None and len(specs) == 1 and position is None:
        card = specs[0].card
        candidates += [a for a in legal if isinstance(a, Add | Place) and a.card == card]
    if not candidates:
        if position is not None and cards is not None:
            game.check(Match(position, cards), seat)  # raises the rule that forbids it
        if cards is not None:
            game.check(Match(1, cards) if position is None else Match(position, cards), seat)
            raise IllegalActionError(
                N_("no Center Row card can be matched with {cards} now"),
                rule="3.1" if len(cards) == 1 else "3.2", cards="+".join(c.code for c in cards),
            )
        raise IllegalActionError(
            N_("Center Row card {position} cannot be matched now"), rule="3.1",
            position=position,
        )
    declared = target_decl is not None or any(
        spec.number is not None or spec.colour is not None for spec in specs or []
    )
    if len(candidates) > 1 and declared:
        # Declarations narrow shorthand: "R#=7" fits only the CR cards a 7 can match.
        fitting = [a for a in candidates
                   if not isinstance(a, Match) or _declarations_error(game, a, target_decl,
                                                                       specs or []) is None]
        candidates = fitting or candidates
    if len(candidates) > 1:
        raise AmbiguousActionError(raw, candidates)
    action = candidates[0]
    if isinstance(action, Match) and declared:
        error = _declarations_error(game, action, target_decl, specs or [])
        if error is not None:
            raise error
    return action


def _declarations_error(
    game: Position, action: Match, target_decl: str | None, specs: list[_CardSpec]
) -> DosError | None:
    try:
        _check_declarations(game, action, target_decl, specs)
    except DosError as error:
        return error
    return None


def _check_declarations(
    game: Position, action: Match, target_decl: str | None, specs: list[_CardSpec]
) -> None:
    target = game.center_row[action.position - 1]
    target_number: int | None = None
    target_colour: Colour | None = None
    if target_decl is not None:
        if target.kind is CardKind.WILD_NUMBER and target_decl.isdigit():
            target_number = int(target_decl)
            if not 1 <= target_number <= 10:
                raise IllegalActionError(N_("a Wild # is declared as a number 1 to 10"),
                                         rule="1.5")
        elif target.kind is CardKind.WILD_DOS and not target_decl.isdigit():
            target_colour = parse_colour(target_decl)
        else:
            if target.kind is CardKind.WILD_NUMBER:
                template = N_("Center Row card {position} is {name}: its number is declared "
                              "(=7)")
            elif target.kind is CardKind.WILD_DOS:
                template = N_("Center Row card {position} is {name}: its colour is declared "
                              "(=B)")
            else:
                template = N_("Center Row card {position} is {name}: it takes no declaration")
            raise InvalidActionError(template, position=action.position, name=target.name(),
                                     card=target.code)
    if not specs and target_decl is None:
        return
    ordered = sorted(specs, key=lambda s: s.card.id) if specs else []
    numbers = [s.number for s in ordered] if ordered else None
    colours = [s.colour for s in ordered] if ordered else None
    pinned = declare_match(target, action.cards, target_number, numbers, target_colour, colours)
    if pinned is None:
        raise IllegalActionError(
            N_("those declarations do not make {cards} match {target}"),
            rule="1.3" if target.number is not None else "1.5",
            cards="+".join(c.code for c in action.cards), target=target.code,
        )
    best = declare_match(target, action.cards)
    if best is not None and pinned.bonus != best.bonus:
        raise IllegalActionError(
            N_("that colour declaration would give up the colour bonus; the engine declares "
               "wild colours so that you earn it (placing the bonus card stays optional). "
               "Leave the colour out: {action}"),
            rule="3.5", action=action.text(),
        )
