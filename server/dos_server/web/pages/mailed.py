"""Pages that a link in an email opens besides the table: unsubscribe, confirming an address,
and the one page every bad, expired or revoked link ends on.

That page (:func:`bad_link`) says what is wrong with the link, with the right status (400: it
never was a link of ours; 410: it was, but expired, was used or was revoked; 403/404/409 as
the service said), and offers a fresh link by email: its form posts to ``/me/login``, which
sends a sign-in code and link to any address with the same answer (it reveals nothing), under
that route's rate limit and CSRF check. The sign-in opens "all your games" (``/me``).

A GET never acts (mail scanners fetch every link): each page's button POSTs, with CSRF.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from flask import Response, current_app, make_response, render_template, request
from flask_babel import gettext as _

from dos_server import i18n, tokens
from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of
from dos_server.services import account, lobby, notify
from dos_server.web import auth
from dos_server.web.blueprint import bp


def link_status(problem: Problem) -> int:
    """The status of a link ``problem``: 400 (never valid), 410 (no longer valid), or its own."""
    if problem.kind == "bad-invite-code":
        return 400
    if problem.status in (401, 403):
        return 400 if problem.extra.get("invalid") or problem.status == 403 else 410
    return problem.status


def _heading(problem: Problem, status: int) -> str:
    if status == 400:
        return str(_("This link is not valid"))
    if status == 410:
        # ``link``: what the web's own refusals say (their detail is in the reader's language)
        expired = problem.extra.get("link") == "expired" or problem.extra.get("expired")
        return str(_("This link has expired") if expired else _("This link no longer works"))
    return str(_("Game not found")) if status == 404 else problem.title


def bad_link(problem: Problem, game_id: str | None = None, *, paste: bool = False) -> Response:
    """The friendly page of a link that does not work (never a traceback), with its status."""
    status = link_status(problem)
    return make_response(render_template(
        "link.html", problem=problem, heading=_heading(problem, status), game_id=game_id,
        paste=paste), status)


def _link_page(view: Callable[[str], Response | str]) -> Callable[[str], Response | str]:
    """A page of an emailed link: what is wrong with the token ends on :func:`bad_link`."""

    @functools.wraps(view)
    def page(token: str) -> Response | str:
        try:
            return view(token)
        except DomainError as error:
            return bad_link(problem_of(error))

    return page


# -- unsubscribe (the link in the email's body; List-Unsubscribe stays on the API) ----------


def unsubscribe_page(token: str, info: dict[str, Any], *, done: bool) -> Response:
    """The page of the unsubscribe link (also what the API's one-click URL shows a browser), in
    the seat's language like its emails (the browser's when the seat chose none)."""
    language = info.get("language")
    with i18n.in_language(language) if language else nullcontext():
        return make_response(render_template("unsubscribe.html", info=info, token=token,
                                             done=done))


@bp.get("/unsubscribe/<token>")
@_link_page
def unsubscribe(token: str) -> Response:
    return unsubscribe_page(token, notify.describe_unsubscribe(token), done=False)


@bp.post("/unsubscribe/<token>")
@_link_page
def unsubscribe_post(token: str) -> Response:
    info: dict[str, Any] = {**notify.describe_unsubscribe(token), **lobby.unsubscribe(token)}
    return unsubscribe_page(token, info, done=True)


# -- confirming a seat's new address ---------------------------------------------------------


@bp.get("/confirm-email/<token>")
@_link_page
def confirm_email(token: str) -> str:
    # Only the signature and the age: the button's POST checks the seat.
    tokens.read_payload("confirm", token, int(account.CONFIRM_MAX_AGE.total_seconds()),
                        "confirmation link")
    return render_template("confirm.html", token=token, done=None)


@bp.post("/confirm-email/<token>")
@_link_page
def confirm_email_post(token: str) -> str:
    return render_template("confirm.html", token=token, done=account.confirm_address(token))


# -- the account's sign-in link ---------------------------------------------------------------


@bp.get("/account/signin/<token>")
@_link_page
def account_signin(token: str) -> str:
    """A button that signs this browser in (the link works once: only the POST spends it)."""
    tokens.read_payload("login", token, int(current_app.config["LOGIN_CODE_MINUTES"]) * 60,
                        "sign-in link")  # garbage or expired: the page offers a fresh link
    return render_template("account_signin.html", token=token, signed=None)


@bp.post("/account/signin/<token>")
@auth.origin_checked  # the single-use token is the secret; CSRF needs a session it has not
@_link_page
def account_signin_post(token: str) -> str:
    """Sign this browser in with the emailed link: an account session, kept on the server."""
    signed = account.verify_link(token, request.headers.get("User-Agent"), kind="browser")
    auth.remember_account(signed["account_token"], signed["session"]["id"])
    return render_template("account_signin.html", token=token, signed=signed)


__all__ = ["bad_link", "link_status", "unsubscribe_page"]
