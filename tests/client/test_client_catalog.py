"""dos-client's own catalog (dos_client.i18n): every message the client marks is translated,
not fuzzy, in every shipped catalog; each .mo is its .po compiled; click's words it lists are
click's own; the language is chosen from the environment as gettext chooses it; and the client
reads its catalog with the standard library alone (no flask, no babel)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click
from babel.messages.extract import extract_from_dir, extract_from_file

from catalog_checks import assert_compiled, assert_translated
from dos_client import i18n

CLIENT = Path(i18n.__file__).resolve().parent
ROOT = CLIENT.parents[1]


def _ids(found: Iterable[tuple[Any, ...]]) -> set[str]:
    """The message ids (a plural's singular) of what Babel's extraction found: the message is
    the third item of extract_from_dir's rows, the second of extract_from_file's."""
    ids = set()
    for row in found:
        message = row[2] if len(row) == 5 else row[1]
        ids.add(message[0] if isinstance(message, tuple) else message)
    return ids


def extracted() -> set[str]:
    """Every message the client marks, as `pybabel extract -o ... client/dos_client` finds them
    (Python files, Babel's default keywords: _, N_, gettext, ngettext, ...)."""
    return _ids(extract_from_dir(str(CLIENT), [("**.py", "python")]))


def catalogs() -> list[Path]:
    return sorted(i18n.LOCALE.glob(f"*/LC_MESSAGES/{i18n.DOMAIN}.po"))



def test_lao_is_shipped() -> None:
    assert [p.parent.parent.name for p in catalogs()] == ["lo"]
    assert i18n.shipped_languages() == ["en", "lo"]


def test_every_marked_message_is_translated_in_every_shipped_catalog() -> None:
    messages = extracted()
    assert "Since you last looked:" in messages  # the extraction itself works
    assert "Your legal actions, numbered: play one with `dos-client move N`." in messages
    for path in catalogs():
        assert_translated(path, messages)


def test_each_compiled_catalog_is_its_po_file() -> None:
    for path in catalogs():
        assert_compiled(path)


def test_clicks_words_are_clicks_own() -> None:
    """click_words.py lists click's messages as click's source has them (a click that reworded
    one would leave it in English)."""
    ours = _ids(extract_from_file("python", str(CLIENT / "click_words.py")))
    clicks = _ids(extract_from_dir(str(Path(click.__file__).parent), [("**.py", "python")]))
    assert ours
    assert ours <= clicks, sorted(ours - clicks)


def test_the_language_is_chosen_as_gettext_chooses_it() -> None:
    assert i18n.language({"LANG": "lo_LA.UTF-8"}) == "lo"
    assert i18n.language({"LANG": "lo"}) == "lo"
    assert i18n.language({"LANG": "fr_FR.UTF-8"}) == "en"
    assert i18n.language({"LANG": "C"}) == "en"
    assert i18n.language({}) == "en"
    # LANGUAGE first (a list), then LC_ALL, LC_MESSAGES, LANG: the first one set decides.
    assert i18n.language({"LANGUAGE": "fr:lo", "LANG": "en_US.UTF-8"}) == "lo"
    assert i18n.language({"LANGUAGE": "", "LC_ALL": "lo_LA.UTF-8", "LANG": "C"}) == "lo"
    assert i18n.language({"LC_ALL": "C.UTF-8", "LC_MESSAGES": "lo_LA.UTF-8"}) == "en"
    assert i18n.language({"LC_MESSAGES": "lo_LA.UTF-8", "LANG": "en_GB.UTF-8"}) == "lo"


def test_the_client_reads_its_catalog_without_flask_or_babel() -> None:
    code = (
        "import sys\n"
        "from dos_client.cli import cli\n"
        "try:\n"
        "    cli.main(['--help'], prog_name='dos-client')\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = {name.split('.')[0] for name in sys.modules}\n"
        "print(sorted(loaded & {'flask', 'flask_babel', 'babel', 'dos_server'}))\n"
    )
    env = {**os.environ, "LANG": "lo_LA.UTF-8", "LANGUAGE": "", "LC_ALL": "",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "client")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, check=True, timeout=60)
    assert "ວິທີໃຊ້: dos-client" in result.stdout  # click's "Usage:" in Lao
    assert "ຕາຂອງ" in result.stdout or "ຈົກບັດ" in result.stdout  # our help texts too
    assert result.stdout.strip().endswith("[]"), result.stdout


def test_the_event_help_names_every_event() -> None:
    """`notify --event`'s help lists the events in one message (so that it is translated
    whole): the list the client checks --event against."""
    from click.testing import CliRunner

    from dos_client.cli import cli
    from dos_client.commands.seat import NOTIFY_EVENTS

    english = {"LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": "C"}
    shown = CliRunner().invoke(cli, ["notify", "--help"], env=english).output
    words = " ".join(shown.split())
    assert ("Events: " + ", ".join(NOTIFY_EVENTS) + ".") in words
