"""Presentation: plain words and times from the services' dicts (no database; events are
put into words by ``dos_engine.wording``, as in the emails and the client).

Everything here is a pure function of the bodies that :mod:`dos_server.services.read` answers,
so the pages show exactly what the API shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from dos_engine.wording import describe


def history_lines(events: Sequence[dict[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """The events worth a line, with their time and sequence number."""
    lines = []
    for event in events:
        text = describe(event, names)
        if text is not None:
            lines.append({"seq": event.get("seq"), "at": event.get("at"), "text": text,
                          "kind": event["kind"]})
    return lines


def since_last_visit(events: Sequence[dict[str, Any]], names: Sequence[str], me: int | None,
                     limit: int = 12) -> tuple[list[str], int]:
    """What others did since the seat last looked (its own moves left out), and how many more."""
    lines = []
    for event in events:
        if event.get("seat") == me and event["kind"] in ("matched", "added", "placed",
                                                         "turn_ended", "dos_called"):
            continue
        text = describe(event, names)
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


__all__ = ["history_lines", "parse_time", "relative",
           "since_last_visit", "utc_text"]
