"""Emails are templates: every kind has its subject.txt, body.txt and body.html; what a person
typed (names, titles, lines) shows as typed in the text part and escaped in the HTML part;
builders read nothing from the database (the dispatch reads what they need).

No database fixture on purpose: the app's database has no tables, so a builder that queried it
would fail, and every statement sent is counted.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from dos_server import create_app
from dos_server.delivery.mail import builders, dispatch, render
from dos_server.extensions import db
from testkit import sent_statements

EVIL = '<b>x</b> & "q" {{ 7*7 }}'
ESCAPED = "&lt;b&gt;x&lt;/b&gt; &amp; &#34;q&#34; {{ 7*7 }}"
UNSUBSCRIBE = {"unsubscribe": "https://dos.example.org/api/unsubscribe/t",
               "unsubscribe_page": "https://dos.example.org/unsubscribe/t",
               "unsubscribe_mailto": "unsubscribe+g1.s.t@play.test"}
GAME: dict[str, Any] = {
    "game_id": "g1", "game_title": EVIL, "seat": 0, "name": EVIL, "names": [EVIL, "bob"],
    "version": 3, "deadline": "2029-01-01T10:00:00+00:00", "data": {},
    "reply_to": "play+g1.s.3.1.t@play.test", "table": "https://dos.example.org/games/g1?token=t",
    "links": {"page": "https://dos.example.org/games/g1"}, "since": [f"{EVIL} drew 1 card"],
    "view": {"round": 1, "current": 0, "scores": [0, 0], "hand": ["R5", "W2"],
             "center_row": [{"position": 1, "card": "R3"}], "hand_sizes": [2, 7],
             "phase": "start", "options": {"target_score": 100}},
    "moves": [{"number": 1, "action": "m1 R5", "description": f"match {EVIL}"}],
    **UNSUBSCRIBE,
}
DATA = {"timed_out": {"policy": "random"}, "caught": {"seat": 0}, "invited": {"join": "dos-client join i"},
        "round_over": {"round": 1, "winner": 0, "scored": 5, "scores": [5, 0], "points": [0, 5]},
        "game_over": {"winner": 0, "scores": [200, 0]}, "mail_reply": {"lines": [EVIL]},
        "undeliverable": {"channel": "webhook", "target": "https://h.example.org/", "error": EVIL}}
OTHERS: dict[str, dict[str, Any]] = {
    "digest": {"thread": "ann", "games": [{
        "id": "g1", "game_title": EVIL, "seat": 0, "name": EVIL, "deadline": None,
        "opponents": ["bob"], "line": "dos-client move g1 N --at 3",
        "table": "https://dos.example.org/games/g1?token=t", **UNSUBSCRIBE}], **UNSUBSCRIBE},
    "login_code": {"login_id": "l1", "minutes": 15, "address": "ann@example.org"},
    "confirm_email": {"game_id": "g1", "seat": 1, "name": EVIL, "address": "bob@example.org",
                      "link": "https://dos.example.org/confirm-email/t"},
}


def payload(kind: str) -> dict[str, Any]:
    if kind in OTHERS:
        return {"event": kind, **copy.deepcopy(OTHERS[kind])}
    made = {**copy.deepcopy(GAME), "event": kind, "data": DATA.get(kind, {})}
    if kind == "mail_reply":
        made.update(subject=f"Re: {EVIL}", in_reply_to="<r@client.example>", references=None)
    return made


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Flask]:
    made = create_app({"TESTING": True, "SECRET_KEY": "templates",
                       "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'empty.db'}",
                       "PUBLIC_URL": "https://dos.example.org", "MAIL_DOMAIN": "play.test",
                       "INSTANCE_PATH": str(tmp_path / "instance")})
    # The sign-in email's nonce is what the dispatch reads from the database.
    monkeypatch.setitem(dispatch.READERS, "login_code",
                        lambda _: builders.Facts(login_nonce="nonce"))
    # So is the language of the emails of signing in (their rows carry none).
    monkeypatch.setattr(dispatch, "language_of", lambda payload, target=None: None)
    with made.app_context():
        yield made
        db.session.remove()
        db.engine.dispose()


def _parts(kind: str) -> tuple[str, str, str]:
    message = dispatch.build(payload(kind), "msg_t")
    text = message.get_body(preferencelist=("plain",))
    markup = message.get_body(preferencelist=("html",))
    assert text is not None
    assert markup is not None
    return str(message["Subject"]), str(text.get_content()), str(markup.get_content())


def test_every_kind_has_its_three_templates(app: Flask) -> None:
    env = render.environment()
    for kind in builders.KINDS:
        for name in ("subject.txt", "body.txt", "body.html"):
            env.get_template(f"email/{kind}/{name}")


def test_flask_escapes_html_templates_and_not_text_ones(app: Flask) -> None:
    env = render.environment()
    assert env.autoescape is app.jinja_env.autoescape
    assert callable(env.autoescape)
    assert env.autoescape("email/your_turn/body.html")
    assert not env.autoescape("email/your_turn/body.txt")
    assert not env.autoescape("email/your_turn/subject.txt")


@pytest.mark.parametrize("kind", sorted(builders.KINDS))
def test_typed_words_show_as_typed_in_text_and_escaped_in_html(app: Flask, kind: str) -> None:
    subject, text, markup = _parts(kind)
    assert "<b>x</b>" not in markup
    assert "&lt;" not in text
    assert "&lt;" not in subject
    if kind != "login_code":  # the one kind that shows nothing a person typed
        assert EVIL in text  # as typed, and never evaluated as a template
        assert ESCAPED in markup


def test_builders_read_nothing_from_the_database(app: Flask) -> None:
    with sent_statements(db.engine) as statements:
        for kind, build in builders.KINDS.items():
            build(payload(kind), builders.Facts(login_nonce="nonce"))
            _parts(kind)
    assert statements == []


def test_the_html_cards_are_the_pages_card_macro_with_inline_styles(app: Flask) -> None:
    _, _, markup = _parts("your_turn")
    assert '<span class="card" style="display:inline-block;' in markup
    assert 'role="img" aria-label="Wild DOS" title="Wild DOS">W2</span>' in markup
    assert "card-red" not in markup  # the web's classes need its stylesheet
