"""The engine's catalog (dos_engine.translation): every message the engine's code marks is
translated, not fuzzy, in every shipped catalog, and each .mo is its .po compiled. Needs Babel
(pybabel's extraction), which ``make test-engine-alone``'s bare venv does not have: skipped
there, run by the full suite."""

from __future__ import annotations

import string
from pathlib import Path

import pytest

pytest.importorskip("babel")

from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg

from catalog_checks import assert_compiled, assert_translated
from dos_engine import translation

ENGINE = Path(translation.__file__).resolve().parent

# Translations that name a value the raise site passes besides the English template's own
# (the card's code where English says its name, which is English words).
EXTRA_VALUES = {
    "Center Row card {position} is {name}: its number is declared (=7)": {"card"},
    "Center Row card {position} is {name}: its colour is declared (=B)": {"card"},
    "Center Row card {position} is {name}: it takes no declaration": {"card"},
}


def extracted() -> set[str]:
    """Every message the engine marks, as `pybabel extract -F server/dos_engine/babel.cfg -k N_`
    finds them."""
    with (ENGINE / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    keywords = {"N_": None, "gettext": None, "ngettext": (1, 2)}
    found = set()
    for _filename, _line, message, _comments, _context in extract_from_dir(
            str(ENGINE), method_map, options_map, keywords=keywords):
        found.add(message[0] if isinstance(message, tuple) else message)
    return found


def catalogs() -> list[Path]:
    return sorted(translation.LOCALE.glob(f"*/LC_MESSAGES/{translation.DOMAIN}.po"))


def test_lao_is_shipped() -> None:
    assert [p.parent.parent.name for p in catalogs()] == ["lo"]


def test_every_marked_message_is_translated_in_every_shipped_catalog() -> None:
    messages = extracted()
    assert "{subject} called DOS" in messages  # the extraction itself works
    assert "match: {cards} on Center Row card {position} ({target})" in messages
    assert "you may not draw after matching" in messages  # the rule errors' templates
    assert "{message} (rule {rule})" in messages
    for path in catalogs():
        catalog = assert_translated(path, messages)
        for message in messages:
            entry = catalog[message]
            translated = entry.string if isinstance(entry.string, str) else entry.string[0]
            extra = names(translated) - names(message) - EXTRA_VALUES.get(message, set())
            assert not extra, f"{path}: {message!r} names {extra}, which its sentence has not"


def test_each_compiled_catalog_is_its_po_file() -> None:
    for path in catalogs():
        assert_compiled(path)


def names(template: str) -> set[str]:
    """The values a ``str.format`` template names."""
    return {field for _text, field, _spec, _conv in string.Formatter().parse(template)
            if field is not None}


