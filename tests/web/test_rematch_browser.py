"""Rematch in a real browser (Playwright on the system's Chromium, the app under a real
server), on SQLite and, with TEST_DATABASE_URL, PostgreSQL: Ann presses Rematch on the
finished table; Bob opens the link of his game-over email and presses Accept rematch; the
rematch starts, and its table shows the series' score."""

from __future__ import annotations

from browsing import Site, any_site, browser, new_page, sign_in
from playwright.sync_api import Browser, expect

from dos_server.extensions import db
from dos_server.models import NotificationRow
from testkit import backend, db_url, finish_game

__all__ = ["any_site", "backend", "browser", "db_url"]


def _game_over_link(site: Site, game_id: str, seat: int) -> str:
    """The rematch link of the seat's game-over email, as queued in the outbox."""
    with site.app.app_context():
        rows = db.session.execute(db.select(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.event == "game_over",
            NotificationRow.channel == "email")).scalars().all()
        links = [row.payload["rematch"] for row in rows if row.payload["seat"] == seat]
        db.session.remove()
    assert len(links) == 1
    return str(links[0])


def test_rematch_pressed_then_accepted_from_the_email(browser: Browser, any_site: Site) -> None:
    site = any_site
    names = ["ann", "bob"]
    game_id, _tokens = site.game([{"name": n, "email": f"{n}@example.org"} for n in names])
    ann = new_page(browser)
    sign_in(ann, site, game_id, 0, "ann")
    finish_game(site.app, game_id, 1, emails=True)
    ann.reload()
    ann.get_by_role("button", name="Rematch").click()
    expect(ann.locator("p.flash")).to_contain_text("Rematch created")
    new_id = ann.url.split("/games/")[1].split("/")[0]
    assert new_id != game_id
    assert site.view(new_id)["status"] == "waiting"

    bob = new_page(browser)
    bob.goto(_game_over_link(site, game_id, 1))
    assert bob.url == f"{site.base}/games/{game_id}/rematch"  # the token left the address bar
    expect(bob.get_by_text("Accepted: ann.")).to_be_visible()
    bob.get_by_role("button", name="Accept rematch").click()
    expect(bob.locator("p.flash")).to_contain_text("You are in: everyone accepted")
    assert bob.url == f"{site.base}/games/{new_id}"
    expect(bob.get_by_text("Game 2 of the series, wins so far: ann 0, bob 1")).to_be_visible()
    expect(bob.get_by_text("bob (you)").first).to_be_visible()
    assert site.view(new_id)["status"] == "active"
