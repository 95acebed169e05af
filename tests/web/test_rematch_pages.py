"""The rematch on the web pages (the Flask test client, on SQLite and PostgreSQL): Rematch on
the finished table makes the challenge and hosts it; the other player's finished table, and
the game-over email's link, show who accepted and an Accept rematch button that takes the seat;
the new game's table shows the series' score; a bad link and a spectator get no button."""

from __future__ import annotations

import re

from flask import Flask
from web_helpers import api_game, api_view, csrf_of, join_api, path_of, sign_in

from dos_server import urls
from dos_server.services import access
from testkit import finish_game


def _game(app: Flask) -> str:
    api = app.test_client()
    created = api_game(api, [{"name": "ann"}, {"name": "bob"}])
    for invite in created["invites"]:
        join_api(api, created["id"], invite["invite"])
    return str(created["id"])


def _accept_link(app: Flask, game_id: str, seat: int) -> str:
    """The link of the seat's game-over email (notify: urls.rematch_url)."""
    with app.app_context():
        game = access.get_game(game_id)
        return urls.rematch_url(game_id, access.seat_token("signin", game,
                                                           access.seat_of(game, seat)))


def test_rematch_from_the_table_and_accept_from_the_link(app: Flask) -> None:
    game_id = _game(app)
    ann = app.test_client()
    sign_in(app, ann, game_id, 0)
    finish_game(app, game_id, 1)
    table = ann.get(f"/games/{game_id}")
    html = table.get_data(as_text=True)
    assert ">Rematch</button>" in html
    assert "of the series" not in html
    made = ann.post(f"/games/{game_id}/rematch", data={"csrf": csrf_of(table)})
    assert made.status_code == 303
    new_id = made.headers["Location"].split("/")[2]
    assert made.headers["Location"] == f"/games/{new_id}/host"  # Ann hosts it
    assert "Rematch created" in ann.get(made.headers["Location"]).get_data(as_text=True)
    again = ann.get(f"/games/{game_id}").get_data(as_text=True)
    assert "A rematch is waiting for its players." in again
    assert "Accepted: ann." in again
    assert "Not yet: bob." in again
    assert "Accept rematch" not in again  # Ann is in already
    assert f'href="/games/{new_id}"' in again

    bob = app.test_client()
    opened = bob.get(path_of(_accept_link(app, game_id, 1)))
    assert opened.status_code == 303
    assert opened.headers["Location"] == f"/games/{game_id}/rematch"  # the token left
    page = bob.get(opened.headers["Location"])
    text = page.get_data(as_text=True)
    assert "Accept rematch" in text
    assert "Game 1 of the series, wins so far: ann 0, bob 1" in text
    assert api_view(app.test_client(), new_id)["status"] == "waiting"  # looking did nothing
    pressed = bob.post(f"/games/{game_id}/rematch", data={"csrf": csrf_of(page)})
    assert pressed.status_code == 303
    assert pressed.headers["Location"] == f"/games/{new_id}"
    new_table = bob.get(pressed.headers["Location"]).get_data(as_text=True)
    assert "bob (you)" in new_table  # this browser holds the new seat
    assert "Game 2 of the series, wins so far: ann 0, bob 1" in new_table
    assert api_view(app.test_client(), new_id)["status"] == "active"
    old_table = bob.get(f"/games/{game_id}")  # pressing the link's button signed in too
    assert "You are in:" in old_table.get_data(as_text=True)
    twice = bob.post(f"/games/{game_id}/rematch", data={"csrf": csrf_of(old_table)})
    assert twice.status_code == 303  # the same rematch again, nothing more
    assert twice.headers["Location"] == f"/games/{new_id}"


def test_spectators_and_bad_links_get_no_button(app: Flask) -> None:
    game_id = _game(app)
    finish_game(app, game_id, 0)
    spectator = app.test_client()
    page = spectator.get(f"/games/{game_id}/rematch").get_data(as_text=True)
    assert "Accept rematch" not in page
    assert ">Rematch</button>" not in page
    assert "Sign in" in page
    bad = spectator.get(f"/games/{game_id}/rematch?token=not-a-token")
    assert bad.status_code == 303
    refused = spectator.get(bad.headers["Location"])
    assert refused.status_code == 400  # a link cut short or made up (mailed.link_status)
    assert "Accept rematch" not in refused.get_data(as_text=True)
    assert re.search(r"<h1", refused.get_data(as_text=True))


def test_no_rematch_before_the_end(app: Flask) -> None:
    game_id = _game(app)
    ann = app.test_client()
    sign_in(app, ann, game_id, 0)
    page = ann.get(f"/games/{game_id}/rematch")
    assert "A rematch can start once the game is over." in page.get_data(as_text=True)
    table = ann.get(f"/games/{game_id}")
    assert ">Rematch</button>" not in table.get_data(as_text=True)
    early = ann.post(f"/games/{game_id}/rematch", data={"csrf": csrf_of(table)})
    assert early.status_code == 409


def test_a_cancelled_rematch_can_be_asked_for_anew(app: Flask) -> None:
    game_id = _game(app)
    ann = app.test_client()
    sign_in(app, ann, game_id, 0)
    finish_game(app, game_id, 0)
    table = ann.get(f"/games/{game_id}")
    made = ann.post(f"/games/{game_id}/rematch", data={"csrf": csrf_of(table)})
    host = ann.get(made.headers["Location"])
    new_id = made.headers["Location"].split("/")[2]
    cancelled = ann.post(f"/games/{new_id}/cancel", data={"csrf": csrf_of(host)})
    assert cancelled.status_code == 303
    again = ann.get(f"/games/{game_id}")
    html = again.get_data(as_text=True)
    assert "The rematch was cancelled." in html
    assert ">Rematch</button>" in html
    anew = ann.post(f"/games/{game_id}/rematch", data={"csrf": csrf_of(again)})
    assert anew.status_code == 303
    assert anew.headers["Location"].split("/")[2] not in (new_id, game_id)
