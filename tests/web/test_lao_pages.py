"""No English left on the Lao pages: read in Lao (the browser asks for ``lo``), no text of the
table, the lobby (a new game, the host's page, joining), the game-over page or the other pages of
``every_page`` equals or contains an English message of the server's catalog.

The engine's lines (events, the moves' descriptions) are checked against the engine's catalog
too. Names, card codes, move notation, "DOS" and "DOS by mail", numbers and times are no messages
of a catalog, so they may stay. Left out: the pages of other parts (the unsubscribe page, whose
emails' tests read it in Lao, and the API reference).
"""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po
from browsing import Site, browser, site
from every_page import tour
from playwright.sync_api import Browser

from dos_engine import translation
from dos_server import i18n

__all__ = ["browser", "site"]  # the fixtures, for pytest to find in this module

NOT_CHECKED = {
    "API reference", "unsubscribe",  # not the web's words
}
# What is no word: names, cards, notation, times.
SKIPPED = "script, style, code, time, .card"
_PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|\{\w+\}")
_TAG = re.compile(r"<[^>]+>")
_ALLOWED = re.compile(r"DOS by mail|Wild DOS|Wild #|DOS|SHA-256|IANA|UTC|URL|API|Mattel|"
                      r"Asia/Vientiane|Idempotency-Key|\S+@\S+")  # the cards' printed names, an address


def english_messages(language: str = "lo") -> list[tuple[str, re.Pattern[str]]]:
    """Each English message of the catalog (singular and plural) as a pattern that finds it in
    a text: its words between its placeholders, in order, not inside a longer word or name
    ("greedy-bot-2" has no "bot")."""
    found = []
    for path in (Path(i18n.TRANSLATIONS) / language / "LC_MESSAGES" / "messages.po",
                 translation.LOCALE / language / "LC_MESSAGES" / f"{translation.DOMAIN}.po"):
        with path.open("rb") as po:
            found += _patterns(read_po(po))
    return found


def _patterns(catalog: Catalog) -> list[tuple[str, re.Pattern[str]]]:
    found = []
    for message in catalog:
        if not message.id:
            continue
        for text in message.id if isinstance(message.id, tuple) else (message.id,):
            parts = [p.strip() for p in _PLACEHOLDER.split(_TAG.sub(" ", text))]
            parts = [p for p in parts if re.search("[A-Za-z]", _ALLOWED.sub("", p))]
            if not parts:
                continue
            pattern = r".*?".join(re.escape(p) for p in parts)
            found.append((text, re.compile(rf"(?<![\w-]){pattern}(?![\w-])", re.I)))
    return found


def test_english_messages_are_found_in_a_text() -> None:
    patterns = dict(english_messages())
    assert patterns["Center Row"].search("the Center Row is empty")
    assert not patterns["Center Row"].search("ແຖວກາງ")
    assert patterns["Catch %(name)s"].search("Catch bob")
    assert patterns["{subject} called DOS"].search("bob called DOS")  # the engine's lines too
    assert not patterns["bot"].search("bob")  # a word, not a part of one
    assert not patterns["bot"].search("greedy-bot-2")
    assert "DOS by mail · play from the browser, the %(command)s command, or by replying to " \
           "the emails." in patterns


def test_no_english_message_is_left_on_the_lao_pages(browser: Browser, site: Site) -> None:
    messages = english_messages()
    left = []
    checked = set()
    for visit, page in tour(browser, site, "lo"):
        if visit.label in NOT_CHECKED:
            continue
        checked.add(visit.label)
        assert page.evaluate("document.documentElement.lang") == "lo", visit.label
        texts: list[str] = page.evaluate("""(skipped) => {
            const out = [document.title];
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                const text = node.textContent.replace(/\\s+/g, ' ').trim();
                if (text && !node.parentElement.closest(skipped)) { out.push(text); }
            }
            // what a screen reader says instead of the text: the cards' names too
            for (const element of document.querySelectorAll('[aria-label], [title]')) {
                out.push(element.getAttribute('aria-label') || '', element.getAttribute('title') || '');
            }
            return out;
        }""", SKIPPED)
        for text in (_ALLOWED.sub(" ", t) for t in texts):
            for english, pattern in messages:
                if pattern.search(text):
                    left.append(f"{visit.label} ({visit.path}): {text!r} has {english!r}")
    assert {"table as a player", "table, game over, player", "new game", "host page, waiting",
            "join with an invite", "join by code"} <= checked
    assert not left, "\n".join(left)
