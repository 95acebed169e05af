"""Waiting on someone, on the table page: the nudge button (or when the next nudge is
allowed) and the votes on an absent player's seat. The same services as the API."""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, request, url_for
from flask_babel import gettext as _

from dos_server import timefmt
from dos_server.errors import DomainError
from dos_server.models import GameRow, utcnow
from dos_server.problems import Problem, problem_of
from dos_server.services import abandon, nudge, play
from dos_server.services.access import Viewer, seat_of
from dos_server.web import auth, reader
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page, whole_number


def panel(game: GameRow, viewer: Viewer, body: dict[str, Any],
          names: list[str]) -> dict[str, Any] | None:
    """What the table shows a player still playing of an active game: whom they may nudge
    and when, and the seats that look absent with their votes (None: nothing to show)."""
    if viewer.seat is None or body["status"] != "active" or body.get("view") is None:
        return None
    me = seat_of(game, viewer.seat)
    if not play.seat_plays(me):
        return None
    now = utcnow()
    current = seat_of(game, body["view"]["current"])
    nudging = None
    if current.index != me.index and play.seat_plays(current):
        allowed = nudge.next_allowed(me)
        nudging = {"name": names[current.index], "off": current.nudges_off,
                   "allowed_at": timefmt.local_time(allowed, reader.zone())
                   if allowed is not None and allowed > now else None}
    absent = [{**tally, "name": names[tally["seat"]]}
              for tally in abandon.page_tallies(game, me.index, now)]
    if nudging is None and not absent:
        return None
    return {"nudge": nudging, "absent": absent}


def _token(game_id: str) -> str:
    token = auth.player_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) first"))
    return token


def _refused(game_id: str, error: DomainError) -> Page:
    from dos_server.web.pages.table import render_table  # the table imports this module

    problem = problem_of(error)
    if problem.status in (401, 404):
        raise problem
    return render_table(game_id, problem.status, error=problem)


@bp.post("/games/<game_id>/nudge")
def nudge_player(game_id: str) -> Page:
    token = _token(game_id)
    try:
        done = nudge.nudge(game_id, token)
    except DomainError as error:
        return _refused(game_id, error)
    flash(_("You nudged %(name)s: they get an email saying you are waiting.",
            name=done["name"] or _("seat %(number)s", number=done["nudged"] + 1)))
    return redirect(url_for("web.table", game_id=game_id), 303)


@bp.post("/games/<game_id>/vote")
def vote(game_id: str) -> Page:
    token = _token(game_id)
    seat = whole_number(request.form.get("seat", ""), 0, 1000)
    choice = request.form.get("choice", "")
    if seat is None or choice not in abandon.CHOICES:
        raise Problem(422, "invalid-input", _("Invalid form"),
                      _("choose a seat and press one of the vote buttons"))
    try:
        tally = abandon.vote(game_id, token, seat, choice)
    except DomainError as error:
        return _refused(game_id, error)
    if tally["decided"] == "bot":
        flash(_("Decided: a bot plays that seat from now on."))
    elif tally["decided"] == "end":
        flash(_("Decided: the game is over, with the scores as they stand."))
    else:
        flash(_("Your vote is in: %(bot)s for a bot, %(end)s to end the game; %(needed)s of the "
                "same decide.", bot=tally["bot"], end=tally["end"], needed=tally["needed"]))
    return redirect(url_for("web.table", game_id=game_id), 303)
