"""The players' rules document: one text in two places, every cited section and option in it.

``docs/rules.md`` is the document in the repository; ``client/dos_client/data/rules.md`` is the
same file shipped as package data, for ``dos-client rules``.
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


def _sections(text: str) -> set[str]:
    """Section numbers as the document gives them: ``## 5.`` headings and ``5.1`` paragraphs."""
    found = set(re.findall(r"^## (\d+)\.", text, re.M))
    found |= set(re.findall(r"^(\d+\.\d+) ", text, re.M))
    return found


def test_the_client_ships_the_same_document() -> None:
    shipped = resources.files("dos_client").joinpath("data", "rules.md").read_text("utf-8")
    assert shipped == DOC.read_text("utf-8"), (
        "copy docs/rules.md to client/dos_client/data/rules.md")


def test_every_section_the_engine_cites_is_in_the_document() -> None:
    cited: set[str] = set()
    for source in ENGINE.glob("*.py"):
        text = source.read_text("utf-8")
        cited |= set(re.findall(r"rule=\"(\d+(?:\.\d+)?)\"", text))
        cited |= set(re.findall(r"\"(\d\.\d)\"", text))  # matching.py returns (reason, rule)
    assert {"3.7", "5.3"} <= cited
    missing = cited - _sections(DOC.read_text("utf-8"))
    assert not missing, f"sections cited by the engine but not in docs/rules.md: {missing}"


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
