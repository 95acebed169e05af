"""The rules page, /rules: the players' rules document in the reader's language, every section
and numbered paragraph at the same anchor in every language (``/rules#rule-3.7``), the
document's text never taken as HTML, and the page as wide as the window in Lao and English."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browsing import Site, browser, site
from flask import Flask
from playwright.sync_api import Browser

from dos_server.web.pages import rules as rules_page

__all__ = ["browser", "site"]  # the fixtures, for pytest to find in this module

ROOT = Path(__file__).resolve().parents[2]
ENGLISH = (ROOT / "docs" / "rules.md").read_text("utf-8")
LAO = (ROOT / "docs" / "rules.lo.md").read_text("utf-8")


def anchors_of(text: str) -> list[str]:
    """The anchors a rules document's sections and numbered paragraphs get, in its order."""
    return [f"rule-{m.group(1) or m.group(2)}"
            for m in re.finditer(r"^(?:## (\d+)\.|(\d+\.\d+) )", text, re.M)]


def ids_on(html: str) -> list[str]:
    return re.findall(r'\bid="(rule-[^"]+)"', html)


def get_rules(app: Flask, language: str | None = None) -> str:
    headers = {"Accept-Language": language} if language else {}
    response = app.test_client().get("/rules", headers=headers)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    rules_page._rendered.cache_clear()
    yield
    rules_page._rendered.cache_clear()


def test_the_rules_in_english_with_the_pages_headers(app: Flask) -> None:
    response = app.test_client().get("/rules")
    assert response.status_code == 200
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")
    assert response.headers["X-Frame-Options"] == "DENY"
    html = response.get_data(as_text=True)
    assert '<html lang="en">' in html
    assert "<title>The rules of DOS · DOS by mail</title>" in html
    assert '<article class="rules" lang="en">' in html
    assert "<h1>DOS by mail — the rules</h1>" in html
    assert "You may not draw after you have matched in the same turn." in html
    assert 'href="/new"' in html  # the site's frame, as on every page


def test_the_rules_in_lao(app: Flask) -> None:
    html = get_rules(app, "lo-LA,lo;q=0.9,en;q=0.5")
    assert '<html lang="lo">' in html
    assert "<title>ກົດກະຕິກາຂອງ DOS · DOS by mail</title>" in html
    assert '<article class="rules" lang="lo">' in html
    assert "<h1>DOS by mail — ກົດກະຕິກາ</h1>" in html
    assert "ທ່ານຈົກບັດບໍ່ໄດ້ ຫຼັງຈາກທີ່ທ່ານໄດ້ຈັບຄູ່ແລ້ວໃນຕາດຽວກັນ." in html
    assert "You may not draw" not in html
    assert "ເກມໃໝ່" in html  # the frame in Lao too


def test_a_language_without_a_translation_of_the_rules_reads_the_english_ones(app: Flask) -> None:
    with app.test_request_context():
        path, language = rules_page.rules_document("fr")
        assert (path.name, language) == ("rules.md", "en")
        path, language = rules_page.rules_document("lo")
        assert (path.name, language) == ("rules.lo.md", "lo")
    assert '<article class="rules" lang="en">' in get_rules(app, "de")


def test_every_section_has_the_same_anchor_in_both_languages(app: Flask) -> None:
    expected = anchors_of(ENGLISH)
    assert len(expected) == 40  # 8 sections, 32 numbered paragraphs
    assert anchors_of(LAO) == expected
    for language in ("en", "lo"):
        html = get_rules(app, language)
        assert ids_on(html) == expected, language
        for anchor in expected:  # each number links to itself, for a player to pass on
            assert f'<a href="#{anchor}" class="rule-number">' in html, (language, anchor)


def test_a_rule_the_engine_cites_opens_at_its_paragraph(app: Flask) -> None:
    with app.test_request_context():
        assert rules_page.rule_url("3.7") == "/rules#rule-3.7"
        assert rules_page.rule_url("5") == "/rules#rule-5"
        assert rules_page.rule_anchor("5.") == "rule-5"
    for language, words in (("en", "You may not draw after"), ("lo", "ທ່ານຈົກບັດບໍ່ໄດ້")):
        html = get_rules(app, language)
        paragraph = html.split('id="rule-3.7"', 1)[1].split("</p>", 1)[0]
        assert words in paragraph, language
        assert 'id="rule-5.3"' in html
        assert 'id="rule-5"' in html


def test_the_paragraphs_hanging_lists_are_lists() -> None:
    html = rules_page.render_rules(ENGLISH)
    after = html.split('id="rule-3.5"', 1)[1].split('id="rule-3.6"', 1)[0]
    assert after.count("<li>") == 3
    assert "<strong>Single colour match</strong>" in after
    assert "<code>" not in html.split('id="rule-1.1"', 1)[1].split("</p>", 1)[0]  # no code block


def test_the_documents_html_is_shown_as_text() -> None:
    html = rules_page.render_rules(
        "# Rules\n\n<script>alert(1)</script>\n\n1.1 <b onclick=\"alert(2)\">bold</b> "
        "[link](javascript:alert(3)) <img src=x onerror=alert(4)>\n\n## 2. <i>Set</i>-up\n")
    for markup in ("<script", "<b ", "<img", "<i>"):
        assert markup not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript' not in html
    assert ids_on(html) == ["rule-1.1", "rule-2"]


def test_a_document_with_html_in_it_is_escaped_on_the_page(
        app: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    (tmp_path / "rules.md").write_text(
        "# The rules\n\n1.1 <script>document.title = 'owned'</script> and "
        '<a href="https://example.org" onclick="x()">a link</a>\n', "utf-8")
    monkeypatch.setattr(rules_page, "rules_folder", lambda: tmp_path)
    html = get_rules(app)
    article = html.split('<article class="rules"', 1)[1].split("</article>", 1)[0]
    assert "<script" not in article
    assert '<a href="https' not in article
    assert "&lt;script&gt;document.title = 'owned'&lt;/script&gt;" in article.replace("&#x27;", "'")
    assert ids_on(article) == ["rule-1.1"]


def test_each_document_is_converted_once(app: Flask, fresh_cache: None) -> None:
    for _ in range(3):
        get_rules(app)
        get_rules(app, "lo")
    info = rules_page._rendered.cache_info()
    assert (info.misses, info.hits) == (2, 4)


# -- in the browser --------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "lo"])
def test_the_rules_page_fits_the_window_and_opens_at_the_rule(
        browser: Browser, site: Site, language: str) -> None:
    for width in (360, 1280):
        context = browser.new_context(viewport={"width": width, "height": 800},
                                      extra_http_headers={"Accept-Language": language})
        try:
            page = context.new_page()
            page.goto(f"{site.base}/rules#rule-3.7")
            assert page.evaluate("document.documentElement.lang") == language
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= width, f"{language} at {width}: {scroll} px wide"
            top = page.evaluate("document.getElementById('rule-3.7').getBoundingClientRect().top")
            assert 0 <= top < 50, f"{language} at {width}: rule 3.7 is at {top} px"
        finally:
            context.close()
