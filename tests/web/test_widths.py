"""No page overflows sideways, from the narrowest phone to a desktop: every page of the web
front end (``every_page``) at each width, its document no wider than the window."""

from __future__ import annotations

import pytest
from browsing import LANGUAGES, Site, browser, site
from every_page import tour
from playwright.sync_api import Browser

__all__ = ["browser", "site"]  # the fixtures, for pytest to find in this module

WIDTHS = (320, 360, 390, 768, 1280)


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_page_is_wider_than_the_window(browser: Browser, site: Site, language: str) -> None:
    too_wide = []
    for visit, page in tour(browser, site, language):
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 800})
            found = page.evaluate("""() => {
                const root = document.documentElement;
                const wide = [...document.querySelectorAll('body *')]
                    .filter(e => e.getBoundingClientRect().right > root.clientWidth + 0.5)
                    .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                              + (e.className && typeof e.className === 'string'
                                 ? '.' + e.className.split(' ').join('.') : ''));
                return {scroll: root.scrollWidth, wide: wide.slice(0, 4)};
            }""")
            if found["scroll"] > width:
                too_wide.append(f"{visit.label} ({visit.path}) at {width}: "
                                f"{found['scroll']} px, {found['wide']}")
    assert not too_wide, "\n".join(too_wide)
