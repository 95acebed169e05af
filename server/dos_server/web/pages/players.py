"""Ratings on the web: a player's page by their name, the leaderboard, and the signed-in
player's own name and leaderboard choice (a form on the all-your-games page)."""

from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _

from dos_server.errors import DomainError
from dos_server.problems import problem_of
from dos_server.services import account, ratings
from dos_server.validation import clean_player_name
from dos_server.web import auth
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page, whole_number

PER_PAGE = 50


@bp.get("/players/<name>")
def player_page(name: str) -> Page:
    return render_template("player.html", player=ratings.player(name))


@bp.get("/leaderboard")
def leaderboard() -> Page:
    page = whole_number(request.args.get("page", "1"), 1, 100_000) or 1
    board = ratings.leaderboard(PER_PAGE, (page - 1) * PER_PAGE)
    return render_template("leaderboard.html", board=board, page=page,
                           more=board["offset"] + len(board["players"]) < board["total"])


@bp.post("/me/rating")
def me_rating() -> Page:
    """The signed-in identity's player name (empty: none) and whether the leaderboard lists it."""
    token = auth.account_token()
    if token is None:
        flash(_("Sign in with your email address first."))
        return redirect(url_for("web.me"), 303)
    typed = request.form.get("player_name", "").strip()
    hidden = "leaderboard_hidden" in request.form
    try:
        name = clean_player_name(typed) if typed else None
        account.set_settings(token, None, {"player_name", "leaderboard_hidden"},
                             player_name=name, leaderboard_hidden=hidden)
    except ValueError as error:
        flash(_("Your player name was not saved: %(why)s", why=str(error)))
        return redirect(url_for("web.me"), 303)
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 409:
            raise
        flash(_("Your player name was not saved: %(why)s", why=problem.detail))
        return redirect(url_for("web.me"), 303)
    flash(_("Rating settings saved."))
    return redirect(url_for("web.me"), 303)
