"""A phone can add the site to its home screen: the web app manifest names the app, its colours
are dos.css's, every icon it names is there at the size it says, every page links it and the
icons, and Chromium loads it under the pages' Content-Security-Policy."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from browsing import Site, browser, site
from every_page import tour
from flask import Flask
from playwright.sync_api import Browser, ConsoleMessage, Page

import dos_server.web
from dos_server.web.pages.install import MANIFEST_TYPE

__all__ = ["browser", "site"]  # the fixtures, for pytest to find in this module

CSS = Path(dos_server.web.__file__).parent / "static" / "dos.css"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _backgrounds() -> tuple[str, str]:
    """dos.css's --bg, light and dark."""
    css = CSS.read_text()
    light = re.search(r":root\s*\{[^}]*--bg:\s*(#[0-9a-f]+)", css)
    dark = re.search(r"prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{[^}]*--bg:\s*(#[0-9a-f]+)", css)
    assert light
    assert dark
    return light.group(1), dark.group(1)


def _png_size(data: bytes) -> tuple[int, int]:
    """The width and height in a PNG's header chunk (IHDR, always first)."""
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _manifest(app: Flask) -> dict[str, Any]:
    answer = app.test_client().get("/manifest.webmanifest")
    assert answer.status_code == 200
    assert answer.mimetype == MANIFEST_TYPE
    body: dict[str, Any] = json.loads(answer.get_data(as_text=True))
    return body


def test_the_manifest_names_the_app_and_its_colours_are_the_pages(app: Flask) -> None:
    manifest = _manifest(app)
    assert manifest["name"] == "DOS by mail"
    assert 0 < len(manifest["short_name"]) <= 12  # a home screen's label
    assert manifest["start_url"] == "/"
    assert manifest["display"] == "standalone"
    light, dark = _backgrounds()
    assert manifest["theme_color"] == manifest["background_color"] == light
    page = app.test_client().get("/").get_data(as_text=True)
    assert f'<meta name="theme-color" content="{light}" media="(prefers-color-scheme: light)">' in page
    assert f'<meta name="theme-color" content="{dark}" media="(prefers-color-scheme: dark)">' in page


def test_every_icon_is_there_at_the_size_it_says(app: Flask) -> None:
    client = app.test_client()
    icons = _manifest(app)["icons"]
    found = set()
    for icon in icons:
        answer = client.get(icon["src"])
        assert answer.status_code == 200, icon
        assert answer.mimetype == icon["type"], icon
        data = answer.get_data()
        answer.close()
        if icon["type"] == "image/png":
            width, height = _png_size(data)
            assert icon["sizes"] == f"{width}x{height}", icon
        else:
            svg = ElementTree.fromstring(data)
            assert svg.tag == "{http://www.w3.org/2000/svg}svg"
            assert svg.get("viewBox") == "0 0 512 512"
            assert icon["sizes"] == "any"
        found.add((icon["purpose"], icon["sizes"]))
    # What Android asks for: 192 and 512 px, and a maskable one (its own safe zone).
    assert {("any", "192x192"), ("any", "512x512"), ("maskable", "512x512")} <= found
    page = client.get("/").get_data(as_text=True)
    touch = re.search(r'<link rel="apple-touch-icon" href="([^"]+)">', page)
    assert touch
    assert _png_size(client.get(touch.group(1)).get_data()) == (180, 180)


def test_the_policy_lets_the_pages_load_the_manifest_and_the_icons(app: Flask) -> None:
    policy = app.test_client().get("/").headers["Content-Security-Policy"]
    directives = {d.split()[0]: d.split()[1:] for d in policy.split("; ")}
    assert directives["manifest-src"] == ["'self'"]
    assert "'self'" in directives["img-src"]


def _loaded_manifest(page: Page) -> dict[str, Any]:
    """What Chromium makes of the page's manifest (it fetches it for this, as for installing)."""
    cdp = page.context.new_cdp_session(page)
    try:
        found: dict[str, Any] = cdp.send("Page.getAppManifest")
    finally:
        cdp.detach()
    return found


def test_every_page_links_the_manifest_and_chromium_loads_it(browser: Browser,
                                                              site: Site) -> None:
    refused: list[str] = []
    listened: set[int] = set()
    seen = 0

    def heard(message: ConsoleMessage) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            refused.append(message.text)

    for visit, page in tour(browser, site):
        if id(page) not in listened:
            listened.add(id(page))
            page.on("console", heard)
        if visit.endpoint.startswith("api-docs."):  # ReDoc's own page, not one of ours
            continue
        links = page.evaluate("""() => Object.fromEntries(
            [...document.querySelectorAll('head link[rel]')].map(l => [l.rel, l.getAttribute('href')]))""")
        assert links["manifest"] == "/manifest.webmanifest", visit.label
        assert links["icon"].endswith("/icons/icon.svg"), visit.label
        assert links["apple-touch-icon"].endswith("/icons/apple-touch-icon.png"), visit.label
        assert page.locator('head meta[name="theme-color"]').count() == 2, visit.label
        loaded = _loaded_manifest(page)
        assert loaded["url"] == f"{site.base}/manifest.webmanifest", visit.label
        assert loaded["errors"] == [], (visit.label, loaded["errors"])
        assert json.loads(loaded["data"])["name"] == "DOS by mail"
        seen += 1
    assert seen > 30
    assert not refused, "\n".join(refused)


def test_chromium_is_seen_to_refuse_a_manifest_the_policy_forbids(
        browser: Browser, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: with manifest-src 'none' the manifest is refused, and said so."""
    monkeypatch.setattr(dos_server.web, "CSP",
                        dos_server.web.CSP.replace("manifest-src 'self'", "manifest-src 'none'"))
    context = browser.new_context()
    page = context.new_page()
    page.goto(site.base + "/")
    with page.expect_console_message(lambda m: "manifest-src 'none'" in m.text) as said:
        loaded = _loaded_manifest(page)
    assert said.value.type == "error"
    assert loaded["url"] == ""
    context.close()
