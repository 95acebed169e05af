"""Each link on the host's page goes by any messenger: a Copy button puts it on the clipboard
and says so, and a Share button opens the system share sheet where the browser has one (the
Web Share API). Without the script both stay hidden and the link is a plain field to copy."""

from __future__ import annotations

from typing import Any

from browsing import Site, browser, site
from playwright.sync_api import Browser, Page, expect
from web_helpers import api_game, join_api

__all__ = ["browser", "site"]  # the fixtures, for pytest to find in this module

# Chromium on Linux has no share sheet: the tests make sure of it, or give it one that records.
NO_SHARE = "delete Navigator.prototype.share; delete Navigator.prototype.canShare;"
RECORDED_SHARE = """
window.shared = [];
Object.defineProperty(Navigator.prototype, 'share', {configurable: true,
    value: function (data) { window.shared.push(data); return Promise.resolve(); }});
Object.defineProperty(Navigator.prototype, 'canShare', {configurable: true,
    value: function (data) { return Boolean(data && data.url); }});
"""


def _host_page(browser: Browser, site: Site, script: str | None = None,
               **context: Any) -> tuple[Page, str]:
    """A waiting game (alice joined, bob invited, an open seat), its host page open in a browser
    signed in with the host token; returns the page and the game's id."""
    created = api_game(site.api, [{"name": "alice"}, {"name": "bob"}, {}])
    game_id = created["id"]
    join_api(site.api, game_id, created["invites"][0]["invite"])
    page = browser.new_context(**context).new_page()
    if script is not None:
        page.add_init_script(script)
    page.goto(f"{site.base}/games/{game_id}/signin")
    page.locator("#token").fill(created["host_token"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="host controls")).to_be_visible()
    return page, game_id


def test_copy_puts_the_invite_on_the_clipboard_and_says_so(browser: Browser,
                                                            site: Site) -> None:
    page, game_id = _host_page(browser, site, NO_SHARE,
                               permissions=["clipboard-read", "clipboard-write"])
    bob = page.get_by_label("Invite for bob").input_value()
    assert bob.startswith(f"{site.base}/games/{game_id}/join?")
    copy = page.get_by_role("button", name="Copy link for bob")
    expect(copy).to_be_visible()
    copy.click()
    status = page.locator(".invites li", has_text="Invite for bob").get_by_role("status")
    expect(status).to_have_text("Link copied.")
    assert page.evaluate("navigator.clipboard.readText()") == bob

    code = page.get_by_label("Link for the open seats").input_value()
    page.get_by_role("button", name="Copy link for the open seats").click()
    expect(page.locator(".invite").get_by_role("status")).to_have_text("Link copied.")
    assert page.evaluate("navigator.clipboard.readText()") == code
    expect(status).to_have_text("Link copied.")  # each link says it of itself
    # Without a share sheet there is no Share button.
    expect(page.get_by_role("button", name="Share…")).to_have_count(0)
    assert page.locator("button[data-share]").count() == 2
    page.context.close()


def test_share_hands_the_invite_to_the_share_sheet(browser: Browser, site: Site) -> None:
    page, _ = _host_page(browser, site, RECORDED_SHARE)
    bob = page.get_by_label("Invite for bob").input_value()
    page.get_by_role("button", name="Share… the link for bob").click()
    page.wait_for_function("window.shared.length === 1")
    (shared,) = page.evaluate("window.shared")
    assert shared["url"] == bob
    assert "bob" in shared["text"]
    assert shared["title"].startswith("DOS by mail")
    code = page.get_by_label("Link for the open seats").input_value()
    page.get_by_role("button", name="Share… the link for the open seats").click()
    page.wait_for_function("window.shared.length === 2")
    assert page.evaluate("window.shared[1].url") == code
    page.context.close()


def test_without_the_script_the_link_is_a_field_to_copy(browser: Browser, site: Site) -> None:
    page, _ = _host_page(browser, site, java_script_enabled=False)
    field = page.get_by_label("Invite for bob")
    expect(field).to_be_visible()
    expect(field).not_to_be_editable()  # read-only: selected and copied by hand
    assert field.input_value().startswith(site.base)
    expect(page.locator("button[data-copy], button[data-share]")).to_have_count(4)
    for button in page.locator("button[data-copy], button[data-share]").all():
        expect(button).to_be_hidden()
    page.context.close()
