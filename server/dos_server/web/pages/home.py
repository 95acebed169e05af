"""The home page and creating a game."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import current_app, flash, redirect, render_template, request, url_for

from dos_server.errors import DomainError
from dos_server.extensions import limiter
from dos_server.problems import problem_of
from dos_server.schemas import CreateGameIn
from dos_server.services import access, lobby, read
from dos_server.web import auth
from dos_server.web.blueprint import bp
from dos_server.web.forms import BOTS, TIME_LIMITS, Page, field_messages, new_game_defaults, whole_number
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
                     "names": [s["name"] or "open seat" for s in body["seats"]],
                     "host": auth.host_token(game_id) is not None,
                     "seat": auth.player_token(game_id) is not None})
    return mine


@bp.get("/new")
def new_game() -> Page:
    return _new_page(new_game_defaults(), [])


def _new_page(form: dict[str, Any], errors: list[str], status: int = 200) -> tuple[str, int]:
    return render_template("new.html", form=form, errors=errors, time_limits=TIME_LIMITS,
                           bots=BOTS, policies=BOTS), status


@bp.post("/new")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_CREATE"])
def create_game() -> Page:
    form = {**new_game_defaults(), **request.form.to_dict()}
    form["dos_call"] = "dos_call" in request.form
    seats: list[dict[str, Any]] = []
    me_index: int | None = None
    errors: list[str] = []
    for index in range(4):
        kind = form.get(f"seat{index}_kind", "none")
        name = str(form.get(f"seat{index}_name", "")).strip()
        email = str(form.get(f"seat{index}_email", "")).strip()
        if kind == "none":
            continue
        webhook = str(form.get(f"seat{index}_webhook", "")).strip()
        if kind == "person":
            if not name:
                errors.append(f"seat {index + 1}: give the person a name (or make it an open seat)")
                continue
            if form.get("me") == str(index):
                me_index = len(seats)
            seats.append({"name": name, **({"email": email} if email else {}),
                          **({"webhook_url": webhook} if webhook else {})})
        elif kind == "open":
            seats.append({})
        elif kind in lobby.BOT_STRATEGIES:
            seats.append({"bot": kind})
        else:
            errors.append(f"seat {index + 1}: choose a person, a bot, an open seat or nobody")
    payload: dict[str, Any] = {
        "seats": seats,
        "options": {"after_draw": form.get("after_draw"), "dos_call": bool(form["dos_call"]),
                    "bonus_placement": form.get("bonus_placement")},
    }
    if str(form.get("title", "")).strip():  # empty: an untitled game
        payload["title"] = str(form["title"])
    target = whole_number(str(form.get("target_score", "")))
    if target is None:
        errors.append("target score: a whole number, e.g. 200")
    else:
        payload["options"]["target_score"] = target
    limit = str(form.get("turn_time_limit", ""))
    if limit:
        seconds = whole_number(limit)
        if seconds is None:
            errors.append("time limit: choose one from the list")
        payload["turn_time_limit"] = seconds
    payload["timeout_policy"] = str(form.get("timeout_policy", ""))
    forfeit = str(form.get("forfeit_after", "")).strip()
    if forfeit:  # empty: never forfeited
        payload["forfeit_after"] = whole_number(forfeit)
        if payload["forfeit_after"] is None:
            errors.append("forfeit after: a whole number of timeouts (1 to 100), or empty for "
                          "never")
    payload["vacation_days"] = whole_number(str(form.get("vacation_days", "")))
    if payload["vacation_days"] is None:
        errors.append("vacation days: a whole number of days a year (0 to 60)")
    if not errors:
        try:
            loaded = CreateGameIn().load(payload)
        except ma.ValidationError as error:
            errors += field_messages(error.messages)
    if errors:
        return _new_page(form, errors, 422)
    try:
        created = lobby.create_game(lobby.NewGame.from_loaded(loaded))
    except DomainError as error:
        problem = problem_of(error)
        return _new_page(form, [problem.detail], problem.status)
    host_and_sit(created, me_index)
    flash("Game created. Send each player their invite link; the game starts when every "
          "seat is filled, or when you start it.")
    return redirect(url_for("web.host", game_id=created.game.id), 303)
