"""The forms' vocabulary: the choices they offer, whole numbers typed into them, and
marshmallow's messages as lines a person reads."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import Response
from werkzeug.wrappers import Response as BaseResponse

from dos_server.problems import Problem
from dos_server.services import lobby

Page = str | Response | BaseResponse | tuple[str, int]  # what a view may return
TIME_LIMITS = [("", "no time limit"), ("300", "5 minutes"), ("3600", "1 hour"),
               ("21600", "6 hours"), ("86400", "1 day"), ("259200", "3 days"),
               ("604800", "1 week"), ("1209600", "2 weeks"), ("5184000", "60 days")]


BOTS = list(lobby.BOTS.items())  # (name, what the form says), as the API offers them


def whole_number(text: str, low: int = -(2**31), high: int = 2**31 - 1) -> int | None:
    text = text.strip()
    if not text or len(text) > 10 or not text.lstrip("-").isdigit():
        return None
    value = int(text)
    return value if low <= value <= high else None


def field_messages(errors: Any, path: str = "") -> list[str]:
    """marshmallow's nested error messages as 'field: message' lines."""
    if isinstance(errors, dict):
        out = []
        for key, value in errors.items():
            where = f"{path}.{key}" if path else str(key)
            out += field_messages(value, where)
        return out
    if isinstance(errors, list) and all(isinstance(e, str) for e in errors):
        return [f"{path.replace('_', ' ')}: {' '.join(errors)}"]
    if isinstance(errors, list):
        return [m for e in errors for m in field_messages(e, path)]
    return [f"{path}: {errors}"]


def new_game_defaults() -> dict[str, Any]:
    form: dict[str, Any] = {"target_score": "200", "after_draw": "drawn_card", "dos_call": False,
                            "bonus_placement": "optional", "turn_time_limit": "86400", "me": "0",
                            "timeout_policy": "random", "forfeit_after": "",
                            "vacation_days": "14", "title": ""}
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
        raise Problem(422, "invalid-input", "Invalid name",
                      "; ".join(field_messages(error.messages))) from None
    return str(name)
