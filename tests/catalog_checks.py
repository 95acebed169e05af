"""The checks every gettext catalog of the product passes (the server's, the engine's, the
client's): each marked message is in it, translated and not fuzzy, and its .mo is its .po
compiled. Needs Babel: the tests that use it run in the full suite."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po


def assert_translated(path: Path, messages: Iterable[str]) -> Catalog:
    """Every one of ``messages`` is translated, not fuzzy, in the catalog at ``path``."""
    with path.open("rb") as po:
        catalog = read_po(po)
    for message in messages:
        entry = catalog.get(message)
        assert entry is not None, f"{path}: {message!r} is not in the catalog (pybabel update)"
        translated = entry.string if isinstance(entry.string, str) else entry.string[0]
        assert translated, f"{path}: {message!r} is not translated"
        assert not entry.fuzzy, f"{path}: {message!r} is fuzzy"
    return catalog


def assert_compiled(path: Path) -> None:
    """The .mo beside the .po at ``path`` holds exactly what the .po says."""
    with path.open("rb") as po:
        source = {_key(m.id): _key(m.string) for m in read_po(po) if m.id}
    with path.with_suffix(".mo").open("rb") as mo:
        compiled = {_key(m.id): _key(m.string) for m in read_mo(mo) if m.id}
    assert compiled == source, f"{path.with_suffix('.mo')} is stale: make catalogs"


def _key(text: object) -> object:
    """A plural's forms (a tuple in a .po, a list in a .mo) as a tuple."""
    return tuple(text) if isinstance(text, list | tuple) else text
