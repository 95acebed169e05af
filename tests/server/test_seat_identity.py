"""A token opens only its own player's seat, however seats are renumbered.

Every token purpose (player, invite, unsubscribe, reply address) is collected along every
renumbering path (start with open seats, remove seat, any order of rotate/join/remove); each
old token must either still open its own player's seat or be refused, never another's.
"""

from __future__ import annotations

import itertools
import random

import pytest
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous import URLSafeTimedSerializer
from server_helpers import assert_problem, auth, create, join

from dos_server import create_app, tokens
from dos_server.extensions import db
from dos_server.models import NotificationRow, SeatRow
from dos_server.services import access
from testkit import SECRET, app_config, dispose, upgrade

Held = tuple[str, str, str]  # (purpose, owner's name, token)


def _seat_name_for(app: Flask, client: FlaskClient, game_id: str, purpose: str,
                   token: str) -> str | None:
    """Whose seat ``token`` opens now (None: refused). Uses the real entry points."""
    if purpose == "player":
        answer = client.get(f"/api/games/{game_id}", headers=auth(token))
        if answer.status_code in (401, 403):
            assert_problem(answer, answer.status_code)
            return None
        assert answer.status_code == 200, answer.get_data(as_text=True)
        body = answer.get_json()
        return str(body["seats"][body["you"]]["name"])
    if purpose == "invite":
        answer = client.post(f"/api/games/{game_id}/join", json={"invite": token})
        if answer.status_code in (401, 403, 409):
            return None
        assert answer.status_code == 200, answer.get_data(as_text=True)
        return str(answer.get_json()["name"])
    with app.app_context():
        game = access.get_game(game_id)
        if purpose == "unsubscribe":
            claims = tokens.read("unsubscribe", token)
            seat = access.find_seat(game, claims.seat_id, claims.legacy_index)
        else:
            mail = tokens.read_mail(token)
            assert mail is not None
            seat = access.find_seat(game, mail.seat_id, mail.legacy_index)
            if seat is not None and seat.token_version != mail.token_version:
                seat = None
        name = None if seat is None else seat.name
        db.session.remove()
    return name


def _mail_tokens(app: Flask, game_id: str) -> list[Held]:
    """Unsubscribe links and reply addresses from every email in the outbox, by recipient."""
    held: list[Held] = []
    with app.app_context():
        rows = db.session.execute(db.select(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.channel == "email")).scalars()
        for row in rows:
            owner = row.payload["name"]
            held.append(("unsubscribe", owner, row.payload["unsubscribe"].rsplit("/", 1)[1]))
            if row.payload.get("reply_to"):
                local = row.payload["reply_to"].split("@")[0]
                held.append(("reply", owner, local[len(tokens.MAIL_LOCAL_PREFIX):]))
        db.session.remove()
    return held


def _assert_never_another_seat(app: Flask, client: FlaskClient, game_id: str,
                               held: list[Held]) -> None:
    for purpose, owner, token in held:
        opened = _seat_name_for(app, client, game_id, purpose, token)
        assert opened in (owner, None), f"{purpose} token of {owner} opened {opened}'s seat"


def _email(name: str) -> dict[str, str]:
    return {"name": name, "email": f"{name}@example.org"}


def test_bob_rotates_then_host_starts_without_the_open_seat(app: Flask, client: FlaskClient) -> None:
    """Seen: bob's rotated token (seat 2, version 2) showed carol's hand after the start."""
    game = create(client, [_email("alice"), {}, _email("bob"), _email("carol")])
    invites = {i["name"]: i["invite"] for i in game["invites"]}
    bob = join(client, game["id"], invite=invites["bob"])
    rotated = client.post(f"/api/games/{game['id']}/seats/{bob['seat']}/token",
                          headers=auth(bob["player_token"])).get_json()
    carol = join(client, game["id"], invite=invites["carol"])
    assert rotated["invite"] is None  # a player rotating their own seat needs no invite
    held: list[Held] = [("player", "bob", bob["player_token"]),
                        ("player", "bob", rotated["player_token"]),
                        ("invite", "bob", invites["bob"]),
                        ("player", "carol", carol["player_token"])]
    started = client.post(f"/api/games/{game['id']}/start", headers=auth(game["host_token"]))
    assert started.status_code == 200
    held += _mail_tokens(app, game["id"])
    _assert_never_another_seat(app, client, game["id"], held)
    # ... and the newest tokens still open their own seats after the renumbering.
    assert _seat_name_for(app, client, game["id"], "player", rotated["player_token"]) == "bob"
    assert _seat_name_for(app, client, game["id"], "player", carol["player_token"]) == "carol"
    assert _seat_name_for(app, client, game["id"], "player", bob["player_token"]) is None


def test_mallory_rotates_then_host_removes_her_seat(app: Flask, client: FlaskClient) -> None:
    """Seen: after seat 1 was removed, mallory's rotated token and invite opened bob's seat."""
    game = create(client, [_email("alice"), _email("mallory"), _email("bob"), {}])
    invites = {i["name"]: i["invite"] for i in game["invites"]}
    mallory = join(client, game["id"], invite=invites["mallory"])
    rotated = client.post(f"/api/games/{game['id']}/seats/1/token",
                          headers=auth(mallory["player_token"])).get_json()
    bob = join(client, game["id"], invite=invites["bob"])
    held: list[Held] = [("player", "mallory", rotated["player_token"]),
                        ("invite", "mallory", invites["mallory"]),
                        ("player", "bob", bob["player_token"]),
                        *_mail_tokens(app, game["id"])]
    removed = client.delete(f"/api/games/{game['id']}/seats/1", headers=auth(game["host_token"]))
    assert removed.status_code == 200
    for purpose, token in (("player", rotated["player_token"]), ("invite", invites["mallory"])):
        assert _seat_name_for(app, client, game["id"], purpose, token) is None
    assert _seat_name_for(app, client, game["id"], "player", bob["player_token"]) == "bob"
    _assert_never_another_seat(app, client, game["id"], held)


OPERATIONS = ("join-a", "rotate-a", "join-b", "rotate-b", "remove-a")
# 24 of the 120 orders (a fixed sample: each run checks the same ones).
ORDERS = random.Random(10).sample(list(itertools.permutations(OPERATIONS)), 24)


@pytest.mark.parametrize("order", ORDERS, ids="/".join)
def test_every_order_of_rotate_join_remove(app: Flask, client: FlaskClient,
                                           order: tuple[str, ...]) -> None:
    """Any order of rotations, joins and removals, then the start with open seats removed."""
    game = create(client, [_email("host"), _email("a"), {}, _email("b")])
    game_id, host = game["id"], auth(game["host_token"])
    invites = {i["name"]: i["invite"] for i in game["invites"]}
    held: list[Held] = [("invite", name, invite) for name, invite in invites.items()]
    players: dict[str, str] = {}

    def seat_index(name: str) -> int | None:
        seats = client.get(f"/api/games/{game_id}").get_json()["seats"]
        return next((s["seat"] for s in seats if s["name"] == name), None)

    for step in order:
        verb, name = step.split("-")
        index = seat_index(name)
        if index is None:
            continue  # removed earlier in this order
        if verb == "join":
            joined = client.post(f"/api/games/{game_id}/join",
                                 json={"invite": invites[name]})
            if joined.status_code == 200:
                players[name] = joined.get_json()["player_token"]
                held.append(("player", name, players[name]))
        elif verb == "rotate":
            rotated = client.post(f"/api/games/{game_id}/seats/{index}/token", headers=host)
            assert rotated.status_code == 200
            body = rotated.get_json()
            assert body["player_token"] is None  # the host gets an invite, never a player token
            invites[name] = body["invite"]
            held.append(("invite", name, body["invite"]))
        else:
            assert client.delete(f"/api/games/{game_id}/seats/{index}",
                                 headers=host).status_code == 200
        _assert_never_another_seat(app, client, game_id, held)
    held += _mail_tokens(app, game_id)
    if client.get(f"/api/games/{game_id}").get_json()["status"] == "waiting":
        assert client.post(f"/api/games/{game_id}/start", headers=host).status_code == 200
    held += _mail_tokens(app, game_id)
    _assert_never_another_seat(app, client, game_id, held)


def test_seat_identities_are_unguessable_and_never_reused(app: Flask, client: FlaskClient) -> None:
    def public_ids() -> dict[str, str]:
        with app.app_context():
            rows = db.session.execute(db.select(SeatRow.game_id, SeatRow.name, SeatRow.public_id))
            found = {f"{game_id}/{name}": public_id for game_id, name, public_id in rows}
            db.session.remove()
        return found

    for _ in range(5):
        create(client, [{"name": "a"}, {"name": "b"}, {"name": "c"}, {}])
    before = public_ids()
    assert len(set(before.values())) == len(before) == 20
    assert all(len(i) == 12 and i.isalpha() and i.islower() for i in before.values())
    for game_id in {key.split("/")[0] for key in before}:
        host = client.get(f"/api/games/{game_id}")  # spectator: the seats' order
        assert host.status_code == 200
    # Removing a seat moves the others down; their identities stay as they were.
    game = create(client, [{"name": "x"}, {"name": "y"}, {"name": "z"}, {}])
    ids = public_ids()
    client.delete(f"/api/games/{game['id']}/seats/0", headers=auth(game["host_token"]))
    after = public_ids()
    assert after == {k: v for k, v in ids.items() if k != f"{game['id']}/x"}


# -- the upgrade: tokens issued before seats had identities ---------------------------------

BEFORE_IDENTITIES = "b86578fcfa14"  # migration 0004


def _legacy_token(purpose: str, game_id: str, index: int, version: int) -> str:
    """A token as the server issued it before migration 0005: it names the seat's index."""
    serializer = URLSafeTimedSerializer([SECRET], salt=tokens.SALTS[purpose])
    return str(serializer.dumps({"g": game_id, "v": version, "s": index}))


def _legacy_mail(app: Flask, game_id: str, index: int, version: int) -> str:
    with app.app_context():
        return tokens._mail_signer().sign(f"{game_id}.{index}.{version}.1").decode()


def test_upgrade_keeps_every_live_token_on_its_own_seat(db_url: str) -> None:
    app = create_app(app_config(db_url))
    try:
        upgrade(app)
        client = app.test_client()
        waiting = create(client, [{"name": "ann"}, {"name": "ben"}, {}, {"name": "cy"}])
        active = create(client, [{"name": "dee"}, {"bot": "greedy"}, {"name": "eve"}])
        games: dict[str, list[str | None]] = {
            waiting["id"]: ["ann", "ben", None, "cy"], active["id"]: ["dee", None, "eve"]}
        version = client.get(f"/api/games/{active['id']}").get_json()["version"]
        with app.app_context():
            flask_migrate_downgrade(BEFORE_IDENTITIES)
        held: dict[str, list[Held]] = {game_id: [] for game_id in games}
        for game_id, names in games.items():
            for index, name in enumerate(names):
                if name is None:
                    continue
                for purpose in ("player", "invite", "unsubscribe"):
                    held[game_id].append((purpose, name, _legacy_token(purpose, game_id, index, 1)))
                held[game_id].append(("reply", name, _legacy_mail(app, game_id, index, version)))
        upgrade(app)
        for game_id, tokens_held in held.items():
            for purpose, owner, token in tokens_held:
                if purpose != "invite":
                    assert _seat_name_for(app, client, game_id, purpose, token) == owner
        # Renumbering after the upgrade: the legacy tokens follow their seats, or lapse.
        removed = client.delete(f"/api/games/{waiting['id']}/seats/0",
                                headers=auth(waiting["host_token"]))
        assert removed.status_code == 200
        for purpose, owner, token in held[waiting["id"]]:
            opened = _seat_name_for(app, client, waiting["id"], purpose, token)
            assert opened == (None if owner == "ann" else owner), (purpose, owner, opened)
        for purpose, owner, token in held[active["id"]]:
            assert _seat_name_for(app, client, active["id"], purpose, token) == owner
    finally:
        dispose(app)


def flask_migrate_downgrade(revision: str) -> None:
    import flask_migrate

    flask_migrate.downgrade(revision=revision)


def test_undeliverable_notice_goes_to_the_channels_owner_after_renumbering(
        app: Flask, client: FlaskClient) -> None:
    """A dead-lettered email is reported on its owner's webhook, never on the seat that now
    has the owner's old number (which would show that player someone else's address)."""
    from dos_server import worker

    seats = [{"name": name, "email": f"{name}@example.org",
              "webhook_url": f"http://127.0.0.1:9/{name}"} for name in ("ann", "bob", "cat")]
    game = create(client, [seats[0], {}, seats[1], seats[2]])
    removed = client.delete(f"/api/games/{game['id']}/seats/1", headers=auth(game["host_token"]))
    assert removed.status_code == 200
    with app.app_context():
        invite = db.session.execute(db.select(NotificationRow).where(
            NotificationRow.game_id == game["id"], NotificationRow.channel == "email",
            NotificationRow.target == "bob@example.org",
            NotificationRow.event == "invited")).scalar_one()
        assert invite.seats == [2]  # bob's number when the email was queued: now cat's
        invite.last_error = "550 no such user"
        worker._dead_letter(invite)
        db.session.commit()
        notices = db.session.execute(db.select(NotificationRow).where(
            NotificationRow.event == "undeliverable")).scalars().all()
        assert [n.target for n in notices] == ["http://127.0.0.1:9/bob"]
        db.session.remove()
