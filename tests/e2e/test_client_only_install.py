"""A player installs only the client.

A fresh virtual environment gets ``pip install <this project>`` without the ``server`` extra:
it has click, requests, rich and platformdirs but none of the server's stack, and its
``dos-client`` plays a game on a server started from the test environment (gunicorn).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_server import ROOT, Server

SERVER_ONLY = ["flask", "sqlalchemy", "psycopg", "gunicorn", "aiosmtpd", "marshmallow",
               "flask_smorest", "standardwebhooks", "itsdangerous"]


@pytest.fixture(scope="module")
def client_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fresh environment's bin folder (pip from this environment installs into it;
    --isolated: PyPI and pip's cache only, as a player's machine would)."""
    venv = tmp_path_factory.mktemp("client-only") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check",
         "--python", str(venv / "bin" / "python"), "install", "--quiet", str(ROOT)],
        capture_output=True, text=True, timeout=600, check=False)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv / "bin"


def test_the_client_only_install_has_no_server_stack(client_only: Path) -> None:
    probe = ("import importlib.util, json, sys; "
             "print(json.dumps({n: importlib.util.find_spec(n) is not None "
             "for n in sys.argv[1:]}))")
    found = json.loads(subprocess.run(
        [str(client_only / "python"), "-c", probe, *SERVER_ONLY, "click", "requests", "rich",
         "platformdirs", "dos_client", "dos_engine"],
        capture_output=True, text=True, timeout=60, check=True).stdout)
    assert [name for name in SERVER_ONLY if found[name]] == []
    assert all(found[name] for name in ("click", "requests", "rich", "platformdirs",
                                        "dos_client", "dos_engine"))
    helped = subprocess.run([str(client_only / "dos-client"), "--help"], capture_output=True,
                            text=True, timeout=60, check=True)
    assert "Exit codes" in helped.stdout


def test_the_client_only_install_plays_a_move(client_only: Path, gunicorn_server: Server,
                                              tmp_path: Path) -> None:
    env = {**os.environ, "DOS_CLIENT_CONFIG": str(tmp_path / "client.json"), "NO_COLOR": "1",
           "NO_PROXY": "127.0.0.1"}
    for name in ("DOS_SERVER", "DOS_PROFILE", "DOS_JSON", "DOS_DEBUG", "PYTHONPATH"):
        env.pop(name, None)

    def client(*args: str) -> Any:
        done = subprocess.run([str(client_only / "dos-client"), "--json", *args], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return json.loads(done.stdout)

    created = client("--server", gunicorn_server.url, "new", "--seat", "Ann", "--seat", "Bob",
                     "--me", "Ann", "--as", "g")
    client("--profile", "bob", "--server", gunicorn_server.url, "join",
           created["invites"]["Bob"])
    state = client("show")
    profile = ["default", "bob"][state["view"]["current"]]
    listing = client("--profile", profile, "moves")
    played = client("--profile", profile, "move", "1")
    assert played["applied"] == [listing["actions"][0]["action"]]
    assert played["game"]["version"] > state["version"]
