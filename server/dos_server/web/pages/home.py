"""The home page and creating a game."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _

from dos_server.errors import DomainError
from dos_server.extensions import limiter
from dos_server.problems import problem_of
from dos_server.schemas import CreateGameIn
from dos_server.services import access, lobby, read
from dos_server.web import auth
from dos_server.web.blueprint import bp
from dos_server.web.forms import BOTS, TIME_LIMITS, FieldErrors, Page, new_game_defaults, whole_number
from dos_server.web.pages.host import host_and_sit


@bp.get("/")
def home() -> Page:
    return render_template("home.html", mine=browser_games())


def browser_games() -> list[dict[str, Any]]:
    """The games this browser holds a seat or the host token of (newest first)."""
    mine = []
    for game_id in auth.games():
        try:
            game = access.get_game(game_id)
        except DomainError:
            continue
        body = read.game_body(game, access.Viewer())
        mine.append({"id": game_id, "status": body["status"],
                     "names": [s["name"] or _("open seat") for s in body["seats"]],
                     "host": auth.host_token(game_id) is not None,
                     "seat": auth.player_token(game_id) is not None})
    return mine


@bp.get("/new")
def new_game() -> Page:
    return _new_page(new_game_defaults())


def _new_page(form: dict[str, Any], errors: FieldErrors | None = None,
              status: int = 200) -> tuple[str, int]:
    return render_template("new.html", form=form, errors=errors or FieldErrors(),
                           time_limits=TIME_LIMITS, bots=BOTS, policies=BOTS), status


# The create-game body's fields, by the form's element ids (a seat's are per form row).
_FORM_FIELDS = {("title",): "title", ("seats",): "seats", ("options", "target_score"): "target_score",
                ("options", "after_draw"): "after_draw", ("options", "dos_call"): "dos_call",
                ("options", "bonus_placement"): "bonus_placement",
                ("turn_time_limit",): "turn_time_limit", ("timeout_policy",): "timeout_policy",
                ("forfeit_after",): "forfeit_after", ("vacation_days",): "vacation_days"}
_SEAT_FIELDS = {"name": "name", "email": "email", "webhook_url": "webhook", "bot": "kind"}


def _dropping(payload: Any, errors: Any) -> Any:
    """``payload`` without the values marshmallow refused (a list of messages; a dict holds
    its parts' messages), to check the rest further."""
    if not isinstance(errors, dict):
        return payload
    if isinstance(payload, dict):
        return {key: _dropping(value, errors.get(key)) for key, value in payload.items()
                if not isinstance(errors.get(key), list)}
    if isinstance(payload, list):
        return [_dropping(item, errors.get(index)) for index, item in enumerate(payload)]
    return payload


@bp.post("/new")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_CREATE"])
def create_game() -> Page:
    form = {**new_game_defaults(), **request.form.to_dict()}
    form["dos_call"] = "dos_call" in request.form
    form["standing_dos"] = "standing_dos" in request.form
    form["chat_spectators"] = "chat_spectators" in request.form
    form["rated"] = "rated" in request.form
    seats: list[dict[str, Any]] = []
    seat_rows: list[int] = []  # the form's row of each seat of the body
    me_index: int | None = None
    errors = FieldErrors()
    for index in range(4):
        kind = form.get(f"seat{index}_kind", "none")
        name = str(form.get(f"seat{index}_name", "")).strip()
        email = str(form.get(f"seat{index}_email", "")).strip()
        webhook = str(form.get(f"seat{index}_webhook", "")).strip()
        if kind == "none":
            continue
        seat_rows.append(index)
        if kind == "person":
            if not name:
                errors.add(f"seat{index}_name", _("give the person a name (or make it an open seat)"))
            if form.get("me") == str(index):
                me_index = len(seats)
            seats.append({**({"name": name} if name else {}), **({"email": email} if email else {}),
                          **({"webhook_url": webhook} if webhook else {})})
        elif kind == "open":
            seats.append({})
        elif kind in lobby.BOT_STRATEGIES:
            seats.append({"bot": kind})
        else:
            errors.add(f"seat{index}_kind", _("choose a person, a bot, an open seat or nobody"))
            seats.append({})

    def field_of(path: tuple[str, ...]) -> str | None:
        if len(path) == 3 and path[0] == "seats" and path[1].isdigit() and int(path[1]) < len(
                seat_rows) and path[2] in _SEAT_FIELDS:
            return f"seat{seat_rows[int(path[1])]}_{_SEAT_FIELDS[path[2]]}"
        return _FORM_FIELDS.get(path[:1]) or _FORM_FIELDS.get(path[:2])

    payload: dict[str, Any] = {
        "seats": seats,
        "options": {"after_draw": form.get("after_draw"), "dos_call": bool(form["dos_call"]),
                    "bonus_placement": form.get("bonus_placement")},
        "standing_dos": bool(form["standing_dos"]),
        "chat_spectators": bool(form["chat_spectators"]),
    }
    if not form["rated"]:  # ticked: rated when it can be (two people at least), as by default
        payload["rated"] = False
    if str(form.get("title", "")).strip():  # empty: an untitled game
        payload["title"] = str(form["title"])
    target = whole_number(str(form.get("target_score", "")))
    if target is None:
        errors.add("target_score", _("a whole number, e.g. %(example)s", example=200))
    else:
        payload["options"]["target_score"] = target
    limit = str(form.get("turn_time_limit", ""))
    if limit:
        payload["turn_time_limit"] = whole_number(limit)
        if payload["turn_time_limit"] is None:
            errors.add("turn_time_limit", _("choose one from the list"))
    payload["timeout_policy"] = str(form.get("timeout_policy", ""))
    forfeit = str(form.get("forfeit_after", "")).strip()
    if forfeit:  # empty: never forfeited
        payload["forfeit_after"] = whole_number(forfeit)
        if payload["forfeit_after"] is None:
            errors.add("forfeit_after", _("a whole number of timeouts (1 to 100), or empty for never"))
    vacation = whole_number(str(form.get("vacation_days", "")))
    if vacation is None:
        errors.add("vacation_days", _("a whole number of days a year (0 to 60)"))
    else:
        payload["vacation_days"] = vacation
    loaded = None
    try:
        loaded = CreateGameIn().load(payload)
    except ma.ValidationError as error:
        errors.add_tree(error.messages, field_of)
        try:  # the rest, checked further: every mistake is shown at once
            loaded = CreateGameIn().load(_dropping(payload, error.messages))
        except ma.ValidationError:
            loaded = None
    if loaded is not None:
        try:
            lobby.check_new_game(lobby.NewGame.from_loaded(loaded))
        except DomainError as error:
            errors.add_problem(problem_of(error), field_of)
    if errors or loaded is None:
        return _new_page(form, errors, 422)
    try:
        created = lobby.create_game(lobby.NewGame.from_loaded(loaded))
    except DomainError as error:
        problem = problem_of(error)
        refused = FieldErrors()
        refused.add_problem(problem, field_of)
        return _new_page(form, refused, problem.status)
    host_and_sit(created, me_index)
    flash(_("Game created. Send each player their invite link; the game starts when every "
            "seat is filled, or when you start it."))
    return redirect(url_for("web.host", game_id=created.game.id), 303)
