"""Every link with a token in it that an email gives a person, opened with a garbage, an
expired and a revoked token: each ends on one friendly HTML page with the right status (400:
never a link of ours; 410: expired, used or revoked) that offers a fresh sign-in link by email,
never a traceback or JSON. The fresh-link form is CSRF-checked, rate-limited and answers the
same for every address. Expired tokens are made with a clock: itsdangerous stamps them days
ago. SQLite and, with TEST_DATABASE_URL, PostgreSQL."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous.timed import TimestampSigner
from web_helpers import api_game, csrf_of, join_api, login_link, path_of, post, signin_link
from werkzeug.test import TestResponse

from dos_server.extensions import db
from dos_server.models import NotificationRow, SeatRow
from dos_server.services import access, account, notify
from dos_server.validation import email_key

ANN, BOB = "ann@example.org", "bob@example.org"
CSRF = re.compile(r'name="csrf" value="[^"]+"')  # differs per browser
DAY = 86400


@contextmanager
def issued_ago(monkeypatch: pytest.MonkeyPatch, seconds: float) -> Iterator[None]:
    """Tokens signed inside this block carry a timestamp ``seconds`` in the past."""
    with monkeypatch.context() as patch:
        patch.setattr(TimestampSigner, "get_timestamp",
                      lambda self: int(time.time() - seconds))
        yield


def assert_bad_link(response: TestResponse, status: int, *words: str) -> str:
    """The friendly page: its status, HTML with the fresh-link form, the safe headers."""
    text = response.get_data(as_text=True)
    assert response.status_code == status, text
    assert response.mimetype == "text/html"
    assert "Traceback" not in text
    assert 'action="/me/login"' in text
    assert 'name="email"' in text
    assert 'name="csrf"' in text
    assert "Email me a fresh link" in text
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["Cache-Control"] == "no-store"
    for word in words:
        assert word in text, word
    return text


def game(app: Flask, **options: Any) -> dict[str, Any]:
    """alice (ann's address) and bob, both joined; one invite left for a third, open seat."""
    api = app.test_client()
    created = api_game(api, [{"name": "alice", "email": ANN}, {"name": "bob", "email": BOB},
                             {"name": "carol"}], **options)
    created["tokens"] = [join_api(api, created["id"], i["invite"])
                         for i in created["invites"][:2]]
    return created


def opened(app: Flask, link: str) -> tuple[FlaskClient, TestResponse]:
    """A browser that opens an emailed link, and the page it lands on (after a redirect that
    takes the token out of the address bar, if the route does that)."""
    browser = app.test_client()
    first = browser.get(path_of(link))
    if first.status_code == 303:
        return browser, browser.get(first.headers["Location"])
    return browser, first


# -- the seat's sign-in link (/games/<id>?token=...) -----------------------------------------


def test_sign_in_link_garbage_expired_revoked_and_for_another_game(
        app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    created = game(app)
    gid = created["id"]
    _, page = opened(app, f"/games/{gid}?token=not-a-token")
    text = assert_bad_link(page, 400, "This link is not valid", "not a valid")
    assert 'name="token"' in text  # a CLI user may paste a player token instead

    with issued_ago(monkeypatch, 8 * DAY):  # WEB_SIGNIN_MAX_AGE_DAYS is 7
        old = signin_link(app, gid, 0)
    _, page = opened(app, old)
    assert_bad_link(page, 410, "This link has expired", "expired")

    other = game(app)
    _, page = opened(app, signin_link(app, other["id"], 0).replace(other["id"], gid, 1))
    assert_bad_link(page, 400, "This link is not valid")

    link = signin_link(app, gid, 0)
    browser, page = opened(app, link)  # the Continue page is up ...
    assert "Continue as alice" in page.get_data(as_text=True)
    rotated = app.test_client().post(f"/api/games/{gid}/seats/0/token",
                                     headers={"Authorization": f"Bearer {created['tokens'][0]}"})
    assert rotated.status_code == 200
    pressed = browser.post(f"/games/{gid}/signin", data={"csrf": csrf_of(page)})
    assert_bad_link(pressed, 410, "This link no longer works", "revoked")  # ... pressed late
    _, page = opened(app, link)
    assert_bad_link(page, 410, "revoked")
    assert "alice (you)" not in browser.get(f"/games/{gid}").get_data(as_text=True)


# -- the invite link (/games/<id>/join?invite=...) and the open seat's code ------------------


def test_invite_link_garbage_expired_revoked_and_a_wrong_code(
        make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(TOKEN_MAX_AGE_DAYS=30)
    created = game(app)
    gid = created["id"]
    invite = created["invites"][2]["invite"]
    _, page = opened(app, f"/games/{gid}/join?invite=garbage")
    assert_bad_link(page, 400, "not a valid invite")

    with issued_ago(monkeypatch, 31 * DAY), app.app_context():
        from dos_server import tokens

        seat = access.seat_of(access.get_game(gid), 2)
        old = tokens.issue("invite", gid, seat.public_id, seat.token_version)
        db.session.remove()
    _, page = opened(app, f"/games/{gid}/join?invite={old}")
    assert_bad_link(page, 410, "This link has expired")

    browser, page = opened(app, f"/games/{gid}/join?invite={invite}")
    assert "Join as carol" in page.get_data(as_text=True)
    rotated = app.test_client().post(f"/api/games/{gid}/seats/2/token",
                                     headers={"Authorization": f"Bearer {created['host_token']}"})
    assert rotated.status_code == 200  # the host sent a new invite: this one is revoked
    pressed = browser.post(f"/games/{gid}/join", data={"csrf": csrf_of(page)})
    assert_bad_link(pressed, 410, "revoked")
    _, page = opened(app, f"/games/{gid}/join?invite={invite}")
    assert_bad_link(page, 410, "revoked")
    assert "carol (you)" not in browser.get(f"/games/{gid}").get_data(as_text=True)

    code_game = api_game(app.test_client(), [{"name": "alice"}, {}])
    browser, page = opened(app, f"/games/{code_game['id']}/join?code=wrong-code")
    pressed = browser.post(f"/games/{code_game['id']}/join",
                           data={"csrf": csrf_of(page), "name": "dave"})
    assert_bad_link(pressed, 400, "This link is not valid")


# -- unsubscribe (/unsubscribe/<token>, the link in the body) --------------------------------


def unsubscribe_page(app: Flask, gid: str, seat: int) -> str:
    with app.app_context():
        public_id = access.seat_of(access.get_game(gid), seat).public_id
        _, page = notify.unsubscribe_urls(gid, public_id)
        db.session.remove()
    return page


def unsubscribed(app: Flask, gid: str, seat: int) -> bool:
    with app.app_context():
        row = db.session.execute(db.select(SeatRow).where(SeatRow.game_id == gid,
                                                          SeatRow.index == seat)).scalar_one()
        done = bool(row.email_unsubscribed)
        db.session.remove()
    return done


def test_unsubscribe_page_acts_only_on_its_button(
        make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(TOKEN_MAX_AGE_DAYS=30)
    gid = game(app)["id"]
    link = unsubscribe_page(app, gid, 1)
    assert "/api/" not in link
    browser, page = opened(app, link)
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Stop emails?" in text
    assert not unsubscribed(app, gid, 1)  # a mail scanner's GET changes nothing
    path = path_of(link)
    assert browser.post(path).status_code == 403  # no CSRF token
    assert not unsubscribed(app, gid, 1)
    done = browser.post(path, data={"csrf": csrf_of(page)})
    assert done.status_code == 200
    assert "Unsubscribed" in done.get_data(as_text=True)
    assert unsubscribed(app, gid, 1)
    assert "Already unsubscribed" in browser.get(path).get_data(as_text=True)

    _, page = opened(app, "/unsubscribe/garbage")
    assert_bad_link(page, 400, "not a valid unsubscribe")
    with issued_ago(monkeypatch, 31 * DAY):
        old = unsubscribe_page(app, gid, 0)
    browser, page = opened(app, old)
    assert_bad_link(page, 410, "expired")
    pressed = browser.post(path_of(old), data={"csrf": csrf_of(page)})
    assert_bad_link(pressed, 410, "expired")
    assert not unsubscribed(app, gid, 0)


# -- confirming a seat's new address (/confirm-email/<token>) --------------------------------


def confirm_link(app: Flask, gid: str, seat: int, token: str, address: str,
                 signed: Callable[[], AbstractContextManager[Any]] = nullcontext) -> str:
    """Set the seat's address through the API; the link of the confirmation email, whose
    token is signed inside ``signed()`` (a clock)."""
    client = app.test_client()
    answer = client.put(f"/api/games/{gid}/seats/{seat}/notifications", json={"email": address},
                        headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.get_json()
    with app.app_context():
        with signed():  # the same email again, signed by this clock
            found = access.get_game(gid)
            assert account.ask_confirmation(found, access.seat_of(found, seat))
            db.session.commit()
        row = db.session.execute(
            db.select(NotificationRow).where(NotificationRow.event == "confirm_email")
            .order_by(NotificationRow.id.desc())).scalars().first()
        assert row is not None
        link = str(row.payload["link"])
        db.session.remove()
    assert "/api/" not in link
    return link


def owner(app: Flask, gid: str, seat: int) -> str | None:
    with app.app_context():
        row = db.session.execute(db.select(SeatRow).where(SeatRow.game_id == gid,
                                                          SeatRow.index == seat)).scalar_one()
        value = row.owner_key
        db.session.remove()
    return value


def test_confirm_address_page_garbage_expired_revoked_and_confirmed(
        app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    created = game(app)
    gid, bob = created["id"], created["tokens"][1]
    link = confirm_link(app, gid, 1, bob, "bob@new.example.org")
    browser, page = opened(app, link)
    assert page.status_code == 200
    assert owner(app, gid, 1) != email_key("bob@new.example.org")  # the GET confirms nothing
    done = browser.post(path_of(link), data={"csrf": csrf_of(page)})
    assert done.status_code == 200, done.get_data(as_text=True)
    assert "Address confirmed" in done.get_data(as_text=True)
    assert owner(app, gid, 1) == email_key("bob@new.example.org")

    _, page = opened(app, "/confirm-email/garbage")
    assert_bad_link(page, 400, "not a valid confirmation link")
    old = confirm_link(app, gid, 1, bob, "bob@older.example.org",  # links last 7 days
                       lambda: issued_ago(monkeypatch, 8 * DAY))
    _, page = opened(app, old)
    assert_bad_link(page, 410, "expired")

    link = confirm_link(app, gid, 1, bob, "bob@third.example.org")
    browser, page = opened(app, link)
    rotated = app.test_client().post(f"/api/games/{gid}/seats/1/token",
                                     headers={"Authorization": f"Bearer {bob}"})
    assert rotated.status_code == 200
    pressed = browser.post(path_of(link), data={"csrf": csrf_of(page)})
    assert_bad_link(pressed, 410, "no longer valid")
    assert owner(app, gid, 1) == email_key("bob@new.example.org")


# -- the account's sign-in link (/account/signin/<token>) ------------------------------------


def test_account_sign_in_link_garbage_expired_and_used(
        app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    game(app)
    _, page = opened(app, "/account/signin/garbage")
    assert_bad_link(page, 400, "not a valid sign-in link")
    with issued_ago(monkeypatch, 16 * 60):  # LOGIN_CODE_MINUTES is 15
        old = login_link(app, ANN)
    _, page = opened(app, old)
    assert_bad_link(page, 410, "expired")

    link = login_link(app, ANN)
    browser, page = opened(app, link)
    assert page.status_code == 200
    assert browser.post(path_of(link), headers={"Origin": "http://localhost"}).status_code == 200
    again = app.test_client().post(path_of(link), headers={"Origin": "http://localhost"})
    assert_bad_link(again, 410, "used already")


def test_the_sign_in_button_works_under_no_referrer(app: Flask) -> None:
    """Our pages send Referrer-Policy: no-referrer, so a browser posts the button's form with
    "Origin: null": Sec-Fetch-Site tells our own page from another site's."""
    game(app)
    elsewhere = {"Origin": "null", "Sec-Fetch-Site": "cross-site"}
    link = login_link(app, ANN)
    assert app.test_client().post(path_of(link), headers=elsewhere).status_code == 403
    ours = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert app.test_client().post(path_of(link), headers=ours).status_code == 200


# -- the fresh link the page offers ----------------------------------------------------------


def queued_logins(app: Flask) -> list[str]:
    with app.app_context():
        rows = db.session.execute(db.select(NotificationRow).where(
            NotificationRow.event == "login_code")).scalars().all()
        targets = [r.target for r in rows]
        db.session.remove()
    return targets


def test_the_fresh_link_form_sends_a_link_and_reveals_nothing(app: Flask) -> None:
    gid = game(app)["id"]
    answers = []
    for address in (ANN, "nobody@example.org"):
        browser, page = opened(app, f"/games/{gid}?token=not-a-token")
        assert_bad_link(page, 400)
        sent = browser.post("/me/login", data={"csrf": csrf_of(page), "email": address})
        after = browser.get(sent.headers["Location"]).get_data(as_text=True)
        answers.append((sent.status_code, sent.headers["Location"],
                        CSRF.sub("", after.replace(address, "ADDRESS"))))
    assert answers[0] == answers[1]  # a player's address and a stranger's: the same answer
    assert answers[0][0] == 303
    assert "a code and a link are on their way" in answers[0][2]
    assert queued_logins(app) == [ANN, "nobody@example.org"]

    browser, page = opened(app, f"/games/{gid}?token=not-a-token")
    assert browser.post("/me/login", data={"email": ANN}).status_code == 403  # no CSRF
    assert queued_logins(app) == [ANN, "nobody@example.org"]


def test_the_fresh_link_form_is_rate_limited(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATE_LIMIT_LOGIN="2 per minute",
                   RATE_LIMIT_CREATE="100 per minute", RATE_LIMIT_JOIN="100 per minute")
    gid = game(app)["id"]
    browser, page = opened(app, f"/games/{gid}/join?invite=garbage")
    assert_bad_link(page, 400)
    statuses = [browser.post("/me/login", data={"csrf": csrf_of(page),
                                                "email": f"p{n}@example.org"}).status_code
                for n in range(3)]
    assert statuses == [303, 303, 429]
    refused = post(browser, "/me/login", {"email": ANN})
    assert refused.mimetype == "text/html"
    assert "Too many requests" in refused.get_data(as_text=True)
    assert len(queued_logins(app)) == 2


# -- the links in the emails of signing in ----------------------------------------------------


def test_sign_in_and_confirmation_emails_link_to_pages(app: Flask) -> None:
    """Every game email is checked on the wire (tests/notify/test_email_kinds.py); these two
    are built here from the rows queued for them: no link to the JSON API in either part."""
    from dos_server.delivery.mail.dispatch import build

    created = game(app)
    confirm_link(app, created["id"], 1, created["tokens"][1], "bob@new.example.org")
    login_link(app, ANN)
    with app.test_request_context():
        rows = db.session.execute(db.select(NotificationRow).where(
            NotificationRow.event.in_(["login_code", "confirm_email"]))).scalars().all()
        assert {r.event for r in rows} == {"login_code", "confirm_email"}
        for row in rows:
            message = build(dict(row.payload), row.message_id)
            for kind in ("plain", "html"):
                part = message.get_body(preferencelist=(kind,))
                assert part is not None
                text = str(part.get_content())
                assert "http" in text
                assert "/api/" not in text, (row.event, kind, text)
        db.session.remove()
