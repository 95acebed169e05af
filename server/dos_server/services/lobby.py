"""The lobby: creating, joining and starting games; seats, tokens and seat settings.

Every public function here is one transaction and owns it. A write locks the game, reads it
and its seats under the lock, and authenticates the caller's token there
(:func:`access.locked`). A write that changes the table returns what it did (an
:class:`access.Written`, or one of the results below); the views make the answer of it
(``services/read.py``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from flask import current_app

from dos_engine import Game, InvalidOptionsError, Options
from dos_engine.strategies import BOTS
from dos_server import netguard, tokens, validation
from dos_server.database import write_transaction
from dos_server.errors import (
    AlreadyStarted,
    GameClosed,
    InvalidInput,
    NoOpenSeat,
    NoPersonLeft,
    NotAuthenticated,
    NotEnoughPlayers,
    NotYourSeat,
    NoVacationLeft,
    SeatClaimed,
    TooFewSeats,
    WrongInviteCode,
)
from dos_server.extensions import db
from dos_server.models import GameRow, SeatRow, as_utc, new_seat_id, utcnow
from dos_server.services import account, attention, notify
from dos_server.services.access import (
    Viewer,
    Written,
    check_game,
    game_is,
    get_game,
    locked,
    require_host,
    require_in_play,
    require_player,
    require_seat_or_host,
    seat_named_by,
    seat_of,
    seat_token,
    snapshot,
)
from dos_server.services.play import deal
from dos_server.services.words import N_, _, engine_detail

# Bots a seat (or the timeout policy) may use: dos_engine.strategies.BOTS, the one list.
BOT_STRATEGIES = tuple(BOTS)


@dataclass(frozen=True)
class SeatSpec:
    name: str | None = None  # None: an open seat, claimed with the game's invite code
    email: str | None = None
    webhook_url: str | None = None
    bot: str | None = None


@dataclass(frozen=True)
class NewGame:
    """A request for a new game, the same whoever asks (the API, the web form, a rematch)."""

    seats: Sequence[SeatSpec]
    options: dict[str, Any] = field(default_factory=dict)
    turn_time_limit: int | None = None
    timeout_policy: str = "random"
    forfeit_after: int | None = None
    vacation_days: int = 14
    title: str | None = None
    standing_dos: bool = True  # standing orders may call DOS and catch (services/orders.py)
    chat_spectators: bool = False  # spectators may write in the chat (services/chat.py)
    # Whether the finish moves ratings (services/ratings.py); None: yes when it could, i.e.
    # when at least two seats are for people.
    rated: bool | None = None

    @classmethod
    def from_loaded(cls, body: dict[str, Any]) -> NewGame:
        """From what ``schemas.CreateGameIn`` loaded (the API's body, the web form's fields)."""
        return cls(seats=[SeatSpec(**seat) for seat in body["seats"]],
                   options=dict(body.get("options", {})),
                   turn_time_limit=body.get("turn_time_limit"),
                   timeout_policy=body["timeout_policy"],
                   forfeit_after=body.get("forfeit_after"),
                   vacation_days=body["vacation_days"], title=body.get("title"),
                   standing_dos=body.get("standing_dos", True),
                   chat_spectators=body.get("chat_spectators", False),
                   rated=body.get("rated"))


@dataclass(frozen=True)
class Invite:
    """An invite a write issued for a seat (shown once)."""

    seat: int
    name: str | None
    invite: str
    webhook_secret: str | None = None


@dataclass(frozen=True)
class Created(Written):
    """A new game, seen by its host, with the host token and the invites it issued."""

    host_token: str
    invite_code: str
    invites: tuple[Invite, ...]


@dataclass(frozen=True)
class Joined(Written):
    """A seat claimed: the game as its player sees it, and the player's token."""

    seat: int
    name: str | None
    player_token: str


@dataclass(frozen=True)
class SeatRemoved(Written):
    """A seat removed by the host, with a new invite for every named seat left."""

    invites: tuple[Invite, ...]


# -- creating and joining -------------------------------------------------------------------


def check_new_game(request: NewGame) -> tuple[Options, list[str | None], list[str | None]]:
    """The game's options, seat names and addresses, clean; one InvalidInput naming every
    field that is not allowed."""
    seats, options, timeout_policy = request.seats, request.options, request.timeout_policy
    problems = _FieldProblems()
    if not 2 <= len(seats) <= 4:
        problems.add(("seats",), _("a game has 2 to 4 seats (RULES.md 2.1)"))
    elif all(spec.bot for spec in seats):
        problems.add(("seats",), _("at least one seat must be a person, not a bot"))
    elif request.rated and not could_be_rated(seats):
        problems.add(("rated",), _("a rated game needs at least two seats for people"))
    for index, spec in enumerate(seats):
        if spec.bot and spec.bot not in BOT_STRATEGIES:
            problems.add(("seats", str(index), "bot"),
                         _("unknown bot %(bot)s: choose from %(bots)s", bot=repr(spec.bot),
                           bots=", ".join(BOT_STRATEGIES)))
    if timeout_policy not in BOT_STRATEGIES:
        problems.add(("timeout_policy",), _("must be one of %(bots)s",
                                            bots=", ".join(BOT_STRATEGIES)))
    parsed = Options()
    try:
        parsed = Options.from_dict(options)
    except InvalidOptionsError as error:
        problems.add(("options",), engine_detail(error))
    names: list[str | None] = []
    emails: list[str | None] = []
    for index, spec in enumerate(seats):
        where = ("seats", str(index))
        names.append(problems.checked((*where, "name"), _seat_name, spec, index))
        emails.append(problems.checked((*where, "email"), _seat_email, spec.email))
        problems.checked((*where, "webhook_url"), _check_webhook_url, spec.webhook_url)
    seen: set[str] = set()
    for index, name in enumerate(names):  # unique per game, case-insensitively (bots too)
        if name and validation.name_key(name) in seen:
            problems.add(("seats", str(index), "name"),
                         _("every seat needs a different name (case does not count)"))
        elif name:
            seen.add(validation.name_key(name))
    problems.raise_any()
    return parsed, names, emails


def could_be_rated(seats: Sequence[SeatSpec]) -> bool:
    """Whether a game of these seats may be rated: two of them at least are for people (who
    must also be signed in when it ends, services/ratings.py)."""
    return sum(1 for spec in seats if not spec.bot) >= 2


def create_game(request: NewGame) -> Created:
    """A new game in the lobby: it is dealt when every seat is taken by someone who joined
    (bots join at once), or when the host starts it; ``title`` is clean."""
    parsed, names, emails = check_new_game(request)
    with write_transaction():
        return insert_game(request, parsed, names, emails)


def insert_game(request: NewGame, parsed: Options, names: list[str | None],
                emails: list[str | None], *, uninvited: frozenset[int] = frozenset(),
                series: tuple[str, int] | None = None) -> Created:
    """The new game's rows, in the caller's transaction (``check_new_game`` made the rest of
    the arguments); every named person's seat but those in ``uninvited`` gets an invite.
    ``series``: the rematch series' id and this game's number in it (its bots accept now)."""
    seats, title = request.seats, request.title
    turn_time_limit, timeout_policy = request.turn_time_limit, request.timeout_policy
    forfeit_after, vacation_days = request.forfeit_after, request.vacation_days
    game = GameRow(
        id=_new_id(),
        title=title,
        status="waiting",
        version=1,
        options=parsed.to_dict(),
        invite_code=secrets.token_urlsafe(9),
        host_token_version=1,
        turn_time_limit=turn_time_limit,
        timeout_policy=timeout_policy,
        forfeit_after=forfeit_after,
        vacation_days=vacation_days,
        standing_dos=request.standing_dos,
        chat_spectators=request.chat_spectators,
        rated=(could_be_rated(seats) if request.rated is None else request.rated),
        next_seq=1,
        series_id=series[0] if series else None,
        series_no=series[1] if series else None,
    )
    for index, spec in enumerate(seats):
        game.seats.append(SeatRow(
            index=index, public_id=new_seat_id(), name=names[index], email=emails[index],
            webhook_url=spec.webhook_url, bot=spec.bot, token_version=1, claimed=bool(spec.bot),
            webhook_secret=_webhook_secret_for(game, spec.webhook_url),
            rematch_accepted_at=utcnow() if series and spec.bot else None,
        ))
    db.session.add(game)
    db.session.flush()
    invites = []
    for seat in game.seats:
        if seat.name is None or seat.bot:
            continue
        invite = seat_token("invite", game, seat)
        invites.append(Invite(seat.index, seat.name, invite, seat.webhook_secret))
        if seat.index in uninvited:
            continue
        notify.enqueue(game, "invited", [seat], None,
                       {"invite": f"{game.id}:{invite}",
                        "join": f"dos-client join {game.id}:{invite}"},
                       key=f"created-{seat.index}")  # seats may share a webhook URL
    created = Created(snapshot(game), Viewer(host=True),
                      tokens.issue("host", game.id, None, game.host_token_version),
                      game.invite_code, tuple(invites))
    return created


def join_game(game_id: str, invite: str | None, code: str | None, name: str | None,
              time_zone: str | None = None, language: str | None = None) -> Joined:
    """Claim a seat with its invite token, or an open seat with the game's invite code.

    ``time_zone`` and ``language`` (checked by the caller) fill the seat's when it has none.
    """
    with write_transaction():
        game = get_game(game_id, for_update=True)
        if game.status in ("finished", "cancelled"):
            raise GameClosed(game_is(game))
        if invite:
            claims = tokens.read("invite", invite)
            check_game(game, claims.game_id)
            seat = seat_named_by(game, claims)
            if seat.token_version != claims.version:
                raise NotAuthenticated(_("this invite was revoked; ask the host for a new one"))
            if seat.claimed:  # an invite is spent by its claim: nobody else gets the seat with it
                raise SeatClaimed(_("%(name)s's seat was already claimed with this invite. On "
                                    "another device, use your player token (dos-client token "
                                    "set); if you lost it, ask the host to rotate the seat, "
                                    "which revokes the old token and gives a new invite",
                                    name=seat.name))
        elif code:
            if not secrets.compare_digest(code.encode(), game.invite_code.encode()):
                raise WrongInviteCode(_("that invite code is not this game's; check it with "
                                        "the host"))
            if not name:
                raise InvalidInput(_("give a name to take an open seat with the invite code"))
            open_seats = [s for s in game.seats if s.name is None]
            if not open_seats:
                raise NoOpenSeat(_("every seat of this game is taken"))
            problems = _FieldProblems()
            name = problems.checked(("name",), validation.clean_name, name)
            taken = {validation.name_key(s.name) for s in game.seats if s.name}
            if name and validation.name_key(name) in taken:
                problems.add(("name",),
                             _("every seat needs a different name (case does not count)"))
            problems.raise_any()
            assert name is not None
            seat = open_seats[0]
            seat.name = name
        else:
            raise InvalidInput(_("send either an invite token, or the invite code and a "
                                 "name"))
        if invite and seat.owner_key is None:
            account.claim_by_invite(seat, claims)  # the invite sent to the seat's address
        seat.time_zone = seat.time_zone or time_zone  # the first one given stays until changed
        seat.language = seat.language or language
        take_seat(game, seat)
        joined = Joined(snapshot(game), Viewer(seat=seat.index), seat.index, seat.name,
                        seat_token("player", game, seat))
    return joined


def take_seat(game: GameRow, seat: SeatRow) -> None:
    """``seat``'s person came to the table (under the game's lock); the last one deals."""
    if not seat.claimed and game.status == "waiting":
        game.version += 1  # the table changed; a second join with one invite changes nothing
        if game.series_id is not None:  # joining a rematch challenge is accepting it
            seat.rematch_accepted_at = utcnow()
    seat.claimed = True
    deal_when_everyone_joined(game)


def deal_when_everyone_joined(game: GameRow) -> None:
    """Deal a waiting game once every seat is named and joined: until then no clock runs and
    no turn is announced, so nobody's turn passes before they came to the table."""
    if game.status == "waiting" and all(s.name and s.claimed for s in game.seats):
        deal(game)


def start_now(game_id: str, bearer: str | None) -> Written:
    """The host starts the game with the seats filled so far; open seats are removed. Invited
    people who have not joined keep their seats and invites: they play from the emails, or
    join when they come. In a rematch challenge the seats that did not accept are removed."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        require_host(viewer)
        _require_waiting(game, "start")
        filled = [s for s in game.seats if _fills(game, s)]
        if len(filled) < 2 or all(s.bot for s in filled):
            raise NotEnoughPlayers(_("a game needs at least two filled seats, one of them a "
                                     "person"))
        for seat in [s for s in game.seats if not _fills(game, s)]:
            game.seats.remove(seat)
        _renumber(game)
        deal(game)
        return Written(snapshot(game), viewer)


def _fills(game: GameRow, seat: SeatRow) -> bool:
    """Whether ``seat`` plays when the host starts now: a named one; in a rematch challenge
    (services/rematch.py) one whose player accepted, as nobody else agreed to play again."""
    if game.series_id is not None:
        return seat.claimed
    return seat.name is not None


def cancel(game_id: str, bearer: str | None) -> Written:
    """Host: cancel a game that has not started."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        require_host(viewer)
        _require_waiting(game, "cancel")
        game.status = "cancelled"
        game.version += 1
        return Written(snapshot(game), viewer)


def remove_seat(game_id: str, bearer: str | None, index: int) -> SeatRemoved:
    """Host: remove a seat before the game starts (at least two must remain)."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        require_host(viewer)
        _require_waiting(game, "remove a seat")
        seat = seat_of(game, index)
        if len(game.seats) <= 2:
            raise TooFewSeats(_("a game keeps at least two seats"))
        if all(other.bot for other in game.seats if other is not seat):
            raise NoPersonLeft(_("removing this seat would leave only bots; a game needs a "
                                 "person"))
        game.seats.remove(seat)
        _renumber(game)
        deal_when_everyone_joined(game)
        invites = tuple(Invite(s.index, s.name, seat_token("invite", game, s))
                        for s in game.seats if s.name is not None and not s.bot)
        return SeatRemoved(snapshot(game), viewer, invites)


def _require_waiting(game: GameRow, doing: str) -> None:
    """AlreadyStarted, saying why ``doing`` (start, cancel, remove a seat) needs a game that
    waits for its players, unless it does."""
    if game.status == "waiting":
        return
    if doing == "cancel":
        raise AlreadyStarted(_("only a game that has not started can be cancelled; %(state)s",
                               state=game_is(game)))
    if doing == "remove a seat":
        raise AlreadyStarted(_("seats can only be removed before the game starts"))
    raise AlreadyStarted(_("%(state)s, not waiting for players", state=game_is(game)))


def _renumber(game: GameRow) -> None:
    """Close the gaps left by removed seats. Tokens name seats by identity, so none lapses."""
    db.session.flush()  # delete first: renumbering onto a removed index breaks the unique key
    for new_index, seat in enumerate(game.seats):
        seat.index = new_index
    game.version += 1
    db.session.flush()


# -- a seat's tokens and settings -----------------------------------------------------------


def rotate_token(game_id: str, bearer: str | None, index: int) -> dict[str, Any]:
    """Revoke a seat's tokens and issue new ones.

    The seat's own player gets a new player token. The host gets a new invite, never a
    player token: a claimed seat goes back to unclaimed, so whoever the host gives the invite
    to claims it, and its former player sees at once that their token stopped working. The
    host can take a seat back, but never act for a player behind their back.
    """
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        require_seat_or_host(viewer, index, "rotate its token")
        seat = seat_of(game, index)
        seat.token_version += 1
        notify.new_address(game, seat)  # a player by email gets the new reply address
        if viewer.seat == seat.index:
            return {"seat": seat.index, "player_token": seat_token("player", game, seat),
                    "invite": None}
        seat.claimed = False
        return {"seat": seat.index, "player_token": None,
                "invite": seat_token("invite", game, seat)}


def check_channels(email: str | None, webhook_url: str | None, fields: set[str]) -> None:
    """One InvalidInput naming each of the address and the webhook URL (those in ``fields``)
    that is not allowed."""
    problems = _FieldProblems()
    if "email" in fields:
        problems.checked(("email",), _seat_email, email)
    if "webhook_url" in fields:
        problems.checked(("webhook_url",), _check_webhook_url, webhook_url)
    problems.raise_any()


def set_notifications(game_id: str, bearer: str | None, index: int, email: str | None,
                      webhook_url: str | None, events: dict[str, list[str]] | None,
                      fields: set[str], digest: bool | None = None,
                      time_zone: str | None = None, language: str | None = None,
                      fill_only: bool = False,
                      reminders: list[str] | None = None,
                      nudges: bool | None = None) -> dict[str, Any]:
    """Change a seat's channels and the events each receives, its time zone and language
    (host or the seat itself; ``time_zone`` and ``language`` checked by the caller).
    ``fill_only``: the zone and language only where the seat has none (a browser's, the first
    time), decided under the lock so that one chosen meanwhile stays."""
    check_channels(email, webhook_url, fields)  # resolves the URL: before the lock
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        require_seat_or_host(viewer, index, "change its notifications")
        seat = seat_of(game, index)
        own_seat = viewer.seat == seat.index
        secret_shown = None
        confirming = False
        if "email" in fields:
            new_email = _seat_email(email)
            if not own_seat and seat.claimed and not seat.bot:
                # An address opens its seat by signing in; only the player moves it.
                raise NotYourSeat(_("once a seat is claimed only its player can change its "
                                    "address"))
            changed = (validation.email_key(new_email) if new_email else None) != (
                validation.email_key(seat.email) if seat.email else None)
            seat.email = new_email
            seat.email_unsubscribed = False
            if own_seat:
                confirming = account.ask_confirmation(game, seat)
            elif changed and new_email and seat.name and not seat.bot:
                _invite_by_email(game, seat)  # the host invites someone else to this seat
        if "webhook_url" in fields:
            seat.webhook_url = webhook_url
            seat.webhook_disabled = False
            seat.webhook_secret = None
            seat.webhook_secret = _webhook_secret_for(game, webhook_url)
            secret_shown = seat.webhook_secret
        if "events" in fields:
            seat.notify_events = events
        if digest is not None:
            seat.digest = digest
            seat.digest_chosen = True  # the identity's preference no longer applies here
        if "time_zone" in fields and not (fill_only and seat.time_zone):
            seat.time_zone = time_zone
        if "language" in fields and not (fill_only and seat.language):
            seat.language = language
        if "reminders" in fields:  # checked by the caller (attention.parse_reminders)
            seat.reminders = reminders
        if nudges is not None:
            seat.nudges_off = not nudges
        hidden = not own_seat and seat.claimed  # a seat's address is its player's business
        return {
            "seat": seat.index,
            "email": None if hidden else seat.email,
            "email_hidden": hidden and seat.email is not None,
            # Whether this address opens the seat by signing in; if not, a link
            # to confirm it was emailed to it (the old address opens the seat until then).
            "email_confirmed": None if hidden or not seat.email
            else validation.email_key(seat.email) == seat.owner_key,
            "confirmation_sent": confirming,
            "webhook_url": seat.webhook_url,
            "events": seat.notify_events or {c: list(notify.EVENTS) for c in notify.CHANNELS},
            "digest": seat.digest,
            "time_zone": seat.time_zone,  # None: UTC
            "language": seat.language,  # None: en
            "reminders": attention.reminders_of(seat),
            "nudges": not seat.nudges_off,
            "webhook_secret": secret_shown,  # shown once, when the URL is set
        }


def _invite_by_email(game: GameRow, seat: SeatRow) -> None:
    """Send the seat's invite to its (new) address; claiming with it owns the seat."""
    invite = seat_token("invite", game, seat)
    notify.enqueue(game, "invited", [seat], None,
                   {"invite": f"{game.id}:{invite}",
                    "join": f"dos-client join {game.id}:{invite}"},
                   key=f"invite-{seat.public_id}-{secrets.token_hex(4)}", channels=("email",))


_T = TypeVar("_T")


# netguard's refusals that are fixed sentences, read in the reader's language by
# _check_webhook_url (the others name the URL's host or the resolver's error, in English).
_NETGUARD = (
    N_("only http and https URLs can receive webhooks"),
    N_("the URL must not contain a user name or password; authenticate deliveries with the "
       "webhook signature instead"),
    N_("the URL has no host"),
)


def _check_webhook_url(url: str | None) -> None:
    """ValueError for a URL the worker may not call (private addresses, credentials; netguard)."""
    if not url:
        return
    try:
        netguard.check_webhook_url(url, bool(current_app.config["WEBHOOK_ALLOW_PRIVATE"]))
    except netguard.UnsafeUrl as error:
        raise ValueError(_(str(error))) from None  # its fixed sentences: _NETGUARD


class _FieldProblems:
    """Every field's problem in a request, to answer them all at once: one InvalidInput whose
    ``errors`` name each field by location as marshmallow does (``json`` → ``seats`` → ``0`` →
    ``name``)."""

    def __init__(self) -> None:
        self.tree: dict[str, Any] = {}
        self.lines: list[str] = []

    def add(self, where: tuple[str, ...], message: str) -> None:
        node = self.tree
        for key in where[:-1]:
            node = node.setdefault(key, {})
        node.setdefault(where[-1], []).append(message)
        self.lines.append(f"{'.'.join(where)}: {message}")

    def checked(self, where: tuple[str, ...], check: Callable[..., _T], *args: Any) -> _T | None:
        """``check(*args)``, or None with its ValueError noted against ``where``."""
        try:
            return check(*args)
        except ValueError as error:
            self.add(where, str(error))
            return None

    def raise_any(self) -> None:
        if self.lines:
            raise InvalidInput("; ".join(self.lines), errors={"json": self.tree})


def _webhook_secret_for(game: GameRow, url: str | None) -> str | None:
    """Seats of one game that share a webhook URL share its secret (one delivery per event)."""
    if not url:
        return None
    for seat in game.seats:
        if seat.webhook_url == url and seat.webhook_secret:
            return seat.webhook_secret
    return notify.new_webhook_secret()


def start_vacation(game_id: str, bearer: str | None, days: int) -> dict[str, Any]:
    """Pause the seat's clock for ``days`` days, out of the game's allowance per year."""
    with write_transaction():
        game, viewer = locked(game_id, bearer)
        index = require_player(viewer, "take a vacation")
        require_in_play(game)
        seat = seat_of(game, index)
        now = utcnow()
        if days == 0:
            return _end_vacation(game, seat, now)
        used = seat.vacation_used if seat.vacation_year == now.year else 0
        left = game.vacation_days - used
        if days > left:
            raise NoVacationLeft(_("you have %(left)s vacation day(s) left this year in this "
                                   "game (the game allows %(allowed)s)", left=left,
                                   allowed=game.vacation_days))
        seat.vacation_year = now.year
        seat.vacation_used = used + days
        pause = timedelta(days=days)
        base = now if seat.vacation_until is None else max(now, as_utc(seat.vacation_until))
        seat.vacation_until = base + pause
        state = Game.from_dict(game.state) if game.state is not None else None
        if (state is not None and not state.is_over and state.current == seat.index
                and game.turn_deadline is not None and game.turn_started_at is not None):
            game.turn_deadline = as_utc(game.turn_deadline) + pause
            game.turn_started_at = as_utc(game.turn_started_at) + pause
        # No new version: nobody's table or legal actions changed, so no pending move is stale.
        return {"seat": seat.index, "vacation_until": seat.vacation_until.isoformat(),
                "days_left": game.vacation_days - seat.vacation_used,
                "turn_deadline": game.turn_deadline.isoformat() if game.turn_deadline
                else None}


def _end_vacation(game: GameRow, seat: SeatRow, now: datetime) -> dict[str, Any]:
    """Back early: the clock runs again now; whole days not taken are given back."""
    until = as_utc(seat.vacation_until) if seat.vacation_until is not None else None
    if until is not None and until > now:
        unused = until - now
        if seat.vacation_year == now.year:
            seat.vacation_used = max(0, seat.vacation_used - unused.days)
        state = Game.from_dict(game.state) if game.state is not None else None
        if (state is not None and not state.is_over and state.current == seat.index
                and game.turn_deadline is not None and game.turn_started_at is not None):
            game.turn_deadline = max(now, as_utc(game.turn_deadline) - unused)
            game.turn_started_at = as_utc(game.turn_started_at) - unused
        seat.vacation_until = now
    used = seat.vacation_used if seat.vacation_year == now.year else 0
    return {"seat": seat.index, "vacation_until": None,
            "days_left": game.vacation_days - used,
            "turn_deadline": game.turn_deadline.isoformat() if game.turn_deadline else None}


def unsubscribe(token: str) -> dict[str, Any]:
    """The List-Unsubscribe link: stop this seat's emails for this game, no login needed."""
    claims = tokens.read("unsubscribe", token)
    with write_transaction():
        game = get_game(claims.game_id, for_update=True)
        seat = seat_named_by(game, claims)
        seat.email_unsubscribed = True
        return {"game_id": game.id, "seat": seat.index, "unsubscribed": True}


# -- helpers --------------------------------------------------------------------------------


def _new_id() -> str:
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(10))


def _seat_name(spec: SeatSpec, index: int) -> str | None:
    """The stored name: the given one (cleaned), a bot's by strategy and seat, or None (open);
    ValueError for a name that is not allowed."""
    if spec.name is not None:
        return validation.clean_name(spec.name)
    return f"{spec.bot}-bot-{index}" if spec.bot else None


def _seat_email(email: str | None) -> str | None:
    return None if email is None else validation.clean_email(email)


__all__ = [
    "BOTS",
    "BOT_STRATEGIES",
    "Created",
    "Invite",
    "Joined",
    "SeatRemoved",
    "SeatSpec",
    "cancel",
    "check_channels",
    "check_new_game",
    "create_game",
    "insert_game",
    "join_game",
    "remove_seat",
    "rotate_token",
    "set_notifications",
    "start_now",
    "start_vacation",
    "unsubscribe",
]
