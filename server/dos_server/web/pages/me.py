"""All your games: the account signed in with an email address, its games, signing out."""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _

from dos_server import timefmt
from dos_server.errors import DomainError
from dos_server.extensions import limiter
from dos_server.problems import Problem, problem_of
from dos_server.services import account
from dos_server.validation import clean_email, clean_player_name
from dos_server.web import auth, reader
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page, whole_number
from dos_server.web.pages.home import browser_games


def _me(status: int = 200, error: Problem | None = None) -> tuple[str, int]:
    """The account's games when this browser is signed in; the sign-in forms when not."""
    listed = None
    email = None
    me_now: dict[str, Any] | None = None
    token = auth.account_token()
    if token is not None:
        try:
            body = account.my_games(token)
        except DomainError as refused:
            problem = problem_of(refused)
            if problem.status != 401:
                raise
            auth.forget_account()
            flash(_("You were signed out: %(why)s", why=problem.detail))
        else:
            email = body["email"]
            listed = [_me_line(line) for line in body["games"]]
            me_now = account.whoami(token)
    zone = reader.zone()
    return render_template("me.html", games=listed, email=email, here=browser_games(),
                           asked=auth.login_address(), error=error, me=me_now,
                           zone_chosen=zone is not None), status


def _me_line(line: dict[str, Any]) -> dict[str, Any]:
    """A game of the account's, its deadline in the identity's zone (UTC, named, until the
    page has sent the browser's) and from now."""
    deadline = timefmt.parse(line["deadline"]) if line["status"] == "active" else None
    return {**line, "players": [p or _("open seat") for p in line["players"]],
            "deadline_text": timefmt.relative(deadline) if deadline else None,
            "deadline_iso": deadline.isoformat() if deadline else None,
            "deadline_local": timefmt.local_time(deadline, reader.zone()) if deadline else None}


@bp.get("/me")
def me() -> Page:
    return _me()


@bp.post("/me/login")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_LOGIN"])
def me_login() -> Page:
    try:
        address = clean_email(request.form.get("email", "").strip())
    except ValueError as error:
        return _me(422, Problem(422, "invalid-input", _("Invalid address"), str(error)))
    try:
        account.request_login(address)
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 429:
            raise
        return _me(429, problem)
    auth.remember_login(address)
    flash(_("If this address plays here, a code and a link are on their way. Type the code "
            "below, or open the link in this browser."))
    return redirect(url_for("web.me"), 303)


@bp.post("/me/verify")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_LOGIN_VERIFY"])
def me_verify() -> Page:
    code = request.form.get("code", "").strip()
    try:
        address = clean_email(request.form.get("email", "").strip())
    except ValueError as error:
        return _me(422, Problem(422, "invalid-input", _("Invalid address"), str(error)))
    if not code or len(code) > 32:
        return _me(422, Problem(422, "invalid-input", _("No code"),
                                _("type the code from the email (8 digits)")))
    agent = request.headers.get("User-Agent")
    try:
        signed = account.verify_code(address, code, agent if agent and agent.isprintable()
                                     else None, kind="browser")
    except DomainError as error:
        problem = problem_of(error)
        if problem.kind != "invalid-code":
            raise
        return _me(problem.status, Problem(
            problem.status, problem.kind, problem.title,
            _("that code is wrong, used or expired: check it, or ask for a new one")))
    auth.remember_account(signed["account_token"], signed["session"]["id"])
    reader.resolve()  # the identity's language, for the words below
    flash(_("Signed in as %(email)s.", email=signed["email"]))
    return redirect(url_for("web.me"), 303)


@bp.post("/me/rating")
def me_rating() -> Page:
    """The signed-in identity's player name (empty: none) and whether the leaderboard lists it;
    a refused name is said above the form (422, or 409 when taken) and nothing changes."""
    token = auth.account_token()
    if token is None:
        flash(_("Sign in with your email address first."))
        return redirect(url_for("web.me"), 303)
    typed = request.form.get("player_name", "").strip()
    try:
        name = clean_player_name(typed) if typed else None
    except ValueError as error:
        return _me(422, Problem(422, "invalid-input", _("Invalid input"), str(error)))
    try:
        account.set_settings(token, None, {"player_name", "leaderboard_hidden"},
                             player_name=name,
                             leaderboard_hidden="leaderboard_hidden" in request.form)
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 409:
            raise
        return _me(409, problem)
    flash(_("Rating settings saved."))
    return redirect(url_for("web.me"), 303)


@bp.post("/me/games/<game_id>/open")
def me_open(game_id: str) -> Page:
    """The account's seat in ``game_id``: its player token into this browser, then the table."""
    token = auth.account_token()
    if token is None:
        flash(_("Sign in with your email address first."))
        return redirect(url_for("web.me"), 303)
    seat = whole_number(request.form.get("seat", ""), 0, 3)
    got = account.seat_token_for(token, game_id, seat)
    auth.remember_seat(game_id, got["player_token"])
    return redirect(url_for("web.table", game_id=game_id), 303)


@bp.post("/me/signout")
def me_signout() -> Page:
    """End this browser's account session, and forget the seats of the account's games."""
    token = auth.account_token()
    auth.forget_account()
    if token is not None:
        try:
            for line in account.my_games(token)["games"]:
                auth.forget_seat(line["game_id"])
            account.revoke_session(token, account.authenticate(token).session_id)
        except DomainError as error:
            if problem_of(error).status != 401:  # already ended elsewhere: signed out all the same
                raise
    flash(_("Signed out in this browser."))
    return redirect(url_for("web.me"), 303)
