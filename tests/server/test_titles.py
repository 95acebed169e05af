"""A game may have a title ("Friday cards"): stored clean, shown in every body and email.

Each test runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, join

from dos_server.delivery.mail.dispatch import build
from dos_server.extensions import db
from dos_server.models import GameRow, NotificationRow

SEATS = [{"name": "ann", "email": "ann@example.org"}, {"name": "bob"}]


def _create(client: FlaskClient, **body: Any) -> Any:
    return client.post("/api/games", json={"seats": SEATS, **body})


def test_a_title_is_stored_clean_and_shown_to_every_reader(app: Flask, client: FlaskClient) -> None:
    response = _create(client, title="  Friday\u00a0 cards  ")
    assert response.status_code == 201, response.get_data(as_text=True)
    game = response.get_json()
    assert game["title"] == "Friday cards"  # trimmed, inner spaces made one
    token = join(client, game["id"], invite=game["invites"][0]["invite"])["player_token"]
    seen = client.get(f"/api/games/{game['id']}", headers=auth(token)).get_json()
    assert seen["title"] == "Friday cards"
    spectator = client.get(f"/api/games/{game['id']}").get_json()
    assert spectator["title"] == "Friday cards"
    untitled = _create(client).get_json()
    assert untitled["title"] is None


def test_emails_name_the_game_by_its_title(app: Flask, client: FlaskClient) -> None:
    game = _create(client, title="Friday cards").get_json()
    with app.app_context():
        rows = db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.game_id == game["id"], NotificationRow.channel == "email")
        ).scalars().all()
        assert rows
        for row in rows:
            assert row.payload["game_title"] == "Friday cards"
            message = build(dict(row.payload), row.message_id)
            assert message["Subject"].startswith(f"DOS Friday cards ({game['id']}): ")
        db.session.remove()


@pytest.mark.parametrize(("title", "says"), [
    ("", "empty"),
    ("   ", "empty"),
    ("x" * 81, "at most 80"),
    ("bell\x07", "control"),
    ("zero\u200bwidth", "invisible"),
    (42, "string"),
])
def test_a_bad_title_is_refused_and_nothing_is_stored(
        app: Flask, client: FlaskClient, title: Any, says: str) -> None:
    problem = assert_problem(_create(client, title=title), 422)
    assert says in str(problem).lower() or says in problem["detail"].lower(), problem
    assert "title" in str(problem.get("errors", problem["detail"]))
    with app.app_context():
        assert db.session.execute(sa.select(sa.func.count()).select_from(GameRow)).scalar() == 0
        db.session.remove()
