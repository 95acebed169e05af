"""What the browser tests share: Playwright driving the operating system's Chromium against
the app under a real (threaded werkzeug) server, the sites they open, signing in from an
email's link, and axe-core."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Page, expect, sync_playwright
from web_helpers import api_game, api_view, join_api, signin_link

from dos_server import i18n
from testkit import build_app, dispose, serving

CHROMIUM = os.environ.get("DOS_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
AXE_VERSION = "4.14.1"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Site:
    app: Flask
    base: str
    api: FlaskClient

    def game(self, seats: list[dict[str, Any]], **options: Any) -> tuple[str, list[str]]:
        """A game made through the API, every invite joined (so it starts); returns its id
        and the people's player tokens."""
        created = api_game(self.api, seats, **options)
        tokens = [join_api(self.api, created["id"], i["invite"]) for i in created["invites"]]
        return created["id"], tokens

    def view(self, game_id: str, token: str | None = None) -> dict[str, Any]:
        return api_view(self.api, game_id, token)

    def link(self, game_id: str, seat: int) -> str:
        return signin_link(self.app, game_id, seat)


def _site(url: str) -> Iterator[Site]:
    # Short long-polls: leaving waits for the ones still running (``finish_requests``).
    app = build_app(url, WEB_WAIT_SECONDS=2, WEB_WAIT_POLL_SECONDS=0.1)
    try:
        with serving(app, finish_requests=True) as base:
            app.config["PUBLIC_URL"] = base
            yield Site(app, base, app.test_client())
    finally:
        dispose(app)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """The app on SQLite."""
    yield from _site(f"sqlite:///{tmp_path / 'dos.sqlite3'}")


@pytest.fixture
def any_site(db_url: str) -> Iterator[Site]:
    """The app on SQLite and, with TEST_DATABASE_URL, on PostgreSQL (where live updates are
    woken by LISTEN/NOTIFY): for the main stories."""
    yield from _site(db_url)


LANGUAGES = ("en", "lo")  # the shipped languages the browser tests read the pages in


def words(language: str) -> Callable[[str], str]:
    """The server catalog's gettext for ``language``: what a page says for an English message
    (tests find buttons by the words a person reads)."""
    from babel.support import Translations

    return Translations.load(str(i18n.TRANSLATIONS), [language]).gettext


def new_page(browser: Browser, **options: Any) -> Page:
    return browser.new_context(**options).new_page()


def sign_in(page: Page, site: Site, game_id: str, seat: int, name: str,
            language: str = "en") -> None:
    """Follow a your-turn email's link and press Continue (the page in ``language``)."""
    say = words(language)
    page.goto(site.link(game_id, seat))
    page.get_by_role("button", name=say("Continue as %(name)s") % {"name": name}).click()
    expect(page.get_by_text(say("%(name)s (you)") % {"name": name}).first).to_be_visible()
    assert page.url == f"{site.base}/games/{game_id}"  # the token left the address bar
    assert "token" not in page.evaluate("document.referrer + location.href")


@pytest.fixture(scope="module")
def axe_script(tmp_path_factory: pytest.TempPathFactory) -> str:
    """axe-core from the npm registry (npm's cache keeps it after the first run)."""
    folder = tmp_path_factory.mktemp("axe")
    subprocess.run(["npm", "pack", f"axe-core@{AXE_VERSION}", "--silent", "--prefer-offline",
                    "--pack-destination",
                    str(folder)], check=True, capture_output=True, timeout=180)
    (tarball,) = folder.glob("axe-core-*.tgz")
    with tarfile.open(tarball) as archive:
        member = archive.extractfile("package/axe.min.js")
        assert member is not None
        return member.read().decode()


def serious_violations(page: Page, axe_script: str) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the page as it is now (its context must
    bypass the CSP: axe is injected as an inline script)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(content=axe_script)
    violations: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run()).violations.map(v => ({id: v.id, impact: v.impact,"
        " help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.html)}))")
    return [v for v in violations if v["impact"] in ("serious", "critical")]
