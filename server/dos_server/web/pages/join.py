"""Joining with an invite or the open seats' code, and signing in to a seat or out of it."""

from __future__ import annotations

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _

from dos_server import i18n
from dos_server.errors import DomainError
from dos_server.extensions import limiter
from dos_server.problems import Problem, problem_of
from dos_server.services import access, lobby, read
from dos_server.web import auth, reader
from dos_server.web.blueprint import bp
from dos_server.web.forms import FieldErrors, Page, lobby_name
from dos_server.web.pages.mailed import bad_link
from dos_server.web.pages.zone import browser_zone


@bp.get("/games/<game_id>/join")
def join(game_id: str) -> Page:
    for kind in ("invite", "code"):
        value = request.args.get(kind)
        if value:  # park it and drop it from the address bar (and the history)
            auth.park(game_id, kind, value)
            return redirect(url_for("web.join", game_id=game_id), 303)
    game = read.game_body(access.get_game(game_id), access.Viewer())
    parked = auth.pending(game_id, "invite", "code")
    name = None
    if parked is not None and parked.kind == "invite":
        try:
            name = auth.invite_seat_name(game_id, parked.value)
        except DomainError as error:
            auth.clear_pending()
            return bad_link(problem_of(error), game_id)
    return render_template("join.html", game=game, parked=parked, name=name)


@bp.post("/games/<game_id>/join")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_JOIN"])
def join_post(game_id: str) -> Page:
    parked = auth.pending(game_id, "invite", "code")
    if parked is None:
        raise Problem(400, "no-invite", _("No invite"),
                      _("open the invite link the host sent you, then press Join"))
    name = request.form.get("name", "").strip() or None
    if parked.kind == "code":
        try:
            name = lobby_name(name)
        except Problem as invalid:
            return _refused_name(game_id, parked, invalid, name)
    try:
        joined = lobby.join_game(game_id, parked.value if parked.kind == "invite" else None,
                                 parked.value if parked.kind == "code" else None, name,
                                 time_zone=browser_zone(), language=i18n.browser_language())
    except DomainError as error:
        problem = problem_of(error)
        if problem.status in (401, 403):  # revoked since the join page, or a wrong code
            auth.clear_pending()
            return bad_link(problem, game_id)
        if parked.kind != "code" or problem.status not in (409, 422):
            raise
        return _refused_name(game_id, parked, problem, name)
    auth.clear_pending()
    auth.remember_seat(game_id, joined.player_token)
    reader.resolve()  # the seat's language from now on
    flash(_("You joined as %(name)s.", name=joined.name))
    return redirect(url_for("web.table", game_id=game_id), 303)


def _refused_name(game_id: str, parked: auth.Pending, problem: Problem,
                  typed: str | None) -> Page:
    """The join page again, saying why beside the name (a 409's seat-taken as a whole)."""
    errors = FieldErrors()
    if problem.status == 422:
        errors.add_problem(problem, lambda path: "name" if path[:1] == ("name",) else None)
        if not errors.fields:
            errors = FieldErrors()
            errors.add("name", problem.detail)
    else:
        errors.add(None, problem.detail)
    game = read.game_body(access.get_game(game_id), access.Viewer())
    return render_template("join.html", game=game, parked=parked, name=None, errors=errors,
                           typed=typed or ""), problem.status


@bp.get("/games/<game_id>/signin")
def signin(game_id: str) -> Page:
    access.get_game(game_id)  # 404 for a game that does not exist
    parked = auth.pending(game_id, "signin")
    who = None
    if parked is not None:
        try:
            who = auth.resolve(game_id, parked.value)
        except DomainError as error:
            auth.clear_pending()
            return bad_link(problem_of(error), game_id, paste=True)
    return render_template("signin.html", game_id=game_id, who=who, error=None)


@bp.post("/games/<game_id>/signin")
def signin_post(game_id: str) -> Page:
    parked = auth.pending(game_id, "signin")
    pasted = request.form.get("token", "").strip()
    token = pasted or (parked.value if parked else "")
    if not token:
        return render_template("signin.html", game_id=game_id, who=None,
                               error=Problem(400, "no-token", _("No token"),
                                             _("paste your player token"))), 400
    try:
        who = auth.resolve(game_id, token)
    except DomainError as error:
        problem = problem_of(error)
        auth.clear_pending()
        if not pasted:  # the emailed link went bad since its page was shown
            return bad_link(problem, game_id, paste=True)
        return render_template("signin.html", game_id=game_id, who=None,
                               error=problem), problem.status
    auth.clear_pending()
    if who.player_token:
        auth.remember_seat(game_id, who.player_token)
        reader.resolve()
        flash(_("Signed in as %(name)s.", name=who.name))
        return redirect(url_for("web.table", game_id=game_id), 303)
    assert who.host_token is not None
    auth.remember_host(game_id, who.host_token)
    flash(_("Signed in with the host token."))
    return redirect(url_for("web.host", game_id=game_id), 303)


@bp.post("/games/<game_id>/signout")
def signout(game_id: str) -> Page:
    auth.forget_seat(game_id)
    flash(_("Signed out of this game in this browser."))
    return redirect(url_for("web.table", game_id=game_id), 303)
