"""What a web process imports (issue #29, memory with 1,000 waiting clients).

gunicorn's master imports only what its settings and logger need; a web worker leaves the
modules of the command line, the notification worker and the rare pages unimported until
they are used (dos_server/commands.py, dos_server/migrate.py). Each is checked in a fresh
interpreter, a worker's as gunicorn runs it: gevent's patching first, then create_app and
requests; then the command line still finds every command and imports what it needs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from flask import Flask

ROOT = Path(__file__).resolve().parents[2]
PATHS = [str(ROOT / "server"), str(ROOT / "client")]

# Imported by the command line, the notification worker or a rare page, never by serving games.
LATER = [
    "alembic", "mako", "flask_migrate", "pygments",  # flask db (Flask-Migrate)
    "requests", "urllib3", "standardwebhooks", "smtplib", "aiosmtpd",  # delivery, mail-in
    "openskill",  # the first rated game
    "markdown_it",  # the rules page
    "dos_server.worker", "dos_server.mailin", "dos_server.admin_cli", "dos_server.ops",
    "dos_server.localmail", "dos_server.delivery", "dos_server.services.admin",
    "dos_server.services.backup", "dos_server.services.retention",
]
# What the master forks its workers from: none of the app's libraries, nor the workers' gevent.
NOT_IN_MASTER = ["flask", "werkzeug", "jinja2", "sqlalchemy", "psycopg", "dos_engine", "gevent"]

LOADED = """
def loaded(names):
    return sorted(n for n in names if n in sys.modules or any(m.startswith(n + ".")
                                                              for m in sys.modules))
"""

MASTER = """
import sys
sys.path[:0] = {paths!r}
import dos_server.gunicorn_conf, dos_server.logs
from gunicorn.config import Config

settings = Config()  # the master's own reading of the settings, and of the worker class
settings.set("worker_class", dos_server.gunicorn_conf.worker_class)
assert settings.worker_class.__name__ == "GeventWorker"
{loaded}
print(",".join(loaded({names!r})))
"""

WORKER = """
import json, sys
sys.path[:0] = {paths!r}
from gevent import monkey

monkey.patch_all()
from dos_server import create_app
{loaded}
app = create_app({{"TESTING": True, "SECRET_KEY": "test-secret", "RATELIMIT_ENABLED": False,
                  "SQLALCHEMY_DATABASE_URI": {url!r}}})
client = app.test_client()
statuses = []
created = client.post("/api/games", json={{"seats": [{{"name": "ann"}}, {{"name": "bob"}}]}})
statuses.append(created.status_code)
game = created.get_json()["id"]
joined = client.post(f"/api/games/{{game}}/join",
                     json={{"invite": created.get_json()["invites"][0]["invite"]}})
statuses.append(joined.status_code)
token = joined.get_json()["player_token"]
waited = client.get(f"/api/games/{{game}}/events?after=0&wait=1",
                    headers={{"Authorization": f"Bearer {{token}}"}})
statuses.append(waited.status_code)
statuses.append(client.get("/").status_code)
serving = loaded({names!r})
done = app.test_cli_runner().invoke(args=["db", "current"])
print(json.dumps({{"statuses": statuses, "serving": serving, "db_current": done.exit_code,
                   "db_output": done.output, "after_db": loaded(["alembic"])}}))
"""


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""


def test_gunicorn_master_imports_no_app_library() -> None:
    """The master loads dos_server.gunicorn_conf, its worker class and the logger class
    (Procfile), no more."""
    assert _run(MASTER.format(paths=PATHS, loaded=LOADED, names=NOT_IN_MASTER)) == ""


def test_web_worker_imports_command_line_modules_only_when_used(app: Flask, db_url: str) -> None:
    # ``app`` migrated the database (in this process, which may import anything).
    out = json.loads(_run(WORKER.format(paths=PATHS, loaded=LOADED, names=LATER, url=db_url)))
    assert out["statuses"] == [201, 200, 200, 200]
    assert out["serving"] == []
    # The command line finds Flask-Migrate's commands, and Alembic is imported for them.
    assert out["db_current"] == 0, out["db_output"]
    assert out["after_db"] == ["alembic"]


def test_command_line_lists_every_command(app: Flask) -> None:
    listed = app.test_cli_runner().invoke(args=["--help"])
    assert listed.exit_code == 0, listed.output
    for name in ("db", "worker", "mail-in", "inbound", "admin", "ratings", "backup", "restore",
                 "retention", "mail"):
        assert f"  {name} " in listed.output, name
