"""Request and response schemas (marshmallow, strict numbers), documented in /openapi.json.

Every input schema is a :class:`Schema`: its error messages, marshmallow's own among them, are
in the reader's language (the field names they are keyed by are the API's, in English).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import marshmallow as ma
from marshmallow import validate

from dos_server.i18n import shipped_language, shipped_languages
from dos_server.services import attention
from dos_server.services.lobby import BOT_STRATEGIES
from dos_server.services.notify import EVENTS
from dos_server.services.words import N_, _
from dos_server.timefmt import ZONE_MAX, clean_time_zone
from dos_server.validation import (
    EMAIL_MAX,
    NAME_MAX,
    TITLE_MAX,
    clean_email,
    clean_name,
    clean_player_name,
    clean_title,
)

# marshmallow's own messages (the fields' and validators' defaults that our schemas can meet),
# as marshmallow words them, with its {placeholders} as gettext's %(placeholders)s.
MARSHMALLOW_MESSAGES = (
    N_("Missing data for required field."),
    N_("Field may not be null."),
    N_("Invalid value."),
    N_("Invalid input."),
    N_("Invalid type."),
    N_("Invalid input type."),
    N_("Unknown field."),
    N_("Not a valid string."),
    N_("Not a valid utf-8 string."),
    N_("Not a valid integer."),
    N_("Not a valid number."),
    N_("Number too large."),
    N_("Special numeric values (nan or infinity) are not permitted."),
    N_("Not a valid boolean."),
    N_("Not a valid list."),
    N_("Not a valid mapping type."),
    N_("Not a valid URL."),
    N_("Not a valid email address."),
    N_("Not a valid datetime."),
    N_("Shorter than minimum length %(min)s."),
    N_("Longer than maximum length %(max)s."),
    N_("Length must be between %(min)s and %(max)s."),
    N_("Length must be %(equal)s."),
    N_("Must be greater than or equal to %(min)s and less than or equal to %(max)s."),
    N_("Must be greater than or equal to %(min)s."),
    N_("Must be less than or equal to %(max)s."),
    N_("Must be one of: %(choices)s."),
)


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"%\((\w+)\)s", template)
    return re.compile("".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)"
                              for i, part in enumerate(parts)))


_PATTERNS = tuple((template, _pattern(template)) for template in MARSHMALLOW_MESSAGES)


def reworded(message: str) -> str:
    """One of marshmallow's English messages in the reader's language; any other as it is
    (ours are worded in it already)."""
    for template, pattern in _PATTERNS:
        found = pattern.fullmatch(message)
        if found:
            return _(template, **found.groupdict())
    return message


def reword_tree(tree: Any) -> Any:
    """marshmallow's nested messages (by field, index or ``_schema``), each :func:`reworded`."""
    if isinstance(tree, str):
        return reworded(tree)
    if isinstance(tree, dict):
        return {key: reword_tree(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [reword_tree(item) for item in tree]
    return tree


class Schema(ma.Schema):
    """An input schema whose error messages are in the reader's language."""

    def handle_error(self, error: ma.ValidationError, data: Any, *, many: bool,
                     **kwargs: Any) -> None:
        error.messages = reword_tree(error.messages)


class _Cleaned(ma.fields.String):
    """A string checked and normalized by a :mod:`dos_server.validation` function."""

    clean: Callable[[str], str]

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            return type(self).clean(text)
        except ValueError as error:
            raise ma.ValidationError(str(error)) from None


class Name(_Cleaned):
    """A player's name: trimmed (Unicode spaces too), NFC, printable, 1-40 characters."""

    clean = staticmethod(clean_name)

    def __init__(self, **kwargs: Any) -> None:
        # The Length is checked by clean_name; here it documents the limit in /openapi.json.
        super().__init__(validate=validate.Length(min=1, max=NAME_MAX), **kwargs)


class PlayerName(_Cleaned):
    """An identity's player name: 3-40 letters, digits and ``-_.`` (validation.py)."""

    clean = staticmethod(clean_player_name)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(validate=validate.Length(min=3, max=40), **kwargs)


class Title(_Cleaned):
    """A game's title: trimmed, NFC, printable, 1-80 characters."""

    clean = staticmethod(clean_title)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(validate=validate.Length(min=1, max=TITLE_MAX), **kwargs)


class EmailAddress(_Cleaned):
    """An email address (no control characters, at most 254 characters, no DNS lookup)."""

    clean = staticmethod(clean_email)

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {}).setdefault("format", "email")
        super().__init__(validate=validate.Length(max=EMAIL_MAX), **kwargs)


class TimeZone(ma.fields.Field[str | None]):
    """An IANA time zone name (Asia/Vientiane); null or "" for none (UTC)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {}).setdefault(
            "description", "an IANA time zone, like Asia/Vientiane; null: UTC")
        # The cleaning checks the length: a Length validator would see a cleaned None.
        kwargs["metadata"].update(type="string", maxLength=ZONE_MAX)
        super().__init__(allow_none=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any,
                     **kwargs: Any) -> str | None:
        try:
            return clean_time_zone(value)
        except ValueError:  # timefmt words it in English: the same sentences, read here
            if not isinstance(value, str):
                raise ma.ValidationError(
                    _("a time zone is an IANA name, like Asia/Vientiane")) from None
            raise ma.ValidationError(
                _("unknown time zone %(zone)s: give an IANA name, like Asia/Vientiane or "
                  "Europe/Paris", zone=repr(value.strip()[:ZONE_MAX]))) from None


class Language(ma.fields.Field[str | None]):
    """A language tag; one not shipped is kept as null (English), not refused."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {}).setdefault(
            "description", f"one of {', '.join(shipped_languages())} (or a tag like lo-LA); another "
            "or null: en")
        kwargs["metadata"].update(type="string", maxLength=35)
        super().__init__(allow_none=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any,
                     **kwargs: Any) -> str | None:
        if not isinstance(value, str):
            raise ma.ValidationError(_("a language is a tag, like lo or en"))
        if len(value) > 35:  # BCP 47 tags are shorter
            raise ma.ValidationError(_("a language tag has at most 35 characters"))
        return shipped_language(value)


class StrictInteger(ma.fields.Integer):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)


class StrictBoolean(ma.fields.Boolean):
    """Only JSON true/false: ``Boolean(truthy={True})`` alone accepts 1 and 0 (1 == True)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class SeatIn(Schema):
    name = Name(metadata={"description": "omit for an open seat"})
    email = EmailAddress()
    webhook_url = ma.fields.URL(schemes={"http", "https"}, require_tld=False,
                                validate=validate.Length(max=2048))
    bot = ma.fields.String(validate=validate.OneOf(BOT_STRATEGIES))


class OptionsIn(Schema):
    after_draw = ma.fields.String(validate=validate.OneOf(["drawn_card", "any"]))
    bonus_placement = ma.fields.String(validate=validate.OneOf(["optional", "mandatory"]))
    dos_call = StrictBoolean()
    target_score = StrictInteger(validate=validate.Range(min=1, max=10_000))


class CreateGameIn(Schema):
    title = Title(metadata={"description": "optional; shown in emails, lists and pages"})
    seats = ma.fields.List(ma.fields.Nested(SeatIn), required=True,
                           validate=validate.Length(min=2, max=4))
    options = ma.fields.Nested(OptionsIn, load_default=dict)
    timeout_policy = ma.fields.String(
        load_default="random", validate=validate.OneOf(BOT_STRATEGIES),
        metadata={"description": "who plays a turn whose time ran out"})
    forfeit_after = StrictInteger(
        allow_none=True, validate=validate.Range(min=1, max=100),
        metadata={"description": "after this many timeouts a seat is forfeited (played by "
                                 "the random bot)"})
    vacation_days = StrictInteger(
        load_default=14, validate=validate.Range(min=0, max=60),
        metadata={"description": "days per year each seat may pause its clock"})
    turn_time_limit = StrictInteger(
        allow_none=True, validate=validate.Range(min=60, max=60 * 86400),
        metadata={"description": "seconds a player has for a turn (60 s to 60 days)"},
    )
    standing_dos = StrictBoolean(
        load_default=True,
        metadata={"description": "whether standing orders may call DOS and catch for a seat "
                                 "(default true)"})
    chat_spectators = StrictBoolean(
        load_default=False,
        metadata={"description": "whether spectators may write in the game's chat (default "
                                 "false: they read it)"})
    rated = StrictBoolean(
        metadata={"description": "whether the finish moves the signed-in players' ratings "
                                 "(default: true when at least two seats are for people; "
                                 "fixed for the game)"})


class OrdersIn(Schema):
    orders = ma.fields.List(
        ma.fields.String(validate=validate.Length(min=1, max=20)), required=True,
        validate=validate.Length(max=10),
        metadata={"description": "the seat's standing orders, all of them: any of draw, only, "
                                 "dos, catch ([] for none)"})


class NotesIn(Schema):
    # No length here: the service counts characters after normalizing line breaks, and says
    # how many there are (services/notes.py).
    text = ma.fields.String(
        required=True,
        metadata={"description": "plain text, at most 10000 characters once stripped; "
                  "newlines and tabs are kept, other control characters refused; \"\" "
                  "clears the notes"})


class JoinIn(Schema):
    invite = ma.fields.String(validate=validate.Length(min=1, max=500))
    code = ma.fields.String(validate=validate.Length(min=1, max=64))
    name = Name()
    time_zone = TimeZone()
    language = Language()


class ActionsIn(Schema):
    version = StrictInteger(required=True, validate=validate.Range(min=1),
                            metadata={"description": "the game version your choice was made on"})
    actions = ma.fields.List(ma.fields.String(validate=validate.Length(min=1, max=500)),
                             validate=validate.Length(min=1, max=50),
                             metadata={"description": "actions in notation, applied in order"})
    turn = ma.fields.String(validate=validate.Length(min=1, max=2000),
                            metadata={"description": "a whole turn on one line: 'm1 R5; end'"})
    number = StrictInteger(validate=validate.Range(min=1),
                           metadata={"description": "a number from GET .../actions"})

    @ma.validates_schema
    def _exactly_one(self, data: dict[str, Any], **kwargs: Any) -> None:
        given = [k for k in ("actions", "turn", "number") if k in data]
        if len(given) != 1:
            raise ma.ValidationError(_("send exactly one of: actions, turn, number"))


class HistoryQuery(Schema):
    # Query values arrive as strings: a strict Integer would reject every one of them.
    # Bounded: PostgreSQL compares it with an INTEGER column (a bigger one was a 500).
    after = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=2**31 - 1))
    limit = ma.fields.Integer(load_default=100, validate=validate.Range(min=1, max=500))
    wait = ma.fields.Float(
        load_default=0.0, validate=validate.Range(min=0, max=60),
        metadata={"description": "Long-poll: with no event after `after` yet, wait up to this "
                  "many seconds (0-60) for one, then answer (an empty list at the timeout). "
                  "The server is woken by the commit (PostgreSQL LISTEN/NOTIFY); the waiting "
                  "request holds no database connection."})


class AnyObject(Schema):
    """A JSON object (documented by example in the README)."""

    class Meta:
        unknown = ma.INCLUDE


EVENT_NAMES = list(EVENTS)  # the one list, owned by the notifications service


class ChannelEvents(Schema):
    email = ma.fields.List(ma.fields.String(validate=validate.OneOf(EVENT_NAMES)))
    webhook = ma.fields.List(ma.fields.String(validate=validate.OneOf(EVENT_NAMES)))


class Reminders(ma.fields.Field[list[str] | None]):
    """A seat's reminders: ["50%", "80%", "1h"] (a share of the turn's time, or hours/minutes
    before its deadline); [] for none; null for the default (80%)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("metadata", {}).update(
            type="array", items={"type": "string"}, maxItems=attention.MAX_REMINDERS,
            description='when to remind you of your turn: "50%" of its time, "1h" or "30m" '
                        'before its deadline; []: never; null: the default ["80%"]')
        super().__init__(allow_none=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any,
                     **kwargs: Any) -> list[str] | None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ma.ValidationError(_("reminders: a list like 50%, 80%, 1h"))
        try:
            return attention.parse_reminders(value)
        except ValueError:
            raise ma.ValidationError(attention.reminders_problem()) from None


class NotificationsIn(Schema):
    email = EmailAddress(allow_none=True)
    webhook_url = ma.fields.URL(allow_none=True, schemes={"http", "https"}, require_tld=False,
                                validate=validate.Length(max=2048))
    events = ma.fields.Nested(ChannelEvents, allow_none=True,
                              metadata={"description": "events per channel; null: all"})
    digest = StrictBoolean(metadata={"description": "your-turn emails as one daily digest"})
    time_zone = TimeZone()
    language = Language()
    reminders = Reminders()
    nudges = StrictBoolean(metadata={"description": "whether other players may nudge this "
                                     "seat (at most once a day each)"})


class VacationIn(Schema):
    days = StrictInteger(required=True, validate=validate.Range(min=0, max=60),
                         metadata={"description": "days away; 0 ends a vacation now"})


class VoteIn(Schema):
    seat = StrictInteger(required=True, validate=validate.Range(min=0, max=1000),
                         metadata={"description": "the absent seat voted on"})
    choice = ma.fields.String(required=True, validate=validate.OneOf(["bot", "end"]),
                              metadata={"description": "bot: a bot plays the seat to the end; "
                                        "end: the game ends now with the scores as they stand"})
