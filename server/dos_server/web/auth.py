"""Who the browser is: seats and host tokens kept in the browser's session, and CSRF.

The session is a row on the server (``sessions.py``); the cookie (HttpOnly, SameSite=Lax,
Secure when ``PUBLIC_URL`` is https) holds only its opaque id. The session holds, per game,
the player token of the seat this browser plays and the host token of games it created, and
the account it signed in with. One browser can hold seats of several games. Whenever who the
browser is changes (a seat or an account signed in or out, a token replaced) the session gets
a new id and a new CSRF secret, so a cookie or a form taken before opens nothing after.

A token arrives once in a URL (an email's sign-in link, an invite link), is parked in the
session, and the browser is sent to the same page without it; a POST (a "Continue" button,
so that mail scanners fetching every link cannot act) then signs in.

Every POST carries a CSRF token: an itsdangerous signature of a random value kept in the
session, so a form from another site (which cannot read the cookie) is refused.
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, cast
from urllib.parse import urlsplit

from flask import current_app, request, session
from flask_babel import gettext as _
from itsdangerous import BadSignature, URLSafeTimedSerializer

from dos_server import tokens, urls
from dos_server.errors import DomainError, NotAuthenticated
from dos_server.problems import Problem, problem_of
from dos_server.services import access
from dos_server.web.sessions import ACCOUNT_SESSION, BrowserSession

P = ParamSpec("P")
R = TypeVar("R")
ACCOUNT_KEY = "dos_account"  # the browser's account token (read by account.authenticate)
MAX_SEATS = 12  # the oldest are forgotten first
MAX_HOSTS = 6
CSRF_MAX_AGE = 14 * 86400  # a table left open for two weeks still posts
CSRF_FIELD = "csrf"


# -- seats and host tokens in the session ----------------------------------------------------


def renew() -> None:
    """Who the browser is changes: a new session id and a new CSRF secret."""
    cast(BrowserSession, session._get_current_object()).renew()  # type: ignore[attr-defined]


def _entries(key: str) -> dict[str, Any]:
    value = session.get(key)
    return dict(value) if isinstance(value, dict) else {}


def _store(key: str, game_id: str, entry: dict[str, Any], limit: int) -> None:
    entries = _entries(key)
    entries[game_id] = {**entry, "at": int(time.time())}
    while len(entries) > limit:
        oldest = min(entries, key=lambda g: entries[g].get("at", 0))
        del entries[oldest]
    session[key] = entries
    session.permanent = True


def _token(key: str, game_id: str) -> str | None:
    entry = _entries(key).get(game_id)
    return str(entry["t"]) if isinstance(entry, dict) and entry.get("t") else None


def player_token(game_id: str) -> str | None:
    return _token("seats", game_id)


def remember_seat(game_id: str, token: str) -> None:
    renew()
    _store("seats", game_id, {"t": token}, MAX_SEATS)


def forget_seat(game_id: str) -> None:
    entries = _entries("seats")
    if entries.pop(game_id, None) is not None:
        session["seats"] = entries
        renew()


def last_seen(game_id: str) -> int | None:
    entry = _entries("seats").get(game_id)
    seen = entry.get("seen") if isinstance(entry, dict) else None
    return seen if isinstance(seen, int) else None


def mark_seen(game_id: str, seq: int) -> None:
    entries = _entries("seats")
    entry = entries.get(game_id)
    if isinstance(entry, dict) and entry.get("seen") != seq:
        entries[game_id] = {**entry, "seen": seq}
        session["seats"] = entries


def host_token(game_id: str) -> str | None:
    return _token("hosts", game_id)


def remember_host(game_id: str, token: str) -> None:
    renew()
    _store("hosts", game_id, {"t": token}, MAX_HOSTS)


def games() -> list[str]:
    """The games this browser holds a seat or the host token of, newest first."""
    found: dict[str, int] = {}
    for key in ("seats", "hosts"):
        for game_id, entry in _entries(key).items():
            at = entry.get("at", 0) if isinstance(entry, dict) else 0
            found[game_id] = max(found.get(game_id, 0), at)
    return sorted(found, key=lambda g: -found[g])


# -- the account (one identity for all your games) -------------------------------------------


def account_token() -> str | None:
    """The account token this browser signed in with (``/me`` or the emailed link)."""
    value = session.get(ACCOUNT_KEY)
    return value if isinstance(value, str) and value else None


def remember_account(token: str, account_session_id: str) -> None:
    """Signed in with an address: revoking ``account_session_id`` ends this session."""
    renew()
    session[ACCOUNT_KEY] = token
    session[ACCOUNT_SESSION] = account_session_id
    session.pop("login", None)
    session.permanent = True


def forget_account() -> None:
    if session.pop(ACCOUNT_KEY, None) is not None:
        renew()
    session.pop(ACCOUNT_SESSION, None)


def login_address() -> str | None:
    """The address a sign-in code was last asked for in this browser (to prefill its form)."""
    value = session.get("login")
    return value if isinstance(value, str) else None


def remember_login(address: str) -> None:
    session["login"] = address[:254]


# -- a token in a URL, parked until the visitor presses the button ---------------------------


@dataclass(frozen=True)
class Pending:
    game_id: str
    kind: str  # signin (a sign-in or player token) | invite | code (an open seat's code)
    value: str


def park(game_id: str, kind: str, value: str) -> None:
    session["pending"] = {"g": game_id, "k": kind, "v": value[:600]}


def pending(game_id: str, *kinds: str) -> Pending | None:
    raw = session.get("pending")
    if (isinstance(raw, dict) and raw.get("g") == game_id and raw.get("k") in kinds
            and isinstance(raw.get("v"), str)):
        return Pending(game_id, raw["k"], raw["v"])
    return None


def clear_pending() -> None:
    session.pop("pending", None)


@dataclass(frozen=True)
class SignIn:
    """What a token opens: a seat (its name and a player token) or the host's controls."""

    name: str
    player_token: str | None = None
    host_token: str | None = None


def resolve(game_id: str, token: str) -> SignIn:
    """Check a sign-in, player or host token for ``game_id`` (401/403/404 problems)."""
    token = token.strip()
    game = access.get_game(game_id)
    try:
        claims = tokens.read("signin", token,
                             max_age_days=float(current_app.config["WEB_SIGNIN_MAX_AGE_DAYS"]))
    except DomainError as error:
        if _is_expired(problem_of(error)):
            raise NotAuthenticated(
                _("this sign-in link has expired: open the link in the newest email of this "
                  "game, or sign in with your player token"), link="expired") from None
        claims = None
    if claims is not None:
        access.check_game(game, claims.game_id)
        seat = access.seat_named_by(game, claims)
        if seat.token_version != claims.version:
            raise NotAuthenticated(_("this sign-in link was revoked (the seat's token was "
                                     "rotated); use the link in the newest email"),
                                   link="revoked")
        return SignIn(seat.name or _("seat %(number)s", number=seat.index + 1),
                      player_token=access.seat_token("player", game, seat))
    viewer = access.authenticate(game, token)
    if viewer.host:
        return SignIn(_("the host"), host_token=token)
    seat = access.seat_of(game, viewer.seat if viewer.seat is not None else -1)
    return SignIn(seat.name or _("seat %(number)s", number=seat.index + 1), player_token=token)


def _is_expired(problem: Problem) -> bool:
    return problem.status == 401 and problem.extra.get("expired") is True


def invite_seat_name(game_id: str, invite: str) -> str:
    """The name of the seat an invite claims (without claiming it); 401/403 if it is no good."""
    game = access.get_game(game_id)
    claims = tokens.read("invite", invite)
    access.check_game(game, claims.game_id)
    seat = access.seat_named_by(game, claims)
    if seat.token_version != claims.version:
        raise NotAuthenticated(_("this invite was revoked; ask the host for a new one"),
                               link="revoked")
    return seat.name or _("seat %(number)s", number=seat.index + 1)


def same_origin() -> bool:
    """A POST from our own page (a login-CSRF page elsewhere cannot sign you in)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    if origin == "null":
        # Our pages' Referrer-Policy (no-referrer) makes browsers send a form's POST with
        # "Origin: null"; Sec-Fetch-Site, which no page can set, still says where it came from.
        return request.headers.get("Sec-Fetch-Site") == "same-origin"
    theirs = urlsplit(origin)
    ours = [urlsplit(request.host_url), urlsplit(urls.public_base())]
    return any((theirs.scheme, theirs.netloc) == (o.scheme, o.netloc) for o in ours)


# -- CSRF ------------------------------------------------------------------------------------


def _csrf_serializer() -> URLSafeTimedSerializer:
    keys = [*current_app.config["SECRET_KEY_FALLBACKS"], current_app.config["SECRET_KEY"]]
    return URLSafeTimedSerializer(keys, salt="dos.web.csrf.v1")


def csrf_token() -> str:
    nonce = session.get("csrf")
    if not isinstance(nonce, str):
        nonce = secrets.token_urlsafe(18)
        session["csrf"] = nonce
    return str(_csrf_serializer().dumps(nonce))


ORIGIN_CHECKED = "dos_origin_checked"  # a view that checks the Origin header instead of CSRF


def origin_checked(view: Callable[P, R]) -> Callable[P, R]:
    """A POST without a CSRF token (a button on a page that has no session yet, such as the
    emailed sign-in link's): refused unless it comes from our own origin (403)."""

    @functools.wraps(view)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        if not same_origin():
            raise Problem(403, "cross-site", _("Cross-site request"),
                          _("send this form from the page the email's link opens"))
        return view(*args, **kwargs)

    setattr(checked, ORIGIN_CHECKED, True)
    return checked


FORM_LIMIT = "dos_form_limit"  # a view whose form may be larger than MAX_CONTENT_LENGTH


def form_limit(limit: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A view whose form may be up to ``limit`` bytes (the private notes): the CSRF check
    reads the form before the view runs, so the limit is set there (``hooks._csrf``)."""
    def mark(view: Callable[P, R]) -> Callable[P, R]:
        setattr(view, FORM_LIMIT, limit)
        return view

    return mark


def check_csrf() -> None:
    """Refuse a POST whose form does not carry this session's CSRF token (403)."""
    given = request.form.get(CSRF_FIELD, "")
    expected = session.get("csrf")
    try:
        nonce = _csrf_serializer().loads(given, max_age=CSRF_MAX_AGE)
    except BadSignature:
        nonce = None
    if not isinstance(expected, str) or not isinstance(nonce, str) or not secrets.compare_digest(
            nonce, expected):
        raise Problem(403, "csrf", _("This form has expired"),
                      _("the form was not sent from this site's page, or the page is too old: "
                        "reload the page and try again"))


def emailed_or_seat_token(game_id: str) -> str | None:
    """The player token a press acts with: a parked emailed link's seat, else this browser's
    seat's (an emailed button works before the browser was signed in)."""
    parked = pending(game_id, "signin")
    if parked is not None:
        who = resolve(game_id, parked.value)
        if who.player_token:
            return who.player_token
    return player_token(game_id)


__all__ = [
    "ACCOUNT_KEY",
    "CSRF_FIELD",
    "FORM_LIMIT",
    "Pending",
    "SignIn",
    "account_token",
    "check_csrf",
    "clear_pending",
    "csrf_token",
    "emailed_or_seat_token",
    "forget_account",
    "forget_seat",
    "form_limit",
    "games",
    "host_token",
    "invite_seat_name",
    "last_seen",
    "login_address",
    "mark_seen",
    "origin_checked",
    "park",
    "pending",
    "player_token",
    "remember_account",
    "remember_host",
    "remember_login",
    "remember_seat",
    "renew",
    "resolve",
    "same_origin",
]
