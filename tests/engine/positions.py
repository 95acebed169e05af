"""Hand-made positions for the engine tests.

``make_position`` builds a ``Game`` from the few things a test cares about (hands, Center Row,
whose turn, turn flags, options, the top of the draw pile) and puts every other card of the
108-card deck somewhere (the draw pile by default), so that ``Game.from_dict`` accepts it.

``position_from_spec`` reads the compact ``state`` objects of ``tests/data/positions.json``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dos_engine import Action, Game, IllegalActionError, new_deck, parse_action

PLAYER_NAMES = ("ann", "bob", "cat", "dan")

CenterSpec = str | Mapping[str, Any] | tuple[str, Sequence[str]]

DEFAULT_TURN: dict[str, Any] = {
    "drawn": None,
    "has_drawn": False,
    "matches": 0,
    "added": False,
    "bonuses": 0,
    "bonus_phase": False,
    "placements_left": 0,
    "called_dos": False,
}


def _slot(spec: CenterSpec) -> dict[str, Any]:
    """A Center Row slot: ``"R5"``, ``("R5", ["G5"])`` or ``{"card": "R5", "matched_with": [...]}``."""
    if isinstance(spec, str):
        return {"card": spec.upper(), "matched_with": None}
    if isinstance(spec, tuple):
        card, matched = spec
        return {"card": card.upper(), "matched_with": [c.upper() for c in matched]}
    matched_with = spec.get("matched_with")
    return {
        "card": str(spec["card"]).upper(),
        "matched_with": None if matched_with is None else [str(c).upper() for c in matched_with],
    }


def make_position(
    hands: Sequence[Sequence[str]],
    center_row: Sequence[CenterSpec] = ("R5", "G7"),
    current: int = 0,
    options: Mapping[str, Any] | None = None,
    draw_pile_top: Sequence[str] = (),
    discard: Sequence[str] = (),
    turn: Mapping[str, Any] | None = None,
    rest: str | int = "draw",
    dealer: int | None = None,
    scores: Sequence[int] | None = None,
    dos_missed: Sequence[bool] | None = None,
    dos_calls: Sequence[bool] | None = None,
    players: Sequence[str] | None = None,
    seed: str = "hand-made position",
    round_no: int = 1,
) -> Game:
    """A game in a hand-made position.

    ``draw_pile_top`` lists the next cards to be drawn, the first one drawn first. Cards not
    named anywhere go to ``rest``: ``"draw"`` (under ``draw_pile_top``, in the documented deck
    order), ``"discard"``, or a seat number (into that player's hand). ``turn`` overrides the
    turn flags of ``Game.to_dict()["turn"]``. Options without ``dos_rule`` are read as a stored
    state's are: the first reading of the DOS rule (``"v1"``). Under the printed DOS rule the
    position is at rest, so ``dos_missed`` follows from the hands and ``dos_calls`` (5.1).
    """
    count = len(hands)
    names = list(players) if players is not None else list(PLAYER_NAMES[:count])
    slots = [_slot(spec) for spec in center_row]
    hand_lists = [[code.upper() for code in hand] for hand in hands]
    top = [code.upper() for code in draw_pile_top]
    discard_pile = [code.upper() for code in discard]
    used: Counter[str] = Counter()
    for hand in hand_lists:
        used.update(hand)
    for slot in slots:
        used[slot["card"]] += 1
        used.update(slot["matched_with"] or [])
    used.update(top)
    used.update(discard_pile)
    leftover: list[str] = []
    available = Counter(card.code for card in new_deck())
    for code, n in used.items():
        if n > available[code]:
            raise ValueError(f"the position uses {n} x {code}, but the deck has {available[code]}")
    remaining = available - used
    for card in new_deck():
        if remaining[card.code]:
            remaining[card.code] -= 1
            leftover.append(card.code)
    draw_pile = list(reversed(top))  # top card last
    if rest == "draw":
        draw_pile = leftover + draw_pile
    elif rest == "discard":
        discard_pile = discard_pile + leftover
    elif isinstance(rest, int):
        hand_lists[rest].extend(leftover)
    else:
        raise ValueError(f"rest must be 'draw', 'discard' or a seat, not {rest!r}")
    state: dict[str, Any] = {
        "schema": 1,
        "players": names,
        "seed": seed,
        "options": dict(options or {}),
        "scores": list(scores) if scores is not None else [0] * count,
        "round": round_no,
        "dealer": dealer if dealer is not None else (current - 1) % count,
        "current": current,
        "hands": hand_lists,
        "draw_pile": draw_pile,
        "discard_pile": discard_pile,
        "center_row": slots,
        "reshuffles": 0,
        "turn": {**DEFAULT_TURN, **(turn or {})},
        "dos_missed": list(dos_missed) if dos_missed is not None else [False] * count,
        "dos_calls": list(dos_calls) if dos_calls is not None else [False] * count,
        "winner": None,
        "actions_played": 0,
    }
    return Game.from_dict(state)


def position_from_spec(spec: Mapping[str, Any]) -> Game:
    """Build the game described by a ``state`` object of ``tests/data/positions.json``."""
    known = {
        "hands", "center_row", "current", "options", "draw_pile_top", "discard", "turn",
        "rest", "dealer", "scores", "dos_missed", "dos_calls",
    }
    unknown = set(spec) - known
    if unknown:
        raise ValueError(f"unknown keys in a position's state: {sorted(unknown)}")
    return make_position(
        hands=spec["hands"],
        center_row=spec["center_row"],
        current=spec.get("current", 0),
        options=spec.get("options"),
        draw_pile_top=spec.get("draw_pile_top", ()),
        discard=spec.get("discard", ()),
        turn=spec.get("turn"),
        rest=spec.get("rest", "draw"),
        dealer=spec.get("dealer"),
        scores=spec.get("scores"),
        dos_missed=spec.get("dos_missed"),
        dos_calls=spec.get("dos_calls"),
    )


# -- small helpers for the tests -----------------------------------------------------------------


def legal(game: Game, seat: int | None = None) -> list[str]:
    """The legal actions of ``seat`` as canonical texts, in the engine's order."""
    return [action.text() for action in game.legal_actions(seat)]


def act(text: str) -> Action:
    return parse_action(text)


def play(game: Game, texts: str, seat: int | None = None) -> list[Any]:
    """Play ``;``-separated canonical actions one by one; return all events."""
    events: list[Any] = []
    for part in texts.split(";"):
        if part.strip():
            events.extend(game.play(parse_action(part), seat))
    return events


def assert_refused(game: Game, text: str, rule: str | None, seat: int | None = None) -> IllegalActionError:
    """The action is refused by ``play`` and ``check`` for ``rule``, and the game is unchanged."""
    before = game.to_dict()
    action = parse_action(text)
    assert action not in game.legal_actions(seat), f"{text} is listed as legal"
    with pytest.raises(IllegalActionError) as checked:
        game.check(action, seat)
    assert checked.value.rule == rule, f"{text}: rule {checked.value.rule}, expected {rule}"
    with pytest.raises(IllegalActionError) as played:
        game.play(action, seat)
    assert played.value.rule == rule
    assert game.to_dict() == before, f"refused {text} changed the game"
    return played.value


def hand_of(game: Game, seat: int) -> list[str]:
    return sorted(card.code for card in game.hands[seat])


def codes(cards: Sequence[Any]) -> list[str]:
    return [card.code for card in cards]

