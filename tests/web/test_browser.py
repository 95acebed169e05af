"""The pages in a real browser: Playwright driving the operating system's Chromium against the
app under a real (threaded werkzeug) server, on SQLite and, for the main stories, on
PostgreSQL too when TEST_DATABASE_URL is set. Few tests, each a whole story: a game created,
joined and played to its end in browsers only, sign in from an email link and play, live
updates, a stale page, spectators, creating and joining, resigning, a phone-sized screen,
CSRF, and an axe-core audit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browsing import Site, any_site, axe_script, browser, new_page, serious_violations, sign_in, site
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import Error as PlaywrightError

from testkit import backend, db_url

# The fixtures, for pytest to find in this module.
__all__ = ["any_site", "axe_script", "backend", "browser", "db_url", "site"]


def hand(page: Page) -> list[str]:
    return page.locator("#hand .card").all_inner_texts()


def version(page: Page) -> int:
    return int(page.locator("body").get_attribute("data-version") or 0)


def test_email_link_signs_in_and_a_whole_game_is_played_in_browsers(
        browser: Browser, any_site: Site) -> None:
    site = any_site
    game_id, tokens = site.game([{"name": "alice"}, {"name": "bob"}, {"bot": "greedy"}],
                                target_score=1)
    pages = [new_page(browser), new_page(browser)]
    for seat, (page, name) in enumerate(zip(pages, ["alice", "bob"], strict=True)):
        sign_in(page, site, game_id, seat, name)
        assert hand(page) == site.view(game_id, tokens[seat])["view"]["hand"]
    spectator = new_page(browser)
    for _ in range(400):
        body = site.view(game_id)
        if body["status"] != "active":
            break
        seat = body["view"]["current"]
        page = pages[seat]
        open_page(page, f"{site.base}/games/{game_id}")
        before = version(page)
        assert before == body["version"]
        assert hand(page) == site.view(game_id, tokens[seat])["view"]["hand"]
        page.locator("button.move").first.click()
        expect(page.locator("body")).not_to_have_attribute("data-version", str(before))
        assert version(page) > before
    else:
        pytest.fail("the game did not end")
    for page in pages:
        open_page(page, f"{site.base}/games/{game_id}")
        expect(page.get_by_role("heading", name="Final scores")).to_be_visible()
        expect(page.get_by_text(re.compile("commitments? (is )?verified"))).to_be_visible()
    spectator.goto(f"{site.base}/games/{game_id}")
    expect(spectator.get_by_role("heading", name="Final scores")).to_be_visible()
    assert spectator.locator("#hand").count() == 0
    record = site.api.get(f"/api/games/{game_id}/record").get_json()
    expect(spectator.get_by_text(record["seed"])).to_be_visible()
    for page in [*pages, spectator]:
        page.context.close()


def open_page(page: Page, url: str) -> None:
    """``page.goto``, again if the page's own live update reloaded it at that moment."""
    for attempt in range(5):
        try:
            page.goto(url)
            return
        except PlaywrightError as error:
            if attempt == 4 or not any(why in str(error) for why in (
                    "interrupted by another navigation", "net::ERR_ABORTED")):
                raise


def test_spectator_sees_no_hand(browser: Browser, site: Site) -> None:
    game_id, _tokens = site.game([{"name": "alice"}, {"name": "bob"}])
    page = new_page(browser)
    page.goto(f"{site.base}/games/{game_id}")
    expect(page.get_by_text("You are watching")).to_be_visible()
    assert page.locator("#hand").count() == 0
    assert page.locator("button.move").count() == 0
    center = site.view(game_id)["view"]["center_row"]
    # Every card on the page is a Center Row card: no hand card of anyone.
    assert page.locator(".card").all_inner_texts() == [c["card"] for c in center]
    assert page.locator(".center-row .card").count() == len(center)
    page.context.close()


def test_a_move_updates_the_other_seats_page_by_itself(browser: Browser, any_site: Site) -> None:
    site = any_site
    game_id, _ = site.game([{"name": "alice"}, {"name": "bob"}])
    pages = [new_page(browser), new_page(browser)]
    for seat, (page, name) in enumerate(zip(pages, ["alice", "bob"], strict=True)):
        sign_in(page, site, game_id, seat, name)
    current = site.view(game_id)["view"]["current"]
    mover, watcher = pages[current], pages[1 - current]
    seen = version(watcher)
    mover.locator("button.move").first.click()
    expect(watcher.locator("body")).not_to_have_attribute("data-version", str(seen),
                                                           timeout=10_000)
    assert version(watcher) == site.view(game_id)["version"]
    for page in pages:
        page.context.close()


def test_a_stale_page_plays_nothing_and_shows_the_new_table(browser: Browser,
                                                             any_site: Site) -> None:
    site = any_site
    game_id, tokens = site.game([{"name": "alice"}, {"name": "bob"}])
    current = site.view(game_id)["view"]["current"]
    name = ["alice", "bob"][current]
    page = new_page(browser, java_script_enabled=False)  # no live reload: the page stays old
    sign_in(page, site, game_id, current, name)
    old = version(page)
    moved = site.api.post(f"/api/games/{game_id}/actions",
                          headers={"Authorization": f"Bearer {tokens[current]}"},
                          json={"version": old, "turn": "draw"})
    assert moved.status_code == 200
    now = site.view(game_id)["version"]
    events = site.api.get(f"/api/games/{game_id}/events?limit=500").get_json()["events"]
    page.locator("button.move").first.click()
    expect(page.get_by_text("nothing was played")).to_be_visible()
    assert version(page) == now
    assert site.view(game_id)["version"] == now
    assert site.api.get(f"/api/games/{game_id}/events?limit=500").get_json()["events"] == events
    page.context.close()


def create_in_lobby(host: Page, site: Site, target: str, more: Callable[[], Any]) -> str:
    """alice creates a game with bob from the home page (``more`` fills in other fields);
    returns bob's invite link, from the host page."""
    host.goto(site.base)
    host.get_by_role("link", name="Create a game").click()
    host.get_by_label("Name").nth(0).fill("alice")
    host.get_by_label("Name").nth(1).fill("bob")
    host.get_by_label("Play to (points)").fill(target)
    more()
    host.get_by_role("button", name="Create the game").click()
    expect(host.get_by_role("heading", name="host controls")).to_be_visible()
    invite = host.get_by_label("Invite for bob").input_value()
    assert invite.startswith(f"{site.base}/games/")
    return invite


def test_create_invite_join_and_start_in_browsers(browser: Browser, site: Site) -> None:
    host = new_page(browser)
    invite = create_in_lobby(host, site, "50", lambda: host.locator("#seat2_kind")
                             .select_option("open"))

    bob = new_page(browser)
    bob.goto(invite)
    assert "invite" not in bob.url
    bob.get_by_role("button", name="Join as bob").click()
    expect(bob.get_by_text("bob (you)")).to_be_visible()
    expect(bob.get_by_text("Waiting for players")).to_be_visible()

    host.reload()
    host.get_by_role("button", name="Start now").click()
    expect(host.get_by_text("alice (you)")).to_be_visible()
    game_id = host.url.rsplit("/", 1)[1]
    assert site.view(game_id)["status"] == "active"
    expect(bob.locator("#hand .card")).to_have_count(7, timeout=15_000)  # dealt: live update
    for page in (host, bob):
        page.context.close()


def test_a_whole_game_created_joined_and_played_in_browsers_only(
        browser: Browser, any_site: Site) -> None:
    """What the README shows: alice creates a game in the lobby, bob joins by the invite link
    in another browser, both play to the end by pressing move buttons, and both see the game
    over with its record. Nothing but the pages is used until the final checks. With
    ``UPDATE_SCREENSHOTS=1`` the README's screenshot (the table at 1280 px) is written again."""
    site = any_site
    desktop = {"viewport": {"width": 1280, "height": 900}}
    alice = new_page(browser, **desktop)
    invite = create_in_lobby(alice, site, "10", lambda: alice.get_by_label(
        "A turn whose time ran out is played by").select_option("greedy"))
    expect(alice.get_by_role("link", name="Open the table")).to_have_count(0)  # bob is awaited

    bob = new_page(browser, **desktop)
    bob.goto(invite)
    assert "invite" not in bob.url
    bob.get_by_role("button", name="Join as bob").click()
    expect(bob.get_by_text("bob (you)")).to_be_visible()
    alice.reload()  # bob was the last to join: the game is dealt
    alice.get_by_role("link", name="Open the table").click()
    table = bob.url
    open_page(alice, table)
    for _turn in range(400):
        if alice.get_by_role("heading", name="Final scores").count():
            break
        mover = alice if alice.get_by_role("heading", name="Your moves").count() else bob
        expect(mover.get_by_role("heading", name="Your moves")).to_be_visible()
        before = version(mover)
        mover.locator("button.move").first.click()
        expect(mover.locator("body")).not_to_have_attribute("data-version", str(before))
        now = str(version(mover))
        for page in (alice, bob):  # the other page updates by itself
            expect(page.locator("body")).to_have_attribute("data-version", now, timeout=15_000)
    else:
        pytest.fail("the game did not end")
    for page in (alice, bob):
        expect(page.locator("#status")).to_contain_text("Game over")
        expect(page.get_by_role("heading", name="Final scores")).to_be_visible()
        expect(page.get_by_text(re.compile("commitments? (is )?verified"))).to_be_visible()
    bob.get_by_role("link", name="The game's record").click()
    expect(bob.get_by_role("heading", name="Fairness check")).to_be_visible()
    game_id = table.rsplit("/", 1)[1]
    body = site.view(game_id)
    assert body["status"] == "finished"
    assert max(body["view"]["scores"]) >= 10
    expect(bob.get_by_text(site.api.get(f"/api/games/{game_id}/record").get_json()["seed"])
           ).to_be_visible()
    for page in (alice, bob):
        page.context.close()


def test_resign_asks_for_confirmation(browser: Browser, site: Site) -> None:
    game_id, _ = site.game([{"name": "alice"}, {"name": "bob"}, {"bot": "random"}])
    page = new_page(browser)
    sign_in(page, site, game_id, 1, "bob")
    page.get_by_role("link", name="Settings, vacation, resign").click()
    page.get_by_role("link", name="Resign from this game").click()
    page.get_by_role("button", name="Resign").click()  # the box is not ticked: nothing sent
    assert not site.view(game_id)["seats"][1]["resigned"]
    page.get_by_label("Yes, I resign").check()
    page.get_by_role("button", name="Resign").click()
    expect(page.locator(".flash").get_by_text("You resigned")).to_be_visible()
    assert site.view(game_id)["seats"][1]["resigned"]
    page.context.close()


def test_the_table_fits_a_phone_and_a_desktop(browser: Browser, site: Site,
                                              tmp_path: Path) -> None:
    game_id, _ = site.game([{"name": "alice"}, {"name": "bob"}, {"bot": "greedy"},
                            {"name": "a-rather-long-player-name-here"}])
    for width, height in ((360, 740), (1280, 900)):
        page = new_page(browser, viewport={"width": width, "height": height})
        sign_in(page, site, game_id, 0, "alice")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"horizontal scrolling at {width} px: {overflow} px too wide"
        shot = tmp_path / f"table-{width}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 0
        page.context.close()


def test_a_post_without_the_csrf_token_is_refused(browser: Browser, site: Site) -> None:
    game_id, _ = site.game([{"name": "alice"}, {"name": "bob"}])
    current = site.view(game_id)["view"]["current"]
    page = new_page(browser)
    sign_in(page, site, game_id, current, ["alice", "bob"][current])
    before = site.view(game_id)["version"]
    response = page.request.post(f"{site.base}/games/{game_id}/move",
                                 form={"version": str(before), "number": "1"})
    assert response.status == 403
    assert site.view(game_id)["version"] == before
    page.context.close()


def test_no_serious_accessibility_violations(browser: Browser, site: Site, axe_script: str) -> None:
    game_id, _ = site.game([{"name": "alice"}, {"name": "bob"}, {"bot": "greedy"}])
    signed_in = new_page(browser, bypass_csp=True)  # axe is injected as an inline script
    sign_in(signed_in, site, game_id, 0, "alice")
    stranger = new_page(browser, bypass_csp=True)
    for page, path in ((signed_in, f"/games/{game_id}"), (signed_in, f"/games/{game_id}/settings"),
                       (stranger, f"/games/{game_id}"), (stranger, "/new"), (stranger, "/"),
                       (stranger, f"/games/{game_id}/record"),
                       (stranger, f"/games/{game_id}?token=expired-or-garbage")):
        page.goto(site.base + path)
        serious = serious_violations(page, axe_script)
        assert not serious, f"{path}: {serious}"
    for page in (signed_in, stranger):
        page.context.close()
