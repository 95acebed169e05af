"""One list of notification event names: the server's (services/notify.py EVENTS).

The client keeps a copy (it never imports dos_server, and `--help` must not need a server):
these tests fail the moment the copies disagree.
"""

from __future__ import annotations

from pathlib import Path

from dos_client.commands.seat import NOTIFY_EVENTS
from dos_server import create_app
from dos_server.schemas import EVENT_NAMES
from dos_server.services.notify import EVENTS


def test_the_client_knows_the_servers_event_names() -> None:
    assert tuple(NOTIFY_EVENTS) == tuple(EVENTS)


def test_the_api_accepts_and_documents_exactly_those_names(tmp_path: Path) -> None:
    assert tuple(EVENT_NAMES) == tuple(EVENTS)
    app = create_app({"TESTING": True, "SECRET_KEY": "event-names",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'dos.sqlite3'}"})
    document = app.test_client().get("/openapi.json").get_json()
    channels = document["components"]["schemas"]["ChannelEvents"]["properties"]
    assert set(channels) == {"email", "webhook"}
    for channel in channels.values():
        assert tuple(channel["items"]["enum"]) == tuple(EVENTS)
