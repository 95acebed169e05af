"""Presentation: plain words and times from the services' dicts (no database; events are
put into words by ``dos_engine.wording``, as in the emails and the client).

Everything here is a pure function of the bodies that :mod:`dos_server.services.read` answers,
so the pages show exactly what the API shows. The functions that put events into words take the
page's ``language`` (``i18n.page_language()``), for the engine's wording in that language.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dos_engine.actions import Add, Catch, Match, Place, parse_action
from dos_engine.errors import InvalidActionError
from dos_engine.wording import describe


def history_lines(events: Sequence[dict[str, Any]], names: Sequence[str],
                  language: str = "en") -> list[dict[str, Any]]:
    """The events worth a line, with their time and sequence number, in ``language``."""
    lines = []
    for event in events:
        text = describe(event, names, language=language)
        if text is not None:
            lines.append({"seq": event.get("seq"), "at": event.get("at"), "text": text,
                          "kind": event["kind"]})
    return lines


def since_last_visit(events: Sequence[dict[str, Any]], names: Sequence[str], me: int | None,
                     limit: int = 12, language: str = "en") -> tuple[list[str], int]:
    """What others did since the seat last looked (its own moves left out), and how many more,
    in ``language``."""
    lines = []
    for event in events:
        if event.get("seat") == me and event["kind"] in ("matched", "added", "placed",
                                                         "turn_ended", "dos_called"):
            continue
        text = describe(event, names, me, language)
        if text is not None:
            lines.append(text)
    return lines[:limit], max(0, len(lines) - limit)


def own_lines(events: Sequence[dict[str, Any]], names: Sequence[str], me: int | None,
              language: str = "en") -> list[str]:
    """What the seat's own move did, in words ("You matched R5 (Center Row card 2) with Y5"),
    in ``language``."""
    lines = []
    for event in events:
        if event.get("seat") == me and event["kind"] in ("matched", "added", "placed", "drew",
                                                         "dos_called", "caught"):
            text = describe(event, names, me, language)
            if text is not None:
                lines.append(text)
    return lines


def low_hands(view: dict[str, Any] | None, names: Sequence[str], me: int | None,
              status: str) -> list[dict[str, Any]]:
    """The other seats down to one or two cards: who could go out next."""
    if view is None or status != "active":
        return []
    return [{"seat": seat, "name": names[seat], "cards": size}
            for seat, size in enumerate(view["hand_sizes"]) if seat != me and 0 < size <= 2]


def card_table(view: dict[str, Any] | None, actions: dict[str, Any] | None,
               names: Sequence[str], picked: Sequence[str] = ()) -> dict[str, Any] | None:
    """The seat's legal actions as a card table: what each Center Row card and each hand card
    can do, which single-card slot (add after a draw, place a bonus card) is open, and which
    buttons (draw, end, DOS, catch) are legal. None for a spectator.

    ``matches`` are (position, card codes) pairs: the page marks what a pick can match from
    them, and the server composes the same canonical notation from the picked cards.
    ``picked``: card codes to show ticked again (a refused pick), each code as often as named.
    """
    if view is None or view["hand"] is None or actions is None:
        return None
    matches: list[tuple[int, list[str]]] = []
    slot: str | None = None
    buttons: list[dict[str, Any]] = []
    for listed in actions["actions"]:
        try:
            action = parse_action(listed["action"])
        except InvalidActionError:  # every listed action is canonical; skip what is not
            continue
        if isinstance(action, Match):
            matches.append((action.position, [card.code for card in action.cards]))
        elif isinstance(action, Add):
            slot = "add"
        elif isinstance(action, Place):
            slot = "place"
        elif isinstance(action, Catch):
            buttons.append({"do": action.text(), "kind": "catch",
                            "name": names[action.seat] if action.seat < len(names) else "?"})
        else:
            buttons.append({"do": action.text(), "kind": action.text()})
    targets = {position for position, _ in matches}
    playable = {code for _, cards in matches for code in cards}
    picking = bool(matches) or slot is not None
    ticks = list(picked)
    drawn = view["drawn"]
    hand = []
    for code in view["hand"]:
        checked = code in ticks
        if checked:
            ticks.remove(code)
        hand.append({"code": code, "checked": checked, "drawn": code == drawn})
        if code == drawn:
            drawn = None  # one card was drawn: mark one of equal cards
    return {
        "hand": hand,
        "picking": picking,
        "matches": matches,
        "targets": targets,
        "playable": playable,
        "slot": slot,
        "buttons": buttons,
        "drawn": view["drawn"],
        "phase": view["phase"],
    }


__all__ = ["card_table", "history_lines", "low_hands", "own_lines", "since_last_visit"]
