"""Joining by email: an invited player takes the seat by replying ``join`` to the invitation,
and may then play the whole game from the emails; before everyone has joined, nothing is
dealt and other replies are answered that the game has not started."""

from __future__ import annotations

from mailtest_helpers import (
    ANN,
    BJORN,
    SEATS,
    MailWorld,
    emails,
    latest,
    moves_of,
    reply_to,
    text_of,
    write_reply,
)

from dos_server.extensions import db
from dos_server.models import GameRow


def _status(world: MailWorld, game_id: str) -> tuple[str, list[bool]]:
    with world.app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        out = (game.status, [seat.claimed for seat in game.seats])
        db.session.remove()
    return out


def _reply(world: MailWorld, address: str, command: str) -> str:
    invitation = emails(world, address, "invited")[-1]
    world.send(write_reply("plain", invitation, command, address), address,
               reply_to(invitation))
    world.run_worker()
    return text_of(world.sink.to(address)[-1])


def test_invited_players_join_by_replying_and_then_play_by_email(world: MailWorld) -> None:
    created = world.client.post("/api/games", json={"seats": SEATS})
    assert created.status_code == 201, created.get_json()
    game_id = created.get_json()["id"]
    world.run_worker()
    for address in (ANN, BJORN):
        (invitation,) = emails(world, address, "invited")
        assert invitation["Reply-To"], "an invitation can be answered"
        assert "reply to this email with the word: join" in text_of(invitation)

    answer = _reply(world, BJORN, "1")
    assert "has not started yet" in answer
    assert "join" in answer
    assert world.inbound()[-1] == ("rejected", "not-started")
    assert _status(world, game_id) == ("waiting", [False, False, True])

    assert "You joined." in _reply(world, ANN, "join")
    assert world.inbound()[-1] == ("processed", "joined")
    assert _status(world, game_id) == ("waiting", [True, False, True])
    assert not emails(world, ANN, "your_turn")
    assert not emails(world, BJORN, "your_turn")
    assert "already joined" in _reply(world, ANN, "join")

    answer = _reply(world, BJORN, "join")
    assert "the game has started" in answer
    assert _status(world, game_id)[0] == "active"
    _, _, state = world.game(game_id)
    mover = [ANN, BJORN][state.current]  # the bot has played, if it was first
    assert moves_of(latest(world, mover)), "whoever plays first is told, with the moves"


def test_joining_by_email_after_the_host_started_the_game(world: MailWorld) -> None:
    created = world.client.post("/api/games", json={"seats": SEATS}).get_json()
    world.run_worker()
    started = world.client.post(f"/api/games/{created['id']}/start",
                                headers={"Authorization": f"Bearer {created['host_token']}"})
    assert started.status_code == 200, started.get_json()
    assert _status(world, created["id"]) == ("active", [False, False, True])
    assert "already under way" in _reply(world, BJORN, "join")
    assert _status(world, created["id"]) == ("active", [False, True, True])
