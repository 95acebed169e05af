"""Events in words: the one vocabulary of the web pages, the emails and ``dos-client``.

:func:`describe` puts one event, as the history gives it (a dict already redacted for its
reader), into one line. Each event is said once: a request's ``action`` rows are never told,
because the events they caused say the same with more ("alice matched R5 (Center Row card 2)
with Y5" rather than "alice played m2 Y5"), so one move reads as one line wherever it is read.

Seats are called by ``names``; the reader's own seat ``me`` (if given) is "you". A line starts
with a capital unless it starts with a seat's name, which is written as its player wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Names = Sequence[str] | Mapping[int, str]

# Events told by one template: ``subject`` is the seat (as a line begins), ``who`` the seat
# within a line, the rest the event's data (a field an older event lacks reads as "?").
_TEMPLATES = {
    "game_started": "The game started",
    "reshuffled": "The discard pile was shuffled into a new draw pile",
    "added": "{subject} added {card} to the Center Row",
    "placed": "{subject} placed {card} in the Center Row (colour bonus)",
    "dos_called": "{subject} called DOS",
    "dos_missed": "{subject} did not call DOS",
    "round_over": "Round {round} is over: {who} went out and scored {scored}",
    "timed_out": "{subject} ran out of time; the {policy} bot played the turn",
    "resigned": "{subject} resigned (the random bot plays on)",
    "forfeited": "{subject} forfeited after {timeouts} timeouts",
}
_BONUS = {"single_colour": ", a single colour match", "double_colour": ", a double colour match"}
_DREW_BECAUSE = {"double_colour": " after a double colour match", "caught": " for being caught"}


def describe(event: Mapping[str, Any], names: Names, me: int | None = None) -> str | None:
    """One event in plain words; None for the rows that say nothing of their own (the action
    rows, discards, the deal's Center Row)."""
    kind = event["kind"]
    data: Mapping[str, Any] = event.get("data") or {}
    seat = event.get("seat")
    you = seat is not None and seat == me
    who = _who(names, seat, me)
    subject = _capital(who)  # the seat, where it begins the line
    fields = _Fields({**data, "subject": subject, "who": who})
    if kind in _TEMPLATES:
        return _TEMPLATES[kind].format_map(fields)
    if kind == "round_started":
        return f"Round {fields['round']} began; {_who(names, data.get('first'), me)} " \
               "played first"
    if kind == "drew":
        count = int(data.get("count", 0))
        shown = f" ({' '.join(data['cards'])})" if data.get("cards") else ""
        if data.get("reason") == "deal":
            return f"{subject} {'were' if you else 'was'} dealt {_cards(count)}{shown}"
        return f"{subject} drew {_cards(count)}{shown}{_DREW_BECAUSE.get(str(data.get('reason')), '')}"
    if kind == "cr_flipped":
        if data.get("reason") == "deal":
            return None
        return f"The Center Row got {' '.join(data.get('cards', []))}"
    if kind == "matched":
        played = " + ".join(data.get("cards", []))
        return (f"{subject} matched {fields['target']} (Center Row card "
                f"{fields['position']}) with {played}{_BONUS.get(data.get('bonus', ''), '')}")
    if kind == "caught":
        later = " (the two cards come at the end of the turn)" if data.get("deferred") else ""
        return f"{_capital(_who(names, data.get('by'), me))} caught {who} without a DOS call{later}"
    if kind == "turn_ended":
        following = data.get("next")
        if following is None:
            return f"{subject} ended the turn"
        return (f"{subject} ended the turn; {_who(names, following, me)} "
                f"{'are' if following == me else 'is'} next")
    if kind == "game_over":
        scores = data.get("scores") or []
        points = scores[seat] if isinstance(seat, int) and 0 <= seat < len(scores) else "?"
        return f"Game over: {who} won with {points} points"
    if kind == "game_ended":
        scores = ", ".join(f"{_who(names, index, None)} {score}"
                           for index, score in enumerate(data.get("scores") or []))
        return f"Game over: {fields['reason']}" + (f". Final scores: {scores}" if scores else "")
    return None  # "action" (its events tell it), "discarded", and kinds of the future


def _who(names: Names, seat: Any, me: int | None) -> str:
    """``seat`` by its name; the reader's own seat is "you"; a seat not known is "someone"."""
    if not isinstance(seat, int):
        return "someone"
    if seat == me:
        return "you"
    if isinstance(names, Mapping):
        return names.get(seat) or "someone"
    return names[seat] if 0 <= seat < len(names) and names[seat] else "someone"


def _capital(text: str) -> str:
    """"you" and "someone" begin a line with a capital (a seat's name never changes)."""
    return text[:1].upper() + text[1:] if text in ("you", "someone") else text


def _cards(count: int) -> str:
    return f"{count} card{'' if count == 1 else 's'}"


class _Fields(dict[str, Any]):
    """An event's data for its words: a field an older event lacks reads as "?"."""

    def __missing__(self, key: str) -> str:
        return "?"
