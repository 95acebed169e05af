"""Every page of the web front end, opened in Chromium as the people who see it: for the tests
that check all pages alike (widths, accessibility).

The pages come from the app's ``url_map``: :func:`page_endpoints` lists every GET route that
answers a person with HTML, and :func:`tour` must visit each of them at least once, so a page
added without a visit here fails the tests that use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from browsing import Site, words
from flask import Flask
from playwright.sync_api import Browser, BrowserContext, Page, expect
from web_helpers import ANN, BOB, api_game, join_api, login_link, path_of

from dos_server import tokens, urls
from dos_server.extensions import db
from dos_server.models import IdentityRow
from dos_server.services import access, notify

# GET routes that answer programs, not people: JSON, files, the web app manifest, the live
# update's long-polls (the table's and its chat's).
NOT_PAGES = {"static", "web.static", "web.wait", "web.chat_messages", "web.manifest",
             "api-docs.openapi_json",
             "health.Health", "health.Ready", "metrics.Metrics"}


def page_endpoints(app: Flask) -> set[str]:
    """The endpoints of every GET route that a person opens in a browser."""
    return {rule.endpoint for rule in app.url_map.iter_rules()
            if "GET" in (rule.methods or set()) and not rule.rule.startswith("/api/")
            and rule.endpoint not in NOT_PAGES}


@dataclass(frozen=True)
class Visit:
    """A page as someone sees it: ``who`` names the browser, ``then`` acts on the page first
    (fills a form in with mistakes and sends it, say)."""

    label: str
    endpoint: str
    who: str
    path: str
    then: Callable[[Page, Callable[[str], str]], Any] | None = None


def _finish(site: Site, game_id: str, token: str) -> None:
    """Play the one person's first legal move until the game is over (the bot plays too)."""
    for _ in range(500):
        body = site.view(game_id)
        if body["status"] != "active":
            return
        played = site.api.post(f"/api/games/{game_id}/actions",
                               headers={"Authorization": f"Bearer {token}"},
                               json={"version": body["version"], "number": 1})
        assert played.status_code == 200, played.get_json()
    raise AssertionError("the game did not end")


def _unchecked(page: Page) -> None:
    """The server's checks, not the browser's: its forms send whatever was typed."""
    page.evaluate("document.querySelectorAll('form').forEach(f => { f.noValidate = true; })")


def _new_with_mistakes(page: Page, say: Callable[[str], str]) -> None:
    _unchecked(page)
    page.locator("#seat0_name").fill("x" * 40)
    page.locator("#seat1_name").fill("")
    page.locator("#seat0_email").fill("not an address")
    page.locator("#target_score").fill("lots")
    page.locator("#vacation_days").fill("999")
    with page.expect_navigation():
        page.get_by_role("button", name=say("Create the game")).click()


def _code_with_mistake(page: Page, say: Callable[[str], str]) -> None:
    page.locator("#name").fill("alice")  # taken
    with page.expect_navigation():
        page.get_by_role("button", name=say("Take an open seat")).click()


def _settings_with_mistakes(page: Page, say: Callable[[str], str]) -> None:
    _unchecked(page)
    page.locator("#email").fill("no-at-sign")
    page.locator("#webhook_url").fill("ftp://example.org/hook")
    with page.expect_navigation():
        page.get_by_role("button", name=say("Save notifications")).click()


def visits(site: Site, signin_host: Callable[[str, str], None],
           open_as: Callable[[str, str], None]) -> list[Visit]:
    """Makes the games the pages show, signs the browsers in, and lists the visits.

    - ``lobby``: alice (joined), bob (invited) and an open seat: waiting.
    - ``live``: alice (ann's address), bob and a bot: started, alice and bob joined.
    - ``over``: carol against a bot, played to its end.
    """
    api = site.api
    created = api_game(api, [{"name": "alice"}, {"name": "bob"}, {}])
    lobby = created["id"]
    join_api(api, lobby, created["invites"][0]["invite"])
    bob_invite = created["invites"][1]["invite"]
    live, _ = site.game([{"name": "alice", "email": ANN}, {"name": "bob", "email": BOB},
                         {"bot": "greedy"}])
    over, (carol,) = site.game([{"name": "carol"}, {"bot": "random"}], target_score=1)
    _finish(site, over, carol)

    body = site.view(live)
    current = body["view"]["current"]
    with site.app.app_context():
        game = access.get_game(live)
        seat = access.seat_of(game, current)
        emailed = urls.emailed_move_url(live, access.seat_token("signin", game, seat),
                                        body["version"], 1)
        _, unsubscribe = notify.unsubscribe_urls(live, access.seat_of(game, 0).public_id)
        confirm = urls.confirm_url(tokens.issue_payload("confirm", {"g": live}))
        join_bob = urls.join_url(lobby, bob_invite)
        join_code = urls.join_code_url(lobby, created["invite_code"])
        over_game = access.get_game(over)
        rematch = urls.rematch_url(over, access.seat_token(
            "signin", over_game, access.seat_of(over_game, 0)))
        db.session.remove()
    signin_host("host", lobby)
    signin_host("host", live)
    signin_host("host", over)
    open_as("alice", site.link(live, 0))
    open_as("carol", site.link(over, 0))
    open_as("account", login_link(site.app, ANN))
    with site.app.app_context():  # the account's player name, for its player page
        identity = db.session.get(IdentityRow, ANN)
        assert identity is not None
        identity.player_name = "Ann"
        db.session.commit()
        db.session.remove()

    return [
        Visit("home", "web.home", "stranger", "/"),
        Visit("home with games", "web.home", "host", "/"),
        Visit("new game", "web.new_game", "stranger", "/new"),
        Visit("new game with mistakes", "web.new_game", "stranger", "/new", _new_with_mistakes),
        Visit("host page, waiting", "web.host", "host", f"/games/{lobby}/host"),
        Visit("host page, started", "web.host", "host", f"/games/{live}/host"),
        Visit("host page, game over", "web.host", "host", f"/games/{over}/host"),
        Visit("host page, not the host", "web.host", "stranger", f"/games/{lobby}/host"),
        Visit("join with an invite", "web.join", "invitee",
              path_of(join_bob)),
        Visit("join by code", "web.join", "coder",
              path_of(join_code)),
        Visit("join by code, a name taken", "web.join", "coder", f"/games/{lobby}/join",
              _code_with_mistake),
        Visit("join without a link", "web.join", "stranger", f"/games/{lobby}/join"),
        Visit("join with a bad invite", "web.join", "stranger",
              f"/games/{lobby}/join?invite=garbage"),
        Visit("sign in from an email", "web.signin", "linked", path_of(site.link(live, 1))),
        Visit("sign in with a token", "web.signin", "stranger", f"/games/{live}/signin"),
        Visit("table, waiting", "web.table", "host", f"/games/{lobby}"),
        Visit("table as a player", "web.table", "alice", f"/games/{live}"),
        Visit("table as a spectator", "web.table", "stranger", f"/games/{live}"),
        Visit("table, game over, player", "web.table", "carol", f"/games/{over}"),
        Visit("table, game over, spectator", "web.table", "stranger", f"/games/{over}"),
        Visit("table, a bad token", "web.table", "stranger", f"/games/{live}?token=garbage"),
        Visit("history", "web.history", "alice", f"/games/{live}/history"),
        Visit("record, in play", "web.record", "stranger", f"/games/{live}/record"),
        Visit("record, game over", "web.record", "stranger", f"/games/{over}/record"),
        Visit("settings", "web.settings", "alice", f"/games/{live}/settings"),
        Visit("settings with mistakes", "web.settings", "alice", f"/games/{live}/settings",
              _settings_with_mistakes),
        Visit("resign", "web.resign_confirm", "alice", f"/games/{live}/resign"),
        Visit("your games, signed out", "web.me", "stranger", "/me"),
        Visit("your games, signed in", "web.me", "account", "/me"),
        Visit("account sign-in link", "web.account_signin", "stranger",
              path_of(login_link(site.app, BOB))),
        Visit("account sign-in, bad link", "web.account_signin", "stranger",
              "/account/signin/garbage"),
        Visit("confirm an address", "web.confirm_email", "stranger", path_of(confirm)),
        Visit("unsubscribe", "web.unsubscribe", "stranger", path_of(unsubscribe)),
        Visit("an emailed move", "web.emailed_move", "emailed", path_of(emailed)),
        Visit("an emailed move, stale", "web.emailed_move", "alice",
              f"/games/{live}/emailed-move/1/1"),
        Visit("rematch, a spectator", "web.rematch_page", "stranger", f"/games/{over}/rematch"),
        Visit("rematch, the game-over email's link", "web.rematch_page", "emailed",
              path_of(rematch)),
        Visit("rules", "web.rules", "stranger", "/rules#rule-3.7"),
        Visit("a player's page", "web.player_page", "stranger", "/players/Ann"),
        Visit("no such player", "web.player_page", "stranger", "/players/zqxw9"),
        Visit("leaderboard", "web.leaderboard", "stranger", "/leaderboard"),
        Visit("API reference", "api-docs.openapi_redoc", "stranger", "/docs"),
        Visit("not found", "", "stranger", "/nowhere"),
        Visit("not found under a game", "", "stranger", f"/games/{live}/nowhere"),
        Visit("no such game", "web.table", "stranger", "/games/nosuchgame"),
    ]


def tour(browser: Browser, site: Site, language: str = "en",
         **context: Any) -> Iterator[tuple[Visit, Page]]:
    """Each visit's page, open in its browser (one context per person, made with ``context``,
    its browser asking for ``language``). Asserts that every page endpoint of the app is
    visited."""
    contexts: dict[str, BrowserContext] = {}
    say = words(language)
    context = {"locale": language, **context}

    def page_of(who: str) -> Page:
        if who not in contexts:
            contexts[who] = browser.new_context(**context)
            contexts[who].new_page()
        return contexts[who].pages[0]

    def signin_host(who: str, game_id: str) -> None:
        page = page_of(who)
        with site.app.app_context():
            game = access.get_game(game_id)
            host = tokens.issue("host", game.id, None, game.host_token_version)
            db.session.remove()
        page.goto(f"{site.base}/games/{game_id}/signin")
        page.locator("#token").fill(host)
        page.get_by_role("button", name=say("Sign in")).click()
        expect(page.get_by_role("heading", name=say("host controls"))).to_be_visible()

    def open_as(who: str, link: str) -> None:
        page = page_of(who)
        page.goto(link)
        with page.expect_navigation():
            page.locator("main button.primary").first.click()

    planned = visits(site, signin_host, open_as)
    missing = page_endpoints(site.app) - {v.endpoint for v in planned}
    assert not missing, f"teach every_page.visits the page(s) {sorted(missing)}"
    try:
        for visit in planned:
            page = page_of(visit.who)
            page.goto(site.base + visit.path)
            if visit.then is not None:
                visit.then(page, say)
            yield visit, page
    finally:
        for opened in contexts.values():
            opened.close()
