"""The ratings on the web: a player's page, the leaderboard (hidden players absent, paged),
the player name and leaderboard choice on the all-your-games page, the new-game page's
Rated box, and each player's change on the finished table. Flask's test client on SQLite
and, with TEST_DATABASE_URL, PostgreSQL; one story in a real browser at 360 px."""

from __future__ import annotations

from html import unescape

from browsing import Site, any_site, axe_script, browser, new_page, serious_violations
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import Browser, expect
from web_helpers import account_sign_in, csrf_of, post

from dos_server.extensions import db
from dos_server.models import GameRow, IdentityRow
from rating_kit import new_game, people, play_out, sign_in

__all__ = ["any_site", "axe_script", "browser"]


def _text(client: FlaskClient, path: str, status: int = 200) -> str:
    page = client.get(path)
    assert page.status_code == status, (path, page.status_code)
    return unescape(page.get_data(as_text=True))


def _rated_pair(app: Flask) -> tuple[FlaskClient, str, dict[int, str]]:
    api = app.test_client()
    for name in ("ann", "bob"):
        sign_in(api, app, f"{name}@example.org")
    game_id, tokens = new_game(api, people("ann", "bob"))
    play_out(api, game_id, tokens)
    return api, game_id, tokens


def _name(app: Flask, address: str, name: str, hidden: bool = False) -> None:
    with app.app_context():
        identity = db.session.get(IdentityRow, address)
        assert identity is not None
        identity.player_name, identity.leaderboard_hidden = name, hidden
        db.session.commit()
        db.session.remove()


def test_the_finished_table_shows_each_players_change_and_rated(app: Flask) -> None:
    api, game_id, _tokens = _rated_pair(app)
    body = api.get(f"/api/games/{game_id}").get_json()
    text = _text(app.test_client(), f"/games/{game_id}")
    assert "Rated" in text
    for seat in body["seats"]:
        change = seat["rating"]
        assert f"rating {change['before']} → {change['after']} ({change['change']:+.1f})" in text
    casual, _tokens = new_game(api, people("ann", "bob"), rated=False)
    assert "Casual" in _text(app.test_client(), f"/games/{casual}")


def test_player_page_and_leaderboard(app: Flask) -> None:
    _rated_pair(app)
    _name(app, "ann@example.org", "Ann")
    _name(app, "bob@example.org", "Bob", hidden=True)
    visitor = app.test_client()
    page = _text(visitor, "/players/ann")
    assert "<h1>Ann</h1>" in page
    assert "1 rated game" in page
    assert "1 of 2" in page or "2 of 2" in page
    page = _text(visitor, "/players/Bob")  # hidden from the leaderboard, not from its page
    assert "Not listed on the leaderboard." in page
    board = _text(visitor, "/leaderboard")
    assert 'href="/players/Ann"' in board
    assert "Bob" not in board
    assert "example.org" not in board
    _text(visitor, "/players/nobody", 404)
    assert "Nobody is on the leaderboard yet." in _text(visitor, "/leaderboard?page=2")


def test_the_name_and_the_leaderboard_choice_are_set_on_the_me_page(app: Flask) -> None:
    _rated_pair(app)
    browser_ = app.test_client()
    page = account_sign_in(app, browser_, "ann@example.org")
    assert "Your rating" in page
    assert "1 rated game" in page
    saved = browser_.post("/me/rating", data={"csrf": csrf_of(page), "player_name": "Ann.K",
                                              "leaderboard_hidden": "on"})
    assert saved.status_code == 303
    page = _text(browser_, "/me")
    assert "Rating settings saved." in page
    assert 'value="Ann.K"' in page
    assert 'href="/players/Ann.K"' in page
    with app.app_context():
        identity = db.session.get(IdentityRow, "ann@example.org")
        assert identity is not None
        assert (identity.player_name, identity.leaderboard_hidden) == ("Ann.K", True)
        db.session.remove()
    # A bad or taken name: said, nothing stored.
    _name(app, "bob@example.org", "Bobby")
    for bad, status, why in (("a b", 422, "no spaces"), ("BOBBY", 409, "is taken")):
        refused = browser_.post("/me/rating", data={"csrf": csrf_of(page), "player_name": bad})
        assert refused.status_code == status
        assert why in unescape(refused.get_data(as_text=True))
    with app.app_context():
        identity = db.session.get(IdentityRow, "ann@example.org")
        assert identity is not None
        assert identity.player_name == "Ann.K"
        db.session.remove()
    assert browser_.post("/me/rating", data={"player_name": "x"}).status_code == 403  # CSRF


def test_the_new_game_page_makes_rated_or_casual_games(app: Flask) -> None:
    browser_ = app.test_client()
    assert 'id="rated" name="rated" value="1" checked' in _text(browser_, "/new")
    seats = {"seat0_kind": "person", "seat0_name": "ann", "seat1_kind": "person",
             "seat1_name": "bob", "target_score": "200", "vacation_days": "14",
             "timeout_policy": "random", "standing_dos": "1"}
    for ticked, expected in ((True, True), (False, False)):
        made = post(browser_, "/new", {**seats, **({"rated": "1"} if ticked else {})})
        assert made.status_code == 303, made.get_data(as_text=True)
        with app.app_context():
            game = db.session.execute(db.select(GameRow).order_by(GameRow.created_at.desc())
                                      ).scalars().first()
            assert game is not None
            assert game.rated is expected
            db.session.remove()
    # Ticked with one person and a bot: casual, as it could not be rated (no error).
    made = post(browser_, "/new", {**seats, "seat1_kind": "greedy", "rated": "1"})
    assert made.status_code == 303, made.get_data(as_text=True)


def test_rating_pages_in_a_browser_at_360_px(browser: Browser, any_site: Site,
                                            axe_script: str) -> None:
    site = any_site
    _rated_pair(site.app)
    _name(site.app, "ann@example.org", "Ann-with-a-rather-long-name")
    _name(site.app, "bob@example.org", "Bob")
    page = new_page(browser, viewport={"width": 360, "height": 740}, bypass_csp=True)
    page.goto(f"{site.base}/leaderboard")
    expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible()
    page.get_by_role("link", name="Ann-with-a-rather-long-name").click()
    expect(page.get_by_role("heading", name="Ann-with-a-rather-long-name")).to_be_visible()
    expect(page.get_by_text("1 rated game")).to_be_visible()
    for path in ("/leaderboard", "/players/Bob"):
        page.goto(site.base + path)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path}: horizontal scrolling at 360 px: {overflow} px too wide"
        serious = serious_violations(page, axe_script)
        assert not serious, f"{path}: {serious}"
    page.context.close()
