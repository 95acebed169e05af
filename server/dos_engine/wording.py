"""Events in words: the one vocabulary of the web pages, the emails and ``dos-client``.

:func:`describe` puts one event, as the history gives it (a dict already redacted for its
reader), into one line. Each event is said once: a request's ``action`` rows are never told,
because the events they caused say the same with more ("alice matched R5 (Center Row card 2)
with Y5" rather than "alice played m2 Y5"), so one move reads as one line wherever it is read.

Seats are called by ``names``; the reader's own seat ``me`` (if given) is "you". A line starts
with a capital unless it starts with a seat's name, which is written as its player wrote it.

Every line is one whole sentence of the engine's catalog (``dos_engine.translation``), in the
reader's ``language``; card codes and notation (``R5``, ``W#``) stay as they are in every
language.
"""

from __future__ import annotations

import gettext
from collections.abc import Mapping, Sequence
from typing import Any

from dos_engine.cards import Card, CardKind, Colour
from dos_engine.translation import N_, translator

Names = Sequence[str] | Mapping[int, str]

# Events told by one sentence: ``subject`` is the seat (as a line begins), ``who`` the seat
# within a line, the rest the event's data (a field an older event lacks reads as "?").
_TEMPLATES = {
    "game_started": N_("The game started"),
    "reshuffled": N_("The discard pile was shuffled into a new draw pile"),
    "added": N_("{subject} added {card} to the Center Row"),
    "placed": N_("{subject} placed {card} in the Center Row (colour bonus)"),
    "dos_called": N_("{subject} called DOS"),
    "dos_missed": N_("{subject} did not call DOS"),
    "round_over": N_("Round {round} is over: {who} went out and scored {scored}"),
    "timed_out": N_("{subject} ran out of time; the {policy} bot played the turn"),
    "resigned": N_("{subject} resigned (the random bot plays on)"),
    "forfeited": N_("{subject} forfeited after {timeouts} timeouts"),
    # The server's operator (dos-server admin) changed the game.
    "game_cancelled": N_("The server's operator cancelled the game"),
    "notification_resent": N_("The server's operator sent a notification again"),
}
# A seat a bot plays from now on (``seat_handed_to_bot``), by who decided it: the other
# players' vote (services/abandon.py), or the server's operator (``"by": "operator"``).
_HANDED = {
    "operator": N_("The {bot} bot plays {who}'s seat from now on (the server's operator "
                   "decided)"),
}
_HANDED_BY_VOTE = N_("By the other players' vote, a bot plays for {who} from now on")
_MATCHED = {
    "single_colour": N_("{subject} matched {target} (Center Row card {position}) with {cards}, "
                        "a single colour match"),
    "double_colour": N_("{subject} matched {target} (Center Row card {position}) with {cards}, "
                        "a double colour match"),
}
# Why the server ended a game (``game_ended``'s ``reason``, dos_server.services.play): said in
# the reader's language when it is one of these, as it was stored otherwise.
_REASONS = (N_("no person is left playing"), N_("the other players voted to end the game"))
_COLOURS = {Colour.RED: N_("red"), Colour.GREEN: N_("green"), Colour.BLUE: N_("blue"),
            Colour.YELLOW: N_("yellow")}


def describe(event: Mapping[str, Any], names: Names, me: int | None = None,
             language: str | None = "en") -> str | None:
    """One event in plain words, in ``language`` (English for one the engine has no catalog
    of); None for the rows that say nothing of their own (the action rows, discards, the deal's
    Center Row).

    The first event of an action a standing order played carries ``by_order`` (the server's
    ``services/orders``): its line says so.
    """
    line = _describe(event, names, me, language)
    data = event.get("data") or {}
    if line is not None and data.get("by_order") is True:
        return translator(language).gettext("{line} (by standing order)").format(line=line)
    return line


def _describe(event: Mapping[str, Any], names: Names, me: int | None,
              language: str | None) -> str | None:
    t = translator(language)
    kind = event["kind"]
    data: Mapping[str, Any] = event.get("data") or {}
    seat = event.get("seat")
    you = seat is not None and seat == me
    who = _who(names, seat, me, t)
    subject = _who(names, seat, me, t, capital=True)  # the seat, where it begins the line
    fields = _Fields({**data, "subject": subject, "who": who})
    if kind in _TEMPLATES:
        return t.gettext(_TEMPLATES[kind]).format_map(fields)
    if kind == "seat_handed_to_bot":
        return t.gettext(_HANDED.get(data.get("by") or "", _HANDED_BY_VOTE)).format_map(fields)
    if kind == "round_started":
        return t.gettext("Round {round} began; {first} played first").format_map(
            _Fields(fields, first=_who(names, data.get("first"), me, t)))
    if kind == "drew":
        return _drew(t, data, fields, you)
    if kind == "cr_flipped":
        if data.get("reason") == "deal":
            return None
        return t.gettext("The Center Row got {cards}").format_map(
            _Fields(cards=" ".join(data.get("cards", []))))
    if kind == "matched":
        sentence = _MATCHED.get(data.get("bonus") or "",
                                N_("{subject} matched {target} (Center Row card {position}) "
                                   "with {cards}"))
        return t.gettext(sentence).format_map(
            _Fields(fields, cards=" + ".join(data.get("cards", []))))
    if kind == "caught":
        sentence = (N_("{catcher} caught {who} without a DOS call (the two cards come at the "
                       "end of the turn)") if data.get("deferred")
                    else N_("{catcher} caught {who} without a DOS call"))
        return t.gettext(sentence).format_map(
            _Fields(fields, catcher=_who(names, data.get("by"), me, t, capital=True)))
    if kind == "turn_ended":
        following = data.get("next")
        if following is None:
            return t.gettext("{subject} ended the turn").format_map(fields)
        sentence = (N_("{subject} ended the turn; {next} are next") if following == me
                    else N_("{subject} ended the turn; {next} is next"))
        return t.gettext(sentence).format_map(
            _Fields(fields, next=_who(names, following, me, t)))
    if kind == "nudged":
        return t.gettext("{subject} nudged {target}").format_map(
            _Fields(fields, target=_who(names, data.get("target"), me, t)))
    if kind == "game_over":
        scores = data.get("scores") or []
        points = scores[seat] if isinstance(seat, int) and 0 <= seat < len(scores) else "?"
        return t.gettext("Game over: {who} won with {points} points").format_map(
            _Fields(fields, points=points))
    if kind == "game_ended":
        reason = data.get("reason")
        reason = t.gettext(reason) if reason in _REASONS else fields["reason"]
        scores = ", ".join(f"{_who(names, index, None, t)} {score}"
                           for index, score in enumerate(data.get("scores") or []))
        if not scores:
            return t.gettext("Game over: {reason}").format(reason=reason)
        return t.gettext("Game over: {reason}. Final scores: {scores}").format(
            reason=reason, scores=scores)
    return None  # "action" (its events tell it), "discarded", and kinds of the future


def _drew(t: gettext.NullTranslations, data: Mapping[str, Any], fields: _Fields,
          you: bool) -> str:
    """A ``drew`` event: dealt, drawn, or drawn for a reason; ``shown`` the cards, when the
    reader may see them."""
    count = int(data.get("count", 0))
    shown = f" ({' '.join(data['cards'])})" if data.get("cards") else ""
    reason = data.get("reason")
    if reason == "deal" and you:
        sentence = t.ngettext("{subject} were dealt {count} card{shown}",
                              "{subject} were dealt {count} cards{shown}", count)
    elif reason == "deal":
        sentence = t.ngettext("{subject} was dealt {count} card{shown}",
                              "{subject} was dealt {count} cards{shown}", count)
    elif reason == "double_colour":
        sentence = t.ngettext("{subject} drew {count} card{shown} after a double colour match",
                              "{subject} drew {count} cards{shown} after a double colour match",
                              count)
    elif reason == "caught":
        sentence = t.ngettext("{subject} drew {count} card{shown} for being caught",
                              "{subject} drew {count} cards{shown} for being caught", count)
    else:
        sentence = t.ngettext("{subject} drew {count} card{shown}",
                              "{subject} drew {count} cards{shown}", count)
    return sentence.format_map(_Fields(fields, count=count, shown=shown))


def _who(names: Names, seat: Any, me: int | None, t: gettext.NullTranslations,
         capital: bool = False) -> str:
    """``seat`` by its name; the reader's own seat is "you"; a seat not known is "someone".
    ``capital``: where it begins a line ("You", "Someone"; a seat's name never changes)."""
    if not isinstance(seat, int):
        return t.gettext("Someone") if capital else t.gettext("someone")
    if seat == me:
        return t.gettext("You") if capital else t.gettext("you")
    if isinstance(names, Mapping):
        known = names.get(seat)
    elif 0 <= seat < len(names):
        known = names[seat]
    else:
        known = None
    if known:
        return known
    return t.gettext("Someone") if capital else t.gettext("someone")


def colour_name(colour: Colour, language: str | None = "en") -> str:
    """A colour in words ("red"), in ``language``."""
    return translator(language).gettext(_COLOURS[colour])


def card_name(card: Card, language: str | None = "en") -> str:
    """A card in words, in ``language``: 'red 5', 'red Wild #', 'Wild DOS' (``Card.name`` in
    English)."""
    if card.kind is CardKind.WILD_DOS:
        return "Wild DOS"
    assert card.colour is not None
    t = translator(language)
    colour = colour_name(card.colour, language)
    if card.kind is CardKind.WILD_NUMBER:
        return t.gettext("{colour} Wild #").format(colour=colour)
    return t.gettext("{colour} {number}").format(colour=colour, number=card.number)


class _Fields(dict[str, Any]):
    """An event's data for its words: a field an older event lacks reads as "?"."""

    def __missing__(self, key: str) -> str:
        return "?"
