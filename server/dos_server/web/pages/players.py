"""Ratings on the web: a player's page by their name, and the leaderboard (the signed-in
player's own name and leaderboard choice are a form of the all-your-games page, ``me``)."""

from __future__ import annotations

from flask import render_template, request

from dos_server.services import ratings
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
