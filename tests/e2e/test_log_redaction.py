"""No token reaches a log line: gunicorn run as the Procfile runs it.

The web line of the Procfile (with loopback and a free port, and an access-log format that
adds the query, the raw URI and the Authorization header to gunicorn's default) serves a game;
an unsubscribe link from its outbox is followed by GET and POST, tokens go in ``Authorization``
headers and a query string. Then the access log and the app's JSON log (both captured) must
hold none of the tokens, only ``[redacted]`` where they were.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

import requests
from e2e_server import BIN, ROOT, running_gunicorn

ACCESS_FORMAT = ('%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" '
                 'U=%(U)s q=%(q)s raw=%({raw_uri}e)s auth=%({authorization}i)s')


def procfile_web(port: int) -> list[str]:
    """The Procfile's ``web`` command, bound to loopback on ``port``."""
    line = next(line for line in (ROOT / "Procfile").read_text().splitlines()
                if line.startswith("web:"))
    args = shlex.split(line.removeprefix("web:"))
    assert args[0] == "gunicorn"
    swaps = {"0.0.0.0:${PORT:-5000}": f"127.0.0.1:{port}", "${WEB_CONCURRENCY:-2}": "2"}
    return [str(BIN / "gunicorn"), *(swaps.get(arg, arg) for arg in args[1:])]


def test_tokens_never_reach_the_access_log_or_the_app_log(tmp_path: Path) -> None:
    def command(port: int) -> list[str]:
        args = [*procfile_web(port), "--access-logformat", ACCESS_FORMAT]
        assert "--access-logfile" in args
        return args

    with running_gunicorn(tmp_path, command) as server:
        secrets = exercise(server.url, server.database)
    text = (tmp_path / "gunicorn.log").read_text()

    for name, secret in secrets.items():
        assert secret not in text, f"the {name} appears in the log"
        assert secret.rsplit(".", 1)[-1] not in text, f"the {name}'s signature is in the log"
    access = [line for line in text.splitlines() if "/api/unsubscribe/" in line
              and not line.startswith("{")]
    app_lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    unsubscribes = [e for e in app_lines if "/unsubscribe/" in e.get("path", "")]
    # the requests were logged, by both logs, with the token blanked
    assert len(access) == 3
    assert all("/api/unsubscribe/[redacted]" in line for line in access)
    assert [e["path"] for e in unsubscribes] == ["/api/unsubscribe/[redacted]"] * 3
    assert [e["status"] for e in unsubscribes] == [200, 200, 200]
    assert "auth=[redacted]" in text
    assert "token=[redacted]" in text


def exercise(base: str, database: Path) -> dict[str, str]:
    """Create, join, read with bearer tokens, unsubscribe; returns the tokens used by name."""
    created = requests.post(f"{base}/api/games", timeout=30, json={
        "seats": [{"name": "ann", "email": "ann@example.org"}, {"name": "bob"}]})
    assert created.status_code == 201, created.text
    game = created.json()
    gid = game["id"]
    secrets = {"host token": game["host_token"]}
    for invite in game["invites"]:
        secrets[f"invite {invite['seat']}"] = invite["invite"]
        joined = requests.post(f"{base}/api/games/{gid}/join", json={"invite": invite["invite"]},
                               timeout=30)
        assert joined.status_code == 200, joined.text
        secrets[f"player token {invite['seat']}"] = joined.json()["player_token"]
    bearer = {"Authorization": f"Bearer {secrets['player token 0']}"}
    assert requests.get(f"{base}/api/games/{gid}", headers=bearer, timeout=30).ok
    query = requests.get(f"{base}/api/games/{gid}/events",  # a token where it does not belong
                         params={"token": secrets["player token 1"]}, timeout=30)
    assert query.status_code == 200, query.text

    with sqlite3.connect(database) as connection:  # the link as emailed to ann
        payloads = [json.loads(p) for (p,) in connection.execute(
            "SELECT payload FROM notifications WHERE channel = 'email'")]
    link = urlsplit(next(p["unsubscribe"] for p in payloads if "unsubscribe" in p))
    token = link.path.rsplit("/", 1)[-1]
    secrets["unsubscribe token"] = token
    assert requests.get(f"{base}{link.path}", timeout=30).status_code == 200
    one_click = requests.post(f"{base}{link.path}", data="List-Unsubscribe=One-Click", timeout=30,
                              headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert one_click.status_code == 200, one_click.text
    encoded = requests.get(f"{base}/api/%75nsubscribe/{token}", timeout=30)  # same link, spelt
    assert encoded.status_code == 200, encoded.text
    return secrets
