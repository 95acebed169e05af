"""Rules and help inside the product: `dos-client rules [SECTION]`, the
rule an error cites, `dos-client completion SHELL`, and completion of saved game names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from cli_helpers import Table, ok, run

from dos_client.commands.docs import rules_text

ROOT = Path(__file__).resolve().parents[2]
CLIENT = str(Path(sys.executable).parent / "dos-client")


def test_rules_prints_the_document_and_sections() -> None:
    whole = ok("rules").stdout
    assert whole.startswith("# DOS by mail — the rules")
    assert (ROOT / "docs" / "rules.md").read_text() == rules_text()  # one document, two places
    section = ok("rules", "3.6").stdout
    assert section.startswith("3.6 **Drawing**:")
    assert "3.7" not in section
    top = ok("rules", "4").stdout
    assert top.startswith("## 4. End of a turn")
    assert "4.4" in top
    assert "## 5" not in top
    missing = run("rules", "9.9")
    assert missing.exit_code == 2
    assert "the sections are 1, 1.1" in missing.output


def test_every_rule_the_engine_cites_is_in_the_document() -> None:
    cited = set()
    for path in (ROOT / "server" / "dos_engine").glob("*.py"):
        cited |= set(re.findall(r'rule="(\d+(?:\.\d+)?)"', path.read_text()))
    assert cited
    for rule in sorted(cited):
        assert ok("rules", rule).stdout.strip(), rule


def test_an_error_says_how_to_read_its_rule(table: Table) -> None:
    mover = table.to_move()
    ok("--profile", mover, "draw")
    again = run("--profile", mover, "draw")
    assert "(rule 3.6: `dos-client rules 3.6`)" in again.stderr


def test_the_rules_are_in_the_wheel(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--isolated", "wheel", "--no-deps", "--quiet",
                    "-w", str(tmp_path), str(ROOT)], check=True, timeout=600,
                   capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dos_client/data/rules.md" in names
    # The catalogs the client and the engine read with gettext ship beside their code.
    assert "dos_client/locale/lo/LC_MESSAGES/dos_client.mo" in names
    assert "dos_engine/locale/lo/LC_MESSAGES/dos_engine.mo" in names


def test_completion_scripts_and_saved_game_names(tmp_path: Path) -> None:
    for shell in ("bash", "zsh", "fish"):
        script = subprocess.run([CLIENT, "completion", shell], capture_output=True, text=True,
                                timeout=30, check=True).stdout
        assert "_DOS_CLIENT_COMPLETE" in script, shell
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"profiles": {"bob": {"games": {
        "friday": {"game_id": "k3q9x7m2ab", "seat": 1, "token": "t"},
        "fun": {"game_id": "zzq9x7m2ab", "seat": 0, "token": "u"}}}}}))
    env = {**os.environ, "DOS_CLIENT_CONFIG": str(config), "_DOS_CLIENT_COMPLETE": "bash_complete"}
    for words, expected in ((["show", "f"], {"friday", "fun"}), (["move", "fr"], {"friday"}),
                            (["history", "k3"], {"k3q9x7m2ab"})):
        line = " ".join(["dos-client", "--profile", "bob", *words])
        done = subprocess.run([CLIENT], env={**env, "COMP_WORDS": line,
                                              "COMP_CWORD": str(len(words) + 2)},
                              capture_output=True, text=True, timeout=30, check=True)
        offered = {item.split(",", 1)[-1] for item in done.stdout.split()}
        assert offered == expected, (words, done.stdout)
