"""A person plays a searching bot through the API of a real server (gunicorn) while a real worker
process (``flask --app dos_server worker``) plays the bot's turns.

The request that ends the person's turn answers with the bot still to move (the search never
runs inside a person's request); the bot's turn then follows from the worker, seen by polling
the game as the person would. The finished game's record replays to the scores it shows.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from e2e_server import BIN, ROOT, Server, server_env, stop

from dos_engine import GameRecord, replay
from dos_engine.search import DEFAULT_LEVEL

PERSON, BOT = 0, 1
BOT_TURN_TIMEOUT = 300.0  # seconds: generous, the machine running the tests may be loaded


@pytest.fixture
def worker(gunicorn_server: Server, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = server_env(gunicorn_server.database)
    env.update({"DOS_WORKER_POLL_SECONDS": "0.05", "DOS_INSTANCE_PATH": str(tmp_path / "instance")})
    with (tmp_path / "worker.log").open("wb") as log:
        process = subprocess.Popen([str(BIN / "flask"), "--app", "dos_server", "worker"],
                                   cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        stop(process)


def _json(response: requests.Response) -> dict[str, Any]:
    assert response.ok, (response.status_code, response.text)
    return dict(response.json())


def test_a_person_plays_a_search_bot_whose_turns_the_worker_plays(
    gunicorn_server: Server, worker: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    url = gunicorn_server.url
    http = requests.Session()
    game = _json(http.post(f"{url}/api/games", timeout=30, json={
        "seats": [{"name": "ann"}, {"bot": DEFAULT_LEVEL}], "options": {"target_score": 1}}))
    game_id = game["id"]
    token = _json(http.post(f"{url}/api/games/{game_id}/join", timeout=30,
                            json={"invite": game["invites"][0]["invite"]}))["player_token"]
    headers = {"Authorization": f"Bearer {token}"}

    def read() -> dict[str, Any]:
        return _json(http.get(f"{url}/api/games/{game_id}", headers=headers, timeout=30))

    def wait_for_person() -> dict[str, Any]:
        """Poll until the bot has played its turn (the worker's doing) or the game is over."""
        ends = time.monotonic() + BOT_TURN_TIMEOUT
        while time.monotonic() < ends:
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
            body = read()
            if body["status"] != "active" or body["view"]["current"] == PERSON:
                return body
            time.sleep(0.1)
        raise AssertionError("the worker did not play the bot's turn:\n"
                             + (tmp_path / "worker.log").read_text()[-3000:])

    body = wait_for_person()  # the bot may be first to move
    bot_turns = 0
    for _ in range(500):
        if body["status"] != "active":
            break
        listing = _json(http.get(f"{url}/api/games/{game_id}/actions", headers=headers, timeout=30))
        answer = _json(http.post(f"{url}/api/games/{game_id}/actions", headers=headers, timeout=30,
                                 json={"version": listing["version"], "number": 1}))
        after = answer["game"]
        if after["status"] == "active" and after["view"]["current"] != PERSON:
            # The person's turn ended: the answer came back with the bot still to move, and
            # none of its actions are among the request's events.
            assert after["view"]["current"] == BOT
            assert answer["version"] == listing["version"] + 1
            assert not [e for e in answer["events"] if e["kind"] == "action" and e["seat"] == BOT]
            body = wait_for_person()
            assert body["version"] > answer["version"]  # the worker moved the game on
            bot_turns += 1
        else:
            body = after
    else:
        raise AssertionError("the game did not finish in 500 of the person's actions")
    assert body["status"] == "finished"
    assert bot_turns > 0

    record = GameRecord.from_dict(_json(http.get(f"{url}/api/games/{game_id}/record", timeout=30)))
    assert record.players[PERSON] == "ann"
    replayed = replay(record)
    assert replayed.is_over
    assert list(replayed.scores) == body["view"]["scores"]
