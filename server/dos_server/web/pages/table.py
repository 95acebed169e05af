"""The table: the game as the signed-in seat sees it, moves, the history, the record,
and the long-poll that tells the page the game moved on."""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any

from flask import (
    Response,
    after_this_request,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import ngettext
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response as BaseResponse

from dos_engine.actions import Match
from dos_engine.cards import Card
from dos_engine.errors import InvalidActionError
from dos_server import i18n, timefmt
from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of
from dos_server.services import access, attention, notes, play, read, watch
from dos_server.web import auth, chatting, nudging, present, reader
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page, whole_number

HISTORY_ON_TABLE = 30
# A request carrying this header (the table's script, with fetch) gets the table fragment
# alone, not the whole page: a move answers in place and the live update swaps it in.
PART_HEADER = "X-DOS-Part"
_CATCH = re.compile(r"catch \d{1,2}")


def seat_names(seats: list[dict[str, Any]]) -> list[str]:
    """Each seat's name, or what a page calls a seat without one ("seat 3")."""
    return [s["name"] or _("seat %(number)s", number=s["seat"] + 1) for s in seats]


def wants_part() -> bool:
    return request.headers.get(PART_HEADER) == "table"


@bp.get("/games/<game_id>")
def table(game_id: str) -> Page:
    token = request.args.get("token")
    if token:  # a sign-in link: park the token, then show the page without it
        auth.park(game_id, "signin", token)
        return redirect(url_for("web.signin", game_id=game_id), 303)
    return render_table(game_id)


def table_viewer(game: Any, game_id: str,
                 token: str | None = None) -> tuple[access.Viewer, str | None]:
    """The signed-in seat of this browser, or of ``token`` (a revoked token signs the browser
    out)."""
    token = token or auth.player_token(game_id)
    if token is None:
        return access.Viewer(), None
    try:
        viewer = access.authenticate(game, token, allow_host=False)
    except DomainError as error:
        auth.forget_seat(game_id)
        flash(_("You were signed out of this game: %(why)s", why=error.detail))
        return access.Viewer(), None
    return viewer, token


def render_table(game_id: str, status: int = 200, notice: str | None = None,
                 error: Problem | None = None, typed: str = "",
                 viewer_token: str | None = None, picked: list[str] | None = None,
                 played: str | None = None,
                 notes_typed: str | None = None) -> tuple[str, int]:
    """The table page as this browser's seat (or ``viewer_token``'s) sees it; only the table
    fragment when the page's script asks for it (:data:`PART_HEADER`).

    ``picked``: the hand cards a refused pick named, ticked again so the player can change
    the pick rather than start over. ``played``: what the move just made did, in words.
    ``notes_typed``: the notes a refused save sent, shown again in the open notes box.
    """
    part = wants_part()

    @after_this_request
    def _vary(response: BaseResponse) -> BaseResponse:
        response.headers["Vary"] = PART_HEADER
        if part:
            response.headers[PART_HEADER] = "table"
        return response

    game = access.get_game(game_id)
    viewer, _token = table_viewer(game, game_id, viewer_token)
    attention.look(game.id, game.seats, viewer.seat, game.turn_started_at)
    reader.as_seat(game, viewer.seat)  # the seat's language and zone (an emailed move's too)
    language = i18n.page_language()
    seen = auth.last_seen(game_id) if viewer.seat is not None else None
    shown = read.table_body(game, viewer, seen, HISTORY_ON_TABLE)
    body, view, actions = shown["game"], shown["game"]["view"], shown["actions"]
    names = seat_names(body["seats"])
    since, more = present.since_last_visit(shown["since"], names, viewer.seat,
                                           language=language)
    if viewer.seat is not None:
        auth.mark_seen(game_id, shown["last"])
    deadline = timefmt.parse(body["turn_deadline"])
    zone = read.reader_zone(game, viewer)
    fair = shown["fairness"]
    nonce = secrets.token_urlsafe(12)
    return render_template(
        "_table.html" if part else "table.html", game=body, view=view, names=names,
        actions=actions, status=body["status"], played=played, picked=picked or [],
        cards=present.card_table(view, actions, names, picked or []),
        low=present.low_hands(view, names, viewer.seat, body["status"]),
        history=list(reversed(present.history_lines(shown["recent"], names, language=language))),
        since=since, since_more=more, notice=notice, error=error, typed=typed,
        deadline=deadline, deadline_text=timefmt.relative(deadline) if deadline else None,
        deadline_local=timefmt.local_time(deadline, zone) if deadline else None,
        zone_chosen=zone is not None, fairness=fair,
        host=auth.host_token(game_id) is not None, page_key=nonce,
        seats=seat_lines(body, names),
        waiting=None if part else nudging.panel(game, viewer, body, names),
        chat=None if part else chatting.panel(game, viewer),
        notes=None if part else notes_box(game, viewer, notes_typed),
    ), status


def notes_box(game: Any, viewer: access.Viewer, typed: str | None) -> dict[str, Any] | None:
    """The "Your notes" box: the seat's own notes, for its seat alone (None for anyone else:
    spectators, the host, another seat's browser never get the box nor its text)."""
    if viewer.seat is None:
        return None
    held = notes.notes_body(game, viewer.seat)
    return {**held, "text": held["text"] if typed is None else typed,
            "open": typed is not None}


def seat_lines(body: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    view = body["view"]
    lines = []
    for seat in body["seats"]:
        index = seat["seat"]
        entry = {**seat, "label": names[index], "cards": None, "score": None,
                 "current": False, "dealer": False, "you": body["you"] == index,
                 "missed": False}
        if view is not None and index < len(view["hand_sizes"]):
            entry.update(cards=view["hand_sizes"][index], score=view["scores"][index],
                         current=view["current"] == index and body["status"] == "active",
                         dealer=view["dealer"] == index,
                         missed=bool(view["dos_missed"][index]) if view["dos_missed"] else False)
        lines.append(entry)
    return lines


@bp.post("/games/<game_id>/move")
def move(game_id: str) -> Page:
    token = auth.player_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) to play"))
    version = whole_number(request.form.get("version", ""), 1)
    number_text = request.form.get("number", "")
    turn = request.form.get("turn", "").strip()
    page_key = request.form.get("page", "")[:40]
    picked = [code for code in request.form.getlist("card") if code][:12]
    if version is None:
        return render_table(game_id, 400, error=Problem(400, "invalid-input", _("Invalid form"),
                                                  _("the form lost its version; reload the page")))
    number = whole_number(number_text, 1, 100_000) if number_text else None
    if number_text and number is None:
        return render_table(game_id, 422, error=Problem(422, "invalid-input", _("No such move"),
                                                  _("choose one of the numbered moves")))
    typed = turn
    if number is None and not turn:
        try:
            turn = picked_move(request.form) or ""
        except Problem as refused:
            return render_table(game_id, refused.status, error=refused, picked=picked)
    if number is None and not turn:
        return render_table(game_id, 422, error=Problem(
            422, "invalid-input", _("Nothing to play"),
            _("type a move in the box (e.g. %(example)s) or press one of the numbered moves",
              example="m1 R5; end")))
    if len(turn) > 2000:
        return render_table(game_id, 422, error=Problem(422, "invalid-input", _("Too long"),
                                                  _("a turn fits on one line")), typed=turn[:2000])
    # One key per page and choice: pressing the same button twice plays once; another choice
    # from the same (now old) page is refused as stale, not as a reused key.
    choice = str(number) if number is not None else hashlib.sha256(turn.encode()).hexdigest()[:16]
    key = f"web-{page_key}-{choice}" if page_key else None
    try:
        result = play.submit_actions(game_id, token, version, None if number else [turn], key,
                                     number=number, answer=read.turn_body)
    except DomainError as error:
        problem = problem_of(error)
        if problem.kind in ("stale-version", "idempotency-key-reused"):
            return render_table(game_id, 409, notice=_(
                "The game moved on before your move arrived: nothing was played. Here is the "
                "table as it is now; choose again."))
        if problem.status in (401, 403, 404):
            raise
        return render_table(game_id, problem.status, error=problem, typed=typed, picked=picked)
    applied = (_("Played: %(moves)s", moves="; ".join(result["applied"]))
               if result.get("applied") else _("Played."))
    if wants_part():  # the script swaps the new table in: no redirect, no second request
        seats = result["game"]["seats"]
        names = seat_names(seats)
        said = present.own_lines(result["events"], names, result["game"]["you"],
                                 language=i18n.page_language())
        return render_table(game_id, played="; ".join(said) + "." if said else applied)
    flash(applied)
    return redirect(url_for("web.table", game_id=game_id), 303)


def picked_move(form: MultiDict[str, str]) -> str | None:
    """The canonical notation of what was picked on the card table: the hand cards ticked
    (``card``) and the button pressed, a Center Row card (``target``), the Center Row's open
    slot (``to``: add or place) or a button (``do``: draw, end, dos, catch N). None if the
    form holds none of them. A pick that cannot be a move raises a :class:`Problem` that says
    why in the rules' words; whether the move is legal now is the engine's to say.
    """
    do, target, to = (form.get(name, "").strip() for name in ("do", "target", "to"))
    codes = [code for code in form.getlist("card") if code]
    if do:
        if do in ("draw", "end", "dos") or _CATCH.fullmatch(do):
            return do
        raise Problem(422, "invalid-input", _("No such move"), _("choose one of the buttons"))
    if not target and not to:
        if codes:
            raise Problem(422, "invalid-input", _("Where to?"),
                          _("you picked cards; now press the Center Row card they match"))
        return None
    try:
        cards = tuple(Card.from_code(code) for code in codes)
    except InvalidActionError as error:
        raise Problem(422, "invalid-input", _("Not a card"), str(error)) from None
    if target:
        position = whole_number(target, 1, 999)
        if position is None:
            raise Problem(422, "invalid-input", _("No such card"), _("press a Center Row card"))
        if not cards:
            raise Problem(422, "illegal-action", _("Pick your cards first"),
                          _("pick one card of your hand (or two that add up, for a double "
                            "match), then press the Center Row card they match"), rule="3.1")
        if len(cards) > 2:
            raise Problem(422, "illegal-action", _("Too many cards"),
                          ngettext("you picked %(num)s card: a match uses one card of the same "
                                   "number (3.1) or exactly two that add up to it (3.2)",
                                   "you picked %(num)s cards: a match uses one card of the same "
                                   "number (3.1) or exactly two that add up to it (3.2)",
                                   len(cards)), rule="3.2")
        return Match(position, cards).text()
    if to not in ("add", "place"):
        raise Problem(422, "invalid-input", _("No such move"), _("choose one of the buttons"))
    if len(cards) != 1:
        if to == "add":
            why = ngettext("you picked %(num)s: after a draw with no match you add one card of "
                           "your hand to the Center Row",
                           "you picked %(num)s: after a draw with no match you add one card of "
                           "your hand to the Center Row", len(cards))
        else:
            why = ngettext("you picked %(num)s: each colour bonus lets you place one card of "
                           "your hand into the Center Row",
                           "you picked %(num)s: each colour bonus lets you place one card of "
                           "your hand into the Center Row", len(cards))
        raise Problem(422, "illegal-action", _("Pick one card"), why,
                      rule="3.6" if to == "add" else "3.5")
    return f"{to} {cards[0].code}"


@bp.get("/games/<game_id>/history")
def history(game_id: str) -> Page:
    game = access.get_game(game_id)
    viewer, _token = table_viewer(game, game_id)
    reader.as_seat(game, viewer.seat)
    after = whole_number(request.args.get("after", "0"), 0) or 0
    body = read.game_body(game, viewer)
    names = seat_names(body["seats"])
    page = read.history_body(game, viewer, after, 200)
    zone = reader.zone()
    lines = present.history_lines(page["events"], names, language=i18n.page_language())
    for line in lines:
        at = timefmt.parse(line["at"])
        line["when"] = timefmt.local_time(at, zone) if at else ""
    return render_template("history.html", game=body, lines=lines, after=after,
                           next_after=page["next_after"], more=page["more"],
                           zone_chosen=zone is not None)


@bp.get("/games/<game_id>/record")
def record(game_id: str) -> Page:
    """The game's record for people (what the game-over email links to): final scores, the
    revealed seed with every round's commitment checked, and the way to the whole history."""
    game = access.get_game(game_id)
    body = read.game_body(game, access.Viewer())  # nobody's hand, even signed in
    names = seat_names(body["seats"])
    return render_template("record.html", game=body, names=names, view=body["view"],
                           seats=seat_lines(body, names), fairness=read.fairness_check(game))


@bp.get("/games/<game_id>/wait")
def wait(game_id: str) -> Response:
    """Long-poll: answers when the game's version differs from ``version`` (or after a while).

    The pages' script reloads the table when the version moved. No database connection is
    held while waiting (see :mod:`dos_server.services.watch`).
    """
    version = whole_number(request.args.get("version", ""), 0)
    if version is None:
        raise Problem(400, "invalid-input", _("Invalid version"), _("version: a whole number"))
    timeout = float(current_app.config["WEB_WAIT_SECONDS"])
    _page_open(game_id)
    current = watch.wait_for_change(game_id, version, timeout)
    response = jsonify(version=current, changed=current != version)
    response.headers["Cache-Control"] = "no-store"
    return response


def _page_open(game_id: str) -> None:
    """The seat's table is open (its script waits for a change): a look of the seat, written
    at most once a minute (services/attention.py), before the wait holds no connection."""
    token = auth.player_token(game_id)
    if token is None:
        return
    game = access.read_game(game_id)
    try:
        viewer = access.authenticate(game, token, allow_host=False)
    except DomainError:  # signed out meanwhile: the next table page says so
        return
    attention.look(game.id, game.seats, viewer.seat, game.turn_started_at)
