"""A signed-in identity's time zone and language: set once (PUT /api/me/settings), they fill
each seat it comes to own that has none; an unknown zone is a 422 naming ``time_zone``."""

from __future__ import annotations

from flask import Flask
from identity_helpers import auth, create, join_all, sign_in

from dos_server.extensions import db
from dos_server.models import SeatRow
from testkit import SmtpSink

ANN, BOB = "ann@example.org", "bob@example.org"


def _zone(app: Flask, game_id: str, index: int) -> tuple[str | None, str | None]:
    with app.app_context():
        found = db.session.execute(db.select(SeatRow.time_zone, SeatRow.language).where(
            SeatRow.game_id == game_id, SeatRow.index == index)).one()
        db.session.remove()
    return found[0], found[1]


def test_the_identity_zone_fills_new_seats(mail_app: Flask, smtp: SmtpSink) -> None:
    client = mail_app.test_client()
    first = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    join_all(client, first)
    account = sign_in(client, mail_app, smtp, ANN)
    refused = client.put("/api/me/settings", json={"time_zone": "Mars/Olympus_Mons"},
                         headers=auth(account))
    assert refused.status_code == 422
    assert "time_zone" in refused.get_json()["errors"]["json"]
    answer = client.put("/api/me/settings", json={"time_zone": "Asia/Vientiane",
                                                  "language": "lo"}, headers=auth(account))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert (answer.get_json()["time_zone"], answer.get_json()["digest"]) == (
        "Asia/Vientiane", None)  # the digest left out is left as it was
    me = client.get("/api/me", headers=auth(account)).get_json()
    assert (me["time_zone"], me["language"]) == ("Asia/Vientiane", "lo")
    later = create(client, [{"name": "ann", "email": ANN}, {"name": "bob", "email": BOB}])
    join_all(client, later)
    assert _zone(mail_app, later["id"], 0) == ("Asia/Vientiane", "lo")
    assert _zone(mail_app, later["id"], 1) == (None, None)  # bob's seat: not Ann's choice
