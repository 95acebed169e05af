"""The pages: thin views that parse a form, call the same services as the API, and render.

Reads use :mod:`dos_server.services.access` and :mod:`~dos_server.services.read`; writes go
through :mod:`~dos_server.services.lobby` and :mod:`~dos_server.services.play`, which own
their transactions. A service's domain error becomes a readable page (or the page with the
error on it), never a traceback; a write that fails changes nothing.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from typing import Any

import marshmallow as ma
from flask import (
    Response,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from werkzeug.exceptions import HTTPException, InternalServerError
from werkzeug.wrappers import Response as BaseResponse

from dos_server import urls
from dos_server.errors import DomainError
from dos_server.extensions import limiter
from dos_server.problems import Problem, busy_problem, problem_of
from dos_server.schemas import CreateGameIn, NotificationsIn, VacationIn
from dos_server.services import access, account, lobby, notify, play, read, rematch, watch
from dos_server.validation import clean_email
from dos_server.web import auth, bp, present
from dos_server.web.mailed import bad_link

log = logging.getLogger("dos_server.web")

Page = str | Response | BaseResponse | tuple[str, int]

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
HISTORY_ON_TABLE = 30
TIME_LIMITS = [("", "no time limit"), ("300", "5 minutes"), ("3600", "1 hour"),
               ("21600", "6 hours"), ("86400", "1 day"), ("259200", "3 days"),
               ("604800", "1 week"), ("1209600", "2 weeks"), ("5184000", "60 days")]
BOTS = [("greedy", "greedy bot"), ("random", "random bot"), ("search-1", "search bot (1 ply)"),
        ("search-2", "search bot (2 plies)"), ("search-3", "search bot (3 plies)")]


# -- the blueprint's plumbing ----------------------------------------------------------------


@bp.before_request
def _csrf() -> None:
    if request.method == "POST":
        auth.check_csrf()


@bp.after_request
def _headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    if response.mimetype == "text/html":  # pages show hands: never kept by shared caches
        response.headers["Cache-Control"] = "no-store"
    return response


@bp.app_template_global()
def csrf_field() -> str:
    return auth.csrf_token()


@bp.app_template_filter("game_name")
def game_name(game: Any) -> str:
    """How a page names a game: 'Friday cards (k3q9x7m2ab)', or 'Game k3q9x7m2ab' untitled."""
    title = game.get("title") if isinstance(game, dict) else None
    return f"{title} ({game['id']})" if title else f"Game {game['id']}"


@bp.app_template_filter("sentence")
def sentence(text: str) -> str:
    """A service's detail as a sentence: capital first letter, a full stop at the end."""
    text = str(text).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


@bp.context_processor
def _helpers() -> dict[str, Any]:
    return {"chip": present.chip, "chips": present.chips, "CSRF_FIELD": auth.CSRF_FIELD}


@bp.errorhandler(Problem)
def _problem(problem: Problem) -> tuple[str, int, dict[str, str]]:
    return (render_template("error.html", problem=problem,
                            game_id=(request.view_args or {}).get("game_id")),
            problem.status, problem.headers)


@bp.errorhandler(DomainError)
def _domain_error(error: DomainError) -> tuple[str, int, dict[str, str]]:
    return _problem(problem_of(error))


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> tuple[str, int] | tuple[str, int, dict[str, str]]:
    if isinstance(error, InternalServerError):
        return _unexpected(error.original_exception or error)
    code = error.code or 500
    title = {404: "Not found", 405: "Not allowed", 413: "Too large",
             429: "Too many requests"}.get(code, error.name)
    detail = ("too many requests from your address; wait a minute and try again"
              if code == 429 else error.description or title)
    problem = Problem(code, "http", title, detail)
    return _problem(problem)


@bp.errorhandler(Exception)
def _unexpected(error: BaseException) -> tuple[str, int] | tuple[str, int, dict[str, str]]:
    busy = busy_problem(error)
    if busy is not None:
        return _problem(busy)
    log.error("unexpected error on a page", exc_info=error)
    problem = Problem(500, "internal-error", "Something went wrong",
                      "something went wrong on the server; nothing was changed. Please try again.")
    return render_template("error.html", problem=problem, game_id=None), 500


# -- home and creating a game ----------------------------------------------------------------


@bp.get("/")
def home() -> Page:
    return render_template("home.html", mine=_browser_games())


def _browser_games() -> list[dict[str, Any]]:
    """The games this browser holds a seat or the host token of (newest first)."""
    mine = []
    for game_id in auth.games():
        try:
            game = access.get_game(game_id)
        except DomainError:
            continue
        body = read.game_body(game, access.Viewer())
        mine.append({"id": game_id, "status": body["status"],
                     "names": [s["name"] or "open seat" for s in body["seats"]],
                     "host": auth.host_token(game_id) is not None,
                     "seat": auth.player_token(game_id) is not None})
    return mine


@bp.get("/new")
def new_game() -> Page:
    return _new_page(_new_defaults(), [])


def _new_page(form: dict[str, Any], errors: list[str], status: int = 200) -> tuple[str, int]:
    return render_template("new.html", form=form, errors=errors, time_limits=TIME_LIMITS,
                           bots=BOTS, policies=BOTS), status


def _new_defaults() -> dict[str, Any]:
    form: dict[str, Any] = {"target_score": "200", "after_draw": "drawn_card", "dos_call": False,
                            "bonus_placement": "optional", "turn_time_limit": "86400", "me": "0",
                            "timeout_policy": "random", "forfeit_after": "",
                            "vacation_days": "14", "title": ""}
    for index, kind in enumerate(("person", "person", "none", "none")):
        form[f"seat{index}_kind"] = kind
        for field in ("name", "email", "webhook"):
            form[f"seat{index}_{field}"] = ""
    return form


@bp.post("/new")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_CREATE"])
def create_game() -> Page:
    form = {**_new_defaults(), **request.form.to_dict()}
    form["dos_call"] = "dos_call" in request.form
    seats: list[dict[str, Any]] = []
    me_index: int | None = None
    errors: list[str] = []
    for index in range(4):
        kind = form.get(f"seat{index}_kind", "none")
        name = str(form.get(f"seat{index}_name", "")).strip()
        email = str(form.get(f"seat{index}_email", "")).strip()
        if kind == "none":
            continue
        webhook = str(form.get(f"seat{index}_webhook", "")).strip()
        if kind == "person":
            if not name:
                errors.append(f"seat {index + 1}: give the person a name (or make it an open seat)")
                continue
            if form.get("me") == str(index):
                me_index = len(seats)
            seats.append({"name": name, **({"email": email} if email else {}),
                          **({"webhook_url": webhook} if webhook else {})})
        elif kind == "open":
            seats.append({})
        elif kind in lobby.BOT_STRATEGIES:
            seats.append({"bot": kind})
        else:
            errors.append(f"seat {index + 1}: choose a person, a bot, an open seat or nobody")
    payload: dict[str, Any] = {
        "seats": seats,
        "options": {"after_draw": form.get("after_draw"), "dos_call": bool(form["dos_call"]),
                    "bonus_placement": form.get("bonus_placement")},
    }
    if str(form.get("title", "")).strip():  # empty: an untitled game
        payload["title"] = str(form["title"])
    target = _int(str(form.get("target_score", "")))
    if target is None:
        errors.append("target score: a whole number, e.g. 200")
    else:
        payload["options"]["target_score"] = target
    limit = str(form.get("turn_time_limit", ""))
    if limit:
        seconds = _int(limit)
        if seconds is None:
            errors.append("time limit: choose one from the list")
        payload["turn_time_limit"] = seconds
    payload["timeout_policy"] = str(form.get("timeout_policy", ""))
    forfeit = str(form.get("forfeit_after", "")).strip()
    if forfeit:  # empty: never forfeited
        payload["forfeit_after"] = _int(forfeit)
        if payload["forfeit_after"] is None:
            errors.append("forfeit after: a whole number of timeouts (1 to 100), or empty for "
                          "never")
    payload["vacation_days"] = _int(str(form.get("vacation_days", "")))
    if payload["vacation_days"] is None:
        errors.append("vacation days: a whole number of days a year (0 to 60)")
    if not errors:
        try:
            loaded = CreateGameIn().load(payload)
        except ma.ValidationError as error:
            errors += _messages(error.messages)
    if errors:
        return _new_page(form, errors, 422)
    try:
        created = lobby.create_game([lobby.SeatSpec(**seat) for seat in loaded["seats"]],
                                    loaded.get("options", {}), loaded.get("turn_time_limit"),
                                    loaded["timeout_policy"], loaded.get("forfeit_after"),
                                    loaded["vacation_days"], loaded.get("title"))
    except DomainError as error:
        problem = problem_of(error)
        return _new_page(form, [problem.detail], problem.status)
    _host_and_sit(created, me_index)
    flash("Game created. Send each player their invite link; the game starts when every "
          "seat is filled, or when you start it.")
    return redirect(url_for("web.host", game_id=created.game.id), 303)


def _host_and_sit(created: lobby.Created, seat: int | None) -> None:
    """This browser keeps a new game's host token and, if it plays ``seat``, claims it."""
    game_id = created.game.id
    auth.remember_host(game_id, created.host_token)
    mine = [i for i in created.invites if i.seat == seat]
    if seat is not None and mine:
        joined = lobby.join_game(game_id, mine[0].invite, None, None)
        auth.remember_seat(game_id, joined.player_token)


def _int(text: str, low: int = -(2**31), high: int = 2**31 - 1) -> int | None:
    text = text.strip()
    if not text or len(text) > 10 or not text.lstrip("-").isdigit():
        return None
    value = int(text)
    return value if low <= value <= high else None


def _messages(errors: Any, path: str = "") -> list[str]:
    """marshmallow's nested error messages as 'field: message' lines."""
    if isinstance(errors, dict):
        out = []
        for key, value in errors.items():
            where = f"{path}.{key}" if path else str(key)
            out += _messages(value, where)
        return out
    if isinstance(errors, list) and all(isinstance(e, str) for e in errors):
        return [f"{path.replace('_', ' ')}: {' '.join(errors)}"]
    if isinstance(errors, list):
        return [m for e in errors for m in _messages(e, path)]
    return [f"{path}: {errors}"]


# -- all your games: the account signed in with an email address (issue #14) ----------------


def _me(status: int = 200, error: Problem | None = None) -> tuple[str, int]:
    """The account's games when this browser is signed in; the sign-in forms when not."""
    listed = None
    email = None
    token = auth.account_token()
    if token is not None:
        try:
            body = account.my_games(token)
        except DomainError as refused:
            problem = problem_of(refused)
            if problem.status != 401:
                raise
            auth.forget_account()
            flash(f"You were signed out: {problem.detail}")
        else:
            email = body["email"]
            listed = [_me_line(line) for line in body["games"]]
    return render_template("me.html", games=listed, email=email, here=_browser_games(),
                           asked=auth.login_address(), error=error), status


def _me_line(line: dict[str, Any]) -> dict[str, Any]:
    deadline = present.parse_time(line["deadline"]) if line["status"] == "active" else None
    return {**line, "players": [p or "open seat" for p in line["players"]],
            "deadline_text": present.relative(deadline) if deadline else None,
            "deadline_utc": present.utc_text(deadline) if deadline else None}


@bp.get("/me")
def me() -> Page:
    return _me()


@bp.post("/me/login")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_LOGIN"])
def me_login() -> Page:
    try:
        address = clean_email(request.form.get("email", "").strip())
    except ValueError as error:
        return _me(422, Problem(422, "invalid-input", "Invalid address", str(error)))
    try:
        account.request_login(address)
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 429:
            raise
        return _me(429, problem)
    auth.remember_login(address)
    flash("If this address plays here, a code and a link are on their way. Type the code "
          "below, or open the link in this browser.")
    return redirect(url_for("web.me"), 303)


@bp.post("/me/verify")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_LOGIN_VERIFY"])
def me_verify() -> Page:
    code = request.form.get("code", "").strip()
    try:
        address = clean_email(request.form.get("email", "").strip())
    except ValueError as error:
        return _me(422, Problem(422, "invalid-input", "Invalid address", str(error)))
    if not code or len(code) > 32:
        return _me(422, Problem(422, "invalid-input", "No code",
                                "type the code from the email (8 digits)"))
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
            "that code is wrong, used or expired: check it, or ask for a new one"))
    auth.remember_account(signed["account_token"])
    flash(f"Signed in as {signed['email']}.")
    return redirect(url_for("web.me"), 303)


@bp.post("/me/games/<game_id>/open")
def me_open(game_id: str) -> Page:
    """The account's seat in ``game_id``: its player token into this browser, then the table."""
    token = auth.account_token()
    if token is None:
        flash("Sign in with your email address first.")
        return redirect(url_for("web.me"), 303)
    seat = _int(request.form.get("seat", ""), 0, 3)
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
    flash("Signed out in this browser.")
    return redirect(url_for("web.me"), 303)


# -- the host's page -------------------------------------------------------------------------


def _host_token(game_id: str) -> str:
    token = auth.host_token(game_id)
    if token is None:
        raise Problem(403, "host-only", "Host only",
                      "only the browser that created this game holds its host controls "
                      "(or sign in with the host token)")
    return token


@bp.get("/games/<game_id>/host")
def host(game_id: str) -> Page:
    token = _host_token(game_id)
    game = access.get_game(game_id)
    viewer = access.authenticate(game, token)
    body = read.game_body(game, viewer)
    invites = read.invites_body(game, viewer)
    links = [{"seat": i["seat"], "name": i["name"],
              "url": urls.join_url(game_id, i["invite"])}
             for i in invites["invites"] if i["invite"]]
    code_url = (urls.join_code_url(game_id, invites["invite_code"])
                if invites["invite_code"] and body["status"] == "waiting" else None)
    return render_template("host.html", game=body, links=links, code_url=code_url,
                           signed_in=auth.player_token(game_id) is not None)


@bp.post("/games/<game_id>/start")
def start(game_id: str) -> Page:
    lobby.start_now(game_id, _host_token(game_id))
    flash("The game has started.")
    return redirect(url_for("web.table", game_id=game_id), 303)


@bp.post("/games/<game_id>/cancel")
def cancel(game_id: str) -> Page:
    lobby.cancel(game_id, _host_token(game_id))
    flash("The game was cancelled.")
    return redirect(url_for("web.host", game_id=game_id), 303)


@bp.post("/games/<game_id>/seats/<int:seat>/remove")
def remove_seat(game_id: str, seat: int) -> Page:
    lobby.remove_seat(game_id, _host_token(game_id), seat)
    flash(f"Seat {seat + 1} was removed; the seats after it moved up.")
    return redirect(url_for("web.host", game_id=game_id), 303)


# -- joining and signing in ------------------------------------------------------------------


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
        raise Problem(400, "no-invite", "No invite",
                      "open the invite link the host sent you, then press Join")
    name = request.form.get("name", "").strip() or None
    if parked.kind == "code":
        try:
            name = lobby_name(name)
        except Problem as invalid:
            game = read.game_body(access.get_game(game_id), access.Viewer())
            return render_template("join.html", game=game, parked=parked, name=None,
                                   error=invalid.detail, typed=name or ""), invalid.status
    try:
        joined = lobby.join_game(game_id, parked.value if parked.kind == "invite" else None,
                                 parked.value if parked.kind == "code" else None, name)
    except DomainError as error:
        problem = problem_of(error)
        if problem.status in (401, 403):  # revoked since the join page, or a wrong code
            auth.clear_pending()
            return bad_link(problem, game_id)
        if parked.kind != "code" or problem.status not in (409, 422):
            raise
        game = read.game_body(access.get_game(game_id), access.Viewer())
        return render_template("join.html", game=game, parked=parked, name=None,
                               error=problem.detail, typed=name or ""), problem.status
    auth.clear_pending()
    auth.remember_seat(game_id, joined.player_token)
    flash(f"You joined as {joined.name}.")
    return redirect(url_for("web.table", game_id=game_id), 303)


def lobby_name(name: str | None) -> str:
    """A name for an open seat, checked as the API checks it."""
    from dos_server.schemas import JoinIn

    try:
        JoinIn().load({"name": name or ""})
    except ma.ValidationError as error:
        raise Problem(422, "invalid-input", "Invalid name",
                      "; ".join(_messages(error.messages))) from None
    return str(name)


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
                               error=Problem(400, "no-token", "No token",
                                             "paste your player token")), 400
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
        flash(f"Signed in as {who.name}.")
        return redirect(url_for("web.table", game_id=game_id), 303)
    assert who.host_token is not None
    auth.remember_host(game_id, who.host_token)
    flash("Signed in with the host token.")
    return redirect(url_for("web.host", game_id=game_id), 303)


@bp.post("/games/<game_id>/signout")
def signout(game_id: str) -> Page:
    auth.forget_seat(game_id)
    flash("Signed out of this game in this browser.")
    return redirect(url_for("web.table", game_id=game_id), 303)


# -- the table -------------------------------------------------------------------------------


@bp.get("/games/<game_id>")
def table(game_id: str) -> Page:
    token = request.args.get("token")
    if token:  # a sign-in link: park the token, then show the page without it
        auth.park(game_id, "signin", token)
        return redirect(url_for("web.signin", game_id=game_id), 303)
    return _table(game_id)


def _viewer(game: Any, game_id: str) -> tuple[access.Viewer, str | None]:
    """The signed-in seat of this browser (a revoked token signs the browser out)."""
    token = auth.player_token(game_id)
    if token is None:
        return access.Viewer(), None
    try:
        viewer = access.authenticate(game, token, allow_host=False)
    except DomainError as error:
        auth.forget_seat(game_id)
        flash(f"You were signed out of this game: {error.detail}")
        return access.Viewer(), None
    return viewer, token


def _table(game_id: str, status: int = 200, notice: str | None = None,
           error: Problem | None = None, typed: str = "") -> tuple[str, int]:
    game = access.get_game(game_id)
    viewer, _ = _viewer(game, game_id)
    body = read.game_body(game, viewer)
    view = body["view"]
    names = [s["name"] or f"seat {s['seat'] + 1}" for s in body["seats"]]
    actions = (read.legal_actions_body(game, viewer)
               if viewer.seat is not None and view is not None else None)
    recent = read.recent_history_body(game, viewer, HISTORY_ON_TABLE)
    since: list[str] = []
    more = 0
    if viewer.seat is not None:
        seen = auth.last_seen(game_id)
        if seen is not None and seen < recent["last"]:
            fresh = read.history_body(game, viewer, seen, 200)["events"]
            since, more = present.since_last_visit(fresh, names, viewer.seat)
        auth.mark_seen(game_id, recent["last"])
    deadline = present.parse_time(body["turn_deadline"])
    fair = read.fairness_check(game) if body["status"] == "finished" else None
    nonce = secrets.token_urlsafe(12)
    return render_template(
        "table.html", game=body, view=view, names=names, actions=actions, status=body["status"],
        history=list(reversed(present.history_lines(recent["events"], names))),
        since=since, since_more=more, notice=notice, error=error, typed=typed,
        deadline=deadline, deadline_text=present.relative(deadline) if deadline else None,
        deadline_utc=present.utc_text(deadline) if deadline else None, fairness=fair,
        host=auth.host_token(game_id) is not None, page_key=nonce,
        seats=_seat_lines(body, names),
    ), status


def _seat_lines(body: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
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
        raise Problem(401, "not-signed-in", "Not signed in",
                      "sign in to this game (the link in your email) to play")
    version = _int(request.form.get("version", ""), 1)
    number_text = request.form.get("number", "")
    turn = request.form.get("turn", "").strip()
    page_key = request.form.get("page", "")[:40]
    if version is None:
        return _table(game_id, 400, error=Problem(400, "invalid-input", "Invalid form",
                                                  "the form lost its version; reload the page"))
    number = _int(number_text, 1, 100_000) if number_text else None
    if number_text and number is None:
        return _table(game_id, 422, error=Problem(422, "invalid-input", "No such move",
                                                  "choose one of the numbered moves"))
    if number is None and not turn:
        return _table(game_id, 422, error=Problem(
            422, "invalid-input", "Nothing to play",
            "type a move in the box (e.g. m1 R5; end) or press one of the numbered moves"))
    if len(turn) > 2000:
        return _table(game_id, 422, error=Problem(422, "invalid-input", "Too long",
                                                  "a turn fits on one line"), typed=turn[:2000])
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
            return _table(game_id, 409, notice="The game moved on before your move arrived: "
                          "nothing was played. Here is the table as it is now; choose again.")
        if problem.status in (401, 403, 404):
            raise
        return _table(game_id, problem.status, error=problem, typed=turn)
    flash("Played: " + "; ".join(result["applied"]) if result.get("applied") else "Played.")
    return redirect(url_for("web.table", game_id=game_id), 303)


@bp.post("/games/<game_id>/rematch")
@limiter.limit(lambda: current_app.config["RATE_LIMIT_CREATE"])
def start_rematch(game_id: str) -> Page:
    """A new game with the same seats and options; the asker hosts it and sits at it."""
    token = auth.player_token(game_id) or auth.host_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", "Not signed in",
                      "sign in to this game (the link in your email) to start a rematch")
    created, seat = rematch.rematch(game_id, token)
    _host_and_sit(created, seat)
    flash("Rematch created with the same seats and rules. Players with an email address were "
          "invited by email; send the others their invite link.")
    return redirect(url_for("web.host", game_id=created.game.id), 303)


@bp.get("/games/<game_id>/history")
def history(game_id: str) -> Page:
    game = access.get_game(game_id)
    viewer, _ = _viewer(game, game_id)
    after = _int(request.args.get("after", "0"), 0) or 0
    body = read.game_body(game, viewer)
    names = [s["name"] or f"seat {s['seat'] + 1}" for s in body["seats"]]
    page = read.history_body(game, viewer, after, 200)
    return render_template("history.html", game=body, lines=present.history_lines(
        page["events"], names), after=after, next_after=page["next_after"], more=page["more"])


@bp.get("/games/<game_id>/record")
def record(game_id: str) -> Page:
    """The game's record for people (what the game-over email links to): final scores, the
    revealed seed with every round's commitment checked, and the way to the whole history."""
    game = access.get_game(game_id)
    body = read.game_body(game, access.Viewer())  # nobody's hand, even signed in
    names = [s["name"] or f"seat {s['seat'] + 1}" for s in body["seats"]]
    return render_template("record.html", game=body, names=names, view=body["view"],
                           seats=_seat_lines(body, names), fairness=read.fairness_check(game))


@bp.get("/games/<game_id>/wait")
def wait(game_id: str) -> Response:
    """Long-poll: answers when the game's version differs from ``version`` (or after a while).

    The pages' script reloads the table when the version moved. No database connection is
    held while waiting (see :mod:`dos_server.services.watch`).
    """
    version = _int(request.args.get("version", ""), 0)
    if version is None:
        raise Problem(400, "invalid-input", "Invalid version", "version: a whole number")
    timeout = float(current_app.config["WEB_WAIT_SECONDS"])
    current = watch.wait_for_change(game_id, version, timeout)
    response = jsonify(version=current, changed=current != version)
    response.headers["Cache-Control"] = "no-store"
    return response


# -- the seat's settings ---------------------------------------------------------------------


def _player(game_id: str) -> tuple[str, int]:
    token = auth.player_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", "Not signed in",
                      "sign in to this game (the link in your email) first")
    game = access.get_game(game_id)
    viewer = access.authenticate(game, token, allow_host=False)
    assert viewer.seat is not None
    return token, viewer.seat


def _settings(game_id: str, status: int = 200, errors: list[str] | None = None,
              new_token: str | None = None) -> tuple[str, int]:
    token, _ = _player(game_id)
    game = access.get_game(game_id)
    viewer = access.authenticate(game, token, allow_host=False)
    body = read.game_body(game, viewer)
    settings = read.seat_settings_body(game, viewer)
    return render_template("settings.html", game=body, settings=settings, errors=errors or [],
                           events=notify.EVENTS, channels=notify.CHANNELS,
                           new_token=new_token), status


@bp.get("/games/<game_id>/settings")
def settings(game_id: str) -> Page:
    return _settings(game_id)


@bp.post("/games/<game_id>/settings/notifications")
def notifications(game_id: str) -> Page:
    token, seat = _player(game_id)
    game = access.get_game(game_id)
    current = read.seat_settings_body(game, access.Viewer(seat=seat))
    email = request.form.get("email", "").strip() or None
    webhook = request.form.get("webhook_url", "").strip() or None
    events = {channel: [e for e in notify.EVENTS if f"{channel}:{e}" in request.form]
              for channel in notify.CHANNELS}
    payload: dict[str, Any] = {"events": events, "digest": "digest" in request.form}
    if email != current["email"] or current["email_unsubscribed"]:
        payload["email"] = email
    if webhook != current["webhook_url"]:
        payload["webhook_url"] = webhook
    try:
        loaded = NotificationsIn().load(payload)
    except ma.ValidationError as error:
        return _settings(game_id, 422, _messages(error.messages))
    try:
        result = lobby.set_notifications(game_id, token, seat, loaded.get("email"),
                                         loaded.get("webhook_url"), loaded.get("events"),
                                         set(loaded), loaded.get("digest"))
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 422:
            raise
        return _settings(game_id, 422, [problem.detail])
    flash("Notification settings saved.")
    if result.get("webhook_secret"):
        flash(f"Webhook signing secret (shown once): {result['webhook_secret']}")
    return redirect(url_for("web.settings", game_id=game_id), 303)


@bp.post("/games/<game_id>/settings/vacation")
def vacation(game_id: str) -> Page:
    token, _ = _player(game_id)
    days = _int(request.form.get("days", ""))
    try:
        loaded = VacationIn().load({"days": days})
    except ma.ValidationError:
        return _settings(game_id, 422, ["vacation: a whole number of days from 1 to 60"])
    try:
        result = lobby.start_vacation(game_id, token, loaded["days"])
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 409:
            raise
        return _settings(game_id, 409, [problem.detail])
    flash(f"Your clock is paused until {result['vacation_until'][:16].replace('T', ' ')} UTC; "
          f"{result['days_left']} vacation day(s) left this year.")
    return redirect(url_for("web.settings", game_id=game_id), 303)


@bp.post("/games/<game_id>/settings/token")
def rotate(game_id: str) -> Page:
    token, seat = _player(game_id)
    result = lobby.rotate_token(game_id, token, seat)
    auth.remember_seat(game_id, result["player_token"])
    return _settings(game_id, new_token=result["player_token"])


@bp.get("/games/<game_id>/resign")
def resign_confirm(game_id: str) -> Page:
    _player(game_id)
    game = read.game_body(access.get_game(game_id), access.Viewer())
    return render_template("resign.html", game=game)


@bp.post("/games/<game_id>/resign")
def resign(game_id: str) -> Page:
    token, _ = _player(game_id)
    if request.form.get("confirm") != "yes":
        flash("Tick the box to confirm that you resign.")
        return redirect(url_for("web.resign_confirm", game_id=game_id), 303)
    play.resign(game_id, token)
    flash("You resigned. The random bot plays your seat from now on.")
    return redirect(url_for("web.table", game_id=game_id), 303)
