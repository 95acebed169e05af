"""The forms' vocabulary: the choices they offer, whole numbers typed into them, and
marshmallow's messages as lines a person reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import marshmallow as ma
from flask import Response
from flask_babel import gettext
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response as BaseResponse

from dos_server.problems import Problem
from dos_server.services import lobby

Page = str | Response | BaseResponse | tuple[str, int]  # what a view may return
TIME_LIMITS = [("", _l("no time limit")), ("300", _l("5 minutes")), ("3600", _l("1 hour")),
               ("21600", _l("6 hours")), ("86400", _l("1 day")), ("259200", _l("3 days")),
               ("604800", _l("1 week")), ("1209600", _l("2 weeks")), ("5184000", _l("60 days"))]


BOTS = list(lobby.BOTS.items())  # (name, what the form says), as the API offers them
# What a page calls each bot (the engine's BOTS are the API's English words).
BOT_NAMES = {"random": _l("random bot"), "greedy": _l("greedy bot"),
             "search-1": _l("search bot (1 ply)"), "search-2": _l("search bot (2 plies)"),
             "search-3": _l("search bot (3 plies)")}
# marshmallow's own messages, as a page shows them (the API's stay English).
MARSHMALLOW_MESSAGES = (
    _l("Missing data for required field."), _l("Field may not be null."),
    _l("Not a valid integer."), _l("Not a valid string."), _l("Not a valid boolean."),
    _l("Not a valid email address."), _l("Not a valid URL."), _l("Unknown field."),
    _l("Invalid input type."), _l("Not a valid number."),
)


def bot_name(name: str) -> str:
    """A bot strategy as a page names it; an unknown one as it is."""
    return str(BOT_NAMES.get(name, name))


def page_message(message: str) -> str:
    """A message of a service or of marshmallow in the page's language, when the catalog has
    it (one built from values, "Length must be between 1 and 40.", stays as it is)."""
    return gettext(message) if message else message


def whole_number(text: str, low: int = -(2**31), high: int = 2**31 - 1) -> int | None:
    text = text.strip()
    if not text or len(text) > 10 or not text.lstrip("-").isdigit():
        return None
    value = int(text)
    return value if low <= value <= high else None


def error_paths(errors: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """marshmallow's (or a service's) nested error messages: each field's path and its
    messages as one line."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            yield from error_paths(value, (*path, str(key)))
    elif isinstance(errors, list) and all(isinstance(e, str) for e in errors):
        yield path, " ".join(errors)
    elif isinstance(errors, list):
        for item in errors:
            yield from error_paths(item, path)
    else:
        yield path, str(errors)


def field_messages(errors: Any) -> list[str]:
    """marshmallow's nested error messages as 'field: message' lines."""
    return [_("%(field)s: %(message)s", field=".".join(path).replace("_", " "),
              message=page_message(message)) for path, message in error_paths(errors)]


class FieldErrors:
    """A form's mistakes, all at once: the messages for each field (by its element id, so the
    page shows each beside its field and links to it) and the ones no field owns."""

    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}
        self.general: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.fields or self.general)

    def add(self, field: str | None, message: str) -> None:
        message = page_message(message)
        if field is None:
            self.general.append(message)
        elif message not in self.fields.setdefault(field, []):
            self.fields[field].append(message)

    def has(self, field: str) -> bool:
        return field in self.fields

    def add_tree(self, tree: Any, field_of: Callable[[tuple[str, ...]], str | None]) -> None:
        """marshmallow's (or a service's) nested messages, each under the field ``field_of``
        names for its path (None: no field of the form)."""
        for path, message in error_paths(tree):
            self.add(field_of(path), message)

    def add_problem(self, problem: Problem, field_of: Callable[[tuple[str, ...]], str | None]
                    ) -> None:
        """A service's refusal: under its fields where it names them, else as a whole."""
        tree = (problem.extra.get("errors") or {}).get("json")
        if tree:
            self.add_tree(tree, field_of)
        else:
            self.add(None, problem.detail)


def new_game_defaults() -> dict[str, Any]:
    form: dict[str, Any] = {"target_score": "200", "after_draw": "drawn_card", "dos_call": False,
                            "bonus_placement": "optional", "turn_time_limit": "86400", "me": "0",
                            "timeout_policy": "random", "forfeit_after": "",
                            "vacation_days": "14", "title": "", "standing_dos": True,
                            "chat_spectators": False, "rated": True}
    for index, kind in enumerate(("person", "person", "none", "none")):
        form[f"seat{index}_kind"] = kind
        for field in ("name", "email", "webhook"):
            form[f"seat{index}_{field}"] = ""
    return form


def lobby_name(name: str | None) -> str:
    """A name for an open seat, checked as the API checks it."""
    from dos_server.schemas import JoinIn

    try:
        JoinIn().load({"name": name or ""})
    except ma.ValidationError as error:
        raise Problem(422, "invalid-input", _("Invalid name"),
                      "; ".join(field_messages(error.messages)),
                      errors={"json": error.messages}) from None
    return str(name)
