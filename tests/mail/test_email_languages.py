"""Every email in its reader's language and time zone.

- each email kind rendered in English and Lao and in two zones (a deadline on another date in
  Vientiane than in UTC): the subject in the language, the text and HTML parts telling the
  same facts (the times, the moves, the links), Lao day and month names, Lao fonts named in
  the HTML part;
- a game of one Lao and one English player over the real SMTP intake and sink: each seat's
  emails in its own language and zone whatever the Accept-Language of the request that caused
  them; a reply from a Lao-language mail client (UTF-8, a Lao "Re:" subject in RFC 2047, Lao
  text quoted below, base64 or quoted-printable) plays its move and is answered in Lao;
- the unsubscribe page of the Lao seat in Lao, for an English browser too.
"""

from __future__ import annotations

import base64
import copy
import quopri
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from email.header import Header
from email.message import EmailMessage
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from mailtest_helpers import (
    DOMAIN,
    INBOUND_SECRET,
    MailWorld,
    reply_to,
    text_of,
    token_version,
)

from dos_server import create_app, i18n, mailtext, timefmt
from dos_server.delivery.mail import builders, dispatch
from dos_server.extensions import db
from dos_server.models import IdentityRow, NotificationRow

LAO = re.compile(r"[\u0e80-\u0eff]")
# English words of our templates that must not be left in a Lao email (names, links, move
# notation and the commands a player types stay as they are).
ENGLISH = ("Hello", "Your turn", "your turn", "Stop these emails", "Center Row", "Opponents",
           "Scores", "Your moves", "All your games", "Open your table", "Round ", "invited",
           "waiting on you", "sign in", "Sign in", " vs ", "game over", "Confirm")
# 18:30 UTC on 1 January 2029 is 01:30 on 2 January in Vientiane.
DEADLINE = "2029-01-01T18:30:00+00:00"
ZONES = {None: ("01 January", "18:30 (UTC)"), "Asia/Vientiane": ("02 January",
                                                                 "01:30 (Asia/Vientiane, UTC+7)")}
LAO_DAYS = {None: "ວັນຈັນ 1 ມັງກອນ 2029", "Asia/Vientiane": "ວັນອັງຄານ 2 ມັງກອນ 2029"}
ENGLISH_DAYS = {None: "Monday 1 January 2029", "Asia/Vientiane": "Tuesday 2 January 2029"}

UNSUBSCRIBE = {"unsubscribe": "https://dos.example.org/api/unsubscribe/t",
               "unsubscribe_page": "https://dos.example.org/unsubscribe/t",
               "unsubscribe_mailto": "unsubscribe+g1.s.t@play.test"}
GAME: dict[str, Any] = {
    "game_id": "g1", "game_title": None, "seat": 0, "name": "Ann", "names": ["Ann", "Bob", "Cat"],
    "version": 3, "deadline": DEADLINE, "data": {},
    "reply_to": "play+g1.s.3.1.t@play.test", "table": "https://dos.example.org/games/g1?token=t",
    "signin": None, "links": {}, "since": ["Bob drew 1 card"],
    "record": "https://dos.example.org/games/g1/record",
    "view": {"round": 1, "current": 0, "scores": [0, 0, 0], "hand": ["R5", "W2"],
             "center_row": [{"position": 1, "card": "R3"}], "hand_sizes": [2, 7, 1],
             "phase": "start", "options": {"target_score": 100}},
    "moves": [{"number": 1, "action": "m1 R5", "description": "match"},
              {"number": 2, "action": "draw", "description": "draw"}],
    **UNSUBSCRIBE,
}
DATA = {"timed_out": {"policy": "random"}, "caught": {"seat": 0},
        "invited": {"join": "dos-client join i"},
        "round_over": {"round": 1, "winner": 1, "scored": 5, "scores": [0, 5, 0],
                       "points": [5, 0, 2]},
        "game_over": {"winner": 1, "scores": [20, 200, 7],
                      "ratings": [{"seat": 0, "before": 0.0, "after": -1.2, "change": -1.2},
                                  {"seat": 1, "before": 3.4, "after": 6.0, "change": 2.6}]},
        "mail_reply": {"lines": ["ok"]},
        "undeliverable": {"channel": "webhook", "target": "https://h.example.org/",
                          "error": "HTTP 500"}}
OTHERS: dict[str, dict[str, Any]] = {
    "digest": {"thread": "ann", "games": [{
        "id": "g1", "game_title": None, "seat": 0, "name": "Ann", "deadline": DEADLINE,
        "opponents": ["Bob", "Cat"], "line": "dos-client move g1 N --at 3",
        "table": "https://dos.example.org/games/g1?token=t", **UNSUBSCRIBE}], **UNSUBSCRIBE},
    "login_code": {"login_id": "l1", "minutes": 15, "address": "ann@example.org"},
    "confirm_email": {"game_id": "g1", "seat": 1, "name": "Ann", "address": "ann@example.org",
                      "link": "https://dos.example.org/confirm-email/t"},
}
KINDS = sorted(builders.KINDS)


def payload(kind: str, language: str, zone: str | None) -> dict[str, Any]:
    if kind in OTHERS:
        made = {"event": kind, **copy.deepcopy(OTHERS[kind])}
        for game in made.get("games", []):
            game["time_zone"] = zone
    else:
        made = {**copy.deepcopy(GAME), "event": kind, "data": DATA.get(kind, {}),
                "time_zone": zone}
        if kind == "game_over":
            made["view"] = {**made["view"], "phase": "over"}
            made["moves"] = []
        if kind == "mail_reply":  # its lines and subject are written with the row (inbound.py)
            lao = language == "lo"
            made.update(subject="Re: DOS g1: " + ("ຕາຂອງທ່ານ" if lao else "your turn"),
                        in_reply_to="<r@client.example>", references=None,
                        data={"lines": ["ຫຼິ້ນແລ້ວ: m1 R5" if lao else "Applied: m1 R5"]})
    made["language"] = language
    return made


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Flask]:
    made = create_app({"TESTING": True, "SECRET_KEY": "languages",
                       "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'empty.db'}",
                       "PUBLIC_URL": "https://dos.example.org", "MAIL_DOMAIN": "play.test",
                       "INSTANCE_PATH": str(tmp_path / "instance")})
    monkeypatch.setitem(dispatch.READERS, "login_code",
                        lambda _: builders.Facts(login_nonce="nonce"))
    with made.app_context():
        yield made
        db.session.remove()
        db.engine.dispose()


def parts(message: EmailMessage) -> tuple[str, str, str]:
    text = message.get_body(preferencelist=("plain",))
    markup = message.get_body(preferencelist=("html",))
    assert text is not None
    assert markup is not None
    return str(message["Subject"]), str(text.get_content()), str(markup.get_content())


def visible(markup: str) -> str:
    """The HTML part's words as a reader sees them (tags gone, entities read)."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", markup)))


def links(text: str) -> set[str]:
    return {unescape(link).rstrip(".,)") for link in re.findall(r"https?://[^\s\"<>]+", text)}


@pytest.mark.parametrize("zone", list(ZONES))
@pytest.mark.parametrize("language", ["en", "lo"])
@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_in_each_language_and_zone(app: Flask, kind: str, language: str,
                                             zone: str | None) -> None:
    subject, text, markup = parts(dispatch.build(payload(kind, language, zone), "msg_t"))
    shown = visible(markup)
    # The text and HTML parts tell the same facts: the links, the moves, the times.
    assert links(text) <= links(markup) | links(shown), kind
    moves = {"m1 R5", "draw"} if kind not in ("game_over", "digest", "login_code",
                                              "confirm_email", "invited") else set()
    for move in moves:
        assert move in text, (kind, move)
        assert f'data-move="{move}"' in markup, (kind, move)
    if kind in ("your_turn", "reminder", "digest"):
        day = (LAO_DAYS if language == "lo" else ENGLISH_DAYS)[zone]
        clock = ZONES[zone][1]
        assert f"{day}, " in text, text
        assert clock in text
        when = re.search(re.escape(day) + r"[^\n]*?" + re.escape(clock) + r", [^\n.)]+", text)
        assert when is not None, text
        assert when.group(0) in shown, (when.group(0), shown)  # the same words in both parts
    if language == "lo":
        assert LAO.search(subject), subject
        assert LAO.search(text)
        assert '<html lang="lo">' in markup
        for word in ENGLISH:
            assert word not in subject, (kind, word, subject)
            assert word not in text.replace("DOS by mail", ""), (kind, word)
        if kind in ("your_turn", "reminder"):
            assert "ໃນອີກ" in text  # "in N days", Babel's relative words in Lao
    else:
        assert not LAO.search(subject + text + markup)
        assert '<html lang="en">' in markup
    assert "Noto Sans Lao" in markup
    assert "Phetsarath OT" in markup
    before = markup[:markup.index("Noto Sans Lao")]
    assert "Arial" in before or "Menlo" in before  # ...after the Latin ones


def test_lao_subjects_and_lists_read_in_lao(app: Flask) -> None:
    subject, text, _ = parts(dispatch.build(payload("your_turn", "lo", None), "msg_t"))
    assert subject == "DOS g1: ຕາຂອງທ່ານ (ຫຼິ້ນກັບ Bob ແລະ Cat)"  # Babel's Lao list
    assert text.startswith("ສະບາຍດີ Ann,\n")
    assert "ແຖວກາງ: 1:[R3]" in text
    assert "ບັດໃນມືຂອງທ່ານ:" in text
    english, _, _ = parts(dispatch.build(payload("your_turn", "en", None), "msg_t"))
    assert english == "DOS g1: your turn (vs Bob and Cat)"
    digest, _, _ = parts(dispatch.build(payload("digest", "lo", None), "msg_t"))
    assert digest == "DOS: 1 ເກມກຳລັງລໍຖ້າທ່ານ"


def test_times_through_babel_in_the_readers_language(app: Flask) -> None:
    when = datetime(2026, 12, 2, 18, 53, tzinfo=UTC)
    now = datetime(2026, 12, 1, 19, 53, tzinfo=UTC)
    with i18n.in_language("lo"):
        assert timefmt.local_time(when, "Asia/Vientiane", now) == (
            "ວັນພະຫັດ 3 ທັນວາ, ເວລາ 01:53 (Asia/Vientiane, UTC+7)")
        assert timefmt.local_time(when, None, now) == "ວັນພຸດ 2 ທັນວາ, ເວລາ 18:53 (UTC)"
        assert timefmt.relative(when, now) == "ໃນອີກ 23 ຊົ່ວໂມງ"
        assert timefmt.when(when, None, now) == (
            "ວັນພຸດ 2 ທັນວາ, ເວລາ 18:53 (UTC), ໃນອີກ 23 ຊົ່ວໂມງ")
    with i18n.in_language("en"):
        assert timefmt.local_time(when, None, now) == "Wednesday 2 December, 18:53 (UTC)"
    assert timefmt.relative(when, now, locale="lo") == "ໃນອີກ 23 ຊົ່ວໂມງ"
    assert timefmt.relative(now, when, locale="lo") == "23 ຊົ່ວໂມງກ່ອນ"
    assert timefmt.relative(when, now, locale="en") == "in 23 hours"


# -- one Lao and one English player, over the real SMTP intake ------------------------------

ANN, BJORN = "ann@example.org", "bjorn@example.org"


def lao_reply(original: EmailMessage, command: str, encoding: str) -> bytes:
    """A reply the way a Lao-language mail client writes it: a Lao greeting, the command, a
    Lao attribution line and the email quoted below, a phone's Lao footer; UTF-8 in base64 or
    quoted-printable, the Lao "Re:" subject RFC 2047-encoded."""
    quoted = "".join(f"> {line}\n" for line in text_of(original).splitlines())
    body = (f"ສະບາຍດີ\n{command}\n\nສົ່ງຈາກ iPhone ຂອງຂ້ອຍ\n\n"
            f"ເມື່ອ ວັນຈັນ 1 ມັງກອນ 2029, DOS by mail <dos@{DOMAIN}> ຂຽນວ່າ:\n{quoted}")
    data = body.encode("utf-8")
    payload_bytes = base64.encodebytes(data) if encoding == "base64" else quopri.encodestring(data)
    subject = Header("Re: " + str(original["Subject"]), "utf-8").encode()
    assert subject.startswith("=?utf-8?")  # RFC 2047 on the wire
    head = (f"From: =?utf-8?b?{base64.b64encode('ບີຢອນ'.encode()).decode()}?= <{BJORN}>\r\n"
            f"To: {reply_to(original)}\r\n"
            f"Subject: {subject}\r\n"
            f"Message-ID: <{secrets.token_hex(8)}@client.example>\r\n"
            f"In-Reply-To: {original['Message-ID']}\r\n"
            f"References: {original['Message-ID']}\r\n"
            "MIME-Version: 1.0\r\n"
            "Content-Type: text/plain; charset=UTF-8\r\n"
            f"Content-Transfer-Encoding: {encoding}\r\n\r\n")
    return head.encode("ascii") + payload_bytes.replace(b"\n", b"\r\n")


def _game(world: MailWorld) -> tuple[str, dict[int, str]]:
    """Ann (English, UTC) and Bjørn (Lao, Vientiane): each joins in the *other* language's
    browser; the last join (an English browser's) starts the game."""
    client = world.client
    created = client.post("/api/games", json={"seats": [{"name": "Ann", "email": ANN},
                                                        {"name": "Bjørn", "email": BJORN}],
                                              "turn_time_limit": 86400})
    assert created.status_code == 201, created.get_data(as_text=True)
    game = created.get_json()
    chosen = {0: ("en", None, "lo"), 1: ("lo", "Asia/Vientiane", "en")}
    tokens = {}
    for invite in game["invites"]:
        language, zone, browser = chosen[invite["seat"]]
        joined = client.post(f"/api/games/{game['id']}/join",
                             json={"invite": invite["invite"], "language": language,
                                   "time_zone": zone},
                             headers={"Accept-Language": browser})
        assert joined.status_code == 200, joined.get_data(as_text=True)
        tokens[invite["seat"]] = joined.get_json()["player_token"]
    assert world.game(game["id"])[1] == "active"
    world.run_worker()
    return str(game["id"]), tokens


def _play(world: MailWorld, game_id: str, tokens: dict[int, str], seat: int) -> None:
    """``seat`` plays its first listed move over the API, from a browser of the other
    language."""
    headers = {"Authorization": f"Bearer {tokens[seat]}",
               "Accept-Language": "lo" if seat == 0 else "en"}
    listing = world.client.get(f"/api/games/{game_id}/actions", headers=headers).get_json()
    answer = world.client.post(f"/api/games/{game_id}/actions", headers=headers,
                               json={"version": listing["version"], "number": 1})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    world.run_worker()


def _check_languages(world: MailWorld) -> None:
    for message in world.sink.to(BJORN):
        if message["X-DOS-Event"] in ("your_turn", "mail_reply"):
            subject, text, markup = parts(message)
            assert LAO.search(subject), subject
            assert LAO.search(text), text
            assert "Your turn" not in text
            assert "Hello" not in text
            assert '<html lang="lo">' in markup
    for message in world.sink.to(ANN):
        if message["X-DOS-Event"] in ("your_turn", "mail_reply"):
            subject, text, markup = parts(message)
            assert not LAO.search(subject + text.replace("Bjørn", "")), subject
            assert '<html lang="en">' in markup


@pytest.mark.parametrize("encoding", ["base64", "quoted-printable"])
def test_a_lao_and_an_english_player_each_read_their_own(world: MailWorld,
                                                         encoding: str) -> None:
    game_id, tokens = _game(world)
    for _ in range(300):
        version, status, state = world.game(game_id)
        assert status == "active"
        turns = [m for m in world.sink.to(BJORN) if m["X-DOS-Event"] == "your_turn"]
        if (state.current == 1 and turns
                and token_version(reply_to(turns[-1])) == version
                and any(m["X-DOS-Event"] == "your_turn" for m in world.sink.to(ANN))):
            break
        _play(world, game_id, tokens, state.current)
    else:
        pytest.fail("Bjørn's turn by email never came")
    _check_languages(world)
    mine = turns[-1]
    subject, text, _ = parts(mine)
    assert subject.startswith(f"DOS {game_id}: ຕາຂອງທ່ານ (ຫຼິ້ນກັບ Ann)")
    assert "(Asia/Vientiane, UTC+7)" in text  # his times in his zone
    assert "ທ່າຫຼິ້ນຂອງທ່ານ:" in text
    # The moves' descriptions and the lines since his turn are the engine's, in his language.
    for english in ("Center Row", " card", " drew "):
        assert english not in text, text
    assert "ແຖວກາງ" in text
    before = world.event_count(game_id)
    # "໑" is 1 in Lao digits: a Lao keyboard types it.
    world.send(lao_reply(mine, "໑", encoding), BJORN, reply_to(mine))
    assert world.inbound()[-1] == ("processed", "applied")
    assert world.event_count(game_id) > before
    world.run_worker()
    answer = world.sink.to(BJORN)[-1]
    assert answer["X-DOS-Event"] == "mail_reply"
    subject, text, _markup = parts(answer)
    assert subject == "Re: " + str(mine["Subject"])  # his Lao subject, decoded and answered
    assert "ຫຼິ້ນແລ້ວ: " in text  # "Applied: ..." in Lao
    assert "ຂ້າມໄປ" not in text  # nothing of the quote or the footer was taken for a move
    _check_languages(world)


def test_the_unsubscribe_page_is_in_the_seats_language(world: MailWorld) -> None:
    _game_id, _ = _game(world)
    for address, language, title in ((BJORN, "lo", "ຢຸດຮັບອີເມວບໍ?"),
                                     (ANN, "en", "Stop emails?")):
        message = world.sink.to(address)[-1]
        _, text, _ = parts(message)
        stop = [link for link in links(text) if "/unsubscribe/" in link]
        assert stop, text
        parts_of = urlsplit(stop[0])
        browser = world.app.test_client()
        other = "en" if language == "lo" else "lo"
        page = browser.get(parts_of.path, headers={"Accept-Language": other})
        html = page.get_data(as_text=True)
        assert page.status_code == 200
        assert f'<html lang="{language}">' in html
        assert title in html
        csrf = re.search(r'name="csrf" value="([^"]+)"', html)
        assert csrf is not None
        done = browser.post(parts_of.path, data={"csrf": csrf.group(1)},
                            headers={"Accept-Language": other})
        assert done.status_code == 200
        confirmed = done.get_data(as_text=True)
        assert ("ຍົກເລີກການຮັບອີເມວແລ້ວ" if language == "lo" else "Unsubscribed") in confirmed
        assert f'<html lang="{language}">' in confirmed


def test_sign_in_emails_are_in_the_identitys_language(world: MailWorld) -> None:
    with world.app.app_context():
        db.session.add(IdentityRow(email_key=BJORN, address=BJORN, language="lo",
                                   time_zone="Asia/Vientiane"))
        db.session.commit()
        assert dispatch.language_of({"event": "login_code", "address": BJORN}) == "lo"
        assert dispatch.language_of({"event": "login_code", "address": ANN}) is None
        db.session.remove()
    asked = world.client.post("/api/login", json={"email": BJORN},
                              headers={"Accept-Language": "en"})
    assert asked.status_code == 202, asked.get_data(as_text=True)
    world.run_worker()
    message = world.sink.to(BJORN)[-1]
    assert message["X-DOS-Event"] == "login_code"
    subject, text, _ = parts(message)
    assert subject == "ລະຫັດເຂົ້າສູ່ລະບົບ DOS ຂອງທ່ານ"
    assert "ລະຫັດຂອງທ່ານ: " in text


def test_before_the_seat_is_known_the_answer_is_in_the_senders_language(
        world: MailWorld) -> None:
    with world.app.app_context():
        db.session.add(IdentityRow(email_key=BJORN, address=BJORN, language="lo"))
        db.session.commit()
        db.session.remove()
    message = EmailMessage()
    message["From"] = f"Bjørn <{BJORN}>"
    message["To"] = f"play+not-a-token@{DOMAIN}"
    message["Subject"] = "ສະບາຍດີ"
    message["Message-ID"] = f"<{secrets.token_hex(8)}@client.example>"
    message.set_content("໑\n")
    # A provider's hook (the SMTP intake refuses a bad address at RCPT), from an English
    # request: the answer is in the sender identity's Lao all the same.
    posted = world.client.post("/inbound/email", data=bytes(message), headers={
        "Authorization": f"Bearer {INBOUND_SECRET}", "Accept-Language": "en"})
    assert posted.status_code == 200, posted.get_data(as_text=True)
    assert world.inbound()[-1] == ("rejected", "bad-token")
    world.run_worker()
    answer = world.sink.to(BJORN)[-1]
    subject, text, markup = parts(answer)
    assert subject == "Re: ສະບາຍດີ"
    assert "ທີ່ຢູ່ທີ່ທ່ານສົ່ງຫາບໍ່ແມ່ນທີ່ຢູ່ຕອບກັບທີ່ຖືກຕ້ອງ" in text
    assert "nothing was changed" not in text
    assert '<html lang="lo">' in markup


def test_a_lao_clients_attribution_and_footer_end_the_commands() -> None:
    text = ("ສະບາຍດີ\n໓\n\nສົ່ງຈາກ iPhone ຂອງຂ້ອຍ\n\n"
            "ເມື່ອ ວັນຈັນ 1 ມັງກອນ 2029, DOS by mail <dos@play.test> ຂຽນວ່າ:\n> ສະບາຍດີ Bjørn,\n")
    assert mailtext.command_lines(text) == ["ສະບາຍດີ", "໓"]
    assert mailtext.move_number("໓") == 3  # Lao digits choose a move too
    bottom = ("ເມື່ອ ວັນຈັນ 1 ມັງກອນ 2029, DOS by mail <dos@play.test> ຂຽນວ່າ:\n"
              "> ສະບາຍດີ Bjørn,\n> ຮອດຕາຂອງທ່ານ\n\nm1 R5\n")
    assert mailtext.command_lines(bottom) == ["m1 R5"]


def test_a_row_written_before_rows_carried_a_language_reads_in_the_seats(
        world: MailWorld) -> None:
    """An outbox row from before this server wrote the reader's language into it (an upgrade
    with rows pending) is read in the seat's language, looked up when it is sent."""
    game_id, tokens = _game(world)
    for _ in range(20):  # until a row written in his language is there (Ann may move first)
        with world.app.app_context():
            rows = db.session.execute(
                db.select(NotificationRow).where(NotificationRow.game_id == game_id,
                                                 NotificationRow.target == BJORN,
                                                 NotificationRow.channel == "email")
                .order_by(NotificationRow.id.desc())).scalars().all()
            row = next((r for r in rows if r.payload.get("language") == "lo"), None)
            db.session.remove()
        if row is not None:
            break
        _play(world, game_id, tokens, world.game(game_id)[2].current)
    assert row is not None
    with world.app.app_context():
        payload = copy.deepcopy(row.payload)
        assert payload.pop("language") == "lo"
        subject, text, _markup = parts(dispatch.build(payload, "msg_old", row.target))
    assert LAO.search(subject), subject
    assert LAO.search(text)
