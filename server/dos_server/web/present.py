"""Presentation: plain words and card chips from the services' dicts (no engine, no database).

Everything here is a pure function of the bodies that :mod:`dos_server.services.read` answers,
so the pages show exactly what the API shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from dos_server.cards import Chip, chip, chips  # the pages' and the emails' one card chip


def name_of(names: Sequence[str], seat: Any) -> str:
    if isinstance(seat, int) and 0 <= seat < len(names):
        return names[seat]
    return "someone"


def event_line(event: dict[str, Any], names: Sequence[str]) -> str | None:
    """One event of the history in plain words (None: not worth a line of its own)."""
    kind = event["kind"]
    data = event.get("data") or {}
    who = name_of(names, event.get("seat"))
    if kind == "action":
        return f"{who} played {data.get('action', '?')}"
    if kind == "matched":
        bonus = {"single_colour": " — colour match!",
                 "double_colour": " — double colour match: everyone else draws"}
        cards = "+".join(data.get("cards", []))
        return f"{who} matched {data.get('target', '?')} with {cards}{bonus.get(data.get('bonus', ''), '')}"
    if kind == "drew":
        count = data.get("count", 1)
        reason = str(data.get("reason", "draw")).replace("_", " ")
        seen = f": {' '.join(data['cards'])}" if data.get("cards") else ""
        plural = "card" if count == 1 else "cards"
        if reason == "deal":
            return f"{who} was dealt {count} {plural}{seen}"
        return f"{who} drew {count} {plural} ({reason}){seen}"
    if kind == "added":
        return f"{who} added {data.get('card', '?')} to the Center Row"
    if kind == "placed":
        return f"{who} placed {data.get('card', '?')} in the Center Row"
    if kind == "dos_called":
        return f"{who} called DOS!"
    if kind == "dos_missed":
        return f"{who} did not call DOS"
    if kind == "caught":
        return f"{who} was caught without calling DOS (by {name_of(names, data.get('by'))})"
    if kind == "turn_ended":
        following = data.get("next")
        return f"{who} ended the turn" + (f"; {name_of(names, following)} is next"
                                          if following is not None else "")
    if kind == "round_started":
        return f"Round {data.get('round', '?')} started"
    if kind == "round_over":
        return f"Round {data.get('round', '?')} over: {who} went out and scores {data.get('scored', '?')}"
    if kind == "game_over":
        scores = data.get("scores") or []
        seat = event.get("seat")
        points = scores[seat] if isinstance(seat, int) and 0 <= seat < len(scores) else "?"
        return f"Game over: {who} wins with {points} points"
    if kind == "game_started":
        return "The game started"
    if kind == "resigned":
        return f"{who} resigned (the random bot plays on)"
    if kind == "forfeited":
        return f"{who} forfeited after {data.get('timeouts', '?')} timeouts"
    if kind == "timed_out":
        return f"{who} ran out of time; the {data.get('policy', 'random')} bot played the turn"
    if kind == "game_ended":
        return f"Game over: {data.get('reason', 'ended')}"
    if kind == "reshuffled":
        return "The discard pile was shuffled into a new draw pile"
    return None


def history_lines(events: Sequence[dict[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """The events worth a line, with their time and sequence number."""
    lines = []
    for event in events:
        text = event_line(event, names)
        if text is not None:
            lines.append({"seq": event.get("seq"), "at": event.get("at"), "text": text,
                          "kind": event["kind"]})
    return lines


def since_last_visit(events: Sequence[dict[str, Any]], names: Sequence[str], me: int | None,
                     limit: int = 12) -> tuple[list[str], int]:
    """What others did since the seat last looked (its own moves left out), and how many more."""
    lines = []
    for event in events:
        if event.get("seat") == me and event["kind"] in ("action", "matched", "added", "placed",
                                                         "turn_ended", "dos_called"):
            continue
        if event["kind"] in ("matched", "turn_ended", "round_started"):
            continue  # the action line says it; keep the summary short
        text = event_line(event, names)
        if text is not None:
            lines.append(text)
    return lines[:limit], max(0, len(lines) - limit)


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def relative(when: datetime, now: datetime | None = None) -> str:
    """'in 3 hours', '5 minutes ago': the deadline in plain words (the page adds local time)."""
    now = now or datetime.now(UTC)
    seconds = int((when - now).total_seconds())
    future = seconds >= 0
    seconds = abs(seconds)
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            count = seconds // size
            words = f"{count} {unit}{'' if count == 1 else 's'}"
            break
    else:
        return "now"
    return f"in {words}" if future else f"{words} ago"


def utc_text(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


__all__ = ["Chip", "chip", "chips", "event_line", "history_lines", "name_of", "parse_time",
           "relative", "since_last_visit", "utc_text"]
