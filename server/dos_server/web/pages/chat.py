"""Table talk from the table page: the form that posts a message (a plain POST and 303 without
the script; with it, ``static/chat.js`` posts in place) and the long-poll the script follows
new messages by (what the panel shows: ``web/chatting.py``). The same service as the API
(services/chat.py)."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, flash, jsonify, redirect, request, url_for
from flask_babel import gettext as _

from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of, problem_response
from dos_server.services import access, chat, watch
from dos_server.web import auth
from dos_server.web.blueprint import bp
from dos_server.web.chatting import shown
from dos_server.web.forms import Page, whole_number
from dos_server.web.pages.table import render_table

CHAT_PART = "chat"  # the script's X-DOS-Part: the answer is JSON, not a page


def _viewer_token(game_id: str) -> str | None:
    """The browser's seat token, else its host token (None: a spectator)."""
    return auth.player_token(game_id) or auth.host_token(game_id)


def _wants_json() -> bool:
    return request.headers.get("X-DOS-Part") == CHAT_PART


@bp.post("/games/<game_id>/chat")
def say(game_id: str) -> Page:
    text = request.form.get("text", "")
    try:
        sent = chat.post(game_id, _viewer_token(game_id), text)
    except DomainError as error:
        problem = problem_of(error)
        if _wants_json():
            return problem_response(problem)
        if problem.status in (401, 404):
            raise problem from None
        return render_table(game_id, problem.status, error=problem)
    if _wants_json():
        answer = jsonify(shown(sent))
        answer.status_code = 201
        return answer
    flash(_("Said at the table."))
    return redirect(url_for("web.table", game_id=game_id, _anchor="chat"), 303)


@bp.post("/games/<game_id>/chat/settings")
def chat_settings(game_id: str) -> Page:
    """The host page's table talk settings: whether spectators write, which seats are muted."""
    token = auth.host_token(game_id)
    if token is None:
        raise Problem(403, "host-only", _("Host only"),
                      _("only the browser that created this game holds its host controls "
                        "(or sign in with the host token)"))
    muted = [whole_number(value, 0, 1000) for value in request.form.getlist("muted")][:8]
    if None in muted:
        raise Problem(422, "invalid-input", _("Invalid form"), _("choose seats to mute"))
    try:
        chat.set_settings(game_id, token, {"spectators": "spectators" in request.form,
                                           "muted": muted})
    except DomainError as error:
        raise problem_of(error) from None
    flash(_("The table talk settings were saved."))
    return redirect(url_for("web.host", game_id=game_id, _anchor="chat-settings"), 303)


@bp.post("/games/<game_id>/chat/hide")
def chat_hide(game_id: str) -> Page:
    """The chat panel's per-author control: the browser's seat hides that seat's messages for
    itself (``do=hide``) or shows them again (``do=show``); the others still read them."""
    token = auth.player_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) to hide a player's "
                        "messages"))
    seat = whole_number(request.form.get("seat", ""), 0, 1000)
    do = request.form.get("do", "")
    if seat is None or do not in ("hide", "show"):
        raise Problem(422, "invalid-input", _("Invalid form"),
                      _("the form lost its seat; reload the page"))
    try:
        chat.hide_seat(game_id, token, seat, hide=do == "hide")
    except DomainError as error:
        problem = problem_of(error)
        if problem.status in (401, 403, 404):
            raise problem from None
        return render_table(game_id, problem.status, error=problem)
    game = access.get_game(game_id)
    name = next((s.name for s in game.seats if s.index == seat and s.name), None) or \
        _("seat %(number)s", number=seat + 1)
    flash(_("You no longer see %(name)s's messages here; the others still do.", name=name)
          if do == "hide" else _("You see %(name)s's messages again.", name=name))
    return redirect(url_for("web.table", game_id=game_id, _anchor="chat"), 303)


@bp.get("/games/<game_id>/chat/messages")
def chat_messages(game_id: str) -> Response:
    """Long-poll: the messages after ``after`` as the browser's seat sees them, as soon as
    there is one (or an empty list after a while). No connection is held while waiting."""
    after = whole_number(request.args.get("after", "0"), 0, 2**31 - 1)
    if after is None:
        raise Problem(400, "invalid-input", _("Invalid form"), _("after: a whole number"))
    timeout = float(current_app.config["WEB_WAIT_SECONDS"])
    token = _viewer_token(game_id)

    def look() -> dict[str, Any]:
        game = access.get_game(game_id)
        try:
            viewer = access.authenticate(game, token)
        except DomainError:  # signed out meanwhile: read as a spectator
            viewer = access.Viewer()
        body = chat.messages_body(game, viewer, after, chat.PAGE_LIMIT)
        body["messages"] = [shown(m) for m in body["messages"]]
        return body

    body = watch.wait_until(game_id, look, lambda found: bool(found["messages"]), timeout)
    response = jsonify(body)
    response.headers["Cache-Control"] = "no-store"
    return response


__all__ = ["chat_hide", "chat_messages", "chat_settings", "say"]
