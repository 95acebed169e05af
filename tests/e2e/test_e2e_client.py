"""End to end: gunicorn as a subprocess, the installed ``dos-client`` in subprocesses.

Two human seats (two profiles in one config file) and a greedy bot play a whole game; two
processes race on the same seat's move; four processes race on the same turn with raw HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from e2e_server import Server

from dos_engine.record import GameRecord, replay

BIN = Path(sys.executable).parent
CLIENT = str(BIN / "dos-client")
PROFILES = ["ann", "bob"]  # seats 0 and 1; seat 2 is the server's greedy bot


def client(config: Path, profile: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOS_CLIENT_CONFIG": str(config), "NO_COLOR": "1"}
    for name in ("DOS_SERVER", "DOS_PROFILE", "DOS_JSON", "DOS_DEBUG"):
        env.pop(name, None)
    return subprocess.run([CLIENT, "--profile", profile, *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def ok(config: Path, profile: str, *args: str) -> str:
    done = client(config, profile, *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def js(config: Path, profile: str, *args: str) -> Any:
    return json.loads(ok(config, profile, "--json", *args))


def start_game(server: Server, config: Path) -> str:
    for profile in PROFILES:
        ok(config, profile, "server", server.url)
    created = js(config, "ann", "new", "--seat", "Ann", "--seat", "Bob", "--bot", "greedy",
                 "--me", "Ann", "--target", "30", "--as", "g")
    joined = js(config, "bob", "join", created["invites"]["Bob"], "--as", "g")
    assert joined["seat"] == 1
    return str(created["id"])


def pick(listing: dict[str, Any]) -> int:
    """Greedy enough to finish soon: most cards matched, then anything but drawing."""
    def score(entry: dict[str, Any]) -> tuple[int, int]:
        action = entry["action"]
        cards = action.count("+") + 1 if action.startswith("m") else 0
        return (cards, 0 if action == "draw" else 1)

    return int(max(listing["actions"], key=score)["number"])


def test_whole_game_race_and_resume(gunicorn_server: Server, tmp_path: Path) -> None:
    config = tmp_path / "client.json"
    game_id = start_game(gunicorn_server, config)
    body = js(config, "ann", "show")
    assert body["status"] == "active"
    mover = PROFILES[body["view"]["current"]]  # bots move on the server: a human is up

    # Two processes for the same seat at once: one draw is applied, the other is refused.
    before = body["version"]
    seen = len(js(config, mover, "history"))  # a bot may have drawn before: count new ones
    env = {**os.environ, "DOS_CLIENT_CONFIG": str(config), "NO_COLOR": "1"}
    racers = [subprocess.Popen([CLIENT, "--profile", mover, "move", "draw"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    outcomes = sorted(p.wait(timeout=60) for p in racers)
    errors = [p.communicate()[1] for p in racers]
    assert outcomes[0] == 0, errors
    assert outcomes[1] in (3, 4), errors
    assert all("Traceback" not in e for e in errors)
    after = js(config, mover, "show")
    assert after["version"] == before + 1
    draws = [e for e in js(config, mover, "history")[seen:]
             if e["kind"] == "action" and e["data"]["action"] == "draw"]
    assert len(draws) == 1

    # Play to the end: `moves --json`, then `move N`; every step is a fresh process.
    state = after
    for _ in range(400):
        if state["status"] == "finished":
            break
        profile = PROFILES[state["view"]["current"]]
        listing = js(config, profile, "moves")
        assert listing["your_turn"], listing
        result = js(config, profile, "move", str(pick(listing)))
        assert result["game"]["version"] > state["version"]
        state = result["game"]
    assert state["status"] == "finished", "no winner within 400 moves"
    winner = state["view"]["winner"]
    assert winner in (0, 1, 2)
    assert max(state["view"]["scores"]) >= 30

    # A resumed session: new processes read the saved config.
    rows = js(config, "bob", "games")
    assert rows == [{**rows[0], "game": "g", "id": game_id, "status": "finished",
                     "your_turn": False}]
    text = ok(config, "ann", "show")
    assert "Game over:" in text
    assert "won." in text
    assert "Game over:" in ok(config, "bob", "history")
    assert ok(config, "ann", "wait", "--timeout", "1").strip() == "g is over."
    over = client(config, "ann", "move", "1")
    assert over.returncode == 3
    assert "the game g is over" in over.stderr  # not "not your turn"
    assert "Traceback" not in over.stderr

    # The public record replays to the same result.
    record = requests.get(f"{gunicorn_server.url}/api/games/{game_id}/record", timeout=10)
    assert record.status_code == 200
    replay(GameRecord.from_dict(record.json()))  # the record's actions replay without error


RACER = """
import sys, time, requests
url, token, version, action, at = sys.argv[1:]
time.sleep(max(0.0, float(at) - time.time()))
r = requests.post(url, json={"version": int(version), "actions": [action]},
                  headers={"Authorization": f"Bearer {token}"}, timeout=30)
print(r.status_code, r.json().get("type", ""))
"""


def test_four_processes_same_turn(gunicorn_server: Server, tmp_path: Path) -> None:
    config = tmp_path / "client.json"
    game_id = start_game(gunicorn_server, config)
    seat = js(config, "ann", "show")["view"]["current"]
    saved = json.loads(config.read_text())["profiles"][PROFILES[seat]]["games"]["g"]
    token = saved["token"]
    base = f"{gunicorn_server.url}/api/games/{game_id}"
    auth = {"Authorization": f"Bearer {token}"}
    listing = requests.get(f"{base}/actions", headers=auth, timeout=10).json()
    events_before = requests.get(f"{base}/events", params={"limit": 500}, headers=auth,
                                 timeout=10).json()["events"]
    at = time.time() + 1.5
    racers = [subprocess.Popen([sys.executable, "-c", RACER, f"{base}/actions", token,
                                str(listing["version"]), "draw", str(at)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(4)]
    answers = []
    for racer in racers:
        out, err = racer.communicate(timeout=60)
        assert racer.returncode == 0, err
        answers.append(out.split())
    statuses = sorted(int(a[0]) for a in answers)
    assert statuses == [200, 409, 409, 409], answers
    assert all(a[1].endswith("stale-version") for a in answers if a[0] == "409")
    game = requests.get(base, headers=auth, timeout=10).json()
    assert game["version"] == listing["version"] + 1
    events = requests.get(f"{base}/events", params={"limit": 500}, headers=auth,
                          timeout=10).json()["events"]
    new = [e for e in events if e["seq"] > events_before[-1]["seq"]]
    assert [e["data"]["action"] for e in new if e["kind"] == "action"] == ["draw"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def test_shell_completion_scripts_and_completions() -> None:
    """The installed dos-client prints click's completion script and completes commands."""
    binary = str(Path(sys.executable).parent / "dos-client")
    for shell in ("bash", "zsh", "fish"):
        script = subprocess.run([binary], env={**os.environ,
                                               "_DOS_CLIENT_COMPLETE": f"{shell}_source"},
                                capture_output=True, text=True, timeout=30, check=True)
        assert "_DOS_CLIENT_COMPLETE" in script.stdout, shell
    completed = subprocess.run(
        [binary], env={**os.environ, "_DOS_CLIENT_COMPLETE": "bash_complete",
                       "COMP_WORDS": "dos-client mo", "COMP_CWORD": "1"},
        capture_output=True, text=True, timeout=30, check=True)
    offered = {line.split(",", 1)[-1] for line in completed.stdout.split()}  # "plain,moves"
    assert {"move", "moves"} <= offered
