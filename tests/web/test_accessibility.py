"""axe-core finds nothing serious or critical on any page of the web front end
(``every_page``), in the light colour scheme and in the dark one."""

from __future__ import annotations

import pytest
from browsing import LANGUAGES, Site, axe_script, browser, serious_violations, site
from every_page import tour
from playwright.sync_api import Browser

__all__ = ["axe_script", "browser", "site"]  # the fixtures, for pytest to find in this module


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_serious_accessibility_violations_on_any_page(browser: Browser, site: Site, language: str,
                                                         axe_script: str) -> None:
    found = []
    for visit, page in tour(browser, site, language, bypass_csp=True):  # axe is an inline script
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            for violation in serious_violations(page, axe_script):
                found.append(f"{visit.label} ({visit.path}, {scheme}): {violation}")
    assert not found, "\n".join(found)
