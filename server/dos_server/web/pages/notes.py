"""The table page's "Your notes" box: the seat's private notes (services/notes.py), saved by a
plain POST and 303 back to the table (no script needed). Only the browser's seat reads or
writes them; the box is not drawn for anyone else (``pages/table.py``)."""

from __future__ import annotations

from flask import flash, redirect, request, url_for
from flask_babel import gettext as _

from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of
from dos_server.services import notes
from dos_server.web import auth
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page, whole_number
from dos_server.web.pages.table import render_table


@bp.post("/games/<game_id>/notes")
@auth.form_limit(notes.MAX_REQUEST_BYTES)
def save_notes(game_id: str) -> Page:
    token = auth.player_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) to keep notes on it"))
    text = request.form.get("text", "")
    # The seat the page was drawn for: a browser signed in to another seat since gets the
    # seat routes' 403, and that seat's notes are not overwritten with these.
    seat = whole_number(request.form.get("seat", ""), 0, 1000)
    if seat is None:
        raise Problem(422, "invalid-input", _("Invalid form"),
                      _("the form lost its seat; reload the page"))
    try:
        notes.set_notes(game_id, token, seat, text)
    except DomainError as error:
        problem = problem_of(error)
        if problem.status in (401, 403, 404):
            raise problem from None
        return render_table(game_id, problem.status, error=problem, notes_typed=text)
    flash(_("Your notes are saved."))
    return redirect(url_for("web.table", game_id=game_id, _anchor="notes"), 303)


__all__ = ["save_notes"]
