"""Signed tokens (itsdangerous), one salt per purpose, a key list for rotation.

A token carries the game, the seat's ``public_id`` (its identity, which never moves and is
never reused; never its position at the table) and the seat's ``token_version``; bumping
that version revokes every older token of the seat. Tokens are never logged.

Tokens issued before seats had identities name the seat's index instead; they are read as
``legacy_index`` and open only the seat that had that index when identities were introduced
(``SeatRow.legacy_index``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Any

from flask import current_app
from itsdangerous import BadSignature, Signer, URLSafeTimedSerializer
from itsdangerous.encoding import want_bytes

from dos_server.errors import NotAuthenticated

SALTS = {
    "player": "dos.player.v1",
    "host": "dos.host.v1",
    "invite": "dos.invite.v1",
    "unsubscribe": "dos.unsubscribe.v1",
    "inbound": "dos.inbound-mail.v1",
    # One identity for all your games: an account session, a sign-in link, and
    # the link that confirms a seat's new address.
    "account": "dos.account.v1",
    "login": "dos.login-link.v1",
    "confirm": "dos.confirm-email.v1",
    "signin": "dos.web-signin.v1",  # the short-lived link in an email that opens the web table
    "unsubscribe_mail": "dos.unsubscribe-mail.v1",
}


@dataclass(frozen=True)
class TokenClaims:
    game_id: str
    seat_id: str | None  # the seat's public_id; None for host tokens (and legacy tokens)
    version: int
    legacy_index: int | None = None  # what a token from before seat identities names
    address: str | None = None  # an invite's digest of the address it was sent to

    @property
    def names_a_seat(self) -> bool:
        return self.seat_id is not None or self.legacy_index is not None


def _keys() -> tuple[str, ...]:
    return (*current_app.config["SECRET_KEY_FALLBACKS"], current_app.config["SECRET_KEY"])


def _serializer(purpose: str, keys: tuple[str, ...] | None = None) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(list(keys or _keys()), salt=SALTS[purpose])


@functools.lru_cache(maxsize=4096)
def _signed(purpose: str, token: str, keys: tuple[str, ...]) -> tuple[Any, int]:
    """The payload of a token whose signature one of ``keys`` made, and when it was signed.

    Memoized per process: whether a string is signed by a set of keys never changes, and a
    player's client sends the same token with every request (checking its signature was a
    tenth of a read's CPU). Only good signatures are kept (a bad one raises), and the age is
    checked by the caller on every use. What a token grants is never memoized: the seat's
    ``token_version`` is compared with the row read by each request.
    """
    payload, signed_at = _serializer(purpose, keys).loads(token, return_timestamp=True)
    return payload, int(signed_at.timestamp())


def issue(purpose: str, game_id: str, seat_id: str | None, version: int,
          **extra: str) -> str:
    """A token for ``purpose`` naming the seat ``seat_id`` (its public_id; None: the host).

    ``extra`` adds short string claims (an invite's ``e``: a digest of the address it was
    sent to), read back as ``TokenClaims.address``.
    """
    payload: dict[str, Any] = {"g": game_id, "v": version, **extra}
    if seat_id is not None:
        payload["p"] = seat_id
    return str(_serializer(purpose).dumps(payload))


def issue_payload(purpose: str, payload: dict[str, Any]) -> str:
    """A signed token for any JSON object (account sessions and sign-in links)."""
    return str(_serializer(purpose).dumps(payload))


def read_payload(purpose: str, token: str, max_age_seconds: int, what: str,
                 expired_hint: str = "") -> dict[str, Any]:
    """The object inside a token of :func:`issue_payload`; NotAuthenticated names ``what``."""
    try:
        payload, signed_at = _signed(purpose, token, _keys())
    except BadSignature:  # SignatureExpired is one, but no age is asked of itsdangerous here
        raise NotAuthenticated(f"this is not a valid {what} for this server", invalid=True) from None
    age = int(time.time()) - signed_at  # what itsdangerous's max_age would check
    if age > max_age_seconds or age < 0:
        raise NotAuthenticated(f"this {what} has expired{expired_hint}", expired=True)
    if not isinstance(payload, dict):
        raise NotAuthenticated(f"this is not a valid {what} for this server", invalid=True)
    payload = dict(payload)  # the memoized one stays as it was signed
    return payload


def read(purpose: str, token: str, max_age_days: float | None = None) -> TokenClaims:
    """Verify a token; a bad, expired or malformed one raises NotAuthenticated.

    ``max_age_days`` shortens the lifetime (default ``TOKEN_MAX_AGE_DAYS``).
    """
    days = current_app.config["TOKEN_MAX_AGE_DAYS"] if max_age_days is None else max_age_days
    max_age = int(float(days) * 86400)
    payload = read_payload(purpose, token, max_age, f"{purpose} token",
                           "; ask the game's host for a new one")
    if not isinstance(payload.get("g"), str):
        raise NotAuthenticated(f"this is not a valid {purpose} token for this server", invalid=True)
    seat_id = payload.get("p")
    legacy_index = payload.get("s")
    version = payload.get("v")
    if ((seat_id is not None and not isinstance(seat_id, str))
            or (legacy_index is not None and type(legacy_index) is not int)
            or type(version) is not int):
        raise NotAuthenticated(f"this is not a valid {purpose} token for this server", invalid=True)
    address = payload.get("e")
    return TokenClaims(payload["g"], seat_id, version, legacy_index,
                       address if isinstance(address, str) else None)


def address_digest(key: str) -> str:
    """A short keyed digest of an address's comparison form (validation.email_key), put in an
    invite so that claiming it proves the claimer got the invite sent to that address. Keyed,
    because a token's payload is readable: the digest must not let anyone test guesses."""
    return _address_digest(current_app.config["SECRET_KEY"], key)


def address_matches(digest: str, key: str) -> bool:
    keys = list(_keys())
    return any(hmac.compare_digest(_address_digest(k, key), digest) for k in keys)


def _address_digest(secret: str, key: str) -> str:
    mac = hmac.new(secret.encode(), b"dos.address.v1:" + key.encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:12]).decode()


# -- reply addresses (play by email) ---------------------------------------------------------

MAIL_LOCAL_PREFIX = "play+"


class _MailSigner(Signer):
    """An itsdangerous Signer whose signature is lowercase base32 of 15 bytes of HMAC-SHA256.

    Not ``URLSafeTimedSerializer``: its base64 JSON is long (an address local part may have
    at most 64 characters, RFC 5321) and case-sensitive, and mail systems may fold the case
    of an address. ``game.seat.version.token_version.signature`` is lowercase only (game ids
    and seat ids are), so it survives folding: with a seat id of 12 letters and a version of
    up to 6 digits the local part ``play+<token>`` stays within 64 characters. ``seat`` is
    the seat's public_id (letters), or an index (digits) in addresses from before seat ids.
    No timestamp: the version already ties a token to one state of the game, and the seat's
    ``token_version`` revokes.
    """

    def _sign_with(self, key: bytes, value: bytes) -> bytes:
        return base64.b32encode(self.algorithm.get_signature(key, value)[:15]).lower()

    def get_signature(self, value: str | bytes) -> bytes:
        return self._sign_with(self.derive_key(), want_bytes(value))

    def verify_signature(self, value: str | bytes, sig: str | bytes) -> bool:
        given = want_bytes(sig).lower()
        return any(
            hmac.compare_digest(self._sign_with(self.derive_key(key), want_bytes(value)), given)
            for key in reversed(self.secret_keys)
        )


@dataclass(frozen=True)
class MailClaims:
    game_id: str
    seat_id: str | None  # None in an address from before seat identities:
    legacy_index: int | None  # ... which names this index instead
    version: int  # the game version the email showed
    token_version: int  # the seat's token_version when the email was written


def _mail_signer() -> _MailSigner:
    keys = list(_keys())
    return _MailSigner(keys, salt=SALTS["inbound"], digest_method=hashlib.sha256)


def issue_mail(game_id: str, seat_id: str, version: int, token_version: int) -> str:
    return _mail_signer().sign(f"{game_id}.{seat_id}.{version}.{token_version}".lower()).decode()


def reply_address(game_id: str, seat_id: str, version: int, token_version: int) -> str:
    token = issue_mail(game_id, seat_id, version, token_version)
    return f"{MAIL_LOCAL_PREFIX}{token}@{current_app.config['MAIL_DOMAIN']}"


def read_mail(token: str) -> MailClaims | None:
    """The claims of a reply-address token, or None if it is not one of ours."""
    try:
        value = _mail_signer().unsign(token.strip().lower().encode("ascii")).decode()
    except (BadSignature, UnicodeError):
        return None
    parts = value.split(".")
    if len(parts) != 4 or not all(p.isascii() and p.isdigit() for p in parts[2:]):
        return None
    seat = parts[1]
    if seat.isascii() and seat.isdigit():
        return MailClaims(parts[0], None, int(seat), int(parts[2]), int(parts[3]))
    if not (seat.isascii() and seat.isalpha()):
        return None
    return MailClaims(parts[0], seat, None, int(parts[2]), int(parts[3]))


# -- the mailto: unsubscribe address (RFC 8058's List-Unsubscribe) ---------------------------

UNSUBSCRIBE_LOCAL_PREFIX = "unsubscribe+"


def unsubscribe_address(game_id: str, seat_id: str) -> str:
    """``unsubscribe+<game>.<seat>.<signature>@MAIL_DOMAIN``: mail to it stops the seat's
    emails for the game (handled by mail-in). Lowercase, like reply addresses; never revoked."""
    keys = list(_keys())
    signer = _MailSigner(keys, salt=SALTS["unsubscribe_mail"], digest_method=hashlib.sha256)
    token = signer.sign(f"{game_id}.{seat_id}".lower()).decode()
    return f"{UNSUBSCRIBE_LOCAL_PREFIX}{token}@{current_app.config['MAIL_DOMAIN']}"


def read_unsubscribe_mail(token: str) -> tuple[str, str] | None:
    """(game id, seat public_id) of an unsubscribe address's token, or None."""
    keys = list(_keys())
    signer = _MailSigner(keys, salt=SALTS["unsubscribe_mail"], digest_method=hashlib.sha256)
    try:
        value = signer.unsign(token.strip().lower().encode("ascii")).decode()
    except (BadSignature, UnicodeError):
        return None
    game_id, _, seat_id = value.partition(".")
    if not game_id or not seat_id.isascii() or not seat_id.isalpha():
        return None
    return game_id, seat_id
