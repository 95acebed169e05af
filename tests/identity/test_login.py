"""Signing in with an email address: codes and links through a real SMTP sink,
single use, expiry, attempts, rate limits, no enumeration, sessions and their revocation."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import timedelta

import sqlalchemy as sa
from flask import Flask
from identity_helpers import (
    auth,
    code_for,
    create,
    deliver,
    join_all,
    link_for,
    my_games,
    sign_in,
    text_of,
)

from dos_server.extensions import db
from dos_server.models import LoginCodeRow, NotificationRow, utcnow
from testkit import SmtpSink

ANN = "ann@example.org"


def _rows(app: Flask, model: type, **where: object) -> list[object]:
    with app.app_context():
        query = sa.select(model)
        for key, value in where.items():
            query = query.where(getattr(model, key) == value)
        found = list(db.session.execute(query).scalars().all())
        db.session.expunge_all()
        db.session.remove()
    return found


def test_a_code_by_real_email_signs_in_once(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    asked = client.post("/api/login", json={"email": "Ann@Example.ORG"})
    assert asked.status_code == 202
    deliver(mail_app)
    message = smtp.to("Ann@Example.ORG")[-1]  # sent to the address as typed
    assert message["X-DOS-Event"] == "login_code"
    text = text_of(message)
    assert "Your code: " in text
    assert "/account/signin/" in text
    code = code_for(mail_app, smtp, "Ann@Example.ORG")
    # No code is stored: only a nonce the code is an HMAC of.
    (row,) = _rows(mail_app, LoginCodeRow)
    assert code not in repr(vars(row))
    assert all(code not in str(n.payload) for n in _rows(mail_app, NotificationRow))

    # The address compares case-insensitively; the code goes in with spaces as shown.
    verified = client.post("/api/login/verify",
                           json={"email": ANN, "code": f"{code[:4]} {code[4:]}"})
    assert verified.status_code == 200, verified.get_data(as_text=True)
    body = verified.get_json()
    assert body["email"] == "Ann@Example.ORG"
    me = client.get("/api/me", headers=auth(body["account_token"])).get_json()
    assert me["email"] == "Ann@Example.ORG"
    # Single use.
    again = client.post("/api/login/verify", json={"email": ANN, "code": code})
    assert again.status_code == 401
    assert again.mimetype == "application/problem+json"


def test_the_link_signs_in_once(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    assert client.post("/api/login", json={"email": ANN}).status_code == 202
    token = link_for(mail_app, smtp, ANN).rsplit("/", 1)[1]
    first = client.post("/api/login/verify", json={"link": token})
    assert first.status_code == 200, first.get_data(as_text=True)
    assert client.get("/api/me", headers=auth(first.get_json()["account_token"])).status_code == 200
    assert client.post("/api/login/verify", json={"link": token}).status_code == 401
    # Signing in ended the code of the same email too.
    code = code_for(mail_app, smtp, ANN)
    assert client.post("/api/login/verify", json={"email": ANN, "code": code}).status_code == 401


def test_codes_expire(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    client.post("/api/login", json={"email": ANN})
    code = code_for(mail_app, smtp, ANN)
    with mail_app.app_context():
        db.session.execute(sa.update(LoginCodeRow).values(
            expires_at=utcnow() - timedelta(seconds=1)))
        db.session.commit()
        db.session.remove()
    answer = client.post("/api/login/verify", json={"email": ANN, "code": code})
    assert answer.status_code == 401
    assert "expired" in answer.get_json()["detail"]


def test_wrong_guesses_kill_the_code(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    client.post("/api/login", json={"email": ANN})
    code = code_for(mail_app, smtp, ANN)
    wrong = f"{(int(code) + 1) % 10**8:08d}"
    for _ in range(mail_app.config["LOGIN_MAX_ATTEMPTS"]):
        assert client.post("/api/login/verify",
                           json={"email": ANN, "code": wrong}).status_code == 401
    assert client.post("/api/login/verify", json={"email": ANN, "code": code}).status_code == 401
    # A new code works.
    client.post("/api/login", json={"email": ANN})
    fresh = code_for(mail_app, smtp, ANN)
    assert client.post("/api/login/verify", json={"email": ANN, "code": fresh}).status_code == 200


def test_rate_limited_per_address(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    limit = mail_app.config["LOGIN_CODES_PER_HOUR"]
    for _ in range(limit):
        assert client.post("/api/login", json={"email": ANN}).status_code == 202
    refused = client.post("/api/login", json={"email": "ANN@example.org"})  # same identity
    assert refused.status_code == 429
    assert refused.mimetype == "application/problem+json"
    assert refused.headers["Retry-After"]
    assert client.post("/api/login", json={"email": "bob@example.org"}).status_code == 202
    deliver(mail_app)
    assert len([m for m in smtp.messages if m["X-DOS-Event"] == "login_code"]) == limit + 1


def test_rate_limited_per_client(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATE_LIMIT_LOGIN="3 per minute",
                   RATE_LIMIT_LOGIN_VERIFY="4 per minute")
    client = app.test_client()
    statuses = [client.post("/api/login", json={"email": f"p{i}@example.org"}).status_code
                for i in range(4)]
    assert statuses == [202, 202, 202, 429]
    guesses = [client.post("/api/login/verify",
                           json={"email": "p0@example.org", "code": "00000000"}).status_code
               for _ in range(5)]
    assert guesses == [401, 401, 401, 401, 429]


def test_the_answer_does_not_tell_who_plays_here(mail_app: Flask, smtp: SmtpSink) -> None:
    """Same status, same body, same emails, same timing class for a player's address and for
    an address the server has never seen."""
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob"}])
    join_all(client, game)
    known: list[float] = []
    unknown: list[float] = []
    answers = []
    for i in range(4):
        for address, times in ((ANN if i == 0 else f"ann{i}@example.org", known),
                               (f"nobody{i}@example.org", unknown)):
            started = time.perf_counter()
            answer = client.post("/api/login", json={"email": address})
            times.append(time.perf_counter() - started)
            answers.append((answer.status_code, answer.get_data()))
    assert len(set(answers)) == 1, answers
    assert answers[0][0] == 202
    # The work is the same (no lookup of games), so the times are of one class.
    ratio = statistics.median(known) / statistics.median(unknown)
    assert 0.25 < ratio < 4, (known, unknown)
    deliver(mail_app)
    assert {m["X-DOS-Event"] for m in smtp.to(ANN)} >= {"login_code"}
    assert [m["X-DOS-Event"] for m in smtp.to("nobody0@example.org")] == ["login_code"]
    # Verifying with a wrong code: the same answer whether or not a code is outstanding.
    wrong = [client.post("/api/login/verify", json={"email": a, "code": "12345678"})
             for a in (ANN, "never-asked@example.org")]
    assert {(w.status_code, w.get_json()["detail"]) for w in wrong} == {
        (401, wrong[0].get_json()["detail"])}


def test_sessions_listed_and_revoked_at_once(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob"}])
    join_all(client, game)
    laptop = sign_in(client, mail_app, smtp, ANN)
    phone = sign_in(client, mail_app, smtp, ANN)
    assert [g["game_id"] for g in my_games(client, phone)] == [game["id"]]
    listed = client.get("/api/me/sessions", headers=auth(laptop)).get_json()["sessions"]
    assert len(listed) == 2
    assert [s["current"] for s in listed].count(True) == 1
    phone_id = next(s["id"] for s in listed if not s["current"])
    # The laptop signs the phone out: the phone's very next request is refused.
    gone = client.delete(f"/api/me/sessions/{phone_id}", headers=auth(laptop))
    assert gone.status_code == 200
    assert gone.get_json()["revoked"] == [phone_id]
    for path in ("/api/me/games", "/api/me/sessions", "/api/me"):
        assert client.get(path, headers=auth(phone)).status_code == 401
    assert client.post(f"/api/me/games/{game['id']}/token", json={},
                       headers=auth(phone)).status_code == 401
    assert client.delete(f"/api/me/sessions/{phone_id}", headers=auth(laptop)).status_code == 404
    assert client.delete("/api/me/sessions/NOT-AN-ID\u00e9", headers=auth(laptop)).status_code == 404
    # Sign out everywhere.
    other = sign_in(client, mail_app, smtp, ANN)
    assert len(client.delete("/api/me/sessions", headers=auth(laptop)).get_json()["revoked"]) == 2
    assert client.get("/api/me/games", headers=auth(laptop)).status_code == 401
    assert client.get("/api/me/games", headers=auth(other)).status_code == 401


def test_tokens_of_other_kinds_are_not_account_tokens(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    game = create(client, [{"name": "ann", "email": ANN}, {"name": "bob"}])
    tokens = join_all(client, game)
    for token in (tokens[0], game["host_token"], "nonsense", ""):
        answer = client.get("/api/me/games", headers=auth(token) if token else {})
        assert answer.status_code == 401, token
    account = sign_in(client, mail_app, smtp, ANN)
    # ... and an account token is not a player token.
    assert client.get(f"/api/games/{game['id']}/actions", headers=auth(account)).status_code == 401


def test_the_link_in_a_browser(mail_app: Flask, smtp: SmtpSink) -> None:
    from dos_server.services import account
    from dos_server.web.auth import ACCOUNT_KEY as SESSION_KEY

    client = mail_app.test_client()
    client.post("/api/login", json={"email": ANN})
    path = "/" + link_for(mail_app, smtp, ANN).split("://", 1)[1].split("/", 1)[1]
    for _ in range(2):  # a mail scanner's GET spends nothing
        page = client.get(path)
        assert page.status_code == 200
        assert page.mimetype == "text/html"
        assert 'method="post"' in page.get_data(as_text=True)
    assert client.post(path, headers={"Origin": "https://evil.example"}).status_code == 403
    signed = client.post(path, headers={"Origin": "http://localhost"})
    assert signed.status_code == 200, signed.get_data(as_text=True)
    assert ANN in signed.get_data(as_text=True)
    with client.session_transaction() as session:
        token = session[SESSION_KEY]
    with mail_app.test_request_context():
        assert account.authenticate(token).email_key == ANN
    sessions = client.get("/api/me/sessions", headers=auth(token)).get_json()["sessions"]
    assert [s["kind"] for s in sessions] == ["browser"]
    assert client.post(path).status_code == 410  # once: then a page offering a fresh link
