"""Tokens (forged, foreign, expired, revoked, rotated keys), secrecy of hands, and logs."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from server_helpers import (
    assert_problem,
    auth,
    create,
    join,
    play_game,
    stored_secrets,
    stored_state,
    walk,
)

from dos_server.extensions import db
from dos_server.logs import JsonFormatter
from dos_server.models import SeatRow
from dos_server.tokens import SALTS
from testkit import SECRET, Receiver, SmtpSink, run_worker, smtp

__all__ = ["smtp"]


@pytest.fixture
def game(client: FlaskClient) -> dict[str, Any]:
    created = create(client, [{"name": "ann"}, {"name": "bob"}, {"bot": "greedy"}], target_score=1)
    created["tokens"] = {
        invite["seat"]: join(client, created["id"], invite=invite["invite"])["player_token"]
        for invite in created["invites"]
    }
    return created


def _endpoints(game_id: str) -> list[tuple[str, str, Any]]:
    return [
        ("get", f"/api/games/{game_id}", None),
        ("get", f"/api/games/{game_id}/actions", None),
        ("get", f"/api/games/{game_id}/events", None),
        ("post", f"/api/games/{game_id}/actions", {"version": 3, "actions": ["draw"]}),
    ]


def _assert_401_everywhere(client: FlaskClient, game_id: str, token: str) -> None:
    for method, path, body in _endpoints(game_id):
        answer = getattr(client, method)(path, json=body, headers=auth(token))
        assert_problem(answer, 401)
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def _tamper(token: str) -> list[str]:
    payload, stamp, signature = token.split(".")
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    other_payload = payload[:-2] + ("x" if payload[-2] != "x" else "y") + payload[-1]
    return [
        f"{payload}.{stamp}.{flipped}",
        f"{other_payload}.{stamp}.{signature}",
        f"{payload}.{stamp}",
        f"{payload}..{signature}",
        token[:-1],
        token + "x",
        "not-a-token",
        "a.b.c",
    ]


def test_forged_tokens_are_401(client: FlaskClient, game: dict[str, Any]) -> None:
    for forged in _tamper(game["tokens"][0]):
        _assert_401_everywhere(client, game["id"], forged)


def _sign(key: str, purpose: str, payload: dict[str, Any], *, age: float = 0) -> str:
    class Signer(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time() - age)

    serializer = URLSafeTimedSerializer(key, salt=SALTS[purpose], signer=Signer)
    return str(serializer.dumps(payload))


def _seat_id(app: Flask, game_id: str, index: int) -> str:
    with app.app_context():
        public_id = db.session.execute(
            db.select(SeatRow.public_id).where(SeatRow.game_id == game_id, SeatRow.index == index)
        ).scalar_one()
        db.session.remove()
    return str(public_id)


def test_token_signed_with_another_key_is_401(app: Flask, client: FlaskClient,
                                              game: dict[str, Any]) -> None:
    payload = {"g": game["id"], "v": 1, "p": _seat_id(app, game["id"], 0)}
    _assert_401_everywhere(client, game["id"], _sign("another-key", "player", payload))
    # Our key, but signed for another purpose (an invite is not a player token).
    _assert_401_everywhere(client, game["id"], _sign(SECRET, "invite", payload))
    # Well signed, but the claims have the wrong types.
    for bad in ({**payload, "v": "1"}, {**payload, "g": 5}, {**payload, "p": 0},
                {"g": game["id"], "v": 1, "s": "0"}, {"g": game["id"], "v": 1},
                # an index names no seat created since seats have identities
                {"g": game["id"], "v": 1, "s": 0}, ["not", "a", "dict"]):
        _assert_401_everywhere(client, game["id"], _sign(SECRET, "player", bad))  # type: ignore[arg-type]
    # Well signed, correct claims: accepted (the control for the ones above).
    good = _sign(SECRET, "player", payload)
    assert client.get(f"/api/games/{game['id']}", headers=auth(good)).get_json()["you"] == 0


def test_expired_token_is_401(app: Flask, client: FlaskClient, game: dict[str, Any]) -> None:
    days = app.config["TOKEN_MAX_AGE_DAYS"]
    payload = {"g": game["id"], "v": 1, "p": _seat_id(app, game["id"], 0)}
    old = _sign(SECRET, "player", payload, age=(days + 1) * 86400)
    _assert_401_everywhere(client, game["id"], old)
    fresh_enough = _sign(SECRET, "player", payload, age=(days - 1) * 86400)
    assert client.get(f"/api/games/{game['id']}", headers=auth(fresh_enough)).status_code == 200


def test_revoked_token_is_401(app: Flask, client: FlaskClient, game: dict[str, Any]) -> None:
    token = game["tokens"][0]
    assert client.get(f"/api/games/{game['id']}", headers=auth(token)).status_code == 200
    with app.app_context():
        seat = db.session.execute(
            db.select(SeatRow).where(SeatRow.game_id == game["id"], SeatRow.index == 0)
        ).scalar_one()
        seat.token_version += 1
        db.session.commit()
        db.session.remove()
    _assert_401_everywhere(client, game["id"], token)
    # The other seat is unaffected.
    assert client.get(f"/api/games/{game['id']}",
                      headers=auth(game["tokens"][1])).get_json()["you"] == 1


def test_token_for_another_game_is_403(client: FlaskClient, game: dict[str, Any]) -> None:
    other = create(client, [{"name": "cy"}, {"name": "di"}])
    other_token = join(client, other["id"], invite=other["invites"][0]["invite"])["player_token"]
    for token in (other_token, other["host_token"]):
        for method, path, body in _endpoints(game["id"]):
            answer = getattr(client, method)(path, json=body, headers=auth(token))
            assert_problem(answer, 403)
    answer = client.post(f"/api/games/{game['id']}/join", json={"invite": other["invites"][1]["invite"]})
    assert_problem(answer, 403)


def test_key_rotation(make_app: Callable[..., Flask], game: dict[str, Any]) -> None:
    token, host = game["tokens"][0], game["host_token"]
    rotated = make_app(SECRET_KEY="the-new-key", SECRET_KEY_FALLBACKS=[SECRET]).test_client()
    assert rotated.get(f"/api/games/{game['id']}", headers=auth(token)).get_json()["you"] == 0
    assert rotated.get(f"/api/games/{game['id']}", headers=auth(host)).get_json()["host"] is True
    # New tokens are signed with the new key ...
    new_game = create(rotated, [{"name": "x"}, {"name": "y"}])
    new_token = join(rotated, new_game["id"], invite=new_game["invites"][0]["invite"])["player_token"]
    # ... which a server that only has the old key rejects,
    assert_problem(make_app().test_client().get(f"/api/games/{new_game['id']}",
                                                headers=auth(new_token)), 401)
    # and once the old key is dropped, its tokens stop working.
    dropped = make_app(SECRET_KEY="the-new-key").test_client()
    assert_problem(dropped.get(f"/api/games/{game['id']}", headers=auth(token)), 401)
    assert dropped.get(f"/api/games/{new_game['id']}", headers=auth(new_token)).status_code == 200


def test_host_start_renumbering_keeps_each_token_on_its_own_seat(client: FlaskClient) -> None:
    """Removing an open seat moves later seats down: their tokens still open their own seats."""
    created = create(client, [{"name": "host"}, {}, {"name": "bob"}, {"name": "cat"}])
    by_name = {i["name"]: i["invite"] for i in created["invites"]}
    bob = join(client, created["id"], invite=by_name["bob"])["player_token"]
    cat = join(client, created["id"], invite=by_name["cat"])["player_token"]
    started = client.post(f"/api/games/{created['id']}/start", headers=auth(created["host_token"]))
    assert started.status_code == 200
    assert [s["name"] for s in started.get_json()["seats"]] == ["host", "bob", "cat"]
    # bob sat at 2, which is now cat's: his token must open his own seat, never cat's.
    for token, name in ((bob, "bob"), (cat, "cat")):
        answer = client.get(f"/api/games/{created['id']}", headers=auth(token))
        assert answer.status_code == 200, answer.get_json()
        body = answer.get_json()
        assert body["seats"][body["you"]]["name"] == name


def test_spectator_and_header_shapes(client: FlaskClient, game: dict[str, Any]) -> None:
    spectator = client.get(f"/api/games/{game['id']}").get_json()
    assert spectator["you"] is None
    assert spectator["view"]["hand"] is None
    for header in ("Bearer", "Bearer ", "Basic abc", "token"):
        answer = client.get(f"/api/games/{game['id']}", headers={"Authorization": header})
        assert answer.status_code == 200  # no bearer token: a spectator
        assert answer.get_json()["you"] is None
    assert_problem(client.get(f"/api/games/{game['id']}/actions"), 403)
    assert_problem(client.post(f"/api/games/{game['id']}/actions",
                               json={"version": 1, "actions": ["draw"]}), 403)


# -- secrecy ------------------------------------------------------------------------------


class SecrecyChecker:
    """Checks one answer, as seen by ``viewer``, against the game's stored state."""

    def __init__(self, app: Flask, game_id: str) -> None:
        self.app = app
        self.game_id = game_id
        self.checked = 0

    def __call__(self, viewer: int | None, body: Any) -> None:
        state = stored_state(self.app, self.game_id)
        secrets = stored_secrets(self.app, self.game_id)
        text = json.dumps(body)
        if not state.is_over:
            assert state.seed not in text, "the seed leaked before the game's end"
        for path, value in walk(body):
            if not isinstance(value, dict):
                continue
            assert "draw_pile" not in value, path
            assert "secret" not in value, path
            if "view" in value and value["view"] is not None:
                self._check_view(viewer, value["view"], state, path)
            if "kind" in value and "seq" in value:
                self._check_event(viewer, value, secrets, path)
        self.checked += 1

    def _check_view(self, viewer: int | None, view: dict[str, Any], state: Any, path: str) -> None:
        assert set(view) == set(state.view(viewer).to_dict()), path
        assert view["seat"] == viewer, path
        if viewer is None:
            assert view["hand"] is None, path
            assert view["legal_actions"] == [], path
        else:
            assert view["hand"] == [c.code for c in sorted(state.hands[viewer])], path
        if view["drawn"] is not None:
            assert viewer == state.current, path
        assert view["hand_sizes"] == [len(h) for h in state.hands], path

    @staticmethod
    def _check_event(viewer: int | None, event: dict[str, Any],
                     secrets: dict[int, tuple[int | None, dict[str, Any]]], path: str) -> None:
        if event["kind"] == "drew" and event["seat"] != viewer:
            assert "cards" not in event["data"], (path, event)
        if event["seq"] in secrets:
            owner, secret = secrets[event["seq"]]
            assert event["seat"] == owner
            if owner != viewer:
                assert not set(secret) & set(event["data"]), (path, event)
            else:
                assert all(event["data"][k] == v for k, v in secret.items()), (path, event)


@pytest.mark.parametrize("seed", [11])
def test_no_answer_shows_another_seats_cards(app: Flask, client: FlaskClient,
                                             game: dict[str, Any], seed: int) -> None:
    game_id, tokens = game["id"], game["tokens"]
    check = SecrecyChecker(app, game_id)
    viewers: list[tuple[int | None, str | None]] = [(0, tokens[0]), (1, tokens[1]), (None, None),
                                                    (None, game["host_token"])]

    # Table talk, a seat's hidden seats and its private notes: what one seat keeps for
    # itself never appears in another's answers.
    for seat in (0, 1):
        said = client.post(f"/api/games/{game_id}/messages", json={"text": f"hi from {seat}"},
                           headers=auth(tokens[seat]))
        assert said.status_code == 201
    assert client.patch(f"/api/games/{game_id}/chat", json={"hidden": [1]},
                        headers=auth(tokens[0])).status_code == 200
    with app.app_context():
        db.session.execute(db.update(SeatRow).where(SeatRow.game_id == game_id,
                                                    SeatRow.index == 0)
                           .values(notes="NOTE-OF-SEAT-0"))
        db.session.commit()
        db.session.remove()

    def observe(kind: str, seat: int | None, body: Any) -> None:
        if kind == "game":
            for viewer, token in viewers:
                for path in (f"/api/games/{game_id}", f"/api/games/{game_id}/events?limit=500",
                             f"/api/games/{game_id}/messages?limit=200",
                             f"/api/games/{game_id}/chat"):
                    answer = client.get(path, headers=auth(token))
                    assert answer.status_code == 200
                    check(viewer, answer.get_json())
                    text = answer.get_data(as_text=True)
                    assert "NOTE-OF-SEAT-0" not in text, path
                    if path.endswith("/chat") and viewer != 0:
                        assert (answer.get_json()["seat"] or {}).get("hidden") in (None, []), path
                    if path.endswith("limit=200"):
                        shown = [m["text"] for m in answer.get_json()["messages"]]
                        assert shown == (["hi from 0"] if viewer == 0 else
                                         ["hi from 0", "hi from 1"]), (viewer, shown)
                if viewer is not None:
                    check(viewer, client.get(f"/api/games/{game_id}/actions",
                                             headers=auth(token)).get_json())
        else:
            check(seat, body)

    play_game(client, game_id, tokens, seed=seed, observe=observe)
    assert check.checked > 20


def _decoded(message: Any) -> str:
    """Everything a mail client could show of an email: its headers and every text part,
    decoded (base64 or quoted-printable bodies would hide a plain search of the bytes)."""
    parts = [f"{name}: {value}" for name, value in message.items()]
    for part in message.walk():
        if part.get_content_maintype() == "text":
            parts.append(str(part.get_content()))
    return "\n".join(parts)


def _account_token(app: Flask, client: FlaskClient, address: str) -> str:
    """Sign in as ``address`` through the API, with the code its sign-in email carries."""
    from dos_server.models import LoginCodeRow
    from dos_server.services import account

    assert client.post("/api/login", json={"email": address}).status_code == 202
    with app.app_context():
        row = db.session.execute(db.select(LoginCodeRow).where(
            LoginCodeRow.email_key == address).order_by(LoginCodeRow.created_at.desc())
        ).scalars().first()
        assert row is not None
        code = account.login_code(row.nonce)
        db.session.remove()
    verified = client.post("/api/login/verify", json={"email": address, "code": code})
    assert verified.status_code == 200, verified.get_data(as_text=True)
    return str(verified.get_json()["account_token"])


def test_a_seats_notes_reach_no_other_answer_email_or_webhook(
        make_app: Callable[..., Flask], smtp: SmtpSink) -> None:
    """Notes written through the API by two seats appear in no other viewer's game, actions,
    events, table talk, record or pages, in no email (your turn, digest, game over) and no
    webhook body, nor in another identity's export; the owner's export has them."""
    receiver = Receiver().start()
    try:
        app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none",
                       WEBHOOK_ALLOW_PRIVATE=True, ACTIVE_SECONDS=0)
        client = app.test_client()
        names = ["ann", "bob", "cid"]
        created = create(client, [{"name": n, "email": f"{n}@example.org"} for n in names],
                         target_score=1)
        game_id = created["id"]
        tokens = {invite["seat"]: join(client, game_id, invite=invite["invite"])["player_token"]
                  for invite in created["invites"]}
        for seat in (0, 1):  # webhooks for ann and bob, the daily digest for cid
            hooked = client.put(f"/api/games/{game_id}/seats/{seat}/notifications",
                                json={"webhook_url": receiver.url(f"/hook{seat}")},
                                headers=auth(tokens[seat]))
            assert hooked.status_code == 200, hooked.get_data(as_text=True)
        assert client.put(f"/api/games/{game_id}/seats/2/notifications", json={"digest": True},
                          headers=auth(tokens[2])).status_code == 200
        notes = {0: "NOTE-ANN-7f3q hold the greens", 1: "NOTE-BOB-k2x9 ann bluffs"}
        for seat, text in notes.items():
            written = client.put(f"/api/games/{game_id}/seats/{seat}/notes",
                                 json={"text": text}, headers=auth(tokens[seat]))
            assert written.status_code == 200, written.get_data(as_text=True)
        # Something an email and a webhook do carry (ann takes an email per message), so that
        # the search below is known to read what they say.
        assert client.patch(f"/api/games/{game_id}/chat", json={"email": True},
                            headers=auth(tokens[0])).status_code == 200
        assert client.post(f"/api/games/{game_id}/messages", json={"text": "TALK-m4r1"},
                           headers=auth(tokens[2])).status_code == 201
        viewers = [(0, tokens[0]), (1, tokens[1]), (2, tokens[2]), (None, None),
                   (None, created["host_token"])]

        def others_see_no_notes(with_record: bool = False) -> None:
            paths = [f"/api/games/{game_id}", f"/api/games/{game_id}/events?limit=500",
                     f"/api/games/{game_id}/messages?limit=200", f"/api/games/{game_id}/chat",
                     f"/api/games/{game_id}/votes", f"/api/games/{game_id}/actions"]
            if with_record:
                paths.append(f"/api/games/{game_id}/record")
            for viewer, token in viewers:
                for path in paths:
                    answer = client.get(path, headers=auth(token))
                    text = answer.get_data(as_text=True)
                    for seat, note in notes.items():
                        if seat != viewer:
                            assert note not in text, (viewer, path)
                        # Not even the seat's own: notes leave only by their own route.
                        assert note.split()[0] not in text, (viewer, path)

        observed = [0]
        digested: list[bool] = []  # truthy once a worker pass ran on cid's turn

        def observe(kind: str, _seat: int | None, body: Any) -> None:
            if kind == "game":
                observed[0] += 1
                waits_on_cid = body["status"] == "active" and body["view"]["current"] == 2
                if observed[0] % 5 == 1 or (waits_on_cid and not any(digested)):
                    others_see_no_notes()
                    run_worker(app)  # the emails and webhooks of the moves so far
                    digested.append(waits_on_cid)  # the digest lists games waiting on cid
            for note in notes.values():
                assert note.split()[0] not in json.dumps(body)

        play_game(client, game_id, tokens, seed=5, observe=observe)
        run_worker(app, passes=5)
        others_see_no_notes(with_record=True)
        for path in (f"/games/{game_id}", f"/games/{game_id}/history",
                     f"/games/{game_id}/record"):
            page = app.test_client().get(path).get_data(as_text=True)
            assert all(note.split()[0] not in page for note in notes.values()), path

        mails = smtp.messages
        kinds = {str(m["X-DOS-Event"]) for m in mails}
        assert {"your_turn", "digest", "game_over"} <= kinds, kinds
        said = [m for m in mails if "TALK-m4r1" in _decoded(m)]
        assert said, "no email showed the table talk: the search reads nothing"
        for mail in mails:
            shown = _decoded(mail)
            for note in notes.values():
                assert note.split()[0] not in shown, (mail["X-DOS-Event"], mail["To"])
        hooks = receiver.all()
        assert any(b"TALK-m4r1" in r.body for r in hooks)
        assert {r.json["type"] for r in hooks} >= {"game.message", "game.your_turn", "game.game_over"}, \
            {r.json["type"] for r in hooks}
        for delivered in hooks:
            for note in notes.values():
                assert note.split()[0].encode() not in delivered.body, delivered.json["type"]

        # Exports: bob's has his notes and none of ann's; ann's has hers alone.
        for seat, address in ((1, "bob@example.org"), (0, "ann@example.org")):
            account_token = _account_token(app, client, address)
            exported = client.get("/api/me/export", headers=auth(account_token))
            assert exported.status_code == 200
            text = exported.get_data(as_text=True)
            assert notes[seat] in text
            assert notes[1 - seat].split()[0] not in text
            assert "NOTE-" not in text.replace(notes[seat], "")
    finally:
        receiver.stop()


# -- logs ---------------------------------------------------------------------------------


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("dos_server")
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


def test_tokens_never_in_logs(make_app: Callable[..., Flask], log_lines: io.StringIO) -> None:
    client = make_app(TESTING=False).test_client()
    created = create(client, [{"name": "ann"}, {"name": "bob"}])
    token = join(client, created["id"], invite=created["invites"][0]["invite"])["player_token"]
    secrets = [token, created["host_token"], created["invite_code"],
               *[i["invite"] for i in created["invites"]]]
    client.get(f"/api/games/{created['id']}", headers=auth(token))
    client.get(f"/api/games/{created['id']}?token={token}", headers=auth(created["host_token"]))
    client.get(f"/api/games/{created['id']}/actions", headers=auth(token + "x"))
    client.post(f"/api/games/{created['id']}/join", json={"invite": created["invites"][1]["invite"]})
    client.post(f"/api/games/{created['id']}/actions", headers=auth(token),
                json={"version": "bad", "turn": token})
    output = log_lines.getvalue()
    lines = [json.loads(line) for line in output.splitlines()]
    assert len(lines) >= 6
    assert {line["logger"] for line in lines} >= {"dos_server.access"}
    assert all({"time", "level", "message"} <= set(line) for line in lines)
    for secret in secrets:
        assert secret not in output
        assert secret.split(".")[-1] not in output  # not even the signature


def test_json_formatter_keeps_only_known_fields() -> None:
    record = logging.LogRecord("dos_server.access", logging.INFO, __file__, 1, "request", None, None)
    record.path = "/api/games/x"
    record.authorization = "Bearer secret-token"
    out = json.loads(JsonFormatter().format(record))
    assert out["path"] == "/api/games/x"
    assert "secret-token" not in json.dumps(out)


@pytest.mark.parametrize("text", [
    "/api/unsubscribe/SECRET",
    "/API/UNSUBSCRIBE/SECRET?x=1",
    "/games/g?INVITE_TOKEN=SECRET",
    "/me/signin?Code=SECRET",
    "reply to play+SECRET@mail.example",
    "Bearer eyJzZWF0IjoxfQ.aXb3Cd.SECRETSECRETSECRETSECRET",
    "/api/unsubscribe%2FSECRET",
    "/games/g%3Ftoken%3DSECRET",
    "/games/g?%74oken=SECRET",
])
def test_every_shape_of_token_is_redacted(text: str) -> None:
    from dos_server.logs import redact

    assert "SECRET" not in redact(text)


def test_text_without_a_token_is_logged_as_it_is() -> None:
    from dos_server.logs import redact

    for text in ("/api/games/abc123/actions", "POST", "request", "0123456789abcdef",
                 "/api/games/g/events?after=12&wait=60"):
        assert redact(text) == text
