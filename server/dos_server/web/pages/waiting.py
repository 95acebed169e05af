"""Waiting on someone, from the table page: the nudge button and the votes on an absent
player's seat (what the table shows of them: ``web/nudging.py``). The same services as the
API."""

from __future__ import annotations

from flask import flash, redirect, request, url_for
from flask_babel import gettext as _

from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of
from dos_server.services import abandon, nudge
from dos_server.web import auth
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page, whole_number
from dos_server.web.pages.table import render_table


def _token(game_id: str) -> str:
    token = auth.player_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) first"))
    return token


def _refused(game_id: str, error: DomainError) -> Page:
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
