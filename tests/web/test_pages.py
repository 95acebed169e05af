"""The web pages through Flask's test client: every route's status, sign-in, CSRF, headers,
moves bound to a version, and that a failed write changes nothing. Runs on SQLite and, with
TEST_DATABASE_URL, PostgreSQL."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import (
    api_game,
    api_view,
    csrf_of,
    form_value,
    join_api,
    path_of,
    post,
    sign_in,
    signin_link,
)

from dos_server.extensions import db
from dos_server.models import GameRow

VERIFIED = re.compile(r"commitments? (is )?verified")  # every round's commitment checked


@dataclass
class Table:
    app: Flask
    game_id: str
    host: str
    tokens: list[str]  # player tokens of seats 0 and 1 (alice, bob)
    browsers: list[FlaskClient]  # a browser signed in as each of them

    def current(self) -> int:
        view = api_view(self.browsers[0], self.game_id)["view"]
        return int(view["current"])

    def version(self) -> int:
        return int(api_view(self.browsers[0], self.game_id)["version"])


@pytest.fixture
def table(app: Flask) -> Table:
    return make_table(app)


def make_table(app: Flask, target_score: int = 20) -> Table:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}, {"bot": "greedy"}],
                       target_score=target_score)
    game_id = created["id"]
    tokens = [join_api(api, game_id, invite["invite"]) for invite in created["invites"]]
    browsers = [app.test_client(), app.test_client()]
    for seat, browser in enumerate(browsers):
        sign_in(app, browser, game_id, seat)
    return Table(app, game_id, created["host_token"], tokens, browsers)


def hand_on_page(html: str) -> list[str]:
    section = html.split('id="hand"', 1)[1].split("</ul>", 1)[0]
    return re.findall(r'role="img" aria-label="[^"]+" title="[^"]+">([^<]+)</span>', section)


# -- plain pages and headers -----------------------------------------------------------------


def test_home_links_to_creating_a_game_with_safe_headers(app: Flask) -> None:
    response = app.test_client().get("/")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert 'href="/new"' in response.get_data(as_text=True)
    csp = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["Cache-Control"] == "no-store"
    with app.test_client().get("/web-static/dos.css") as css:
        assert css.status_code == 200


def test_unknown_game_is_a_readable_404_page(app: Flask) -> None:
    response = app.test_client().get("/games/nosuchgame")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "no game" in response.get_data(as_text=True)


# -- signing in ------------------------------------------------------------------------------


def test_email_link_parks_the_token_and_continue_signs_in(table: Table) -> None:
    browser = table.app.test_client()
    link = path_of(signin_link(table.app, table.game_id, 1))
    first = browser.get(link)
    assert first.status_code == 303
    assert first.headers["Location"] == f"/games/{table.game_id}/signin"  # no token left
    # Opening the link alone signs nobody in (a mail scanner fetching it cannot act).
    assert 'id="hand"' not in browser.get(f"/games/{table.game_id}").get_data(as_text=True)
    page = browser.get(f"/games/{table.game_id}/signin")
    assert "Continue as bob" in page.get_data(as_text=True)
    response = browser.post(f"/games/{table.game_id}/signin", data={"csrf": csrf_of(page)})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/games/{table.game_id}"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    html = browser.get(f"/games/{table.game_id}").get_data(as_text=True)
    assert "bob (you)" in html
    assert hand_on_page(html) == api_view(browser, table.game_id, table.tokens[1])["view"]["hand"]


def test_cookie_is_secure_behind_https(make_app: Any) -> None:
    app = make_app(PUBLIC_URL="https://dos.example.org")
    assert app.config["SESSION_COOKIE_SECURE"] is True


def test_player_token_can_be_pasted(table: Table) -> None:
    browser = table.app.test_client()
    response = post(browser, f"/games/{table.game_id}/signin", {"token": table.tokens[0]},
                    page=f"/games/{table.game_id}/signin")
    assert response.status_code == 303
    assert "alice (you)" in browser.get(f"/games/{table.game_id}").get_data(as_text=True)


def test_sign_out_forgets_the_seat(table: Table) -> None:
    browser = table.browsers[0]
    response = post(browser, f"/games/{table.game_id}/signout")
    assert response.status_code == 303
    html = browser.get(f"/games/{table.game_id}").get_data(as_text=True)
    assert "You are watching" in html
    assert 'id="hand"' not in html


# -- CSRF ------------------------------------------------------------------------------------


def test_a_form_without_its_csrf_token_is_refused_and_changes_nothing(table: Table) -> None:
    seat = table.current()
    browser = table.browsers[seat]
    version = table.version()
    for data in ({"version": version, "number": 1},
                 {"version": version, "number": 1, "csrf": "forged"},
                 # a valid token of another session (another browser)
                 {"version": version, "number": 1,
                  "csrf": csrf_of(table.browsers[1 - seat].get("/new"))}):
        response = browser.post(f"/games/{table.game_id}/move", data=data)
        assert response.status_code == 403
        assert response.mimetype == "text/html"
        assert "expired" in response.get_data(as_text=True)
    assert table.version() == version
    response = table.app.test_client().post("/new", data={"seat0_kind": "person"})
    assert response.status_code == 403


# -- moves -----------------------------------------------------------------------------------


def _play_first_listed(table: Table, seat: int) -> str:
    """The seat plays its first listed action through the API; answers it."""
    headers = {"Authorization": f"Bearer {table.tokens[seat]}"}
    api = table.app.test_client()
    listed = api.get(f"/api/games/{table.game_id}/actions", headers=headers).get_json()
    action = str(listed["actions"][0]["action"])
    played = api.post(f"/api/games/{table.game_id}/actions", headers=headers,
                      json={"version": listed["version"], "actions": [action]})
    assert played.status_code == 200, played.get_json()
    return action


def _since_lines(html: str) -> list[str]:
    """The page's lines of what happened since the last look (not who is low on cards)."""
    return [unescape(line) for line in re.findall(r"<li>([^<]*)</li>", html.split(
        'id="since"', 1)[1].split("</section>", 1)[0])] if 'id="since"' in html else []


def test_the_table_says_what_the_others_did_since_you_last_looked(app: Flask) -> None:
    table = make_table(app, target_score=500)  # a round that ends here does not end the game
    alice = table.browsers[0]
    page = f"/games/{table.game_id}"
    # A cycle: alice looks, plays her turn, bob plays his, and the bot its own. One in which
    # nobody went out tells of both others' turns; the deal decides how soon one comes.
    for _cycle in range(10):
        while table.current() != 0:  # bob moves until it is alice's turn (the bot at once)
            _play_first_listed(table, 1)
        alice.get(page)  # alice looks: what happened so far is seen
        assert _since_lines(alice.get(page).get_data(as_text=True)) == []
        while table.current() == 0:
            _play_first_listed(table, 0)
        bob_played = []
        while table.current() == 1 and len(bob_played) < 20:  # bob's whole turn, then the bot's
            bob_played.append(_play_first_listed(table, 1))
        since = " | ".join(_since_lines(alice.get(page).get_data(as_text=True)))
        if not bob_played or " is over: " in since:  # a round ended: the next cycle tells
            continue
        words = "bob matched" if bob_played[0].startswith("m") else "bob drew"
        assert words in since, since
        assert "greedy-bot-2" in since  # the bot's turn after bob's too
        assert _since_lines(alice.get(page).get_data(as_text=True)) == []  # seen now
        return
    raise AssertionError("every one of 10 cycles ended a round: no cycle to check")


def test_the_seats_down_to_one_or_two_cards_are_named() -> None:
    from dos_server.web.present import low_hands

    view = {"hand_sizes": [5, 2, 1, 0]}
    names = ["alice", "bob", "carol", "dan"]
    assert low_hands(view, names, 0, "active") == [
        {"seat": 1, "name": "bob", "cards": 2}, {"seat": 2, "name": "carol", "cards": 1}]
    assert low_hands(view, names, 1, "active") == [{"seat": 2, "name": "carol", "cards": 1}]
    assert low_hands(view, names, 0, "finished") == []


def test_a_numbered_move_plays_and_the_table_moves_on(table: Table) -> None:
    seat = table.current()
    browser = table.browsers[seat]
    page = browser.get(f"/games/{table.game_id}")
    version = int(form_value(page, "version"))
    listed = browser.get(f"/api/games/{table.game_id}/actions",
                         headers={"Authorization": f"Bearer {table.tokens[seat]}"}).get_json()
    response = browser.post(f"/games/{table.game_id}/move", data={
        "csrf": csrf_of(page), "version": version, "number": 1, "page": form_value(page, "page")})
    assert response.status_code == 303
    assert table.version() > version
    history = browser.get(f"/api/games/{table.game_id}/events?limit=500").get_json()["events"]
    played = [e["data"]["action"] for e in history if e["kind"] == "action" and e["seat"] == seat]
    assert played[0] == listed["actions"][0]["action"]
    after = browser.get(f"/games/{table.game_id}").get_data(as_text=True)
    assert "Played: " in after


def test_the_same_button_pressed_twice_plays_once(table: Table) -> None:
    seat = table.current()
    browser = table.browsers[seat]
    page = browser.get(f"/games/{table.game_id}")
    data = {"csrf": csrf_of(page), "version": form_value(page, "version"), "number": 1,
            "page": form_value(page, "page")}
    assert browser.post(f"/games/{table.game_id}/move", data=data).status_code == 303
    version = table.version()
    assert browser.post(f"/games/{table.game_id}/move", data=data).status_code == 303
    assert table.version() == version


def test_a_stale_move_plays_nothing_and_shows_the_new_table(table: Table) -> None:
    seat = table.current()
    browser = table.browsers[seat]
    old = browser.get(f"/games/{table.game_id}")
    # The seat moves from elsewhere (the CLI, an email) after this page was drawn.
    moved = browser.post(f"/api/games/{table.game_id}/actions",
                         headers={"Authorization": f"Bearer {table.tokens[seat]}"},
                         json={"version": int(form_value(old, "version")), "turn": "draw"})
    assert moved.status_code == 200
    version = table.version()
    events = len(browser.get(f"/api/games/{table.game_id}/events?limit=500").get_json()["events"])
    response = browser.post(f"/games/{table.game_id}/move", data={
        "csrf": csrf_of(old), "version": form_value(old, "version"), "number": 1,
        "page": form_value(old, "page")})
    assert response.status_code == 409
    html = response.get_data(as_text=True)
    assert "nothing was played" in html
    assert f'name="version" value="{version}"' in html or "your turn" not in html
    assert table.version() == version
    after = browser.get(f"/api/games/{table.game_id}/events?limit=500").get_json()["events"]
    assert len(after) == events


@pytest.mark.parametrize(("data", "status", "words"), [
    ({"turn": "fly to the moon"}, 400, "Not an action"),
    ({"number": "999"}, 422, "choose a number"),
    ({"number": "abc"}, 422, "choose one of the numbered moves"),
    ({}, 422, "type a move"),
    ({"version": "x", "number": "1"}, 400, "reload the page"),
])
def test_bad_input_is_a_readable_error_and_stores_nothing(
        table: Table, data: dict[str, str], status: int, words: str) -> None:
    seat = table.current()
    browser = table.browsers[seat]
    page = browser.get(f"/games/{table.game_id}")
    version = table.version()
    form = {"csrf": csrf_of(page), "version": form_value(page, "version"), **data}
    response = browser.post(f"/games/{table.game_id}/move", data=form)
    assert response.status_code == status
    html = response.get_data(as_text=True)
    assert words.lower() in html.lower()
    assert table.version() == version
    if "turn" in data:
        assert 'value="fly to the moon"' in html  # what was typed stays in the box


def test_not_your_turn_and_not_signed_in(table: Table) -> None:
    seat = table.current()
    other = table.browsers[1 - seat] if seat in (0, 1) else table.browsers[0]
    page = other.get(f"/games/{table.game_id}")
    assert "Nothing to do until your turn" in page.get_data(as_text=True)
    if seat in (0, 1):
        response = other.post(f"/games/{table.game_id}/move", data={
            "csrf": csrf_of(page), "version": table.version(), "turn": "draw"})
        assert response.status_code == 409
        assert "Not your turn" in response.get_data(as_text=True)
    stranger = table.app.test_client()
    response = post(stranger, f"/games/{table.game_id}/move", {"version": 1, "number": 1})
    assert response.status_code == 401
    assert "sign in" in response.get_data(as_text=True).lower()


# -- spectators, history, game over ----------------------------------------------------------


def test_the_spectator_page_shows_no_hand(table: Table) -> None:
    html = table.app.test_client().get(f"/games/{table.game_id}").get_data(as_text=True)
    assert "You are watching" in html
    assert 'id="hand"' not in html
    assert "Your moves" not in html
    cards = re.findall(r'class="card card-\w+', html)
    in_row = re.findall(r'class="card card-\w+', html.split('class="center-row"', 1)[1]
                        .split("</ol>", 1)[0])
    assert len(cards) == len(in_row) > 0  # every card shown is in the Center Row
    for hand in (api_view(table.browsers[0], table.game_id, t)["view"]["hand"]
                 for t in table.tokens):
        assert "was dealt 7 cards (" not in html  # nobody's dealt cards in the history
        assert hand


def test_history_page(table: Table) -> None:
    response = table.browsers[0].get(f"/games/{table.game_id}/history")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "The game started" in html
    assert "Round 1 began" in html
    assert table.browsers[0].get(f"/games/{table.game_id}/history?after=x").status_code == 200
    early = post(table.browsers[0], f"/games/{table.game_id}/rematch")
    assert early.status_code == 409  # no rematch before the game is over


def test_a_whole_game_to_the_game_over_page(app: Flask) -> None:
    api = app.test_client()
    created = api_game(api, [{"name": "alice"}, {"bot": "greedy"}], target_score=1)
    game_id = created["id"]
    join_api(api, game_id, created["invites"][0]["invite"])
    browser = app.test_client()
    sign_in(app, browser, game_id, 0)
    for _ in range(500):
        page = browser.get(f"/games/{game_id}")
        if "Final scores" in page.get_data(as_text=True):
            break
        response = browser.post(f"/games/{game_id}/move", data={
            "csrf": csrf_of(page), "version": form_value(page, "version"), "number": 1,
            "page": form_value(page, "page")})
        assert response.status_code == 303, response.get_data(as_text=True)
    html = page.get_data(as_text=True)
    assert "Game over" in html
    assert "Final scores" in html
    assert VERIFIED.search(html)
    record = api.get(f"/api/games/{game_id}/record").get_json()
    assert record["seed"] in html
    assert "/api/" not in html  # the record link opens the record page
    record_page = browser.get(f"/games/{game_id}/record").get_data(as_text=True)
    assert record["seed"] in record_page
    assert VERIFIED.search(record_page)
    assert "Final scores" in record_page
    assert 'id="hand"' not in record_page
    rematch = browser.post(f"/games/{game_id}/rematch", data={"csrf": csrf_of(page)})
    assert rematch.status_code == 303
    new_id = rematch.headers["Location"].split("/")[2]
    assert new_id != game_id
    again = api_view(api, new_id)
    assert [s["bot"] for s in again["seats"]] == [None, "greedy"]
    assert again["options"]["target_score"] == 1
    assert "alice (you)" in browser.get(f"/games/{new_id}").get_data(as_text=True)
    spectator = app.test_client().get(f"/games/{game_id}").get_data(as_text=True)
    assert "Rematch" not in spectator
    assert post(app.test_client(), f"/games/{game_id}/rematch").status_code == 401
    assert "Final scores" in spectator
    assert 'id="hand"' not in spectator


# -- lobby pages -----------------------------------------------------------------------------


def create_form(**fields: str) -> dict[str, str]:
    form = {"seat0_kind": "person", "seat0_name": "alice", "seat0_email": "",
            "seat1_kind": "person", "seat1_name": "bob", "seat1_email": "",
            "seat2_kind": "open", "seat2_name": "", "seat3_kind": "none", "seat3_name": "",
            "me": "0", "target_score": "50", "after_draw": "drawn_card",
            "turn_time_limit": "86400"}
    form.update(fields)
    return form


def test_create_invite_join_and_start_through_pages(app: Flask) -> None:
    host = app.test_client()
    response = post(host, "/new", create_form(dos_call="1"), page="/new")
    assert response.status_code == 303
    host_page = response.headers["Location"]
    game_id = host_page.split("/")[2]
    page = host.get(host_page).get_data(as_text=True)
    invite = re.search(r'id="invite1" class="copy" readonly value="([^"]+)"', page)
    code = re.search(r'id="code-link" class="copy" readonly value="([^"]+)"', page)
    assert invite
    assert code
    assert api_view(host, game_id)["status"] == "waiting"
    assert api_view(host, game_id)["options"]["dos_call"] is True

    bob = app.test_client()
    first = bob.get(path_of(invite.group(1)))
    assert first.headers["Location"] == f"/games/{game_id}/join"
    join_page = bob.get(first.headers["Location"])
    assert "Join as bob" in join_page.get_data(as_text=True)
    assert bob.post(f"/games/{game_id}/join",
                    data={"csrf": csrf_of(join_page)}).status_code == 303
    assert "bob (you)" in bob.get(f"/games/{game_id}").get_data(as_text=True)

    carol = app.test_client()
    carol.get(path_of(code.group(1)))
    join_page = carol.get(f"/games/{game_id}/join")
    bad = carol.post(f"/games/{game_id}/join", data={"csrf": csrf_of(join_page), "name": "bob"})
    assert bad.status_code == 422
    assert "different name" in bad.get_data(as_text=True)
    assert re.search(r'<p class="field-error" id="name-error">[^<]*different name[^<]*</p>\s*</div>'
                     r'\s*<input[^>]* value="bob" aria-invalid="true" aria-describedby="name-error"',
                     bad.get_data(as_text=True))
    ok = carol.post(f"/games/{game_id}/join", data={"csrf": csrf_of(join_page), "name": "carol"})
    assert ok.status_code == 303
    view = api_view(host, game_id)
    assert view["status"] == "active"  # every seat filled: the game started by itself
    assert [s["name"] for s in view["seats"]] == ["alice", "bob", "carol"]
    assert "alice (you)" in host.get(f"/games/{game_id}").get_data(as_text=True)


def test_the_lobby_offers_every_rule_option(app: Flask) -> None:
    host = app.test_client()
    form = host.get("/new").get_data(as_text=True)
    for name in ("after_draw", "bonus_placement", "dos_call", "target_score"):
        assert f'name="{name}"' in form
    response = post(host, "/new", create_form(bonus_placement="mandatory", after_draw="any",
                                              seat1_kind="open"), page="/new")
    assert response.status_code == 303
    game_id = response.headers["Location"].split("/")[2]
    options = api_view(host, game_id)["options"]
    assert (options["bonus_placement"], options["after_draw"]) == ("mandatory", "any")
    refused = post(host, "/new", create_form(bonus_placement="sometimes"), page="/new")
    assert refused.status_code == 422  # shown on the page, nothing created


def test_host_starts_with_the_seats_filled_so_far_or_cancels(app: Flask) -> None:
    host = app.test_client()
    game_id = post(host, "/new", create_form(seat1_kind="open"), page="/new") \
        .headers["Location"].split("/")[2]
    assert "open seat" in host.get(f"/games/{game_id}/host").get_data(as_text=True)
    stranger = app.test_client()
    assert stranger.get(f"/games/{game_id}/host").status_code == 403
    assert post(stranger, f"/games/{game_id}/start").status_code == 403
    # One person and open seats only: too few to start.
    refused = post(host, f"/games/{game_id}/start", page=f"/games/{game_id}/host")
    assert refused.status_code == 409
    assert "at least two" in refused.get_data(as_text=True)
    assert post(host, f"/games/{game_id}/cancel",
                page=f"/games/{game_id}/host").status_code == 303
    assert api_view(host, game_id)["status"] == "cancelled"

    game_id = post(host, "/new", create_form(seat2_kind="greedy"), page="/new") \
        .headers["Location"].split("/")[2]
    assert api_view(host, game_id)["status"] == "waiting"  # for the second person to join
    assert post(host, f"/games/{game_id}/start",
                page=f"/games/{game_id}/host").status_code == 303
    assert api_view(host, game_id)["status"] == "active"
    game_id = post(host, "/new", create_form(), page="/new").headers["Location"].split("/")[2]
    response = post(host, f"/games/{game_id}/seats/2/remove", page=f"/games/{game_id}/host")
    assert response.status_code == 303
    assert api_view(host, game_id)["status"] == "waiting"  # the open seat gone: still for Bob


def test_the_lobby_offers_everything_the_api_does(app: Flask) -> None:
    """Every field of the API's CreateGameIn (and of each seat) is on the form."""
    from dos_server.schemas import CreateGameIn, OptionsIn, SeatIn
    from dos_server.services.lobby import BOT_STRATEGIES

    host = app.test_client()
    form = host.get("/new").get_data(as_text=True)
    names = set(re.findall(r'name="([^"]+)"', form))
    fields = {*CreateGameIn().fields, *OptionsIn().fields} - {"seats", "options"}
    assert fields <= names, fields - names
    seat_fields = {"name": "name", "email": "email", "webhook_url": "webhook", "bot": "kind"}
    assert set(SeatIn().fields) == set(seat_fields)
    assert {f"seat{i}_{seat_fields[f]}" for f in seat_fields for i in range(4)} <= names
    for bot in BOT_STRATEGIES:
        assert f'<option value="{bot}"' in form
    response = post(host, "/new", create_form(
        timeout_policy="greedy", forfeit_after="3", vacation_days="5", turn_time_limit="3600",
        seat2_kind="search-2", seat1_webhook="http://127.0.0.1:9/hook",
        title=" Friday  cards "), page="/new")
    assert response.status_code == 303, response.get_data(as_text=True)
    game_id = response.headers["Location"].split("/")[2]
    assert clock_of(app, game_id) == ("greedy", 3, 5, 3600)
    assert api_view(host, game_id)["seats"][2]["bot"] == "search-2"
    assert api_view(host, game_id)["title"] == "Friday cards"
    heading = f"Friday cards ({game_id}): host controls"
    assert heading in host.get(f"/games/{game_id}/host").get_data(as_text=True)
    never = post(host, "/new", create_form(forfeit_after=""), page="/new")
    assert clock_of(app, never.headers["Location"].split("/")[2])[1] is None


def clock_of(app: Flask, game_id: str) -> tuple[str, int | None, int, int | None]:
    """The game's stored clock rules (the API's game body does not show them all)."""
    from dos_server.extensions import db
    from dos_server.models import GameRow

    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        rules = (game.timeout_policy, game.forfeit_after, game.vacation_days,
                 game.turn_time_limit)
        db.session.remove()
    return rules


@pytest.mark.parametrize(("fields", "words"), [
    ({"forfeit_after": "0"}, "forfeit a seat after"),
    ({"forfeit_after": "often"}, "forfeit a seat after"),
    ({"vacation_days": "61"}, "vacation days"),
    ({"vacation_days": ""}, "vacation days"),
    ({"timeout_policy": "a-friend"}, "a turn whose time ran out is played by</a>"),
    ({"seat1_webhook": "ftp://example.org/x"}, "webhook"),
    ({"seat1_kind": "genius"}, "choose a person, a bot"),
])
def test_bad_clock_fields_are_shown_on_the_form_with_the_values_kept(
        app: Flask, fields: dict[str, str], words: str) -> None:
    browser = app.test_client()
    form = create_form(**{"seat0_email": "ann@example.org", "vacation_days": "7",
                          "forfeit_after": "2", "turn_time_limit": "21600",
                          "seat1_webhook": "http://x.test/h", **fields})
    response = post(browser, "/new", form, page="/new")
    text = response.get_data(as_text=True)
    assert response.status_code == 422, text
    assert words in text.lower()
    assert 'role="alert"' in text
    for name in ("seat0_name", "seat0_email", "seat1_webhook", "forfeit_after", "vacation_days"):
        if form[name]:
            assert f'name="{name}"' in text
            assert f'value="{form[name]}"' in text, name
    assert '<option value="21600" selected>' in text


def test_every_mistake_of_the_create_form_is_shown_at_once_beside_its_field(app: Flask) -> None:
    browser = app.test_client()
    form = create_form(seat0_name="", seat1_name="bob", seat1_email="not-an-email",
                       seat2_kind="person", seat2_name="Bob", target_score="lots",
                       vacation_days="99", forfeit_after="0", title="Friday cards")
    response = post(browser, "/new", form, page="/new")
    text = unescape(response.get_data(as_text=True))
    assert response.status_code == 422, text
    summary = text[text.index('id="errors"'):text.index("</div>", text.index('id="errors"'))]
    for field, name, words in [
            ("seat0_name", "Seat 1 name", "give the person a name"),
            ("seat1_email", "Seat 2 email", "email"),
            ("seat2_name", "Seat 3 name", "different name"),
            ("target_score", "Play to (points)", "whole number"),
            ("vacation_days", "Vacation days a year", "60"),
            ("forfeit_after", "Forfeit a seat after this many timeouts", "1")]:
        assert re.search(rf'<li><a href="#{field}">{re.escape(name)}</a>: [^<]*{words}', summary,
                         re.IGNORECASE), (field, summary)
        beside = re.search(rf'<p class="field-error" id="{field}-error">[^<]*</p>\s*'
                           rf'<(input|select)[^>]* id="{field}"[^>]*>', text)
        assert beside is not None, field
        assert 'aria-invalid="true"' in beside.group(0)
        assert f'aria-describedby="{field}-error"' in beside.group(0)
    for field in ("seat1_name", "seat2_name", "title", "target_score", "vacation_days"):
        assert re.search(rf'id="{field}"[^>]* value="{re.escape(form[field])}"', text), field
    assert 'id="seat1_name-error"' not in text  # the first "bob" is not the mistake
    with app.app_context():
        assert db.session.query(GameRow).count() == 0


@pytest.mark.parametrize(("fields", "words"), [
    ({"seat0_name": ""}, "give the person a name"),
    ({"seat1_kind": "none", "seat2_kind": "none"}, "seats"),
    ({"target_score": "lots"}, "play to (points)</a>"),
    ({"target_score": "0"}, "play to (points)</a>"),
    ({"seat1_name": "alice"}, "different name"),
    ({"seat0_email": "not-an-email"}, "email"),
    ({"seat0_kind": "greedy", "seat1_kind": "random", "seat2_kind": "none"}, "person"),
    ({"seat0_name": "a;b"}, "name"),
    ({"turn_time_limit": "5"}, "time for a turn</a>"),
])
def test_a_bad_create_form_says_why_and_creates_nothing(
        app: Flask, fields: dict[str, str], words: str) -> None:
    browser = app.test_client()
    response = post(browser, "/new", create_form(**fields), page="/new")
    assert response.status_code == 422, response.get_data(as_text=True)
    assert words in response.get_data(as_text=True).lower()


# -- settings --------------------------------------------------------------------------------


def test_refused_settings_say_why_beside_each_field_and_keep_what_was_typed(table: Table) -> None:
    browser = table.browsers[0]
    settings = f"/games/{table.game_id}/settings"
    bad = post(browser, f"{settings}/notifications",
               {"email": "not an address", "webhook_url": "http://me:secret@example.org/hook"},
               page=settings)
    text = unescape(bad.get_data(as_text=True))
    assert bad.status_code == 422, text
    for field, name in (("email", "Email address"), ("webhook_url", "Webhook URL")):
        assert f'<a href="#{field}">{name}</a>: ' in text, field
        assert re.search(rf'<p class="field-error" id="{field}-error">[^<]+</p>\s*<input[^>]* '
                         rf'id="{field}"[^>]*aria-invalid="true"', text), field
    assert 'value="not an address"' in text
    assert 'value="http://me:secret@example.org/hook"' in text
    assert "Nothing was changed" in text
    assert 'value="not an address"' not in browser.get(settings).get_data(as_text=True)
    days = post(browser, f"{settings}/vacation", {"days": "99"}, page=settings)
    text = unescape(days.get_data(as_text=True))
    assert days.status_code == 422
    assert '<a href="#days">Vacation days</a>: ' in text
    assert re.search(r'id="days"[^>]*value="99"', text)


def test_settings_notifications_vacation_and_token_rotation(table: Table) -> None:
    browser = table.browsers[0]
    settings = f"/games/{table.game_id}/settings"
    assert browser.get(settings).status_code == 200
    assert table.app.test_client().get(settings).status_code == 401
    response = post(browser, f"{settings}/notifications",
                    {"email": "alice@example.org", "email:your_turn": "on", "digest": "on"},
                    page=settings)
    assert response.status_code == 303
    html = browser.get(settings).get_data(as_text=True)
    assert 'value="alice@example.org"' in html
    assert re.search(r'name="email:your_turn"[^>]*checked', html)
    assert not re.search(r'name="email:game_over"[^>]*checked', html)
    bad = post(browser, f"{settings}/notifications", {"email": "nope"}, page=settings)
    assert bad.status_code == 422
    assert "Nothing was changed" in bad.get_data(as_text=True)

    assert post(browser, f"{settings}/vacation", {"days": "2"}, page=settings).status_code == 303
    assert "12 vacation days left" in browser.get(settings).get_data(as_text=True)
    assert post(browser, f"{settings}/vacation", {"days": "99"}, page=settings).status_code == 422
    assert post(browser, f"{settings}/vacation", {"days": "13"}, page=settings).status_code == 409

    rotated = post(browser, f"{settings}/token", page=settings)
    assert rotated.status_code == 200
    new_token = re.search(r'id="new-token" class="copy" readonly value="([^"]+)"',
                          rotated.get_data(as_text=True))
    assert new_token
    fresh = browser.get(f"/api/games/{table.game_id}",
                        headers={"Authorization": f"Bearer {new_token.group(1)}"})
    assert fresh.get_json()["you"] == 0
    old = browser.get(f"/api/games/{table.game_id}",
                      headers={"Authorization": f"Bearer {table.tokens[0]}"})
    assert old.status_code == 401
    assert "alice (you)" in browser.get(f"/games/{table.game_id}").get_data(as_text=True)


def test_resign_needs_confirmation(table: Table) -> None:
    browser = table.browsers[1]
    page = browser.get(f"/games/{table.game_id}/resign")
    assert page.status_code == 200
    assert "cannot be undone" in page.get_data(as_text=True)
    response = browser.post(f"/games/{table.game_id}/resign", data={"csrf": csrf_of(page)})
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/resign")
    assert not api_view(browser, table.game_id)["seats"][1]["resigned"]
    response = browser.post(f"/games/{table.game_id}/resign",
                            data={"csrf": csrf_of(page), "confirm": "yes"})
    assert response.status_code == 303
    assert api_view(browser, table.game_id)["seats"][1]["resigned"]
    assert "resigned" in browser.get(f"/games/{table.game_id}").get_data(as_text=True)
    again = browser.post(f"/games/{table.game_id}/resign",
                         data={"csrf": csrf_of(page), "confirm": "yes"})
    assert again.status_code == 409


# -- live updates ----------------------------------------------------------------------------


def test_wait_answers_at_once_when_the_version_differs(make_app: Any, table: Table) -> None:
    app = make_app(WEB_WAIT_SECONDS=0.3, WEB_WAIT_POLL_SECONDS=0.05)
    browser = app.test_client()
    version = table.version()
    changed = browser.get(f"/games/{table.game_id}/wait?version={version - 1}").get_json()
    assert changed == {"version": version, "changed": True}
    same = browser.get(f"/games/{table.game_id}/wait?version={version}").get_json()
    assert same == {"version": version, "changed": False}
    assert browser.get(f"/games/{table.game_id}/wait?version=x").status_code == 400
    assert browser.get("/games/nosuchgame/wait?version=1").status_code == 404


def test_wait_is_woken_by_a_move(make_app: Any, table: Table, backend: str) -> None:
    """On PostgreSQL the waiter is woken by NOTIFY (it would only look again after 5 s)."""
    from dos_server.services import watch

    app = make_app(WEB_WAIT_SECONDS=30, WEB_WAIT_POLL_SECONDS=0.05)
    with app.app_context():
        assert watch.wait_until_listening(10) is (backend == "postgresql")
    version = table.version()
    answers: list[dict[str, Any]] = []
    started = threading.Event()

    def wait() -> None:
        started.set()
        answers.append(app.test_client().get(
            f"/games/{table.game_id}/wait?version={version}").get_json())

    waiter = threading.Thread(target=wait)
    waiter.start()
    started.wait(5)
    seat = table.current()
    moved = table.browsers[seat].post(
        f"/api/games/{table.game_id}/actions",
        headers={"Authorization": f"Bearer {table.tokens[seat]}"},
        json={"version": version, "turn": "draw"})
    assert moved.status_code == 200
    clock = time.monotonic()
    waiter.join(10)
    assert answers == [{"version": table.version(), "changed": True}]
    assert time.monotonic() - clock < 4


def test_web_query_tokens_are_redacted_in_logs() -> None:
    from dos_server.logs import redact

    for line in ("/games/abc?token=SECRET", "/games/abc/join?invite=SECRET",
                 "/games/abc/join?code=SECRET&x=1"):
        assert "SECRET" not in redact(line)


def test_links_for_emails_open_the_pages(table: Table) -> None:
    """What the emails link to: the table (signing in first) and the join page."""
    from dos_server import urls

    with table.app.app_context():
        base = table.app.config["PUBLIC_URL"]
        assert urls.game_url(table.game_id) == f"{base}/games/{table.game_id}"
        invite = urls.join_url(table.game_id, "an-invite")
    browser = table.app.test_client()
    response = browser.get(path_of(invite))
    assert response.headers["Location"] == f"/games/{table.game_id}/join"
    assert "token" not in signin_link(table.app, table.game_id, 0).split("?")[0]
