"""JSON written and read by orjson: the stored columns, the API's answers and the pages' data.

The same documents as the standard library's ``json`` (orjson takes a tenth of its CPU, which
was about 5% of a move's): keys are written as ``json`` writes them (an int key as a string),
and the API's answers keep Flask's forms (sorted keys, its dates). Anything orjson does not
write (an int beyond 64 bits) goes through ``json`` as before, and so does any call that asks
for ``json``'s own options (an indent, other separators).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from flask.json.provider import DefaultJSONProvider

_STORED = orjson.OPT_NON_STR_KEYS
# Dates and dataclasses go to Flask's ``default`` (an HTTP date, a dict), as with ``json``.
_ANSWERED = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME \
    | orjson.OPT_PASSTHROUGH_DATACLASS
_COMPACT = (",", ":")


def dumps(value: Any) -> str:
    """A stored JSON column's text (SQLAlchemy's ``json_serializer``)."""
    try:
        return orjson.dumps(value, option=_STORED).decode()
    except TypeError:
        return json.dumps(value)


def loads(text: str | bytes) -> Any:
    """A stored JSON column's value (SQLAlchemy's ``json_deserializer``)."""
    return orjson.loads(text)


class JsonProvider(DefaultJSONProvider):
    """Flask's JSON provider with orjson writing what it writes compactly."""

    ensure_ascii = False  # UTF-8 throughout: what orjson writes

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if not kwargs or kwargs == {"separators": _COMPACT}:
            option = _ANSWERED | (orjson.OPT_SORT_KEYS if self.sort_keys else 0)
            try:
                return orjson.dumps(obj, default=self.default, option=option).decode()
            except TypeError:
                pass  # json says what it cannot write, or writes it
        return super().dumps(obj, **kwargs)


__all__ = ["JsonProvider", "dumps", "loads"]
