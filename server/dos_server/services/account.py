"""One identity for all your games: sign in with your email address.

- **Sign-in.** :func:`request_login` emails a one-time code and a sign-in link to any address
  (through the outbox and the worker, like every email) and answers the same whatever the
  address: it never looks at the games, so neither the answer nor its timing says whether
  the address plays here. No code is stored: a code is an HMAC of the row's random ``nonce``
  under the secret key, recomputed by the email and by :func:`verify_code`. A code is single
  use, expires after ``LOGIN_CODE_MINUTES``, dies after ``LOGIN_MAX_ATTEMPTS`` wrong guesses,
  and an address gets at most ``LOGIN_CODES_PER_HOUR`` codes an hour (per client address:
  Flask-Limiter in the view).
- **Sessions.** Verifying gives an account token naming a session row and a secret whose
  SHA-256 the row keeps; deleting the row revokes the token at once (every request reads it).
- **Which seats an address opens.** Only seats whose ``owner_key`` is the identity's: set
  when the seat was claimed with the invite sent to that address, or when the seat's player
  confirmed the address by the link sent to it (:func:`confirm_address`). The host never
  sets it, so a host who points a seat's address at themselves gains nothing.
- **From an account** the player gets the seat's ordinary player token
  (:func:`seat_token_for`), so every game route keeps one way of authenticating.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import ColumnElement, delete, func, or_, select, update

from dos_server import tokens, urls
from dos_server.database import write_transaction
from dos_server.errors import (
    AddressChanged,
    NotAuthenticated,
    NotYourSeat,
    RateLimited,
    SessionNotFound,
    SeveralSeats,
    WrongCode,
)
from dos_server.extensions import db
from dos_server.models import (
    AccountSessionRow,
    BrowserSessionRow,
    DigestRow,
    GameRow,
    IdentityRow,
    InboundMessageRow,
    LoginCodeRow,
    NotificationRow,
    SeatRow,
    as_utc,
    utcnow,
)
from dos_server.services import chat, notify, ratings
from dos_server.services.access import find_seat, get_game, seat_token
from dos_server.services.locks import lock_games
from dos_server.services.words import _
from dos_server.validation import email_key

CODE_DIGITS = 8
SESSION_ID = re.compile(r"[a-f0-9]{16}")
CONFIRM_MAX_AGE = timedelta(days=7)
ACCEPTED = {
    "status": "accepted",
    "detail": "If this address can receive email, a sign-in code and a sign-in link are on "
              "their way to it. Each works once, for a short time. Check your spam folder "
              "if nothing arrives.",
}
STATUS_ORDER = {"active": 0, "waiting": 1, "finished": 2, "cancelled": 3}
CLOSED = ("finished", "cancelled")


@dataclass(frozen=True)
class Account:
    """Who is signed in: the session and the identity (an address's comparison form)."""

    session_id: str
    email_key: str


# -- codes and links ------------------------------------------------------------------------


def _keys() -> list[str]:
    """Newest key first: what signs new codes, then the fallbacks still accepted."""
    config = current_app.config
    return [config["SECRET_KEY"], *reversed(config["SECRET_KEY_FALLBACKS"])]


def login_code(nonce: str, key: str | None = None) -> str:
    """The code of a sign-in row: HMAC-SHA256 of its nonce, as CODE_DIGITS decimal digits."""
    secret = (key or current_app.config["SECRET_KEY"]).encode()
    digest = hmac.new(secret, b"dos.login-code.v1:" + nonce.encode(), hashlib.sha256).digest()
    return f"{int.from_bytes(digest[:8], 'big') % 10**CODE_DIGITS:0{CODE_DIGITS}d}"


def login_link(code_id: str) -> str:
    """The sign-in link of a row: a signed token naming it (the row makes it single use)."""
    return urls.account_signin_url(tokens.issue_payload("login", {"c": code_id}))


def request_login(address: str) -> dict[str, Any]:
    """Email a code and a link to ``address`` (clean). The same answer for every address.

    Own transaction.
    """
    config = current_app.config
    key = email_key(address)
    now = utcnow()
    minutes = int(config["LOGIN_CODE_MINUTES"])
    with write_transaction():
        recent = db.session.execute(
            select(func.count()).select_from(LoginCodeRow)
            .where(LoginCodeRow.email_key == key,
                   LoginCodeRow.created_at > now - timedelta(hours=1))
        ).scalar_one()
        if recent >= int(config["LOGIN_CODES_PER_HOUR"]):
            raise RateLimited(_("too many sign-in codes were asked for this address in the "
                                "last hour; use one already sent, or try again later"),
                              retry_after=3600)
        _delete_codes(key, LoginCodeRow.created_at < now - timedelta(days=1))
        row = LoginCodeRow(id=secrets.token_hex(8), email_key=key, address=address,
                           nonce=secrets.token_hex(16), created_at=now,
                           expires_at=now + timedelta(minutes=minutes), attempts=0)
        db.session.add(row)
        notify.add_row(None, [], "email", address, "login_code", f"login:{row.id}",
                       {"event": "login_code", "login_id": row.id, "address": address,
                        "minutes": minutes})
    return dict(ACCEPTED)


def verify_code(address: str, code: str, user_agent: str | None,
                kind: str = "api") -> dict[str, Any]:
    """A code from the email gives a session; a wrong one counts against every live code.

    Own transaction: the wrong guess is counted (committed) before WrongCode is raised.
    """
    key = email_key(address)
    given = re.sub(r"[\s-]", "", code)
    now = utcnow()
    with write_transaction():
        rows = _lock_codes(key, LoginCodeRow.used_at.is_(None), LoginCodeRow.expires_at > now,
                           LoginCodeRow.attempts < int(current_app.config["LOGIN_MAX_ATTEMPTS"]))
        matched = [row for row in rows
                   if any(hmac.compare_digest(login_code(row.nonce, k), given) for k in _keys())]
        if matched:
            return _sign_in(rows, matched[0].address, now, user_agent, kind)
        for row in rows:
            row.attempts += 1
    raise WrongCode(_("that code is wrong, used or expired; check it, or ask for a new one "
                      "with POST /api/login"))


def verify_link(link_token: str, user_agent: str | None, kind: str = "api") -> dict[str, Any]:
    """The sign-in link from the email (its token): a session, once (own transaction)."""
    max_age = int(current_app.config["LOGIN_CODE_MINUTES"]) * 60
    payload = tokens.read_payload("login", link_token, max_age, "sign-in link")
    code_id = payload.get("c")
    if not isinstance(code_id, str):
        raise NotAuthenticated(_("this is not a valid sign-in link for this server"), invalid=True)
    now = utcnow()
    with write_transaction():
        # The address's live codes, locked in the order every sign-in locks them (not this
        # code first: a code typed at the same moment would hold the others).
        key = db.session.execute(
            select(LoginCodeRow.email_key).where(LoginCodeRow.id == code_id)
        ).scalar_one_or_none()
        rows = [] if key is None else _lock_codes(key, LoginCodeRow.used_at.is_(None),
                                                  LoginCodeRow.expires_at > now)
        row = next((r for r in rows if r.id == code_id), None)
        if row is not None:
            return _sign_in(rows, row.address, now, user_agent, kind)
    raise NotAuthenticated(_("this sign-in link was used already or has expired; ask for a "
                             "new one"), expired=True)


def _lock_codes(key: str, *where: ColumnElement[bool]) -> Sequence[LoginCodeRow]:
    """Lock this address's codes (those matching ``where``) in the one order every writer
    takes them (services/locks.py): by creation, then id."""
    return db.session.execute(
        select(LoginCodeRow).where(LoginCodeRow.email_key == key, *where)
        .order_by(LoginCodeRow.created_at, LoginCodeRow.id).with_for_update()
    ).scalars().all()


def _delete_codes(key: str, *where: ColumnElement[bool]) -> None:
    gone = [row.id for row in _lock_codes(key, *where)]
    if gone:
        db.session.execute(delete(LoginCodeRow).where(LoginCodeRow.id.in_(gone)))


def _sign_in(rows: Sequence[LoginCodeRow], address: str, now: datetime, user_agent: str | None,
             kind: str) -> dict[str, Any]:
    """Inside the caller's transaction: end every outstanding code, open a session."""
    for row in rows:
        row.used_at = now
    key = email_key(address)
    if db.session.get(IdentityRow, key) is None:
        db.session.add(IdentityRow(email_key=key, address=address, created_at=now))
    secret = secrets.token_urlsafe(24)
    session = AccountSessionRow(
        id=secrets.token_hex(8), email_key=key, kind=kind,
        secret_hash=hashlib.sha256(secret.encode()).hexdigest(),
        user_agent=(user_agent or "")[:200] or None, created_at=now, last_used_at=now)
    db.session.add(session)
    return {"account_token": tokens.issue_payload("account", {"s": session.id, "k": secret}),
            "email": address, "session": _session_out(session, session.id)}


# -- sessions -------------------------------------------------------------------------------


def authenticate(bearer: str | None) -> Account:
    """The signed-in identity an account token names; NotAuthenticated if bad, expired or
    revoked. Refreshing the session's ``last_used_at`` is a transaction of its own."""
    if not bearer:
        raise NotAuthenticated(_("sign in first: POST /api/login, then POST "
                                 "/api/login/verify, and send the account token as "
                                 "'Authorization: Bearer ...'"))
    max_age = int(current_app.config["TOKEN_MAX_AGE_DAYS"]) * 86400
    payload = tokens.read_payload("account", bearer, max_age, "account token")
    session_id, secret = payload.get("s"), payload.get("k")
    if not isinstance(session_id, str) or not isinstance(secret, str):
        raise NotAuthenticated(_("this is not a valid account token for this server"), invalid=True)
    row = db.session.get(AccountSessionRow, session_id)
    digest = hashlib.sha256(secret.encode()).hexdigest()
    if row is None or not hmac.compare_digest(row.secret_hash, digest):
        raise NotAuthenticated(_("this sign-in was ended (signed out or revoked); sign in "
                                 "again"))
    account = Account(row.id, row.email_key)
    now = utcnow()
    if as_utc(row.last_used_at) < now - timedelta(minutes=10):
        with write_transaction():
            db.session.execute(update(AccountSessionRow)
                               .where(AccountSessionRow.id == account.session_id)
                               .values(last_used_at=now))
    return account


def _session_out(row: AccountSessionRow, current: str) -> dict[str, Any]:
    return {"id": row.id, "kind": row.kind, "user_agent": row.user_agent,
            "created_at": as_utc(row.created_at).isoformat(),
            "last_used_at": as_utc(row.last_used_at).isoformat(),
            "current": row.id == current}


def list_sessions(bearer: str | None) -> dict[str, Any]:
    account = authenticate(bearer)
    rows = db.session.execute(
        select(AccountSessionRow).where(AccountSessionRow.email_key == account.email_key)
        .order_by(AccountSessionRow.created_at)
    ).scalars().all()
    return {"sessions": [_session_out(row, account.session_id) for row in rows]}


def revoke_session(bearer: str | None, session_id: str) -> dict[str, Any]:
    """End one session of this identity (another device, or this one; own transaction)."""
    account = authenticate(bearer)
    with write_transaction():
        gone = db.session.execute(
            delete(AccountSessionRow).where(AccountSessionRow.id == session_id,
                                            AccountSessionRow.email_key == account.email_key)
            .returning(AccountSessionRow.id)
        ).scalars().all() if SESSION_ID.fullmatch(session_id) else []
        _end_browser_sessions(gone)
    if not gone:
        raise SessionNotFound(_("you have no session %(session)s; GET /api/me/sessions lists "
                                "them", session=repr(session_id[:40])))
    return {"revoked": gone}


def revoke_all(bearer: str | None) -> dict[str, Any]:
    """Sign out everywhere: every session of this identity, this one included (own
    transaction)."""
    account = authenticate(bearer)
    with write_transaction():
        gone = _delete_sessions(account.email_key)
    return {"revoked": gone}


def _delete_sessions(key: str) -> list[str]:
    """Every session of the identity, locked by ascending id first (one order for all)."""
    gone = list(db.session.execute(
        select(AccountSessionRow.id).where(AccountSessionRow.email_key == key)
        .order_by(AccountSessionRow.id).with_for_update()
    ).scalars())
    if gone:
        db.session.execute(delete(AccountSessionRow).where(AccountSessionRow.id.in_(gone)))
        _end_browser_sessions(gone)
    return gone


def _end_browser_sessions(account_sessions: Sequence[str]) -> None:
    """A browser signed in with an ended account session is signed out of everything: the
    seats it opened through the account go with it."""
    if account_sessions:
        db.session.execute(delete(BrowserSessionRow).where(
            BrowserSessionRow.account_session_id.in_(list(account_sessions))))


# -- my games -------------------------------------------------------------------------------


def _owned(key: str) -> list[tuple[SeatRow, GameRow]]:
    rows = db.session.execute(
        select(SeatRow, GameRow).join(GameRow, SeatRow.game_id == GameRow.id)
        .where(SeatRow.owner_key == key)
    ).all()
    return [(seat, game) for seat, game in rows]


def _game_line(seat: SeatRow, game: GameRow) -> dict[str, Any]:
    names = [s.name for s in game.seats]
    current = (game.state or {}).get("current") if game.status == "active" else None
    return {
        "game_id": game.id,
        "game_title": game.title,
        "seat": seat.index,
        "name": seat.name,
        "players": names,
        "status": game.status,
        "version": game.version,
        "turn": names[current] if isinstance(current, int) and current < len(names) else None,
        "turn_seat": current,
        "your_turn": current == seat.index and not seat.resigned,
        "deadline": game.turn_deadline.isoformat() if game.turn_deadline else None,
        "updated_at": as_utc(game.updated_at).isoformat(),
        "finished_at": (as_utc(game.finished_at or game.updated_at).isoformat()
                        if game.status == "finished" else None),
        "links": notify.links(game),
    }


def my_games(bearer: str | None) -> dict[str, Any]:
    """Every seat this identity opens: the games waiting on it first, then by deadline;
    finished games by when they ended, newest first (a game finished before ``finished_at``
    was kept, or by an older release, ended at its last update)."""
    account = authenticate(bearer)
    lines = [_game_line(seat, game) for seat, game in _owned(account.email_key)]
    lines.sort(key=lambda g: g["finished_at"] or g["updated_at"], reverse=True)
    lines.sort(key=lambda g: (not g["your_turn"], STATUS_ORDER.get(g["status"], 9),
                              g["deadline"] is None, g["deadline"] or ""))
    return {"email": _address(account), "games": lines}


def whoami(bearer: str | None) -> dict[str, Any]:
    account = authenticate(bearer)
    identity = db.session.get(IdentityRow, account.email_key)
    return {"email": _address(account), "digest": identity.digest if identity else None,
            "time_zone": identity.time_zone if identity else None,
            "language": identity.language if identity else None,
            "player_name": identity.player_name if identity else None,
            "leaderboard_hidden": identity.leaderboard_hidden if identity else False,
            "rating": ratings.rating_of(account.email_key),
            "session": account.session_id}


def _address(account: Account) -> str:
    identity = db.session.get(IdentityRow, account.email_key)
    return identity.address if identity is not None else account.email_key


def seat_token_for(bearer: str | None, game_id: str, index: int | None) -> dict[str, Any]:
    """The player token of this identity's seat in ``game_id`` (the seat's current one)."""
    account = authenticate(bearer)
    game = get_game(game_id)
    mine = [s for s in game.seats if s.owner_key == account.email_key]
    if index is not None:
        mine = [s for s in mine if s.index == index]
    if not mine:
        raise NotYourSeat(
            _("no seat of game %(game)s belongs to your address; GET /api/me/games lists "
              "yours", game=game.id) if index is None
            else _("no seat of game %(game)s belongs to your address at position %(seat)s; "
                   "GET /api/me/games lists yours", game=game.id, seat=index))
    if len(mine) > 1:
        raise SeveralSeats(_("you hold seats %(seats)s in game %(game)s; say which with "
                             "{\"seat\": N}", seats=", ".join(str(s.index) for s in mine),
                             game=game.id),
                           seats=[s.index for s in mine])
    seat = mine[0]
    return {"game_id": game.id, "seat": seat.index, "name": seat.name,
            "player_token": seat_token("player", game, seat)}


# -- which address opens a seat ---------------------------------------------------------------


def own(seat: SeatRow, address: str) -> None:
    """``address`` opens ``seat`` from now on (a claim by its invite, or a confirmation).

    The identity's digest preference applies unless the player chose for this game.
    """
    key = email_key(address)
    seat.owner_email = address
    seat.owner_key = key
    identity = db.session.get(IdentityRow, key)
    if identity is not None and identity.digest is not None and not seat.digest_chosen:
        seat.digest = identity.digest
    if identity is not None:  # the seat's own zone and language, when it has one, stay
        seat.time_zone = seat.time_zone or identity.time_zone
        seat.language = seat.language or identity.language


def claim_by_invite(seat: SeatRow, claims: tokens.TokenClaims) -> None:
    """A claim with an invite that was issued for the seat's current address owns it."""
    if seat.email and claims.address and tokens.address_matches(claims.address,
                                                                email_key(seat.email)):
        own(seat, seat.email)


def ask_confirmation(game: GameRow, seat: SeatRow) -> bool:
    """The seat's player set ``seat.email``: unless it already opens the seat, email a link
    that makes it so (the old address keeps opening the seat until then)."""
    if not seat.email or email_key(seat.email) == seat.owner_key:
        return False
    key = email_key(seat.email)
    token = tokens.issue("confirm", game.id, seat.public_id, seat.token_version,
                         e=tokens.address_digest(key))
    notify.add_row(game.id, [seat.index], "email", seat.email, "confirm_email",
                   f"confirm:{game.id}:{seat.public_id}:{secrets.token_hex(6)}",
                   {"event": "confirm_email", "game_id": game.id, "seat": seat.index,
                    "name": seat.name, "address": seat.email,
                    "link": urls.confirm_url(token)})
    return True


def confirm_address(token: str) -> dict[str, Any]:
    """The link sent to a seat's new address: that address now opens the seat (own
    transaction)."""
    payload = tokens.read_payload("confirm", token, int(CONFIRM_MAX_AGE.total_seconds()),
                                  "confirmation link")
    game_id, seat_id, version, digest = (payload.get(k) for k in ("g", "p", "v", "e"))
    if not (isinstance(game_id, str) and isinstance(seat_id, str) and type(version) is int
            and isinstance(digest, str)):
        raise NotAuthenticated(_("this is not a valid confirmation link for this server"),
                               invalid=True)
    with write_transaction():
        game = get_game(game_id, for_update=True)
        seat = find_seat(game, seat_id, None)
        if seat is None or seat.token_version != version:
            raise NotAuthenticated(_("this confirmation link is no longer valid (the seat is "
                                     "gone or its token was rotated); set the address again"))
        if not seat.email or not tokens.address_matches(digest, email_key(seat.email)):
            raise AddressChanged(_("the seat's address was changed again after this link was "
                                   "sent; use the link sent to the newest address"))
        own(seat, seat.email)
        return {"game_id": game.id, "seat": seat.index, "email": seat.email,
                "confirmed": True}


# -- settings, export, forgetting -----------------------------------------------------------


def set_settings(bearer: str | None, digest: bool | None,
                 fields: Collection[str] = ("digest",), time_zone: str | None = None,
                 language: str | None = None, fill_only: bool = False,
                 player_name: str | None = None,
                 leaderboard_hidden: bool = False) -> dict[str, Any]:
    """Digest or per-turn emails in all your games (those you did not set one by one), and
    the zone and language of seats you come to own that have none: those of ``fields``
    (checked by the caller; own transaction). ``fill_only``: the zone and language only where
    the identity has none, decided under its lock. ``player_name`` (clean; None: none) and
    ``leaderboard_hidden``: what your rating goes by, and whether the leaderboard lists it
    (PlayerNameTaken if another identity has the name, case aside)."""
    account = authenticate(bearer)
    with write_transaction():
        identity = db.session.execute(
            select(IdentityRow).where(IdentityRow.email_key == account.email_key)
            .with_for_update()
        ).scalar_one_or_none()
        if identity is None:  # its sessions outlived it (DELETE /api/me raced a request)
            raise NotAuthenticated(_("this identity was deleted; sign in again"))
        if "time_zone" in fields and not (fill_only and identity.time_zone):
            identity.time_zone = time_zone
        if "language" in fields and not (fill_only and identity.language):
            identity.language = language
        if "player_name" in fields and player_name != identity.player_name:
            ratings.claim_name(identity, player_name)
        if "leaderboard_hidden" in fields:
            identity.leaderboard_hidden = leaderboard_hidden
        changed = 0
        if "digest" in fields:
            identity.digest = digest
        if "digest" in fields and digest is not None:
            # The games before their seats, as a turn takes them (services/locks.py): seats
            # locked in scan order without their game deadlocked with a turn on a game
            # where this person holds two seats.
            following = (SeatRow.owner_key == account.email_key,
                         SeatRow.digest_chosen.is_(False))
            games = lock_games(select(SeatRow.game_id).where(*following))
            changed = len(db.session.execute(
                update(SeatRow).where(*following, SeatRow.game_id.in_(games))
                .values(digest=digest).returning(SeatRow.id)
            ).scalars().all())
        return {"email": identity.address, "digest": identity.digest,
                "time_zone": identity.time_zone, "language": identity.language,
                "player_name": identity.player_name,
                "leaderboard_hidden": identity.leaderboard_hidden,
                "games_changed": changed}


def _iso(moment: datetime | None) -> str | None:
    return as_utc(moment).isoformat() if moment is not None else None


def export(bearer: str | None) -> dict[str, Any]:
    """Everything stored about this identity (addresses compared in their key form)."""
    account = authenticate(bearer)
    key = account.email_key
    identity = db.session.get(IdentityRow, key)
    seats = db.session.execute(
        select(SeatRow, GameRow).join(GameRow, SeatRow.game_id == GameRow.id)
        .where(or_(SeatRow.owner_key == key, func.lower(SeatRow.email) == key))
        .order_by(GameRow.created_at, SeatRow.index)
    ).all()
    sessions = db.session.execute(
        select(AccountSessionRow).where(AccountSessionRow.email_key == key)
    ).scalars().all()
    codes = db.session.execute(
        select(LoginCodeRow).where(LoginCodeRow.email_key == key)
        .order_by(LoginCodeRow.created_at)
    ).scalars().all()
    digest = db.session.execute(
        select(DigestRow).where(func.lower(DigestRow.address) == key)).scalars().all()
    sent = db.session.execute(
        select(NotificationRow).where(NotificationRow.channel == "email",
                                      func.lower(NotificationRow.target) == key)
        .order_by(NotificationRow.id)
    ).scalars().all()
    inbound = db.session.execute(
        select(InboundMessageRow).where(func.lower(InboundMessageRow.mail_from) == key)
        .order_by(InboundMessageRow.id)
    ).scalars().all()
    return {
        "identity": {"email": identity.address if identity else None, "email_key": key,
                     "digest": identity.digest if identity else None,
                     "player_name": identity.player_name if identity else None,
                     "leaderboard_hidden": identity.leaderboard_hidden if identity else None,
                     "created_at": _iso(identity.created_at) if identity else None},
        "sessions": [_session_out(row, account.session_id) for row in sessions],
        "sign_in_codes": [{"id": c.id, "address": c.address, "created_at": _iso(c.created_at),
                           "expires_at": _iso(c.expires_at), "used_at": _iso(c.used_at),
                           "attempts": c.attempts} for c in codes],
        "seats": [{
            "game_id": game.id, "game_status": game.status, "seat": seat.index,
            "name": seat.name, "email": seat.email, "opens_by_sign_in": seat.owner_key == key,
            "owner_email": seat.owner_email if seat.owner_key == key else None,
            "claimed": seat.claimed, "resigned": seat.resigned,
            "webhook_url": seat.webhook_url, "email_unsubscribed": seat.email_unsubscribed,
            "events": seat.notify_events, "digest": seat.digest,
            "digest_chosen": seat.digest_chosen,
            "vacation_until": _iso(seat.vacation_until), "vacation_used": seat.vacation_used,
            # The seat's private notes: its player's, so only for the identity that opens it
            # (an address the host typed in opens nothing, and reads nothing of them).
            "notes": seat.notes if seat.owner_key == key else None,
        } for seat, game in seats],
        "digests_sent": [{"address": d.address, "last_sent_at": _iso(d.last_sent_at)}
                         for d in digest],
        "emails": [{"id": n.id, "event": n.event, "game_id": n.game_id, "status": n.status,
                    "created_at": _iso(n.created_at), "sent_at": _iso(n.sent_at)}
                   for n in sent],
        "emails_received": [{"id": m.id, "game_id": m.game_id, "status": m.status,
                             "outcome": m.outcome, "received_at": _iso(m.received_at)}
                            for m in inbound],
        "messages": chat.of_identity(key),  # table talk written by you or your seats
        "ratings": ratings.export(key),  # your rating and what each rated game did to it
    }


def forget(bearer: str | None) -> dict[str, Any]:
    """Delete the identity: its sessions, codes and settings, the messages it wrote, the
    notes of every seat it owned (in play too), and its address on every finished or
    cancelled game (games still in play keep it: they need it to reach you).

    Own transaction.
    """
    return forget_key(authenticate(bearer).email_key)


def forget_key(key: str) -> dict[str, Any]:
    """:func:`forget` for the address whose comparison form is ``key`` (the operator's
    ``dos-server admin forget``). Own transaction."""
    with write_transaction():
        # In the one lock order (services/locks.py): messages, the identity, the closed
        # games, their seats, their outbox rows, then the address's own rows.
        closed = select(GameRow.id).where(GameRow.status.in_(CLOSED))
        db.session.execute(delete(InboundMessageRow).where(
            func.lower(InboundMessageRow.mail_from) == key,
            InboundMessageRow.status != "received", InboundMessageRow.game_id.in_(closed)))
        db.session.execute(delete(IdentityRow).where(IdentityRow.email_key == key))
        said = chat.forget_identity(key)  # before the seats forget their owner
        mine = or_(SeatRow.owner_key == key, func.lower(SeatRow.email) == key)
        # Every game of the identity is locked (ascending ids, once): the notes of the seats it
        # owns go in every game, also those in play, which keep only the address.
        held = lock_games(select(SeatRow.game_id).where(mine))
        noted = db.session.execute(
            update(SeatRow).where(SeatRow.owner_key == key, SeatRow.game_id.in_(held),
                                  SeatRow.notes.is_not(None))
            .values(notes=None).returning(SeatRow.game_id)
        ).scalars().all()
        games = list(db.session.execute(
            select(GameRow.id).where(GameRow.id.in_(held), GameRow.status.in_(CLOSED))
            .order_by(GameRow.id)).scalars())
        forgotten = db.session.execute(
            update(SeatRow).where(mine, SeatRow.game_id.in_(games))
            .values(email=None, owner_email=None, owner_key=None)
            .returning(SeatRow.game_id)
        ).scalars().all()
        kept = db.session.execute(
            select(SeatRow.game_id).where(mine, SeatRow.game_id.not_in(games))
        ).scalars().all()
        ratings.forget(key)  # after the games, as a game's end takes them (services/locks.py)
        db.session.execute(delete(NotificationRow).where(
            func.lower(NotificationRow.target) == key, NotificationRow.status != "pending",
            or_(NotificationRow.game_id.is_(None), NotificationRow.game_id.in_(closed))))
        db.session.execute(delete(DigestRow).where(func.lower(DigestRow.address) == key))
        _delete_codes(key)
        _delete_sessions(key)
    return {"deleted": True, "messages_deleted": said, "notes_cleared": len(noted),
            "forgotten_in_games": sorted(set(forgotten)),
            "kept_in_games_in_play": sorted(set(kept))}


__all__ = [
    "ACCEPTED",
    "Account",
    "ask_confirmation",
    "authenticate",
    "claim_by_invite",
    "confirm_address",
    "export",
    "forget",
    "forget_key",
    "list_sessions",
    "login_code",
    "login_link",
    "my_games",
    "own",
    "request_login",
    "revoke_all",
    "revoke_session",
    "seat_token_for",
    "set_settings",
    "verify_code",
    "verify_link",
    "whoami",
]
