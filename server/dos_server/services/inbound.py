"""Play by email: store an inbound message, understand it, apply it, answer it.

Two transactions at most per message, each all-or-nothing:

1. :func:`store` keeps the raw message (deduplicated by Message-ID) before anything else, so a
   crash after receipt loses nothing: rows left ``received`` are processed again later.
2. :func:`process` locks the row and the game, applies the command through the same core as
   the HTTP API (:func:`dos_server.services.play.apply_turn`), queues the answer in the
   outbox and marks the row, in one transaction. If anything is wrong, that transaction is
   rolled back (the game is unchanged) and a second one queues the error answer and marks the
   row ``rejected``.

Every answer is a ``mail_reply`` outbox row: the worker sends it in the sender's thread. Its
words are the reader's: once the seat is known, in the seat's language (its emails' too);
before, in the language of the sender's identity, else English. Refusals that are never
answered (automatic mail, a forged sender) stay English: only the operator reads them.
Automatic mail (RFC 3834 ``Auto-Submitted``, bounces, list traffic) is never answered, so an
away-message cannot start a loop.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses
from typing import Any, TypeVar

from flask import current_app
from flask_babel import gettext as _
from flask_babel import ngettext
from sqlalchemy import and_, or_, select
from sqlalchemy.exc import IntegrityError

from dos_engine import Game
from dos_engine.errors import DosError, InvalidActionError
from dos_engine.wording import describe
from dos_server import i18n, mailtext, metrics, timefmt, tokens, urls
from dos_server.database import write_transaction
from dos_server.errors import (
    AmbiguousAction,
    DomainError,
    GameNotFound,
    IllegalAction,
    StaleVersion,
)
from dos_server.extensions import db
from dos_server.mailtext import body_text, command_lines, html_to_text
from dos_server.models import GameRow, IdentityRow, InboundMessageRow, SeatRow, utcnow
from dos_server.services import (
    abandon,
    access,
    archive,
    attention,
    chat_mail,
    lobby,
    notify,
    nudge,
    orders,
    play,
    read,
    rematch,
    standing,
)
from dos_server.validation import email_key

log = logging.getLogger("dos_server.inbound")

T = TypeVar("T")

KEYWORDS = ("show", "moves", "history", "resign", "help", "join", "rematch")
HISTORY_EVENTS = 30
SEAT_KEYWORDS = ("nudge", "nudges", "vote")  # commands with words after them

def help_lines() -> list[str]:
    """How to play by email, in the current language (the commands stay as typed)."""
    return [
        _("How to play by email: reply to the latest email from the game, and write on the "
          "first line(s), above the quoted text:"),
        "  3                 " + _("the move numbered 3 in that email's list"),
        "  m1 R5             " + _("a move in the notation (several: m1 R5; m2 B3+Y4; end, "
                                   "or one per line); shorthand like R5, draw, end works "
                                   "when clear"),
        "  show  " + _("or") + "  moves   " + _("the table and your numbered moves"),
        "  history           " + _("the last events of the game"),
        "  resign            " + _("give up your seat (the random bot plays it on)"),
        "  orders draw on    " + _("standing orders the server plays for you (draw, only, "
                                   "dos, catch; on or off; orders alone lists them)"),
        "  nudge             " + _("tell the player to move that you are waiting (once "
                                   "a day)"),
        "  nudges off|on     " + _("stop or allow other players' nudges"),
        "  say good game     " + _("a message at the table, for everyone in the game (a "
                                   "move may come with it)"),
        "  vote 2 bot|end    " + _("on an absent seat (2): a bot plays it, or the game ends "
                                   "now"),
        "  join              " + _("take your seat, in answer to an invitation"),
        "  rematch           " + _("once the game is over: play again with the same players "
                                   "and rules (or accept the rematch someone asked for)"),
        "  remind 50% 1h     " + _("when to remind you of your turn: a share of its time, or "
                                   "hours (h) or minutes (m) before its deadline; remind off: "
                                   "never"),
        "  help              " + _("this text"),
        _("A number refers to the list in the email you answer: if the game has moved on "
          "since, nothing is applied and you get the new list."),
    ]


# -- storing ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    id: int
    duplicate: bool
    status: str


def store(raw: bytes, source: str, mail_from: str | None = None,
          rcpt_to: Sequence[str] = ()) -> Stored:
    """Keep the raw message; one delivered before (same Message-ID and, for SMTP and LMTP,
    the same recipient) is not stored again. A message to two ``play+`` addresses is stored
    once per recipient (the mail-in listener calls this per recipient)."""
    message_id = mailtext.message_id(raw)
    basis = b"mid:" + message_id.encode() if message_id else b"raw:" + raw
    recipients = list(rcpt_to) or _header_recipients(raw)
    if recipients:
        basis += b"\0rcpt:" + ",".join(sorted(r.lower() for r in recipients)).encode()
    key = hashlib.sha256(basis).hexdigest()
    for _attempt in range(2):  # a concurrent first delivery of the same message wins the unique key
        try:
            with write_transaction():
                existing = db.session.execute(
                    select(InboundMessageRow).where(InboundMessageRow.dedupe_key == key)
                ).scalar_one_or_none()
                if existing is not None:
                    log.info("inbound message %s is a duplicate of #%s", message_id, existing.id)
                    return Stored(existing.id, True, existing.status)
                row = InboundMessageRow(
                    dedupe_key=key, message_id=message_id or None, source=source,
                    mail_from=mail_from, rcpt_to=list(rcpt_to), raw=raw, size=len(raw),
                    status="received", received_at=utcnow(), attempts=0,
                )
                db.session.add(row)
                db.session.flush()
                stored = Stored(row.id, False, row.status)
            return stored
        except IntegrityError:
            continue
    raise RuntimeError("could not store the inbound message")


def _header_recipients(raw: bytes) -> list[str]:
    """Without an envelope (POST /inbound/email): the play+ address the headers name."""
    try:
        message = BytesParser(policy=email.policy.default).parsebytes(raw, headersonly=True)
    except Exception:
        return []
    domain = str(current_app.config["MAIL_DOMAIN"])
    for prefix in (tokens.MAIL_LOCAL_PREFIX, tokens.UNSUBSCRIBE_LOCAL_PREFIX):
        token = _recipient_token(message, [], prefix)
        if token is not None:
            return [f"{prefix}{token}@{domain}"]
    return []


# -- processing -------------------------------------------------------------------------------


class Refusal(Exception):
    """Nothing is applied; ``lines`` tell the sender what was wrong and how to fix it.

    ``show`` adds the seat's table and moves to the answer (only once the sender is known to
    be the seat's player); ``answer`` False means no answer at all (automatic mail).
    """

    def __init__(self, outcome: str, lines: Sequence[str], *, show: bool = False,
                 answer: bool = True) -> None:
        super().__init__(lines[0] if lines else outcome)
        self.outcome = outcome
        self.lines = list(lines)
        self.show = show
        self.answer = answer


@dataclass
class Incoming:
    message_id: str
    subject: str
    references: str
    sender: str | None  # the From address (lower case), where answers go
    automatic: bool
    token: str | None
    lines: list[str] = field(default_factory=list)
    unreadable: bool = False
    game_id: str | None = None
    seat: int | None = None
    language: str | None = None  # the answer's: the seat's, else the sender identity's


def process(row_id: int, now: datetime | None = None) -> str:
    """Handle one stored message once; returns the row's status.

    A bug while processing rolls everything back; the message stays ``received`` and the
    worker tries again on ``INBOUND_RETRY_SCHEDULE``. After the last try it is ``failed``
    and the sender gets a short apology (nothing was applied); ``dos-server inbound
    replay ID`` tries it again.
    """
    incoming: Incoming | None = None
    try:
        with write_transaction():
            row = _lock(row_id)
            if row is None or row.status != "received":
                return row.status if row is not None else "missing"
            if _unsubscribe(row):
                return row.status
            incoming = parse(row)
            incoming.language = _sender_language(incoming.sender)
            with notify.one_message_for_seat_of(incoming.token), \
                    i18n.in_language(incoming.language), metrics.moves_by("email"):
                outcome, lines, game, seat = _apply(incoming)
                _answer(row, incoming, lines, game, seat)
            _finish(row, incoming, "processed", outcome, None)
            return "processed"
    except Refusal as refusal:
        return _refuse(row_id, incoming, refusal)
    except Exception as error:  # a bug: keep the message, try again later, then apologise
        log.exception("inbound message #%s could not be processed", row_id)
        return _failed(row_id, incoming, f"{type(error).__name__}: {error}", now or utcnow())


def _failed(row_id: int, incoming: Incoming | None, error: str, now: datetime) -> str:
    schedule = [float(s) for s in current_app.config["INBOUND_RETRY_SCHEDULE"]]
    with write_transaction():
        row = _lock(row_id)
        if row is None or row.status != "received":
            return row.status if row is not None else "missing"
        row.attempts += 1
        row.error = error[:2000]
        if row.attempts <= len(schedule):
            row.next_attempt_at = now + timedelta(seconds=schedule[row.attempts - 1])
            log.warning("inbound message #%s failed (attempt %d); next try at %s", row.id,
                        row.attempts, row.next_attempt_at.isoformat(timespec="seconds"))
            return "received"
        _finish(row, incoming, "failed", "error", error)
        sender = incoming.sender if incoming is not None else _sender_of(row)
        if sender and not (incoming is not None and incoming.automatic):
            _apologise(row, incoming, sender)
        log.error("inbound message #%s failed for good after %d attempts", row.id, row.attempts)
        return "failed"


def _sender_of(row: InboundMessageRow) -> str | None:
    try:
        message = BytesParser(policy=email.policy.default).parsebytes(row.raw)
        if mailtext.is_automatic(message, row.mail_from, None):
            return None
        return mailtext.address(mailtext.header(message, "From"))
    except Exception:
        return None


def _sender_language(sender: str | None) -> str | None:
    """The language the sender's identity chose (before the seat is known); None for none."""
    if not sender:
        return None
    try:
        identity = db.session.get(IdentityRow, email_key(sender))
    except ValueError:  # not an address we could key
        return None
    return identity.language if identity is not None else None


def _apologise(row: InboundMessageRow, incoming: Incoming | None, sender: str) -> None:
    language = incoming.language if incoming is not None else _sender_language(sender)
    with i18n.in_language(language) as language:
        lines = [_("Sorry: your message could not be processed because of an error on our "
                   "side, so nothing was applied to the game."),
                 _("Please send your move again (reply to the latest email of the game); the "
                   "server's operator has been told.")]
    subject = incoming.subject if incoming is not None and incoming.subject else "DOS by mail"
    payload: dict[str, Any] = {
        "event": "mail_reply", "game_id": None, "seat": None, "view": None,
        "language": language, "data": {"lines": lines},
        "subject": subject if subject.lower().startswith("re:") else f"Re: {subject}",
        "in_reply_to": (incoming.message_id if incoming is not None else row.message_id) or None,
    }
    payload["references"] = payload["in_reply_to"]
    notify.add_row(None, [], "email", sender, "mail_reply", f"inbound:{row.id}:apology",
                   payload)


def replay(row_id: int) -> str:
    """An operator retries a failed (or stuck) message: processed again from the start."""
    with write_transaction():
        row = _lock(row_id)
        if row is None:
            return "missing"
        if row.status not in ("failed", "received"):
            return row.status
        row.status, row.attempts, row.next_attempt_at = "received", 0, None
    return process(row_id)


def failed_messages(limit: int = 100) -> list[InboundMessageRow]:
    rows = db.session.execute(
        select(InboundMessageRow).where(InboundMessageRow.status == "failed")
        .order_by(InboundMessageRow.id).limit(limit)
    ).scalars().all()
    return list(rows)


def process_pending(now: datetime | None = None, older_than: float | None = None,
                    limit: int = 50) -> int:
    """Process rows left ``received``: a crash between receipt and processing, or a failed
    attempt whose retry is due."""
    now = now or utcnow()
    seconds = (float(current_app.config["INBOUND_RETRY_SECONDS"]) if older_than is None
               else older_than)
    cutoff = now - timedelta(seconds=seconds)
    ids = db.session.execute(
        select(InboundMessageRow.id)
        .where(InboundMessageRow.status == "received",
               or_(and_(InboundMessageRow.next_attempt_at.is_(None),
                        InboundMessageRow.received_at <= cutoff),
                   InboundMessageRow.next_attempt_at <= now))
        .order_by(InboundMessageRow.id).limit(limit)
    ).scalars().all()
    db.session.rollback()
    for row_id in ids:
        process(row_id, now)
    return len(ids)


def _unsubscribe(row: InboundMessageRow) -> bool:
    """Mail to the List-Unsubscribe ``mailto:`` address stops the seat's emails (no answer)."""
    found = _recipient_token(None, row.rcpt_to, tokens.UNSUBSCRIBE_LOCAL_PREFIX)
    if found is None:
        try:
            message = BytesParser(policy=email.policy.default).parsebytes(row.raw)
        except Exception:
            return False
        found = _recipient_token(message, [], tokens.UNSUBSCRIBE_LOCAL_PREFIX)
    if found is None:
        return False
    claims = tokens.read_unsubscribe_mail(found)
    game = None
    if claims is not None:  # a seat is written only under its game's lock (services/locks.py)
        try:
            game = access.get_game(claims[0], for_update=True)
        except GameNotFound:
            game = None
    seat = None if game is None or claims is None else access.find_seat(game, claims[1], None)
    if seat is None:
        _finish(row, None, "ignored", "bad-token", None)
    else:
        seat.email_unsubscribed = True
        _finish(row, None, "processed", "unsubscribed", None)
        row.game_id, row.seat = seat.game_id, seat.index
    return True


def _lock(row_id: int) -> InboundMessageRow | None:
    return db.session.execute(
        select(InboundMessageRow).where(InboundMessageRow.id == row_id).with_for_update()
    ).scalar_one_or_none()


def _finish(row: InboundMessageRow, incoming: Incoming | None, status: str, outcome: str,
            error: str | None) -> None:
    metrics.after_commit(metrics.INBOUND, status=status, outcome=outcome)
    row.status = status
    row.outcome = outcome
    row.error = error[:2000] if error else None
    row.processed_at = utcnow()
    if incoming is not None:
        row.game_id = incoming.game_id
        row.seat = incoming.seat


def _refuse(row_id: int, incoming: Incoming | None, refusal: Refusal) -> str:
    with write_transaction():
        row = _lock(row_id)
        if row is None or row.status != "received":
            return row.status if row is not None else "missing"
        game = seat = None
        if refusal.show and incoming is not None and incoming.game_id is not None:
            game = db.session.get(GameRow, incoming.game_id)
            seat = _seat_of(game, incoming.seat)
        status = "rejected" if refusal.answer else "ignored"
        if refusal.answer and incoming is not None:
            with i18n.in_language(incoming.language):
                _answer(row, incoming, refusal.lines, game, seat)
        _finish(row, incoming, status, refusal.outcome, " ".join(refusal.lines)[:2000])
    log.info("inbound message #%s %s: %s", row_id, status, refusal.outcome)
    return status


# -- understanding ------------------------------------------------------------------------------


def parse(row: InboundMessageRow) -> Incoming:
    try:
        message = BytesParser(policy=email.policy.default).parsebytes(row.raw)
    except Exception:
        raise Refusal("malformed", ["unreadable message"], answer=False) from None
    sender = mailtext.address(mailtext.header(message, "From")) or mailtext.address(
        row.mail_from or "")
    incoming = Incoming(
        message_id=mailtext.header(message, "Message-ID")[:998],
        subject=" ".join(mailtext.header(message, "Subject").split())[:200],
        references=mailtext.header(message, "References"),
        sender=sender,
        automatic=mailtext.is_automatic(message, row.mail_from, sender),
        token=_token(message, row.rcpt_to),
    )
    if incoming.automatic:
        raise Refusal("automatic", ["automatic mail (auto-reply, bounce or list) is not answered"],
                      answer=False)
    if sender is None:
        raise Refusal("no-sender", ["the message has no From address to answer"], answer=False)
    try:
        incoming.lines = command_lines(body_text(message))
    except Exception:  # a MIME structure we cannot read: answered in _apply
        incoming.unreadable = True
    return incoming


def _token(message: Message, rcpt_to: Sequence[str]) -> str | None:
    """The token of the first play+TOKEN@MAIL_DOMAIN among the recipients."""
    return _recipient_token(message, rcpt_to, tokens.MAIL_LOCAL_PREFIX)


def _recipient_token(message: Message | None, rcpt_to: Sequence[str],
                     prefix: str) -> str | None:
    """The token of the first ``<prefix>TOKEN@MAIL_DOMAIN`` among the envelope recipients,
    then the message's delivery and address headers."""
    domain = str(current_app.config["MAIL_DOMAIN"]).lower()
    candidates = list(rcpt_to)
    for name in ("Delivered-To", "X-Original-To", "Envelope-To", "To", "Cc"):
        if message is None:
            break
        try:
            values = message.get_all(name) or []
        except Exception:
            continue
        candidates += [address for _, address in getaddresses([str(v) for v in values])]
    for address in candidates:
        local, _, host = address.strip().strip("<>").rpartition("@")
        if host.lower() == domain and local.lower().startswith(prefix):
            return local[len(prefix):]
    return None


# -- applying -----------------------------------------------------------------------------------


def _apply(incoming: Incoming) -> tuple[str, list[str], GameRow, SeatRow]:
    """Authenticate, then run the command; returns (outcome, lines, game, seat)."""
    if incoming.unreadable:
        raise Refusal("malformed", [
            _("We could not read your message (its MIME structure is broken), so nothing was "
              "changed. Reply again with your move as plain text on the first line."),
        ])
    if incoming.token is None:
        raise Refusal("no-token", [
            _("This message did not reach a game's reply address, so nothing was changed."),
            _("To play, reply to the latest email the game sent you (its Reply-To is an "
              "address like %(address)s).",
              address="play+...@" + str(current_app.config["MAIL_DOMAIN"])),
        ])
    claims = tokens.read_mail(incoming.token)
    if claims is None:
        raise Refusal("bad-token", [
            _("The address you wrote to is not a valid reply address of this server (it may "
              "have been changed or cut short), so nothing was changed."),
            _("Reply to the latest email the game sent you, without editing the address."),
        ])
    try:
        game: GameRow | None = access.get_game(claims.game_id, for_update=True)
    except GameNotFound:
        game = None
    seat = None if game is None else access.find_seat(game, claims.seat_id, claims.legacy_index)
    if game is None or seat is None:
        raise Refusal("revoked-token", [
            "This reply address is no longer valid (the game or the seat is gone), so nothing "
            "was changed.",
        ], answer=False)  # no backscatter to a sender we cannot check
    if seat.token_version != claims.token_version:
        own = bool(seat.email) and incoming.sender == (seat.email or "").strip().lower()
        if not own:  # never answered (no backscatter): the operator reads it
            raise Refusal("revoked-token", [
                "The address you replied to was replaced when your seat's tokens were "
                "renewed, so nothing was changed."], answer=False)
        # the answer goes to the seat's own address: it may show the table, in its language
        incoming.game_id, incoming.seat = game.id, seat.index
        incoming.language = notify.reader_language(seat)
        with i18n.in_language(incoming.language):
            raise Refusal("revoked-token", [
                _("The address you replied to was replaced when your seat's tokens were "
                  "renewed, so nothing was changed."),
                _("Reply to THIS email (its address is the new one), or to any later email of "
                  "the game."),
            ], show=True)
    if (current_app.config["INBOUND_REQUIRE_FROM_MATCH"] and seat.email
            and incoming.sender != seat.email.strip().lower()):
        # Stored, never answered: From is forgeable, and an answer to it would let anyone who
        # saw one reply address make the server mail whomever they like.
        raise Refusal("from-mismatch", [
            "This message did not come from the address on file for the seat, so nothing was "
            "changed.",
        ], answer=False)
    incoming.game_id, incoming.seat = game.id, seat.index
    incoming.language = notify.reader_language(seat)  # the answer is in the seat's language
    with i18n.in_language(incoming.language):
        return _run(incoming, claims.version, game, seat)


def _seat_of(game: GameRow | None, index: int | None) -> SeatRow | None:
    if game is None:
        return None
    return next((s for s in game.seats if s.index == index), None)


def _run(incoming: Incoming, shown: int, game: GameRow,
         seat: SeatRow) -> tuple[str, list[str], GameRow, SeatRow]:
    said, rest = chat_mail.said_lines(incoming.lines)
    if not said:
        return _run_lines(_from_first_command(game, seat.index, rest), shown, game, seat)
    # A message, and maybe a move or another command: the command first (all or nothing).
    start = _first_command(game, seat.index, rest)
    outcome, out = "said", list[str]()
    if start is not None:
        outcome, out, game, seat = _run_lines(rest[start:], shown, game, seat)
    try:
        out += chat_mail.say(game, seat, said)
    except DomainError as error:
        raise Refusal(error.kind, [_("Nothing was changed: %(reason)s", reason=error.detail)],
                      show=True) from None
    return outcome, out, game, seat


def _run_lines(lines: list[str], shown: int, game: GameRow,
               seat: SeatRow) -> tuple[str, list[str], GameRow, SeatRow]:
    if not lines:
        raise Refusal("no-command", [_("We found no command above the quoted text of your "
                                       "reply, so nothing was changed."), "", *help_lines()],
                      show=True)
    first = lines[0].strip().rstrip(".!").strip().lower()
    if first == "help":
        return "help", help_lines(), game, seat
    if first == "join":
        return _join(game, seat)
    if first == "rematch":
        return _rematch(game, seat)
    if first.split(" ", 1)[0] == "orders":
        return _orders(game, seat, first.split()[1:])
    if first.split(" ", 1)[0] == "remind":
        return _remind(game, seat, first.removeprefix("remind"))
    if game.status == "waiting":
        raise Refusal("not-started", [
            _("The game has not started yet, so nothing was changed: it starts when everyone "
              "invited has joined, or when the host starts it."),
            _("You have joined; you will get an email when it is your turn.") if seat.claimed
            else _("Reply to the invitation with the word join to take your seat."),
        ])
    if first.split(" ")[0] in SEAT_KEYWORDS:
        return _seat_command(first, game, seat)
    if first in ("show", "moves"):
        return first, [_("Here is the game as it stands now.")], game, seat
    if first == "history":
        return "history", _history(game, seat), game, seat
    if first == "resign":
        _checked(lambda: play.resign_seat(game, seat.index), game, seat, shown)
        return "resigned", [_("You resigned: the random bot plays your seat from now on. "
                              "You will still get the round and game results.")], game, seat
    chosen = mailtext.move_number(first)
    if chosen is not None:
        if shown != game.version:
            raise _stale(game, seat, shown)
        if chosen < 1:
            raise Refusal("no-such-action", [_("Move numbers start at 1; nothing was changed. "
                                               "Reply with a number from the list below.")],
                          show=True)
        turn = _checked(lambda: play.apply_turn(game, seat.index, shown, None, chosen),
                        game, seat, shown)
        ignored = lines[1:]
    else:
        text, ignored = _notation(game, seat.index, lines)
        turn = _checked(lambda: play.apply_turn(game, seat.index, shown, [text], None),
                        game, seat, shown)
    out = [_("Applied: %(moves)s", moves="; ".join(action.text() for action in turn.applied))]
    if ignored:
        out.append(_("Ignored (not a move): %(lines)s", lines=" / ".join(ignored)[:300]))
    if game.status == "finished":
        out.append(_("The game is over."))
    elif turn.state.current == seat.index:
        out.append(_("It is your turn again: here are the table and your moves."))
    return "applied", out, game, seat


def _orders(game: GameRow, seat: SeatRow,
            words: Sequence[str]) -> tuple[str, list[str], GameRow, SeatRow]:
    """``orders [NAME on|off]...``: list or switch the seat's standing orders."""
    on: list[str] = []
    off: list[str] = []
    rest = list(words)
    while rest:
        name = rest.pop(0)
        if not rest or rest[0] not in ("on", "off") or name not in (*orders.ORDERS, "all"):
            raise Refusal("bad-orders", [
                _("Nothing was changed: write orders, then each order and on or off, like: "
                  "orders draw on only off (orders: %(orders)s, or all).",
                  orders=", ".join(orders.ORDERS))], show=True)
        chosen = list(orders.ORDERS) if name == "all" else [name]
        (on if rest.pop(0) == "on" else off).extend(chosen)
    version = game.version
    held = _checked(lambda: standing.change_orders(game, seat.index, on=on, off=off),
                    game, seat, game.version)
    out = [_("Your standing orders: %(orders)s.", orders=", ".join(held)) if held
           else _("You have no standing orders.")]
    out += [f"  {name:<6} {_('on') if name in held else _('off'):<4} {orders.describe(name)}"
            for name in orders.ORDERS]
    if version != game.version:
        out.append(_("An order applied at once and was played: here is the table."))
    return "orders", out, game, seat
def _remind(game: GameRow, seat: SeatRow,
            chosen: str) -> tuple[str, list[str], GameRow, SeatRow]:
    """``remind 50% 1h`` / ``remind off``: the seat's reminders (``remind`` alone tells them)."""
    if chosen.strip():
        try:
            seat.reminders = attention.parse_reminders(chosen)
        except ValueError:
            raise Refusal("bad-reminders", [attention.reminders_problem(), _("Nothing was changed.")]) \
                from None
    specs = attention.reminders_of(seat)
    told = _("Your reminders in this game: %(reminders)s.", reminders=", ".join(specs)) \
        if specs else _("You get no reminders in this game.")
    return "reminders", [told], game, seat


def _seat_command(first: str, game: GameRow,
                  seat: SeatRow) -> tuple[str, list[str], GameRow, SeatRow]:
    """``nudge``, ``nudges off``/``nudges on`` and ``vote N bot|end`` (N: a seat's number or
    name)."""
    words = first.split()
    try:
        if words == ["nudge"]:
            done = nudge.nudge_seat(game, seat.index)
            allowed = timefmt.when(timefmt.parse(done["next_allowed_at"]) or utcnow(),
                                   notify.reader_zone(seat))
            return "nudged", [_("You nudged %(name)s: they get an email saying you are "
                                "waiting. Your next nudge in this game is allowed at "
                                "%(when)s.", name=_named(game, done["nudged"]),
                                when=allowed)], game, seat
        if words in (["nudges", "off"], ["nudges", "on"]):
            seat.nudges_off = words[1] == "off"
            return "nudges", [_("Other players can no longer nudge you in this game.")
                              if seat.nudges_off else
                              _("Other players can nudge you again in this game.")], game, seat
        if len(words) >= 3 and words[0] == "vote" and words[-1] in abandon.CHOICES:
            target = _seat_named(game, " ".join(words[1:-1]))
            if target is not None:
                tally = abandon.vote_seat(game, seat.index, target, words[-1])
                return "voted", _vote_lines(game, tally), game, seat
    except DomainError as error:
        raise Refusal(error.kind, [_("Nothing was changed: %(reason)s", reason=error.detail)],
                      show=True) from None
    raise Refusal("invalid-command", [
        _("Nothing was changed: write nudge, nudges off, nudges on, or vote with a seat's "
          "number or name and bot or end (like: vote 2 bot)."), "", *help_lines()], show=True)


def _seat_named(game: GameRow, said: str) -> int | None:
    """The seat a vote names: its number, or its player's name (any case)."""
    if said.isdigit() and len(said) < 4:
        return int(said)
    return next((s.index for s in game.seats if s.name and s.name.lower() == said), None)


def _named(game: GameRow, index: int) -> str:
    seat = _seat_of(game, index)
    return (seat.name if seat is not None and seat.name
            else _("seat %(number)s", number=index))


def _vote_lines(game: GameRow, tally: dict[str, Any]) -> list[str]:
    name = _named(game, tally["seat"])
    if tally["decided"] == "bot":
        return [_("Decided: a bot plays %(name)s's seat from now on.", name=name)]
    if tally["decided"] == "end":
        return [_("Decided: the game is over, with the scores as they stand.")]
    return [_("Your vote on %(name)s's seat is in: %(bot)s for a bot, %(end)s to end the "
              "game; %(needed)s of the same make a decision.", name=name, bot=tally["bot"],
              end=tally["end"], needed=tally["needed"])]


def _join(game: GameRow, seat: SeatRow) -> tuple[str, list[str], GameRow, SeatRow]:
    """Take the seat an invitation was sent for: playing by email needs no other step."""
    if game.status in ("finished", "cancelled"):
        closed = (_("Game %(game)s is finished: there is no seat to take any more.", game=game.id)
                  if game.status == "finished" else
                  _("Game %(game)s is cancelled: there is no seat to take any more.",
                    game=game.id))
        raise Refusal("game-closed", [closed])
    if seat.claimed:
        return "joined", [_("You had already joined this game; nothing was changed.")], game, \
            seat
    waiting = game.status == "waiting"
    lobby.take_seat(game, seat)
    if not waiting:
        return "joined", [_("You joined: the game is already under way. Here is the table.")], \
            game, seat
    if game.status == "active":
        return "joined", [_("You joined, and with you every seat is taken: the game has "
                            "started. Here is the table.")], game, seat
    return "joined", [_("You joined. The game starts when everyone invited has joined, or "
                        "when the host starts it; an email tells you when it is your turn.")], \
        game, seat


def _rematch(game: GameRow, seat: SeatRow) -> tuple[str, list[str], GameRow, SeatRow]:
    """Make the finished game's rematch, or accept the one it has, for this seat."""
    try:
        done = rematch.press(game, seat)
    except DomainError as error:
        raise Refusal(error.kind, [_("Nothing was changed: %(reason)s", reason=error.detail)]) \
            from None
    new = access.get_game(done.game.id, for_update=True)
    new_seat = access.seat_of(new, done.seat if done.seat is not None else -1)
    if new.status == "active":
        said = _("You are in the rematch %(game)s: everyone accepted and it has started; an "
                 "email tells you when it is your turn.", game=new.id)
    else:
        said = _("You are in the rematch %(game)s. It starts when everyone has accepted, or "
                 "when its host starts it; an email tells you when it is your turn.",
                 game=new.id)
    return "rematch", [
        said,
        _("Its table: %(link)s", link=urls.signin_url(
            new.id, access.seat_token("signin", new, new_seat))),
        _("See it: %(command)s", command=f"dos-client show {new.id}"),
    ], game, seat


def _from_first_command(game: GameRow, seat: int, lines: list[str]) -> list[str]:
    """The lines from the first that is a command (a greeting above it is passed over)."""
    start = _first_command(game, seat, lines)
    return lines if start is None else lines[start:]


def _first_command(game: GameRow, seat: int, lines: list[str]) -> int | None:
    """The index of the first line that is a command; None if none is."""
    state = access.engine_state(game) if game.state is not None else None
    for index, line in enumerate(lines):
        word = line.strip().rstrip(".!").strip().lower()
        if (word in KEYWORDS or mailtext.move_number(word) is not None
                or word.split(" ", 1)[0] in ("orders", "remind", *SEAT_KEYWORDS)):
            return index
        if state is None:
            continue
        try:
            state.parse_turn(line, seat)
        except InvalidActionError:
            continue
        except DosError:
            return index
        return index
    return None


def _notation(game: GameRow, seat: int, lines: list[str]) -> tuple[str, list[str]]:
    """The longest run of leading lines that is move notation (a trailing "Thanks!" is not)."""
    state = access.engine_state(game)
    for count in range(len(lines), 1, -1):
        try:
            state.parse_turn("; ".join(lines[:count]), seat)
        except InvalidActionError:
            continue
        except DosError:
            break  # notation, but not allowed: apply_turn reports it
        return "; ".join(lines[:count]), lines[count:]
    return lines[0], lines[1:]


def _checked(call: Callable[[], T], game: GameRow, seat: SeatRow, shown: int) -> T:
    """Run a service core; its domain error becomes a Refusal saying exactly what to do."""
    try:
        return call()
    except DomainError as error:
        if isinstance(error, StaleVersion):
            raise _stale(game, seat, shown) from None
        lines = [_("Nothing was changed: %(reason)s", reason=error.detail)]
        if isinstance(error, IllegalAction) and error.rule:
            lines.append(_("The rule: RULES.md section %(section)s.", section=error.rule))
        if isinstance(error, AmbiguousAction) and error.candidates:
            lines.append(_("It could mean: %(moves)s. Reply with the one you mean, exactly as "
                           "written here (or its number below).",
                           moves=", ".join(error.candidates)))
        lines.append({
            "not-your-turn": _("Wait for the email that tells you it is your turn."),
            "game-not-active": _("The game is not in play any more."),
            "invalid-action": _("Write a move like: m1 R5 (or a number from the list below)."),
        }.get(error.kind, _("Reply with a number from the list below, or another move.")))
        raise Refusal(error.kind, lines, show=True) from None


def _stale(game: GameRow, seat: SeatRow, shown: int) -> Refusal:
    moved_on = _("The email you answered showed version %(shown)s of the game, but it is now "
                 "at version %(version)s: the game has moved on since, so nothing was applied.",
                 shown=shown, version=game.version)
    current = (game.state or {}).get("current") if game.status == "active" else None
    if game.status != "active":
        then = {"finished": _("The game is finished: there is nothing to play."),
                "cancelled": _("The game is cancelled: there is nothing to play."),
                }.get(game.status, _("The game is waiting: there is nothing to play."))
    elif current == seat.index:
        then = _("Here is the new table and list: reply to THIS email with your choice.")
    else:
        whose = next((s.name or _("seat %(number)s", number=s.index + 1) for s in game.seats
                      if s.index == current), None)
        then = (_("It is %(name)s's turn now: you will get an email when it is yours, with the "
                  "moves you can reply with.", name=whose) if whose is not None else
                _("It is another player's turn now: you will get an email when it is yours, "
                  "with the moves you can reply with."))
    return Refusal("stale", [moved_on, then], show=True)


def _history(game: GameRow, seat: SeatRow) -> list[str]:
    """The game's latest events in words, as the table and the client tell them."""
    rows = archive.events_latest(game, HISTORY_EVENTS)
    names = {s.index: s.name or _("seat %(number)s", number=s.index + 1) for s in game.seats}
    language = notify.reader_language(seat)
    out = [ngettext("The last %(num)d event of game %(game)s:", "The last %(num)d events of game "
                    "%(game)s:", len(rows), game=game.id)]
    for row in reversed(rows):
        shown = read.event_out(row, access.Viewer(seat=seat.index))
        text = describe(shown, names, me=seat.index, language=language)
        if text is not None:
            out.append(f"  {shown['seq']:>4}. {text}")
    return out


# -- answering ----------------------------------------------------------------------------------


def _answer(row: InboundMessageRow, incoming: Incoming, lines: Sequence[str],
            game: GameRow | None, seat: SeatRow | None) -> None:
    """Queue the answer in the outbox, in the sender's thread."""
    data = {"lines": list(lines)}
    payload: dict[str, Any]
    if game is not None and seat is not None:
        state = Game.from_dict(game.state) if game.state is not None else None
        payload = notify.email_payload(game, seat, state, "mail_reply", data)
        if state is None or state.is_over:
            payload["moves"] = []
    else:
        payload = {"event": "mail_reply", "game_id": None, "seat": None, "data": data,
                   "view": None, "language": i18n.language_of(incoming.language)}
    subject = incoming.subject or (_("DOS game %(game)s", game=game.id) if game is not None
                                   else "DOS by mail")
    payload["subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    payload["in_reply_to"] = incoming.message_id or None
    references = [*incoming.references.split()[-10:], incoming.message_id]
    payload["references"] = " ".join(r for r in references if r) or None
    assert incoming.sender is not None
    notify.add_row(game.id if game is not None else None,
                   [seat.index] if seat is not None else [], "email", incoming.sender,
                   "mail_reply", f"inbound:{row.id}:reply", payload)


__all__ = ["Incoming", "Refusal", "Stored", "body_text", "command_lines", "failed_messages",
           "html_to_text", "parse", "process", "process_pending", "replay", "store"]
