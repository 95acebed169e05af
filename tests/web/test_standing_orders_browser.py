"""Standing orders in a real browser (Playwright, the system's Chromium): a player ticks an
order on the settings page and saves; the order then plays in the game, and the table says so."""

from __future__ import annotations

from browsing import Site, browser, new_page, sign_in, site
from playwright.sync_api import Browser, expect

from dos_call_helpers import waiting_seat_holds_two

__all__ = ["browser", "site"]


def test_a_player_sets_a_standing_order_in_the_browser(browser: Browser, site: Site) -> None:
    game_id, tokens = site.game([{"name": "alice"}, {"name": "bob"}], dos_call=True)
    waiting = 1 - int(site.view(game_id)["view"]["current"])
    name = ["alice", "bob"][waiting]
    waiting_seat_holds_two(site.app, game_id)  # exposed, until someone catches or they call
    page = new_page(browser)
    sign_in(page, site, game_id, waiting, name)
    expect(page.get_by_text("Standing orders may call DOS and catch in this game.")).to_be_visible()
    page.get_by_role("link", name="Settings, vacation, resign").click()
    page.get_by_label("call DOS for me the moment I hold two cards").check()
    page.get_by_role("button", name="Save standing orders").click()
    expect(page.get_by_text("Standing orders saved.")).to_be_visible()
    expect(page.get_by_label("call DOS for me the moment I hold two cards")).to_be_checked()
    assert site.view(game_id, tokens[waiting])["orders"] == ["dos"]
    page.goto(f"{site.base}/games/{game_id}")
    expect(page.get_by_text(f"{name} called DOS (by standing order)")).to_be_visible()
    expect(page.get_by_text("Your standing orders: dos.")).to_be_visible()
    page.context.close()
