"""The players' rules document: one text in two places, every cited section and option in it,
and its translations numbered as it is.

``docs/rules.md`` is the document in the repository; ``client/dos_client/data/rules.md`` is the
same file shipped as package data, for ``dos-client rules`` (and the web's rules page). Each
translation, ``docs/rules.<language>.md`` (Lao: ``rules.lo.md``), is shipped the same way and has
the same sections and numbered paragraphs in the same order, so the rule an error names is the
same paragraph in every language.
"""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path

from dos_engine import Options

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "rules.md"
ENGINE = ROOT / "server" / "dos_engine"
TRANSLATIONS = {"lo": ROOT / "docs" / "rules.lo.md"}


def _sections(text: str) -> set[str]:
    """Section numbers as the document gives them: ``## 5.`` headings and ``5.1`` paragraphs."""
    found = set(re.findall(r"^## (\d+)\.", text, re.M))
    found |= set(re.findall(r"^(\d+\.\d+) ", text, re.M))
    return found


def _numbering(text: str) -> list[str]:
    """The section numbers in the document's order: ``5`` for ``## 5.``, ``5.1`` for ``5.1 ...``."""
    return [m.group(1) or m.group(2)
            for m in re.finditer(r"^(?:## (\d+)\.|(\d+\.\d+) )", text, re.M)]


def _cited() -> set[str]:
    cited: set[str] = set()
    for source in ENGINE.glob("*.py"):
        text = source.read_text("utf-8")
        cited |= set(re.findall(r"rule=\"(\d+(?:\.\d+)?)\"", text))
        cited |= set(re.findall(r"\"(\d\.\d)\"", text))  # matching.py returns (reason, rule)
    return cited


def test_the_client_ships_the_same_document() -> None:
    shipped = resources.files("dos_client").joinpath("data", "rules.md").read_text("utf-8")
    assert shipped == DOC.read_text("utf-8"), (
        "copy docs/rules.md to client/dos_client/data/rules.md")


def test_every_section_the_engine_cites_is_in_the_document() -> None:
    cited = _cited()
    assert {"3.7", "5.3"} <= cited
    missing = cited - _sections(DOC.read_text("utf-8"))
    assert not missing, f"sections cited by the engine but not in docs/rules.md: {missing}"


# -- translations ------------------------------------------------------------------------------


def test_the_client_ships_each_translation() -> None:
    for language, doc in TRANSLATIONS.items():
        shipped = resources.files("dos_client").joinpath("data", f"rules.{language}.md")
        assert shipped.read_text("utf-8") == doc.read_text("utf-8"), (
            f"copy docs/{doc.name} to client/dos_client/data/{doc.name}")


def test_each_translation_has_the_same_sections_in_the_same_order() -> None:
    english = _numbering(DOC.read_text("utf-8"))
    assert english[:3] == ["1", "1.1", "1.2"]
    assert len(english) == len(set(english))  # no number twice
    for doc in TRANSLATIONS.values():
        assert _numbering(doc.read_text("utf-8")) == english, doc.name


def test_every_section_the_engine_cites_is_in_each_translation() -> None:
    for doc in TRANSLATIONS.values():
        missing = _cited() - _sections(doc.read_text("utf-8"))
        assert not missing, f"sections cited by the engine but not in docs/{doc.name}: {missing}"


# What stays as it is in every language: the cards' printed names, DOS, Mattel, UNO, the
# product's name, and everything in backticks (notation, options, commands).
_UNTRANSLATED = re.compile(r"`[^`]*`|Wild DOS|Wild #|DOS by mail|DOS|Mattel|UNO|API|CR")


def english_lines(text: str) -> list[str]:
    """The lines whose words, outside what stays untranslated, are mostly ASCII letters."""
    lines = text.splitlines()
    # a code span may go on to the next line: blank it out in the whole text, lines kept
    kept = _UNTRANSLATED.sub(lambda m: "\n" * m.group(0).count("\n"), text).splitlines()
    found = []
    for number, (line, rest) in enumerate(zip(lines, kept, strict=True), 1):
        lao = len(re.findall(r"[\u0e80-\u0eff]", rest))
        latin = len(re.findall(r"[A-Za-z]", rest))
        if (latin > 12 and latin > lao / 4) or (latin > 3 and not lao):
            found.append(f"{number}: {line}")
    return found


def test_the_lao_document_is_in_lao() -> None:
    text = TRANSLATIONS["lo"].read_text("utf-8")
    left = english_lines(text)
    assert not left, "English left in rules.lo.md:\n" + "\n".join(left)
    english = DOC.read_text("utf-8")
    assert len(english_lines(english)) > 100  # the check finds English where there is some
    assert len(re.findall(r"[\u0e80-\u0eff]", text)) > 5000  # the whole document, not a part
    # the glossary's words, not the machine translation's (the dealer is no merchant)
    for word in ("ແຖວກາງ", "ກອງບັດຈົກ", "ກອງບັດຖິ້ມ", "ຄົນແຈກບັດ", "ຈັບຄູ່ດ້ວຍບັດໃບດຽວ",
                 "ຈັບຄູ່ດ້ວຍບັດສອງໃບ", "ໂບນັດສີ", "ຈັບຄູ່ສີດຽວ", "ຈັບຄູ່ສີຄູ່", "ຮ້ອງ", "ຈົບຕາ",
                 "ຮອບ", "ຄະແນນ", "ກົດຂໍ້ 3.7", "ທ່ານ"):
        assert word in text, word
    for word in ("ພໍ່ຄ້າ", "ແຕ້ມ"):
        assert word not in text, word


def test_each_translation_keeps_the_notation_and_option_names() -> None:
    """Everything in backticks (moves, commands, options and their values) is the same in
    every language: a player types what the English reader types."""
    english = set(re.findall(r"`[^`]*`", DOC.read_text("utf-8")))
    for doc in TRANSLATIONS.values():
        assert set(re.findall(r"`[^`]*`", doc.read_text("utf-8"))) == english, doc.name


def test_every_option_is_explained_with_the_printed_sheet_and_the_readings() -> None:
    text = DOC.read_text("utf-8")
    options = text[text.index("## 8. Rule options"):]
    for option in dataclasses.fields(Options):
        if option.name == "dos_rule":  # not chosen by players: explained under dos_call
            assert '`dos_rule: "v1"`' in options
            continue
        entry = options[options.index(f"`{option.name}` —"):]
        entry = entry[: entry.find("\n\n") if "\n\n" in entry else None]
        assert "Printed sheet:" in entry, option.name
        assert "(default" in entry, option.name


def test_readme_links_the_rules_document() -> None:
    assert "(docs/rules.md)" in (ROOT / "README.md").read_text("utf-8")
