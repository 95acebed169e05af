"""Human output with rich: coloured cards that stay readable without colour (NO_COLOR, pipes)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from rich.text import Text

_STYLES = {"R": "bold red", "G": "bold green", "B": "bold blue", "Y": "bold yellow",
           "W": "bold magenta"}


def card(code: str) -> Text:
    """A card as ``[R5]``; the code itself carries the colour letter, so no meaning is lost."""
    return Text(f"[{code}]", style=_STYLES.get(code[:1].upper(), ""))


def cards(codes: Sequence[str]) -> Text:
    out = Text()
    for index, code in enumerate(codes):
        if index:
            out.append(" ")
        out.append_text(card(code))
    return out


def names_of(game: dict[str, Any]) -> list[str]:
    return [seat.get("name") or f"seat {seat['seat']}" for seat in game["seats"]]


def title(game: dict[str, Any], label: str) -> str:
    """The game's saved name and its title (``friday “Friday cards”``, as ``games`` lists it),
    either alone, else its players: never the id twice."""
    named = label if label and label != game["id"] else ""
    if game.get("title"):
        return f"{named} “{game['title']}”" if named else str(game["title"])
    return named or " vs ".join(names_of(game))


def marked_names(game: dict[str, Any]) -> list[str]:
    """Names with what a player should know about the seat: resigned, bot, on vacation."""
    out = []
    for seat, name in zip(game["seats"], names_of(game), strict=True):
        marks = []
        if seat.get("resigned"):
            marks.append("resigned, a bot plays on")
        elif seat.get("bot"):
            marks.append("bot")
        if seat.get("vacation_until"):
            marks.append(f"on vacation until {local_time(seat['vacation_until'])}")
        out.append(f"{name} ({'; '.join(marks)})" if marks else name)
    return out


def _moment(iso: str) -> datetime:
    """An ISO timestamp from the server; one without an offset is UTC."""
    moment = datetime.fromisoformat(iso)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def local_time(iso: str) -> str:
    """An ISO timestamp as the reader's local weekday and time (with the date if not soon)."""
    moment = _moment(iso).astimezone()
    now = datetime.now(moment.tzinfo)
    if abs(moment - now) < timedelta(days=6):
        return moment.strftime("%a %H:%M")
    return moment.strftime("%a %d %b %Y %H:%M")


def deadline(iso: str, now: datetime | None = None) -> str:
    """``in 1 day 4 h (Fri 09:31)``: relative and absolute, in local time."""
    moment = _moment(iso)
    now = now or datetime.now(UTC)
    left = moment - now
    if left.total_seconds() <= 0:
        return f"passed ({local_time(iso)})"
    minutes = int(left.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = []
    if days:
        parts.append(f"{days} day{'s' if days != 1 else ''}")
    if hours:
        parts.append(f"{hours} h")
    if not days and (minutes or not hours):
        parts.append(f"{minutes} min")
    return f"in {' '.join(parts)} ({local_time(iso)})"


def table(console: Console, game: dict[str, Any], label: str, command: str = "dos-client") -> None:
    """The table as the token's seat sees it, then the seat's numbered moves (if any).

    ``command`` is how the person calls the client (``dos-client --profile bob``): hints are
    printed as whole commands that can be pasted.
    """
    names = names_of(game)
    view = game.get("view")
    header = Text(f"{title(game, label)} ({game['id']}) · {game['status']} · "
                  f"version {game['version']}", style="bold")
    console.print(header)
    if view is None:
        if game["status"] == "waiting":
            awaited = [s["name"] or "an open seat" for s in game["seats"] if not s.get("claimed")]
            console.print(f"Waiting for {', '.join(awaited) or 'nobody'} to join. The game "
                          "starts when everyone has joined, or when the host starts it.")
        return
    you = game.get("you")
    current = view["current"]
    if view.get("winner") is not None:
        console.print(Text(f"Game over: {names[view['winner']]} won.", style="bold"))
    else:
        whose = "your turn" if current == you else f"{names[current]}'s turn"
        line = f"Round {view['round']} · {whose}"
        if game.get("turn_deadline"):
            line += f" · deadline {deadline(game['turn_deadline'])}"
        console.print(line)
    marked = marked_names(game)
    scores = " · ".join(f"{marked[i]} {s}" for i, s in enumerate(view["scores"]))
    console.print(f"Scores: {scores} (target {view['options']['target_score']})")
    row = Text("Center Row: ")
    for slot in view["center_row"]:
        row.append(f" {slot['position']}:")
        row.append_text(card(slot["card"]))
        if slot.get("matched_with"):
            row.append("←")
            row.append_text(cards(slot["matched_with"]))
    console.print(row)
    if view.get("hand") is not None:
        hand = Text("Your hand:   ")
        hand.append_text(cards(view["hand"]))
        console.print(hand)
        if view.get("drawn"):
            drawn = Text("You drew:    ")
            drawn.append_text(card(view["drawn"]))
            console.print(drawn)
    others = " · ".join(
        f"{names[i]} {n} card{'s' if n != 1 else ''}"
        for i, n in enumerate(view["hand_sizes"]) if i != you
    )
    console.print(f"Others: {others} · draw pile {view['draw_pile_size']}")
    if view.get("placements_left") and current == you and view.get("hand"):
        example = shlex.quote(f"place {view['hand'][0]}")
        console.print(f"You may place {view['placements_left']} bonus card(s) into the Center "
                      f"Row: `{command} move {example}` (the turn ends by itself after the "
                      f"last one), or `{command} move end` to place no more.")
    numbered(console, view.get("legal_actions") or [], command)


def numbered(console: Console, actions: Sequence[str], command: str = "dos-client") -> None:
    """The legal actions in a few columns, numbered as `moves` numbers them."""
    if not actions:
        return
    console.print(f"Your moves (play one with `{command} move N`; `{command} moves` explains "
                  "them):")
    cells = [f"{n:>3} {action}" for n, action in enumerate(actions, start=1)]
    width = max(len(cell) for cell in cells) + 2
    per_line = max(1, 96 // width)
    for start in range(0, len(cells), per_line):
        chunk = cells[start:start + per_line]
        console.print("".join(c.ljust(width) for c in chunk[:-1]) + chunk[-1])


def moves(console: Console, listing: dict[str, Any], command: str = "dos-client",
          why_not: str = "") -> None:
    """The numbered legal actions with what each does; ``why_not`` says why there are none."""
    if not listing["actions"]:
        console.print(f"No legal actions for you right now{': ' if why_not else '.'}{why_not}")
        return
    rows = [("#", "notation", "what it does")] + [
        (str(entry["number"]), entry["action"], entry["description"])
        for entry in listing["actions"]]
    number_width = max(len(row[0]) for row in rows)
    action_width = max(len(row[1]) for row in rows)
    for index, (number, action, description) in enumerate(rows):
        line = f"{number.rjust(number_width)}  {action.ljust(action_width)}  {description}"
        console.print(Text(line, style="bold" if index == 0 else ""))
    if not listing.get("your_turn"):
        console.print(f"(It is not your turn{': ' + why_not if why_not else '.'})")
    else:
        console.print(f"Play one with `{command} move N`.")


# Events outside any one turn: flush left (a round's start is its header); a turn's events are
# indented under it.
_BETWEEN_TURNS = ("game_started", "round_over", "game_over", "game_ended", "timed_out",
                  "resigned", "forfeited")


def event_lines(events: Sequence[dict[str, Any]], names: Sequence[str],
                times: bool = False) -> list[str]:
    """Events in plain words (``dos_engine.wording``, as the server's pages and emails say
    them), in the order they happened; ``times`` adds when each happened."""
    from dos_engine.wording import describe

    lines = []
    for event in events:
        line = describe(event, names)
        if line is None:
            continue
        if event["kind"] == "round_started":
            line = f"-- {line} --"
        elif event["kind"] not in _BETWEEN_TURNS:
            line = f"  {line}"
        if times and event.get("at"):
            line = f"{line} {local_time(event['at'])}" if line.startswith("--") else \
                f"{local_time(event['at'])}  {line.strip()}"
        lines.append(line)
    return lines
