"""The package arrows point one way (DESIGN.md): checked in fresh interpreters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import sys
sys.path[:0] = {paths!r}
import {package}
ours = {{"dos_engine", "dos_server", "dos_client"}}
loaded = {{name.split(".")[0] for name in sys.modules}}
forbidden = {forbidden!r}
bad = sorted(loaded & set(forbidden))
if {stdlib_only!r}:
    bad += sorted(
        name for name in loaded
        if name not in sys.stdlib_module_names and name not in ours and not name.startswith("_")
    )
print(",".join(bad))
"""


def _imports_of(package: str, forbidden: list[str], stdlib_only: bool = False) -> str:
    code = CHECK.format(
        paths=[str(ROOT / "server"), str(ROOT / "client")],
        package=package,
        forbidden=forbidden,
        stdlib_only=stdlib_only,
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    return result.stdout.strip()


def test_engine_imports_only_the_standard_library() -> None:
    assert _imports_of("dos_engine", ["dos_server", "dos_client"], stdlib_only=True) == ""


def test_server_does_not_import_the_client() -> None:
    assert _imports_of("dos_server", ["dos_client"]) == ""


def test_client_imports_neither_flask_nor_sqlalchemy_nor_the_server() -> None:
    assert _imports_of("dos_client", ["flask", "sqlalchemy", "dos_server"]) == ""
