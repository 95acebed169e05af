"""The card table in Chromium, played as a person plays it: by tapping cards on a phone, by the
keyboard alone on a desktop, and without JavaScript as plain forms. Also: the Center Row, the
hand and the controls fit a 360x640 screen, a refused pick says the rule in words, and axe-core
finds nothing serious on the table and the game-over page.

Each test plays a short game (target 1: the first round decides it) on SQLite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browsing import Site, axe_script, browser, new_page, sign_in, site, words
from playwright.sync_api import Browser, Locator, Page, expect

from testkit import ROOT

# The fixtures, for pytest to find in this module.
__all__ = ["axe_script", "browser", "site"]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True,
         "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}


def version(page: Page) -> int:
    return int(page.locator("body").get_attribute("data-version") or 0)


def matches(page: Page) -> list[tuple[int, list[str]]]:
    """The legal matches the page marks cards with (what a player sees marked)."""
    block = page.locator("#table-data")
    if not block.count():
        return []
    return [(int(p), cards) for p, cards in json.loads(block.text_content() or "{}")["matches"]]


def hand_box(page: Page, code: str, nth: int = 0) -> Locator:
    return page.locator(f'#play .pick[value="{code}"]').nth(nth)


def hand_card(page: Page, code: str, nth: int = 0) -> Locator:
    return page.locator(f'#play .pick[value="{code}"] + label').nth(nth)


def choose(page: Page) -> tuple[str, Any]:
    """What to play now, as a person reading the table would choose: a match (a single one
    first), else the open slot with the first card, else a button (end before draw)."""
    found = matches(page)
    singles = [m for m in found if len(m[1]) == 1]
    if singles or found:
        return "match", (singles or found)[0]
    if page.locator("#play .cr-slot").count():
        return "slot", page.locator("#play .pick").first.get_attribute("value")
    for name in ("End the turn", "Draw a card"):
        button = page.get_by_role("button", name=name, exact=True)
        if button.count():
            return "button", name
    return "wait", None


def play_by_tapping(page: Page) -> None:
    """One move by tapping cards: the picked cards rise and the Center Row card they match is
    marked before it is tapped."""
    kind, what = choose(page)
    if kind == "match":
        position, cards = what
        seen: dict[str, int] = {}
        for code in cards:
            hand_card(page, code, seen.get(code, 0)).tap()
            seen[code] = seen.get(code, 0) + 1
        target = page.locator(f'#play button.cr-card[data-pos="{position}"]')
        expect(target).to_have_class("cr-card can fits")
        target.tap()
    elif kind == "slot":
        hand_card(page, str(what)).tap()
        page.locator("#play .cr-slot").tap()
    elif kind == "button":
        page.get_by_role("button", name=str(what), exact=True).tap()


def mover(pages: list[Page]) -> Page | None:
    for page in pages:
        if page.locator("#table.mine").count():
            return page
    return None


def play_out(pages: list[Page], move: Callable[[Page], None], over: Callable[[], bool],
             limit: int = 300) -> int:
    """Plays until the game is over; every page must follow each move by itself."""
    moves = 0
    for _ in range(limit):
        if over():
            return moves
        page = mover(pages)
        if page is None:  # the other page has not caught up yet: it updates by itself
            time.sleep(0.05)
            continue
        before = version(page)
        move(page)
        expect(page.locator("body")).not_to_have_attribute("data-version", str(before))
        now = str(version(page))
        for other in pages:
            expect(other.locator("body")).to_have_attribute("data-version", now,
                                                            timeout=15_000)
        moves += 1
    pytest.fail("the game did not end")


def two_players(browser: Browser, site: Site, options: dict[str, Any],
                **target: Any) -> tuple[str, list[Page]]:
    game_id, _ = site.game([{"name": "alice"}, {"name": "bob"}], **target)
    pages = [new_page(browser, **options), new_page(browser, **options)]
    for seat, (page, name) in enumerate(zip(pages, ["alice", "bob"], strict=True)):
        sign_in(page, site, game_id, seat, name)
    return game_id, pages


def test_a_whole_game_by_tapping_cards_on_two_phones(browser: Browser, site: Site) -> None:
    game_id, pages = two_players(browser, site, PHONE, target_score=1)
    loads = [0, 0]
    for index, page in enumerate(pages):  # a full load would be a navigation: count them
        page.on("load", lambda _page, i=index: loads.__setitem__(i, loads[i] + 1))
    moves = play_out(pages, play_by_tapping, lambda: site.view(game_id)["status"] == "finished")
    assert moves >= 3
    assert loads == [0, 0], "a move or a live update reloaded a page"
    for page in pages:
        expect(page.locator(".over .winner")).to_contain_text("win")
        expect(page.get_by_role("heading", name="Final scores")).to_be_visible()
        expect(page.get_by_role("button", name="Rematch")).to_be_visible()
    for page in pages:
        page.context.close()


def press_tab_to(page: Page, selector: str, text: str | None = None, limit: int = 80) -> None:
    """Tab (forwards) until ``selector`` (reading ``text``, if given) has the focus, as a
    keyboard user does."""
    for _ in range(limit):
        if page.evaluate("""([s, text]) => { const e = document.activeElement;
                return !!e && e.matches(s) && (text === null || e.textContent.trim() === text); }""",
                         [selector, text]):
            return
        page.keyboard.press("Tab")
    pytest.fail(f"Tab never reached {selector}")


def play_by_keyboard(page: Page) -> None:
    kind, what = choose(page)
    if kind == "match":
        position, cards = what
        seen: dict[str, int] = {}
        for code in cards:
            nth = seen.get(code, 0)
            seen[code] = nth + 1
            press_tab_to(page, f'#play .pick[value="{code}"]:not(:checked)')
            page.keyboard.press("Space")
        expect(page.locator(f'#play button.cr-card[data-pos="{position}"]')).to_have_class(
            "cr-card can fits")
        # The Center Row comes before the hand: Shift+Tab goes back to it.
        for _ in range(40):
            if page.evaluate("p => document.activeElement?.dataset?.pos === p", str(position)):
                break
            page.keyboard.press("Shift+Tab")
        page.keyboard.press("Enter")
    elif kind == "slot":
        press_tab_to(page, f'#play .pick[value="{what}"]')
        page.keyboard.press("Space")
        press_tab_to(page, "#play .cr-slot")
        page.keyboard.press("Enter")
    elif kind == "button":
        press_tab_to(page, "#play .controls button", what)
        page.keyboard.press("Enter")


def test_a_whole_game_with_the_keyboard_alone(browser: Browser, site: Site) -> None:
    game_id, pages = two_players(browser, site, DESKTOP, target_score=1)
    for page in pages:
        page.locator("body").focus()
    moves = play_out(pages, play_by_keyboard, lambda: site.view(game_id)["status"] == "finished")
    assert moves >= 3
    for page in pages:
        expect(page.get_by_role("heading", name="Final scores")).to_be_visible()
        press_tab_to(page, ".rematch button")  # the rematch is reachable by the keyboard too
        page.context.close()


def test_the_table_fits_the_first_screen_of_a_small_phone(browser: Browser, site: Site) -> None:
    game_id, _ = site.game([{"name": "alice"}, {"bot": "greedy"}, {"bot": "random"},
                            {"bot": "greedy"}])
    page = new_page(browser, viewport={"width": 360, "height": 640}, has_touch=True,
                    is_mobile=True)
    sign_in(page, site, game_id, 0, "alice")
    page.goto(f"{site.base}/games/{game_id}")  # as the email's link opens it: at the top
    for part in ("#play .center-row", "#hand", "#play .controls"):
        box = page.locator(part).bounding_box()
        assert box is not None, part
        assert box["y"] + box["height"] <= 640, f"{part} ends at {box['y'] + box['height']} px"
        assert box["x"] >= 0, part
        assert box["x"] + box["width"] <= 360, part
    small = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#play button, #play label.pick-card')).filter(e => e.checkVisibility())
        .map(e => e.getBoundingClientRect())
        .filter(r => r.width < 44 || r.height < 44).length""")
    assert small == 0, f"{small} tap targets under 44 px"
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    players = page.get_by_role("heading", name="Players").bounding_box()
    hand = page.locator("#hand").bounding_box()
    assert players is not None
    assert hand is not None
    assert players["y"] > hand["y"]
    page.context.close()


def test_without_javascript_a_card_is_played_by_a_plain_form(browser: Browser,
                                                               site: Site) -> None:
    game_id, tokens = site.game([{"name": "alice"}, {"bot": "greedy"}], target_score=50)
    page = new_page(browser, java_script_enabled=False, **PHONE)
    sign_in(page, site, game_id, 0, "alice")
    before = version(page)
    view = site.view(game_id, tokens[0])["view"]
    legal = [a for a in view["legal_actions"] if a.startswith("m")]
    if legal:
        position, cards = legal[0][1:].split(" ")
        seen: dict[str, int] = {}
        for code in cards.split("+"):
            hand_card(page, code, seen.get(code, 0)).tap()
            seen[code] = seen.get(code, 0) + 1
        page.locator(f'#play button.cr-card[data-pos="{position}"]').tap()
        expect(page.get_by_text(f"Played: m{position}")).to_be_visible()
    else:
        page.get_by_role("button", name="Draw a card", exact=True).tap()
        expect(page.get_by_text("Played: draw")).to_be_visible()
    assert version(page) > before
    assert site.view(game_id)["version"] == version(page)
    page.context.close()


def deal_where(site: Site, wanted: Callable[[dict[str, Any]], bool],
               **options: Any) -> tuple[str, list[str], dict[str, Any]]:
    """A new game of alice and a greedy bot whose first view for alice passes ``wanted``
    (deals are random: one that does not is dealt again)."""
    for _ in range(40):
        game_id, tokens = site.game([{"name": "alice"}, {"bot": "greedy"}], **options)
        view = site.view(game_id, tokens[0])["view"]
        if wanted(view):
            return game_id, tokens, view
    raise AssertionError("40 deals in a row without the hand the test needs")


def can_pick(view: dict[str, Any]) -> bool:
    """The hand is a row of cards to pick: some match is legal. A deal where no card matches
    offers only the Draw button, and no card to tick."""
    return any(action.startswith("m") for action in view["legal_actions"])


def cannot_match_first(view: dict[str, Any]) -> str | None:
    """A card of the hand that matches no Center Row card 1, on a table where cards are
    picked."""
    if not can_pick(view):
        return None
    return next((code for code in view["hand"] if f"m1 {code}" not in view["legal_actions"]),
                None)


def test_an_impossible_pick_says_which_rule(browser: Browser, site: Site) -> None:
    game_id, tokens, dealt = deal_where(site, lambda view: cannot_match_first(view) is not None,
                                        target_score=50)
    wrong = cannot_match_first(dealt)
    assert wrong is not None
    for options in ({}, {"java_script_enabled": False}):
        page = new_page(browser, **PHONE, **options)
        sign_in(page, site, game_id, 0, "alice")
        view = site.view(game_id, tokens[0])["view"]
        before = site.view(game_id)["version"]
        first = view["center_row"][0]
        hand_card(page, wrong).tap()
        if not options:  # with the script, the card it cannot match is not marked
            expect(page.locator('#play button.cr-card[data-pos="1"]')).not_to_have_class(
                "cr-card can fits")
        page.locator('#play button.cr-card[data-pos="1"]').tap()
        error = page.get_by_role("alert")
        expect(error).to_contain_text("Nothing was played")
        expect(error).to_contain_text("RULES 3.")
        # the rule's number opens its section of the rules page, in either language
        expect(error.get_by_role("link", name=re.compile(r"RULES 3\."))).to_have_attribute(
            "href", re.compile(r"^/rules#rule-3\.\d+$"))
        expect(error).to_contain_text(first["card"])
        expect(hand_box(page, wrong)).to_be_checked()  # the pick stays: change it, or not
        assert site.view(game_id)["version"] == before
        # No cards at all, then a Center Row card: the words say what to pick first.
        hand_card(page, wrong).tap()
        page.locator('#play button.cr-card[data-pos="1"]').tap()
        expect(page.get_by_role("alert")).to_contain_text("Pick one card of your hand")
        page.context.close()


def test_the_live_update_keeps_a_half_typed_turn_and_the_picked_cards(browser: Browser,
                                                                       site: Site) -> None:
    """The player's own move from elsewhere (the CLI, an email) reaches the page by itself; what
    the player was typing and the cards ticked stay, and the change is announced."""
    game_id, tokens, _ = deal_where(site, can_pick, target_score=50)
    page = new_page(browser, **DESKTOP)
    sign_in(page, site, game_id, 0, "alice")
    ticked = page.locator("#play .pick").first.get_attribute("value")
    page.locator("#play label.pick-card").first.click()  # the card drawn over the checkbox
    page.locator("#turn").click()
    page.keyboard.type("m1 ")
    seen = version(page)
    moved = site.api.post(f"/api/games/{game_id}/actions",
                          headers={"Authorization": f"Bearer {tokens[0]}"},
                          json={"version": seen, "turn": "draw"})
    assert moved.status_code == 200, moved.get_json()
    expect(page.locator("body")).not_to_have_attribute("data-version", str(seen),
                                                       timeout=15_000)
    expect(page.locator("#turn")).to_have_value("m1 ")
    expect(page.locator("#turn")).to_be_focused()
    expect(page.locator(f'#play .pick[value="{ticked}"]').first).to_be_checked()
    expect(page.locator("#live")).to_contain_text("You drew")
    expect(page.locator("#since")).to_contain_text("You drew")
    page.context.close()


def test_no_serious_accessibility_violations_on_the_card_table_and_game_over(
        browser: Browser, site: Site, axe_script: str) -> None:
    game_id, _tokens = site.game([{"name": "alice"}, {"bot": "greedy"}], target_score=1)
    page = new_page(browser, bypass_csp=True, **PHONE)  # axe is injected as an inline script
    sign_in(page, site, game_id, 0, "alice")

    def audit(where: str) -> None:
        page.add_script_tag(content=axe_script)
        violations = page.evaluate("async () => (await axe.run()).violations.map("
                                   "v => ({id: v.id, impact: v.impact, help: v.help,"
                                   " nodes: v.nodes.slice(0, 3).map(n => n.html)}))")
        serious = [v for v in violations if v["impact"] in ("serious", "critical")]
        assert not serious, f"{where}: {serious}"

    audit("the table")
    first = page.locator("#play .pick").first
    if first.count():
        page.locator("#play label.pick-card").first.click()  # picked and marked cards
        audit("the table with a card picked")
        page.locator("#play label.pick-card").first.click()
    play_out([page], play_by_tapping, lambda: site.view(game_id)["status"] == "finished")
    expect(page.get_by_role("heading", name="Final scores")).to_be_visible()
    audit("the game over")
    page.context.close()


@pytest.mark.parametrize(("scheme", "language"), [("light", "en"), ("dark", "en"), ("light", "lo")])
def test_the_table_at_360_and_1280_in_light_and_dark(browser: Browser, site: Site,
                                                      tmp_path: Path, scheme: str,
                                                      language: str) -> None:
    """The README's screenshots (``UPDATE_SCREENSHOTS=1`` writes them to docs/): a turn with
    a card picked and the Center Row cards it matches marked; in Lao too (table-360-lo.png),
    its script drawn by a Lao font of the stack and nothing wider than the window."""
    game_id, _ = site.game([{"name": "alice"}, {"bot": "greedy"}, {"bot": "random"}])
    backgrounds = set()
    for width, height in ((360, 740), (1280, 900)):
        page = new_page(browser, viewport={"width": width, "height": height},
                        color_scheme=scheme, has_touch=width < 400, is_mobile=width < 400,
                        locale=language)
        sign_in(page, site, game_id, 0, "alice", language)
        page.goto(f"{site.base}/games/{game_id}")
        expect(page.locator("#play .center-row")).to_be_visible()
        picked = page.locator("#play label.pick-card").first
        if not picked.count():  # a deal with nothing to match: draw, then pick a card to add
            page.get_by_role("button", name=words(language)("Draw a card"), exact=True).click()
            expect(picked).to_be_visible()
        picked.click()
        expect(page.locator("#play .pick").first).to_be_checked()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        backgrounds.add(page.evaluate("getComputedStyle(document.body).backgroundColor"))
        if language != "en":
            assert page.evaluate("document.documentElement.lang") == language
            assert page.evaluate("document.fonts.check('16px \"Phetsarath OT\"', 'ແຖວກາງ')")
        shot = tmp_path / (f"table-{width}-{scheme}.png" if language == "en"
                           else f"table-{width}-{language}.png")
        page.screenshot(path=str(shot), full_page=width > 400)
        assert shot.stat().st_size > 10_000
        if os.environ.get("UPDATE_SCREENSHOTS"):
            shutil.copyfile(shot, ROOT / "docs" / shot.name)
        page.context.close()
    assert len(backgrounds) == 1
    red, green, blue = (int(v) for v in re.findall(r"\d+", backgrounds.pop())[:3])
    lightness = (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255
    assert lightness < 0.3 if scheme == "dark" else lightness > 0.7, lightness
