"""Mail a player can rely on for months, with the real
mail-in listener (SMTP and LMTP on loopback), the real worker pass and an SMTP sink."""

from __future__ import annotations

import email
import email.policy
import email.utils
import smtplib
import socket
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

import pytest
import sqlalchemy as sa
from mailtest_helpers import (
    DOMAIN,
    INBOUND_SECRET,
    MailWorld,
    moves_of,
    reply_to,
    text_of,
    token_version,
    write_reply,
)

from dos_server.extensions import db
from dos_server.mailin import make_controller
from dos_server.models import GameRow, InboundMessageRow, NotificationRow, SeatRow, utcnow
from dos_server.services import inbound
from testkit import listen, start_by_host

ANN, BJORN = "ann@example.org", "bjorn@example.org"


def _game(world: MailWorld, seats: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    answer = world.client.post("/api/games", json={"seats": seats, "options": options})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    start_by_host(world.client, answer.get_json())
    world.run_worker()
    return dict(answer.get_json())


def _latest(world: MailWorld, address: str) -> EmailMessage:
    found = [m for m in world.sink.to(address) if m["Reply-To"]]
    assert found, address
    return found[-1]


def _rows(world: MailWorld) -> list[InboundMessageRow]:
    with world.app.app_context():
        found = list(db.session.execute(sa.select(InboundMessageRow)
                                        .order_by(InboundMessageRow.id)).scalars().all())
        db.session.expunge_all()
        db.session.remove()
    return found


def _outbox(world: MailWorld, event: str, target: str) -> list[NotificationRow]:
    with world.app.app_context():
        found = list(db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.event == event, NotificationRow.target == target)).scalars().all())
        db.session.expunge_all()
        db.session.remove()
    return found


def _human(address: str, to: str, body: str = "1") -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"Ann <{address}>"
    message["To"] = to
    message["Subject"] = "Re: your turn"
    message["Message-ID"] = email.utils.make_msgid(domain="client.example")
    message.set_content(body)
    return message


# -- 4. automatic mail: never answered, never caused --------------------------------------------

AUTOMATIC: dict[str, dict[str, str]] = {
    "auto-submitted": {"Auto-Submitted": "auto-replied"},
    "auto-generated-params": {"Auto-Submitted": "auto-generated; owner-email=x@example.org"},
    "x-autoreply": {"X-Autoreply": "yes"},
    "x-autorespond": {"X-Autorespond": "Away"},
    "precedence-auto-reply": {"Precedence": "auto_reply"},
    "precedence-bulk": {"Precedence": "bulk"},
    "precedence-junk": {"Precedence": "junk"},
    "precedence-list": {"Precedence": "list"},
    "exchange-rules-loop": {"X-MS-Exchange-Inbox-Rules-Loop": "ann@example.org"},
    "exchange-automatic-reply": {"Subject": "Automatic reply: your turn",
                                 "X-Auto-Response-Suppress": "All"},
    "postmaster": {"From": "postmaster@example.org"},
    "mailer-daemon": {"From": "MAILER-DAEMON@example.org"},
}


@pytest.mark.parametrize("shape", sorted(AUTOMATIC))
@pytest.mark.parametrize("way", ["smtp", "http"])
def test_automatic_mail_is_stored_and_never_answered(world: MailWorld, shape: str,
                                                     way: str) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    version = world.game(game["id"])[0]
    original = _latest(world, ANN)
    message = write_reply("gmail", original, "1", ANN)
    for name, value in AUTOMATIC[shape].items():
        if name in message:
            message.replace_header(name, value)
        else:
            message[name] = value
    if way == "smtp":
        world.send(message, ANN, reply_to(original))
    else:
        answer = world.client.post("/inbound/email", data=bytes(message),
                                   headers={"Authorization": f"Bearer {INBOUND_SECRET}"})
        assert answer.status_code == 200
    assert world.inbound() == [("ignored", "automatic")]
    assert world.replies() == 0
    assert world.game(game["id"])[0] == version


def _dsn(original: EmailMessage) -> bytes:
    """A delivery status notification (RFC 3464) as an MTA writes it."""
    return (
        "From: Mail Delivery System <bounces@mx.example.org>\r\n"
        f"To: {reply_to(original)}\r\n"
        "Subject: Undelivered Mail Returned to Sender\r\n"
        "Message-ID: <dsn-1@mx.example.org>\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: multipart/report; report-type=delivery-status; boundary=\"b1\"\r\n"
        "\r\n--b1\r\nContent-Type: text/plain\r\n\r\n1\r\nThis is the mail system.\r\n"
        "--b1\r\nContent-Type: message/delivery-status\r\n\r\n"
        "Reporting-MTA: dns; mx.example.org\r\n\r\nFinal-Recipient: rfc822; x@y\r\n"
        "Action: failed\r\nStatus: 5.1.1\r\n--b1--\r\n").encode()


@pytest.mark.parametrize("sender", ["<>", "bounces@mx.example.org"])
def test_a_delivery_report_is_never_answered(world: MailWorld, sender: str) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    original = _latest(world, ANN)
    raw = _dsn(original)
    assert b"multipart/report" in raw
    with smtplib.SMTP("127.0.0.1", world.listener.port) as smtp:
        smtp.sendmail("" if sender == "<>" else sender, [reply_to(original)], raw)
    assert world.inbound() == [("ignored", "automatic")]
    world.run_worker()
    assert world.replies() == 0
    assert world.game(game["id"])[1] == "active"


def test_outgoing_mail_says_it_is_automatic(world: MailWorld) -> None:
    _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    original = _latest(world, ANN)
    assert original["Auto-Submitted"] == "auto-generated"
    assert original["X-Auto-Response-Suppress"] == "All"
    assert original["Precedence"] is None
    world.send(write_reply("gmail", original, "show", ANN), ANN, reply_to(original))
    world.run_worker()
    answer = world.sink.to(ANN)[-1]
    assert answer["X-DOS-Event"] == "mail_reply"
    assert answer["Auto-Submitted"] == "auto-replied"
    assert answer["X-Auto-Response-Suppress"] == "All"


def test_rcpt_refuses_unknown_and_gone_addresses(world: MailWorld) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    original = _latest(world, ANN)
    good = reply_to(original)
    bad = [f"play+nothing.here.1.1.aaaa@{DOMAIN}", f"someone@{DOMAIN}",
           f"unsubscribe+forged.token@{DOMAIN}", "play+x@elsewhere.example"]
    with smtplib.SMTP("127.0.0.1", world.listener.port) as smtp:
        smtp.ehlo()
        smtp.mail(ANN)
        for address in bad:
            code, _ = smtp.rcpt(address)
            assert code == 550, address
        assert smtp.rcpt(good)[0] == 250
        smtp.rset()
    with world.app.app_context():  # the game is gone
        db.session.execute(sa.delete(GameRow).where(GameRow.id == game["id"]))
        db.session.commit()
        db.session.remove()
    with smtplib.SMTP("127.0.0.1", world.listener.port) as smtp:
        smtp.ehlo()
        smtp.mail(ANN)
        code, reply = smtp.rcpt(good)
        assert code == 550
        assert b"gone" in reply
    assert world.inbound() == []


# -- 7. LMTP: one answer per recipient ----------------------------------------------------------


def _lmtp(port: int, sender: str, recipients: list[str], raw: bytes) -> list[bytes]:
    """A raw LMTP conversation; returns the replies after the final dot, one per recipient."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        stream = sock.makefile("rb")

        def reply() -> bytes:
            while True:
                line = stream.readline()
                assert line, "connection closed"
                if line[3:4] != b"-":
                    return line

        def command(text: bytes) -> bytes:
            sock.sendall(text + b"\r\n")
            return reply()

        assert reply().startswith(b"220")
        assert command(b"LHLO client.example").startswith(b"250")
        assert command(b"MAIL FROM:<" + sender.encode() + b">").startswith(b"250")
        for recipient in recipients:
            assert command(b"RCPT TO:<" + recipient.encode() + b">").startswith(b"250")
        assert command(b"DATA").startswith(b"354")
        body = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n").replace(b"\r\n.", b"\r\n..")
        sock.sendall(body + (b"" if body.endswith(b"\r\n") else b"\r\n") + b".\r\n")
        answers = [reply() for _ in recipients]
        command(b"QUIT")
    return answers


def test_lmtp_answers_and_acts_per_recipient(world: MailWorld) -> None:
    first = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    second = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "random"}])
    versions = {g["id"]: world.game(g["id"])[0] for g in (first, second)}
    addresses = []
    for game_id in versions:
        mail = [m for m in world.sink.to(ANN) if m["X-DOS-Game"] == game_id and m["Reply-To"]]
        addresses.append(reply_to(mail[-1]))
    message = _human(ANN, ", ".join(addresses), "show")
    listener = listen(lambda port: make_controller(world.app, "127.0.0.1", port, lmtp=True))
    try:
        answers = _lmtp(listener.port, ANN, addresses, bytes(message))
        assert [a[:3] for a in answers] == [b"250", b"250"]
        again = _lmtp(listener.port, ANN, addresses, bytes(message))  # the MTA retries
        assert [a[:3] for a in again] == [b"250", b"250"]
    finally:
        listener.stop()
    rows = _rows(world)
    assert len(rows) == 2  # one per recipient; the retry is a duplicate of each
    assert {r.source for r in rows} == {"lmtp"}
    assert {r.game_id for r in rows} == set(versions)
    assert all(r.status == "processed" for r in rows)
    assert len(_outbox(world, "mail_reply", ANN)) == 2


# -- 5. replies that real people write ------------------------------------------------------------


def test_a_bottom_posted_reply_plays(world: MailWorld) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    version = world.game(game["id"])[0]
    original = _latest(world, ANN)
    quoted = "".join(f"> {line}\n" for line in text_of(original).splitlines())
    message = _human(ANN, reply_to(original),
                     f"Hi,\n\nOn Mon, 1 Jan 2029, DOS by mail wrote:\n{quoted}\n1\n\nAnn\n")
    world.send(message, ANN, reply_to(original))
    assert world.inbound() == [("processed", "applied")]
    assert world.game(game["id"])[0] > version


def test_one_message_per_moment_after_an_emailed_move(world: MailWorld) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    for _ in range(30):
        _, status, state = world.game(game["id"])
        assert status == "active"
        original = _latest(world, ANN)
        turns = len(_outbox(world, "your_turn", ANN))
        world.send(write_reply("gmail", original, "1", ANN), ANN, reply_to(original))
        assert world.inbound()[-1] == ("processed", "applied")
        world.run_worker()
        answer = world.sink.to(ANN)[-1]
        assert answer["X-DOS-Event"] == "mail_reply"
        moved, _, after = world.game(game["id"])
        if after.current == 0 and after.turn_no != state.turn_no:  # her turn again at once
            assert len(_outbox(world, "your_turn", ANN)) == turns  # no second email
            assert "It is your turn again" in text_of(answer)
            assert token_version(reply_to(answer)) == moved
            assert moves_of(answer) == [a.text() for a in after.legal_actions(0)][
                :len(moves_of(answer))]
            assert "Since your last turn:" in text_of(answer)
            return
    pytest.fail("Ann never got the turn back by one email")


def test_rotating_a_token_sends_the_new_address(world: MailWorld) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    old = _latest(world, ANN)
    answer = world.client.post(f"/api/games/{game['id']}/seats/0/token",
                               headers={"Authorization": f"Bearer {game['host_token']}"})
    assert answer.status_code == 200
    world.run_worker()
    fresh = world.sink.to(ANN)[-1]
    assert fresh["X-DOS-Event"] == "new_address"
    assert reply_to(fresh) != reply_to(old)
    assert moves_of(fresh)
    # the old address answered from her own address: the table again, with the new address
    world.send(write_reply("gmail", old, "1", ANN), ANN, reply_to(old))
    assert world.inbound()[-1] == ("rejected", "revoked-token")
    world.run_worker()
    told = world.sink.to(ANN)[-1]
    assert "replaced" in text_of(told)
    assert reply_to(told).split(".")[3] == "2"  # the seat's token_version now
    assert moves_of(told)
    # from another address: not answered at all
    world.send(write_reply("gmail", old, "1", BJORN), BJORN, reply_to(old))
    assert world.inbound()[-1] == ("ignored", "revoked-token")
    # the new address plays
    version = world.game(game["id"])[0]
    world.send(write_reply("gmail", told, "1", ANN), ANN, reply_to(told))
    assert world.inbound()[-1] == ("processed", "applied")
    assert world.game(game["id"])[0] > version


def test_the_mailto_unsubscribe_address_unsubscribes(world: MailWorld) -> None:
    _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    original = _latest(world, ANN)
    raw = original["List-Unsubscribe"]
    mailto = raw.split("<mailto:")[1].rstrip(">")
    assert mailto.startswith("unsubscribe+")
    world.send(_human(ANN, mailto, "unsubscribe"), ANN, mailto)
    assert world.inbound() == [("processed", "unsubscribed")]
    with world.app.app_context():
        seat = db.session.execute(sa.select(SeatRow).where(SeatRow.email == ANN)).scalar_one()
        assert seat.email_unsubscribed
        db.session.remove()
    assert world.replies() == 0


def test_a_failing_message_is_retried_then_apologised_for_and_replayed(
        world: MailWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}])
    version = world.game(game["id"])[0]
    original = _latest(world, ANN)
    real_apply = inbound._apply
    calls: list[int] = []

    def broken(incoming: inbound.Incoming) -> Any:
        calls.append(1)
        raise RuntimeError("a bug")

    monkeypatch.setattr(inbound, "_apply", broken)
    world.send(write_reply("gmail", original, "1", ANN), ANN, reply_to(original))
    [row] = _rows(world)
    assert (row.status, row.attempts) == ("received", 1)
    assert row.next_attempt_at is not None
    schedule = world.app.config["INBOUND_RETRY_SCHEDULE"]
    now = utcnow()
    with world.app.app_context():
        assert inbound.process_pending(now) == 0  # not due yet
        for delay in schedule:
            now += timedelta(seconds=float(delay) + 1)
            assert inbound.process_pending(now) == 1
        db.session.remove()
    [row] = _rows(world)
    assert (row.status, row.attempts) == ("failed", len(schedule) + 1)
    assert len(calls) == len(schedule) + 1
    world.run_worker()
    sorry = world.sink.to(ANN)[-1]
    assert sorry["X-DOS-Event"] == "mail_reply"
    assert "nothing was applied" in text_of(sorry)
    assert world.game(game["id"])[0] == version
    runner = world.app.test_cli_runner()
    listed = runner.invoke(args=["inbound", "failed"])
    assert listed.exit_code == 0
    assert listed.output.startswith(f"{row.id}\t")
    monkeypatch.setattr(inbound, "_apply", real_apply)
    replayed = runner.invoke(args=["inbound", "replay", str(row.id)])
    assert replayed.exit_code == 0, replayed.output
    assert "processed" in replayed.output
    assert world.game(game["id"])[0] > version
    assert runner.invoke(args=["inbound", "failed"]).output.strip() == \
        "no failed inbound messages"


def test_game_over_email_invites_no_move(world: MailWorld) -> None:
    game = _game(world, [{"name": "Ann", "email": ANN}, {"bot": "greedy"}], target_score=1)
    for _ in range(400):
        _, status, _ = world.game(game["id"])
        if status == "finished":
            break
        original = _latest(world, ANN)
        world.send(write_reply("gmail", original, "1", ANN), ANN, reply_to(original))
        world.run_worker()
    else:
        pytest.fail("the game did not finish")
    world.run_worker()
    [over] = [m for m in world.sink.to(ANN) if m["X-DOS-Event"] == "game_over"]
    text = text_of(over)
    assert "The game is over" in text
    assert "Final scores:" in text
    assert f"/games/{game['id']}/record" in text
    assert "/api/" not in text
    assert "Your moves" not in text
    assert "dos-client move " not in text
    assert "reply to this email with a move" not in text.lower()
    assert email.message_from_bytes(bytes(over), policy=email.policy.default)
