"""Rematch from the finished table, and the game-over email's accept link: a page with one
"Accept rematch" button. Opening the link changes nothing (link scanners fetch every URL);
the sign-in token it carries is parked in the session and leaves the address bar."""

from __future__ import annotations

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _

from dos_server.errors import DomainError
from dos_server.extensions import limiter
from dos_server.problems import Problem, problem_of
from dos_server.services import access, read, rematch
from dos_server.web import auth, reader
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page
from dos_server.web.pages.mailed import bad_link
from dos_server.web.pages.table import seat_names


def _token(game_id: str) -> str | None:
    """Who presses: a parked emailed link's seat, else this browser's seat or host token."""
    return auth.emailed_or_seat_token(game_id) or auth.host_token(game_id)


@bp.get("/games/<game_id>/rematch")
def rematch_page(game_id: str) -> Page:
    """The finished game's standing challenge, who accepted, and the button that accepts it
    (or makes it, when nobody asked yet)."""
    token = request.args.get("token")
    if token:
        auth.park(game_id, "signin", token)
        return redirect(url_for("web.rematch_page", game_id=game_id), 303)
    game = access.get_game(game_id)
    try:
        who = _token(game_id)
    except DomainError as error:
        auth.clear_pending()
        return bad_link(problem_of(error), game_id, paste=True)
    viewer = access.authenticate(game, who) if who else access.Viewer()
    reader.as_seat(game, viewer.seat)
    body = read.game_body(game, viewer)
    challenge = body["rematch"]
    mine = None
    if challenge and viewer.seat is not None:
        name = body["seats"][viewer.seat]["name"]
        mine = next((s for s in challenge["seats"] if s["name"] == name), None)
    return render_template("rematch.html", game=body, names=seat_names(body["seats"]),
                           challenge=challenge, mine=mine, you=viewer.seat,
                           can_press=viewer.seat is not None or viewer.host)


@bp.post("/games/<game_id>/rematch")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_CREATE"])
def start_rematch(game_id: str) -> Page:
    """Rematch (or "I'm in"): make the finished game's challenge, or accept the one it has;
    this browser keeps the new game's seat (and its host token, when this press made it)."""
    try:
        token = _token(game_id)
    except DomainError as error:
        auth.clear_pending()
        return bad_link(problem_of(error), game_id, paste=True)
    if token is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) to start a rematch"))
    done = rematch.rematch(game_id, token)
    if auth.pending(game_id, "signin") is not None and done.player_token:
        auth.remember_seat(game_id, token)  # pressing the link's button also signs in
    auth.clear_pending()
    new_id = done.game.id
    if done.host_token:
        auth.remember_host(new_id, done.host_token)
    if done.player_token:
        auth.remember_seat(new_id, done.player_token)
    if done.created:
        flash(_("Rematch created with the same seats and rules. The others accept from the "
                "finished game's page or its email; it starts when everyone is in, or when "
                "you start it with those who are."))
        return redirect(url_for("web.host", game_id=new_id), 303)
    if done.game.status == "active":
        flash(_("You are in: everyone accepted and the rematch has started."))
    else:
        flash(_("You are in: the rematch starts when everyone has accepted, or when its host "
                "starts it."))
    return redirect(url_for("web.table", game_id=new_id), 303)
