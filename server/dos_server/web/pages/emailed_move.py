"""A move of a "your turn" email, in two taps: its link shows the move on the table, and one
button plays it at the email's version. Opening the link changes no game (link scanners fetch
every URL); the token it carries is parked in the session and leaves the address bar."""

from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of
from dos_server.services import access, play, read
from dos_server.web import auth, reader
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page
from dos_server.web.pages.mailed import bad_link
from dos_server.web.pages.table import render_table

STALE = _l("This email's move is from an earlier turn: the game has moved on since, so "
           "nothing was played. Here is the table as it is now.")


@bp.get("/games/<game_id>/emailed-move/<int:version>/<int:number>")
def emailed_move(game_id: str, version: int, number: int) -> Page:
    token = request.args.get("token")
    if token:
        auth.park(game_id, "signin", token)
        return redirect(url_for("web.emailed_move", game_id=game_id, version=version,
                                number=number), 303)
    game = access.get_game(game_id)
    try:
        player = auth.emailed_or_seat_token(game_id)
    except DomainError as error:
        auth.clear_pending()
        return bad_link(problem_of(error), game_id, paste=True)
    if player is None:
        flash(_("Sign in to this game to play: open the newest email's link."))
        return redirect(url_for("web.table", game_id=game_id), 303)
    viewer = access.authenticate(game, player, allow_host=False)
    reader.as_seat(game, viewer.seat)
    if game.version != version:
        return render_table(game_id, 409, notice=str(STALE), viewer_token=player)
    body = read.game_body(game, viewer)
    actions = read.legal_actions_body(game, viewer)
    chosen = next((a for a in actions["actions"] if a["number"] == number), None)
    if chosen is None:
        return render_table(game_id, 404, notice=_("This email lists no such move. Here is the "
                                                    "table; choose a move on it."),
                            viewer_token=player)
    return render_template("emailed_move.html", game=body, view=body["view"], move=chosen,
                           version=version, number=number)


@bp.post("/games/<game_id>/emailed-move/<int:version>/<int:number>")
def play_emailed_move(game_id: str, version: int, number: int) -> Page:
    try:
        player = auth.emailed_or_seat_token(game_id)
    except DomainError as error:
        auth.clear_pending()
        return bad_link(problem_of(error), game_id, paste=True)
    if player is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) to play"))
    auth.clear_pending()
    auth.remember_seat(game_id, player)  # pressing the button also signs this browser in
    reader.resolve()
    try:
        result = play.submit_actions(game_id, player, version, None,
                                     f"emailed-{version}-{number}", number=number,
                                     answer=read.turn_body)
    except DomainError as error:
        problem = problem_of(error)
        if problem.kind in ("stale-version", "idempotency-key-reused"):
            return render_table(game_id, 409, notice=str(STALE))
        if problem.status in (401, 403, 404):
            raise
        return render_table(game_id, problem.status, error=problem)
    flash(_("Played: %(moves)s", moves="; ".join(result["applied"])) if result.get("applied")
          else _("Played."))
    return redirect(url_for("web.table", game_id=game_id), 303)
