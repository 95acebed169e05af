"""The pages in the reader's language: Flask-Babel's catalogs, chosen by Accept-Language,
complete for every shipped language, compiled from their .po files, and a new language
served once its catalog is there."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import Flask

from catalog_checks import assert_compiled, assert_translated
from dos_server import i18n

SERVER = Path(i18n.__file__).resolve().parent.parent  # server/, where babel.cfg is


def extracted() -> set[str]:
    """Every message the code and templates mark, as pybabel extract finds them."""
    with (SERVER / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    found = set()
    for _filename, _line, message, _comments, _context in extract_from_dir(
            str(SERVER / "dos_server"), method_map, options_map):
        found.add(message[0] if isinstance(message, tuple) else message)
    return found


def catalogs() -> list[Path]:
    return sorted(i18n.TRANSLATIONS.glob("*/LC_MESSAGES/messages.po"))


def test_lao_is_shipped() -> None:
    assert [p.parent.parent.name for p in catalogs()] == ["lo"]


def test_every_marked_message_is_translated_in_every_shipped_catalog() -> None:
    messages = extracted()
    assert "New game" in messages  # the extraction itself works
    for path in catalogs():
        assert_translated(path, messages)



def test_each_compiled_catalog_is_its_po_file() -> None:
    for path in catalogs():
        assert_compiled(path)


def test_a_page_is_in_the_browsers_language(app: Flask) -> None:
    browser = app.test_client()
    lao = browser.get("/", headers={"Accept-Language": "lo-LA,lo;q=0.9,en;q=0.5"})
    html = lao.get_data(as_text=True)
    assert '<html lang="lo">' in html
    assert "ເກມໃໝ່" in html
    assert "New game" not in html
    assert "ຄຳສັ່ງ <code>dos-client</code>" in html  # the markup inside a message stays markup
    for asked in ("de-DE,de;q=0.9", "", "*"):  # a language not shipped: English
        english = browser.get("/", headers={"Accept-Language": asked} if asked else {})
        assert '<html lang="en">' in english.get_data(as_text=True), asked
        assert "New game" in english.get_data(as_text=True)


def test_language_tags_of_programs_fall_back_to_english(app: Flask) -> None:
    with app.app_context():
        assert i18n.language_of("lo_LA.UTF-8") == "lo"
        assert i18n.language_of("lo-LA") == "lo"
        assert i18n.language_of("fr_FR.UTF-8") == "en"
        assert i18n.language_of("") == "en"
        assert i18n.language_of(None) == "en"


def test_a_new_language_is_served_once_its_catalog_is_there(
        make_app: Callable[..., Flask], tmp_path: Path) -> None:
    """What docs/development.md says a translator does, tried with a throwaway language."""
    shutil.copytree(i18n.TRANSLATIONS, tmp_path, dirs_exist_ok=True)
    with (tmp_path / "lo" / "LC_MESSAGES" / "messages.po").open("rb") as po:
        catalog = read_po(po, locale="fr")
    for message in catalog:
        if message.id == "New game":
            message.string = "Nouvelle partie"
    target = tmp_path / "fr" / "LC_MESSAGES"
    target.mkdir(parents=True)
    with (target / "messages.mo").open("wb") as mo:
        write_mo(mo, catalog)
    app = make_app(BABEL_TRANSLATION_DIRECTORIES=str(tmp_path))
    page = app.test_client().get("/", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert '<html lang="fr">' in page
    assert "Nouvelle partie" in page
    with app.test_request_context():
        assert i18n.shipped_languages() == ["en", "fr", "lo"]
