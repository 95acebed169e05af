"""Growth with a limit: each retention rule, run by the worker on a clock the test moves
forward, on SQLite and PostgreSQL. Games are played through the API, emails go through a real
SMTP sink, emailed moves come in as the mail-in listener stores them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from flask import Flask
from ops_helpers import Api, Clock, client_api, run_worker, sign_in

from dos_server.extensions import db
from dos_server.models import (
    AccountSessionRow,
    DeliveryAttemptRow,
    GameRow,
    InboundMessageRow,
    LoginCodeRow,
    NotificationRow,
    SeatRow,
)
from dos_server.services import inbound
from testkit import SmtpSink, write_reply

ANN = "ann@example.org"


def _count(app: Flask, model: Any, *where: Any) -> int:
    with app.app_context():
        found = db.session.execute(sa.select(sa.func.count()).select_from(model)
                                   .where(*where)).scalar_one()
        db.session.remove()
    return int(found)


def _started(api: Api, seats: list[dict[str, Any]], **options: Any) -> tuple[str, dict[int, str]]:
    game = api.create(seats, **options)
    tokens = api.join_all(game)  # the last claim starts the game
    return str(game["id"]), tokens


def _reply(app: Flask, smtp: SmtpSink, game_id: str, command: str = "1") -> int:
    """Ann answers the latest email of the game with ``command``; the stored message's id."""
    last = [m for m in smtp.to(ANN) if m["Reply-To"] and m["X-DOS-Game"] == game_id]
    assert last, [(m["X-DOS-Event"], m["X-DOS-Game"]) for m in smtp.to(ANN)]
    raw = write_reply("gmail", last[-1], command, ANN).as_bytes()
    with app.app_context():
        stored = inbound.store(raw, "smtp", ANN, [str(last[-1]["Reply-To"])])
        inbound.process(stored.id)
        db.session.remove()
    return stored.id


def test_unstarted_games_and_their_invites_go_after_the_period(
        make_app: Callable[..., Flask]) -> None:
    app = make_app()
    api = client_api(app)
    clock = Clock()
    waiting = [api.create([{"name": "ann", "email": ANN}, {"name": "bob"}]) for _ in range(2)]
    active, _ = _started(api, [{"name": "cat"}, {"bot": "random"}])
    assert _count(app, NotificationRow, NotificationRow.game_id == waiting[0]["id"]) == 1

    run_worker(app, clock.at_days(29))
    for game in waiting:
        assert api.get(f"/api/games/{game['id']}")["status"] == "waiting"

    run_worker(app, clock.at_days(31))
    for game in waiting:
        answer = app.test_client().get(f"/api/games/{game['id']}")
        assert answer.status_code == 404
        invite = game["invites"][1]["invite"]
        joined = app.test_client().post(f"/api/games/{game['id']}/join", json={"invite": invite})
        assert joined.status_code == 404
        assert _count(app, SeatRow, SeatRow.game_id == game["id"]) == 0
        assert _count(app, NotificationRow, NotificationRow.game_id == game["id"]) == 0
    assert api.get(f"/api/games/{active}")["status"] == "active"  # a started game stays

    # A period of 0 keeps them for ever.
    kept = api.create([{"name": "dan"}, {"name": "eve"}])
    run_worker(make_app(RETAIN_UNSTARTED_DAYS=0), clock.at_days(400))
    assert api.get(f"/api/games/{kept['id']}")["status"] == "waiting"


def test_sign_in_requests_and_expired_sessions_are_purged(
        make_app: Callable[..., Flask], smtp: SmtpSink) -> None:
    app = make_app()
    api = client_api(app)
    clock = Clock()
    account = sign_in(api, app, smtp, ANN, clock)
    api.post("/api/login", {"email": "bob@example.org"}, status=202)  # never used
    assert _count(app, LoginCodeRow) == 2

    run_worker(app, clock.at_days(0.5))
    assert _count(app, LoginCodeRow) == 2  # a day by default
    run_worker(app, clock.at_days(2))
    assert _count(app, LoginCodeRow) == 0
    assert api.get("/api/me", account)["email"] == ANN  # the session is not a code

    run_worker(app, clock.at_days(399))
    assert _count(app, AccountSessionRow) == 1
    run_worker(app, clock.at_days(401))  # its token has expired (TOKEN_MAX_AGE_DAYS): it goes
    assert _count(app, AccountSessionRow) == 0
    assert app.test_client().get("/api/me", headers={"Authorization": f"Bearer {account}"}
                                 ).status_code == 401


def test_mail_payloads_and_raw_mail_go_after_the_period_and_what_the_export_reads_stays(
        make_app: Callable[..., Flask], smtp: SmtpSink) -> None:
    app = make_app()
    api = client_api(app)
    clock = Clock()
    game_id, tokens = _started(api, [{"name": "ann", "email": ANN}, {"bot": "random"}])
    for _ in range(3):
        api.play_one(game_id, tokens)
    run_worker(app, clock)
    message = _reply(app, smtp, game_id)
    account = sign_in(api, app, smtp, ANN, clock)
    export = api.get("/api/me/export", account)
    assert export["emails"]
    assert export["emails_received"]
    settled = NotificationRow.status.in_(("sent", "dead", "dropped"))
    with app.app_context():
        size = db.session.get(InboundMessageRow, message).size  # type: ignore[union-attr]
        db.session.remove()

    run_worker(app, clock.at_days(29))
    with app.app_context():
        payloads = db.session.execute(sa.select(NotificationRow.payload).where(settled)
                                      ).scalars().all()
        assert payloads
        assert all(payloads)
        db.session.remove()

    run_worker(app, clock.at_days(31))
    with app.app_context():
        rows = db.session.execute(sa.select(NotificationRow).where(settled)).scalars().all()
        assert rows
        assert all(row.payload == {} for row in rows)
        assert all(row.message_id and row.dedupe_key for row in rows)  # what support quotes
        stored = db.session.get(InboundMessageRow, message)
        assert stored is not None
        assert (stored.raw, stored.size, stored.status) == (b"", size, stored.status)
        db.session.remove()
    # The export lists the same emails; a late duplicate of the emailed move is still known.
    assert api.get("/api/me/export", account)["emails"] == export["emails"]
    assert api.get("/api/me/export", account)["emails_received"] == export["emails_received"]
    with app.app_context():
        raw_again = db.session.get(InboundMessageRow, message)
        assert raw_again is not None
        key = raw_again.dedupe_key
        db.session.remove()
    assert _count(app, InboundMessageRow, InboundMessageRow.dedupe_key == key) == 1
    # The game goes on: its next emails go out whole (turns are played until one notifies
    # someone: a seat told of its turn is not told again until it looks).
    with app.app_context():
        last = db.session.execute(sa.select(sa.func.max(NotificationRow.id))).scalar_one()
        db.session.remove()
    newer = NotificationRow.id > last
    for _ in range(40):
        if _count(app, NotificationRow, newer):
            break
        assert api.play_one(game_id, tokens)
    run_worker(app, clock.at_days(31))
    with app.app_context():
        fresh = db.session.execute(sa.select(NotificationRow).where(newer)).scalars().all()
        assert fresh
        assert all(row.status == "sent" and row.payload for row in fresh)
        db.session.remove()


def test_a_closed_games_mail_log_goes_after_its_period(
        make_app: Callable[..., Flask], smtp: SmtpSink) -> None:
    app = make_app(ARCHIVE_AFTER_SECONDS=0)
    api = client_api(app)
    clock = Clock()
    done, tokens = _started(api, [{"name": "ann", "email": ANN}, {"bot": "random"}],
                            options={"target_score": 1})
    api.play_to_end(done, tokens)
    going, going_tokens = _started(api, [{"name": "ann", "email": ANN}, {"bot": "greedy"}])
    api.play_one(going, going_tokens)
    run_worker(app, clock)
    late = _reply(app, smtp, done)  # a reply to the finished game: answered, nothing changes
    run_worker(app, clock)
    with app.app_context():
        finished = db.session.get(GameRow, done)
        assert finished is not None
        assert finished.status == "finished"
        assert finished.archived_at is not None
        db.session.remove()
    mine = NotificationRow.game_id == done
    assert _count(app, NotificationRow, mine) > 1
    assert _count(app, InboundMessageRow, InboundMessageRow.id == late) == 1
    assert _count(app, DeliveryAttemptRow) > 0

    run_worker(app, clock.at_days(179))
    assert _count(app, NotificationRow, mine) > 1
    run_worker(app, clock.at_days(181))
    assert _count(app, NotificationRow, mine) == 0
    assert _count(app, InboundMessageRow, InboundMessageRow.id == late) == 0
    assert _count(app, DeliveryAttemptRow, DeliveryAttemptRow.notification_id.in_(
        sa.select(NotificationRow.id).where(mine))) == 0
    # The game itself stays, its record replays as before; the game still running keeps
    # its mail rows (their payloads emptied by the shorter period).
    assert api.get(f"/api/games/{done}/record")["actions"]
    assert _count(app, NotificationRow, NotificationRow.game_id == going) > 0
