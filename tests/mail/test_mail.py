"""Play by email: real SMTP in (the mail-in listener), real SMTP out (the worker
to a sink), replies in the forms real clients write, and hostile input."""

from __future__ import annotations

import random
import smtplib

import pytest
from mailtest_helpers import (
    ANN,
    BJORN,
    DOMAIN,
    INBOUND_SECRET,
    STYLES,
    MailWorld,
    latest,
    moves_of,
    new_game,
    reply_to,
    text_of,
    token_version,
    write_reply,
)

from dos_server import tokens
from dos_server.extensions import db
from dos_server.models import SeatRow
from dos_server.services.inbound import command_lines, html_to_text


def _new_game(world: MailWorld) -> str:
    return new_game(world, target_score=1)


def _current(world: MailWorld, game_id: str) -> tuple[int, str]:
    version, _, state = world.game(game_id)
    return version, [ANN, BJORN, ""][state.current]


def test_a_whole_game_by_email_replies_only(world: MailWorld) -> None:
    game_id = _new_game(world)
    rng = random.Random(6)
    for turn in range(2000):
        version, status, state = world.game(game_id)
        if status == "finished":
            break
        address = [ANN, BJORN][state.current]
        email_in = latest(world, address)
        assert token_version(reply_to(email_in)) == version  # every email shows the present
        listed = moves_of(email_in)
        assert listed, text_of(email_in)
        number = rng.randint(1, len(listed))
        command = str(number) if turn % 2 else state.legal_actions(state.current)[number - 1].text()
        style = STYLES[turn % len(STYLES)]
        world.send(write_reply(style, email_in, command, address), address, reply_to(email_in))
        assert world.inbound()[-1] == ("processed", "applied"), (style, command, world.inbound()[-1])
        world.run_worker()
        answer = world.sink.to(address)[-1]
        assert answer["X-DOS-Event"] == "mail_reply"
        assert answer["Subject"].startswith("Re: ")
        assert "Applied: " in text_of(answer)
    else:
        pytest.fail("the game did not finish")
    over = [m for m in world.sink.to(ANN) if m["X-DOS-Event"] == "game_over"]
    assert len(over) == 1
    assert all(status == "processed" for status, _ in world.inbound())


def test_reply_is_threaded_and_other_seats_are_notified(world: MailWorld) -> None:
    game_id = _new_game(world)
    _, address = _current(world, game_id)
    email_in = latest(world, address)
    other = BJORN if address == ANN else ANN
    before_other = len(world.sink.to(other))
    reply = write_reply("gmail", email_in, "draw", address)
    world.send(reply, address, reply_to(email_in))
    world.run_worker()
    answer = world.sink.to(address)[-1]
    assert answer["In-Reply-To"] == reply["Message-ID"]
    assert reply["Message-ID"] in answer["References"]
    assert answer["Subject"] == reply["Subject"]
    assert answer["Auto-Submitted"] == "auto-replied"
    assert "Applied: draw" in text_of(answer)
    version, now = _current(world, game_id)
    if now == other:  # the draw ended the turn (or the bot played after it)
        assert len(world.sink.to(other)) > before_other
        assert token_version(reply_to(world.sink.to(other)[-1])) == version


def test_commands_show_moves_history_help_change_nothing(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    events = world.event_count(game_id)
    for command, expected in (("show", "Center Row:"), ("Moves", "Your moves:"),
                              ("history", "events of game"), ("help", "How to play by email")):
        email_in = latest(world, address)
        world.send(write_reply("outlook", email_in, command, address), address,
                   reply_to(email_in))
        world.run_worker()
        answer = text_of(world.sink.to(address)[-1])
        assert expected in answer, command
        if command == "history":  # in words, as the table tells it, not raw event kinds
            assert "Round 1 began" in answer
            assert "turn_ended" not in answer
            assert "cr_flipped" not in answer
    assert world.game(game_id)[0] == version
    assert world.event_count(game_id) == events


def test_resign_by_email(world: MailWorld) -> None:
    game_id = _new_game(world)
    _, address = _current(world, game_id)
    email_in = latest(world, address)
    world.send(write_reply("base64", email_in, "resign", address), address, reply_to(email_in))
    world.run_worker()
    assert "You resigned" in text_of(world.sink.to(address)[-1])
    _, _, state = world.game(game_id)
    # over (the seat to move may then be the bot's), or a person other than the resigned one
    assert state.is_over or [ANN, BJORN][state.current] != address


def test_stale_list_and_reused_token(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    email_in = latest(world, address)
    world.send(write_reply("gmail", email_in, "1", address), address, reply_to(email_in))
    world.run_worker()
    after = world.game(game_id)[0]
    assert after == version + 1 or after > version
    events = world.event_count(game_id)
    # The same email answered again (a new message with the old token): nothing is applied.
    world.send(write_reply("gmail", email_in, "1", address), address, reply_to(email_in))
    world.run_worker()
    assert world.inbound()[-1] == ("rejected", "stale")
    answer = text_of(world.sink.to(address)[-1])
    assert "moved on" in answer
    assert "nothing was applied" in answer
    assert world.game(game_id)[0] == after
    assert world.event_count(game_id) == events
    # Once it is someone else's turn, the answer to a stale email says so, instead of asking
    # for a choice over an email that lists no moves.
    for _ in range(20):
        _, status, state = world.game(game_id)
        if status != "active" or [ANN, BJORN, ""][state.current] != address:
            break
        latest_in = latest(world, address)
        world.send(write_reply("gmail", latest_in, "1", address), address, reply_to(latest_in))
        world.run_worker()
    if status == "active":
        world.send(write_reply("gmail", email_in, "1", address), address, reply_to(email_in))
        world.run_worker()
        answer = text_of(world.sink.to(address)[-1])
        assert "turn now: you will get an email when it is yours" in answer
        assert "reply to THIS email with your choice" not in answer


def test_forged_token_and_another_seats_token(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    other = BJORN if address == ANN else ANN
    email_in = latest(world, address)
    good = reply_to(email_in)
    local, _, host = good.partition("@")
    forged = local[:-3] + ("aaa" if not local.endswith("aaa") else "bbb") + "@" + host
    message = write_reply("gmail", email_in, "1", address)
    message.replace_header("To", forged)
    # SMTP: refused at RCPT (no backscatter to a possibly forged sender), nothing stored
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        world.send(message, address, forged)
    assert refused.value.recipients[forged][0] == 550
    assert world.inbound() == []
    # over HTTP (a provider's hook that already accepted it): stored, answered, not applied
    answer = world.client.post("/inbound/email", data=bytes(message),
                               headers={"Authorization": f"Bearer {INBOUND_SECRET}"})
    assert answer.status_code == 200
    world.run_worker()
    assert world.inbound()[-1] == ("rejected", "bad-token")
    assert "not a valid reply address" in text_of(world.sink.to(address)[-1])
    # A token naming another seat: version and game forged -> the signature fails too.
    tampered = good.replace(f"{game_id}.", f"{game_id}.", 1).replace(".0.", ".1.", 1)
    if tampered != good:
        message = write_reply("gmail", email_in, "1", address)
        message.replace_header("To", tampered)
        with pytest.raises(smtplib.SMTPRecipientsRefused):
            world.send(message, address, tampered)
    # The other seat's email, answered from this seat's address: From mismatch.
    other_email = latest(world, address)
    with world.app.app_context():
        other_seat = db.session.execute(db.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.index == [ANN, BJORN].index(other))).scalar_one()
        other_email.replace_header("Reply-To", tokens.reply_address(
            game_id, other_seat.public_id, version, 1))
        db.session.remove()
    answers = len(world.sink.to(address))
    world.send(write_reply("gmail", other_email, "1", address), address, reply_to(other_email))
    world.run_worker()
    assert world.inbound()[-1] == ("ignored", "from-mismatch")  # stored, not answered
    assert len(world.sink.to(address)) == answers  # a sender that is not the seat's: no answer
    # The other seat answering its own (older) email while it is not its turn.
    world.send(write_reply("qp", other_email, "draw", other), other, reply_to(other_email))
    world.run_worker()
    assert world.inbound()[-1][0] == "rejected"
    assert "Nothing was changed" in text_of(world.sink.to(other)[-1]) or \
        "moved on" in text_of(world.sink.to(other)[-1])
    assert world.game(game_id)[0] == version


def test_illegal_move_names_the_rule(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    _, _, state = world.game(game_id)
    hand = {c.code for c in state.hands[state.current]}
    missing = next(c for c in ("R5", "G7", "B9", "Y3", "R10", "G4") if c not in hand)
    email_in = latest(world, address)
    world.send(write_reply("html", email_in, f"m1 {missing}", address), address,
               reply_to(email_in))
    world.run_worker()
    status, outcome = world.inbound()[-1]
    assert (status, outcome) == ("rejected", "illegal-action")
    answer = text_of(world.sink.to(address)[-1])
    assert "RULES.md section" in answer
    assert "Your moves:" in answer
    assert world.game(game_id)[0] == version


def test_same_message_twice_is_handled_once(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    email_in = latest(world, address)
    message = write_reply("gmail", email_in, "1", address)
    world.send(message, address, reply_to(email_in))
    world.send(message, address, reply_to(email_in))
    response = world.client.post("/inbound/email", data=bytes(message),
                                 headers={"Authorization": f"Bearer {INBOUND_SECRET}"})
    assert response.status_code == 200
    assert response.get_json()["duplicate"] is True
    assert len(world.inbound()) == 1
    assert world.replies() == 1
    assert world.game(game_id)[0] > version


def test_big_message_and_foreign_recipients_are_refused(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    email_in = latest(world, address)
    big = write_reply("gmail", email_in, "1", address)
    big.add_attachment(b"x" * (10 * 1024 * 1024), maintype="application", subtype="octet-stream")
    with pytest.raises(smtplib.SMTPSenderRefused) as refused:  # refused at MAIL FROM SIZE=
        world.send(big, address, reply_to(email_in))
    assert refused.value.smtp_code == 552
    with smtplib.SMTP("127.0.0.1", world.listener.port) as smtp:  # no SIZE: refused after DATA
        smtp.ehlo()
        smtp.mail(address)
        smtp.rcpt(reply_to(email_in))
        code, _ = smtp.data(b"Subject: big\r\n\r\n" + (b"y" * 998 + b"\r\n") * 10_500)
        assert code == 552
        smtp.rset()
        smtp.mail(address)
        assert smtp.rcpt("someone@elsewhere.example")[0] == 550
        assert smtp.rcpt(f"dos@{DOMAIN}")[0] == 550
    assert world.inbound() == []
    assert world.game(game_id)[0] == version


def test_malformed_mime_and_garbage_change_nothing(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    target = reply_to(latest(world, address))
    broken = (f"From: {address}\r\nTo: {target}\r\nSubject: Re: x\r\nMessage-ID: <b1@x>\r\n"
              "MIME-Version: 1.0\r\nContent-Type: multipart/alternative\r\n\r\n"
              "--nothing\r\nContent-Type: text/plain; charset=klingon\r\n"
              "Content-Transfer-Encoding: base64\r\n\r\n!!!not base64!!!\r\n").encode()
    world.send(broken, address, target)
    garbage = b"\x00\xff\xfe not an email at all \r\n\r\n\x00" * 50
    world.send(garbage, address, target)
    world.run_worker()
    statuses = world.inbound()
    assert len(statuses) == 2
    assert all(status in ("rejected", "ignored") for status, _ in statuses), statuses
    assert world.game(game_id)[0] == version


def test_post_hook(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    email_in = latest(world, address)
    raw = bytes(write_reply("qp", email_in, "1", address))
    assert world.client.post("/inbound/email", data=raw).status_code == 401
    assert world.client.post("/inbound/email", data=raw,
                             headers={"Authorization": "Bearer nope"}).status_code == 401
    big = world.client.post("/inbound/email", data=b"x" * (2 * 1024 * 1024),
                            headers={"Authorization": f"Bearer {INBOUND_SECRET}"})
    assert big.status_code == 413
    ok = world.client.post("/inbound/email", data=raw,
                           headers={"Authorization": f"Bearer {INBOUND_SECRET}"})
    assert ok.status_code == 200, ok.get_data(as_text=True)
    assert ok.get_json()["status"] == "processed"
    assert world.game(game_id)[0] > version
    world.app.config["INBOUND_SECRET"] = None
    off = world.client.post("/inbound/email", data=raw)
    assert off.status_code == 404
    assert "DOS_INBOUND_SECRET" in off.get_json()["detail"]


def test_automatic_mail_is_never_answered(world: MailWorld) -> None:
    game_id = _new_game(world)
    version, address = _current(world, game_id)
    email_in = latest(world, address)
    away = write_reply("gmail", email_in, "I am on holiday until Monday.", address)
    away["Auto-Submitted"] = "auto-replied"
    world.send(away, address, reply_to(email_in))
    world.run_worker()
    assert world.inbound() == [("ignored", "automatic")]
    assert world.replies() == 0
    assert world.game(game_id)[0] == version


@pytest.mark.parametrize(("text", "expected"), [
    ("3\n\nOn Tue, 2 Jan 2029, DOS <dos@x> wrote:\n> 1. m1 R5", ["3"]),
    ("m1 R5\nend\n-- \nAnn", ["m1 R5", "end"]),
    ("draw\r\n\r\nFrom: DOS <dos@x>\r\nSent: Monday\r\nTo: a\r\n\r\n 2. end", ["draw"]),
    ("show\nSent from my iPhone\n", ["show"]),
    ("m2 Y4\n-----Original Message-----\n1. draw", ["m2 Y4"]),
    ("help\nOn Mon, 1 Jan 2029 at 10:00, Someone <s@x>\nwrote:\n> x", ["help"]),
])
def test_command_lines(text: str, expected: list[str]) -> None:
    assert command_lines(text) == expected


def test_html_to_text_drops_quotes_and_styles() -> None:
    text = html_to_text("<style>p{}</style><div>m1&nbsp;R5</div><blockquote>1. draw</blockquote>")
    assert command_lines(text) == ["m1\xa0R5"]
