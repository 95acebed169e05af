"""Human output with rich: coloured cards that stay readable without colour (NO_COLOR, pipes)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console
from rich.text import Text

from dos_client import i18n
from dos_client.i18n import N_, _, ngettext

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


# A game's status (the API's word) in words.
_STATUS = {"waiting": N_("waiting"), "active": N_("active"), "finished": N_("finished"),
           "cancelled": N_("cancelled")}
# Weekdays and months as strftime's %a and %b say them in English, in the reader's language.
_WEEKDAYS = (N_("Mon"), N_("Tue"), N_("Wed"), N_("Thu"), N_("Fri"), N_("Sat"), N_("Sun"))
_MONTHS = (N_("Jan"), N_("Feb"), N_("Mar"), N_("Apr"), N_("May"), N_("Jun"), N_("Jul"),
           N_("Aug"), N_("Sep"), N_("Oct"), N_("Nov"), N_("Dec"))


def status(word: str) -> str:
    """A game's status (``waiting``, ``active``, ...) in the reader's language."""
    return _(_STATUS[word]) if word in _STATUS else word


def names_of(game: dict[str, Any]) -> list[str]:
    return [seat.get("name") or _("seat {number}").format(number=seat["seat"])
            for seat in game["seats"]]


def title(game: dict[str, Any], label: str) -> str:
    """The game's saved name and its title (``friday “Friday cards”``, as ``games`` lists it),
    either alone, else its players: never the id twice."""
    named = label if label and label != game["id"] else ""
    if game.get("title"):
        return f"{named} “{game['title']}”" if named else str(game["title"])
    return named or _(" vs ").join(names_of(game))


def marked_names(game: dict[str, Any]) -> list[str]:
    """Names with what a player should know about the seat: resigned, bot, on vacation."""
    out = []
    for seat, name in zip(game["seats"], names_of(game), strict=True):
        marks = []
        if seat.get("resigned"):
            marks.append(_("resigned, a bot plays on"))
        elif seat.get("bot"):
            marks.append(_("bot"))
        if seat.get("vacation_until"):
            marks.append(_("on vacation until {when}").format(
                when=local_time(seat["vacation_until"])))
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
    weekday, clock = _(_WEEKDAYS[moment.weekday()]), f"{moment:%H:%M} {utc_offset(moment)}"
    if abs(moment - now) < timedelta(days=6):
        return _("{weekday} {time}").format(weekday=weekday, time=clock)
    return _("{weekday} {day} {month} {year} {time}").format(
        weekday=weekday, day=f"{moment.day:02d}", month=_(_MONTHS[moment.month - 1]),
        year=moment.year, time=clock)


def utc_offset(moment: datetime) -> str:
    """The zone a local time is in, as its offset ("UTC+7", "UTC-3:30", "UTC"): the reader's
    machine knows its zone, not always its name."""
    offset = moment.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    if not minutes:
        return "UTC"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{'+' if minutes > 0 else '-'}{hours}" + (f":{rest:02d}" if rest else "")


def deadline(iso: str, now: datetime | None = None) -> str:
    """``in 1 day 4 h (Fri 09:31)``: relative and absolute, in local time."""
    moment = _moment(iso)
    now = now or datetime.now(UTC)
    left = moment - now
    if left.total_seconds() <= 0:
        return _("passed ({when})").format(when=local_time(iso))
    minutes = int(left.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = []
    if days:
        parts.append(ngettext("{count} day", "{count} days", days).format(count=days))
    if hours:
        parts.append(_("{count} h").format(count=hours))
    if not days and (minutes or not hours):
        parts.append(_("{count} min").format(count=minutes))
    return _("in {left} ({when})").format(left=" ".join(parts), when=local_time(iso))


def table(console: Console, game: dict[str, Any], label: str, command: str = "dos-client") -> None:
    """The table as the token's seat sees it, then the seat's numbered moves (if any).

    ``command`` is how the person calls the client (``dos-client --profile bob``): hints are
    printed as whole commands that can be pasted.
    """
    names = names_of(game)
    view = game.get("view")
    header = Text(_("{title} ({id}) · {status} · version {version}").format(
        title=title(game, label), id=game["id"], status=status(game["status"]),
        version=game["version"]), style="bold")
    console.print(header)
    series_lines(console, game, command)
    if view is None:
        if game["status"] == "waiting":
            awaited = [s["name"] or _("an open seat") for s in game["seats"]
                       if not s.get("claimed")]
            console.print(_("Waiting for {players} to join. The game starts when everyone has "
                            "joined, or when the host starts it.").format(
                                players=", ".join(awaited) or _("nobody")))
        return
    you = game.get("you")
    current = view["current"]
    if view.get("winner") is not None:
        console.print(Text(_("Game over: {name} won.").format(name=names[view["winner"]]),
                           style="bold"))
    else:
        whose = _("your turn") if current == you else \
            _("{name}'s turn").format(name=names[current])
        line = _("Round {round} · {whose}").format(round=view["round"], whose=whose)
        if game.get("turn_deadline"):
            line += " · " + _("deadline {when}").format(when=deadline(game["turn_deadline"]))
        console.print(line)
    marked = marked_names(game)
    scores = " · ".join(f"{marked[i]} {s}" for i, s in enumerate(view["scores"]))
    console.print(_("Scores: {scores} (target {target})").format(
        scores=scores, target=view["options"]["target_score"]))
    if game.get("orders"):  # the seat's own standing orders (dos-client orders)
        console.print(_("Your standing orders: {orders}.").format(orders=", ".join(game["orders"])))
    row = Text(_("Center Row:") + " ")
    for slot in view["center_row"]:
        row.append(f" {slot['position']}:")
        row.append_text(card(slot["card"]))
        if slot.get("matched_with"):
            row.append("←")
            row.append_text(cards(slot["matched_with"]))
    console.print(row)
    if view.get("hand") is not None:
        hand_label, drawn_label = _("Your hand:"), _("You drew:")
        width = max(len(hand_label), len(drawn_label)) + 1
        hand = Text(hand_label.ljust(width + 2))
        hand.append_text(cards(view["hand"]))
        console.print(hand)
        if view.get("drawn"):
            drawn = Text(drawn_label.ljust(width + 2))
            drawn.append_text(card(view["drawn"]))
            console.print(drawn)
    others = " · ".join(
        ngettext("{name} {count} card", "{name} {count} cards", n).format(name=names[i], count=n)
        for i, n in enumerate(view["hand_sizes"]) if i != you
    )
    console.print(_("Others: {others} · draw pile {count}").format(
        others=others, count=view["draw_pile_size"]))
    if view.get("placements_left") and current == you and view.get("hand"):
        example = shlex.quote(f"place {view['hand'][0]}")
        console.print(_("You may place {count} bonus card(s) into the Center Row: `{command} "
                        "move {example}` (the turn ends by itself after the last one), or "
                        "`{command} move end` to place no more.").format(
                            count=view["placements_left"], command=command, example=example))
    numbered(console, view.get("legal_actions") or [], command)


def series_lines(console: Console, game: dict[str, Any], command: str = "dos-client") -> None:
    """A game of a rematch series: its number and the wins so far; a finished game's rematch
    and who accepted it."""
    series = game.get("series")
    if series:
        wins = ", ".join(f"{entry['name']} {entry['wins']}" for entry in series["score"])
        console.print(_("Game {no} of the series, wins so far: {wins}").format(
            no=series["no"], wins=wins))
    challenge = game.get("rematch")
    if challenge and challenge["status"] == "cancelled":  # the next rematch asks anew
        challenge = None
    if challenge:
        yes = [s["name"] for s in challenge["seats"] if s["accepted"]]
        no = [s["name"] for s in challenge["seats"] if not s["accepted"]]
        if challenge["status"] == "waiting":
            console.print(_("Rematch {id}: accepted by {yes}; not yet: {no}. Accept with "
                            "`{command} rematch`.").format(
                                id=challenge["game_id"], yes=", ".join(yes) or "-",
                                no=", ".join(no) or "-", command=command))
        else:
            console.print(_("Rematch {id}: {status}.").format(
                id=challenge["game_id"], status=status(challenge["status"])))
    elif game.get("status") == "finished" and game.get("you") is not None:
        console.print(_("Play again with the same players: `{command} rematch`.").format(
            command=command))


def numbered(console: Console, actions: Sequence[str], command: str = "dos-client") -> None:
    """The legal actions in a few columns, numbered as `moves` numbers them."""
    if not actions:
        return
    console.print(_("Your moves (play one with `{command} move N`; `{command} moves` explains "
                    "them):").format(command=command))
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
        console.print(_("No legal actions for you right now: {why}").format(why=why_not)
                      if why_not else _("No legal actions for you right now."))
        return
    rows = [("#", _("notation"), _("what it does"))] + [
        (str(entry["number"]), entry["action"], entry["description"])
        for entry in listing["actions"]]
    number_width = max(len(row[0]) for row in rows)
    action_width = max(len(row[1]) for row in rows)
    for index, (number, action, description) in enumerate(rows):
        line = f"{number.rjust(number_width)}  {action.ljust(action_width)}  {description}"
        console.print(Text(line, style="bold" if index == 0 else ""))
    if not listing.get("your_turn"):
        console.print(_("(It is not your turn: {why})").format(why=why_not) if why_not
                      else _("(It is not your turn.)"))
    else:
        console.print(_("Play one with `{command} move N`.").format(command=command))


# Events outside any one turn: flush left (a round's start is its header); a turn's events are
# indented under it.
_BETWEEN_TURNS = ("game_started", "round_over", "game_over", "game_ended", "timed_out",
                  "resigned", "forfeited", "game_cancelled", "seat_handed_to_bot",
                  "notification_resent")


def event_lines(events: Sequence[dict[str, Any]], names: Sequence[str],
                times: bool = False) -> list[str]:
    """Events in plain words (``dos_engine.wording``, as the server's pages and emails say
    them) in the reader's language, in the order they happened; ``times`` adds when each
    happened."""
    from dos_engine.wording import describe

    language = i18n.language()
    lines = []
    for event in events:
        line = describe(event, names, language=language)
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
