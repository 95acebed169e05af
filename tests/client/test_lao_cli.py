"""dos-client in Lao (LANG=lo_LA.UTF-8) against a real server: the table, the moves, the
history and the errors in Lao words around the ASCII notation; --json the same bytes as in
English; every request asks for the reader's language; the rules in Lao where they are written
in it (a fixture rules document under tests/client/data)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import requests
from cli_helpers import CARD, Table, ok, run

from dos_client.commands import docs

LAO = {"LANG": "lo_LA.UTF-8"}
ENGLISH = {"LANG": "C"}
DATA = Path(__file__).resolve().parent / "data"


def test_the_table_moves_and_history_in_lao(table: Table) -> None:
    mover = table.to_move()
    shown = ok("--profile", mover, "show", env=LAO).stdout
    for words in ("ຮອບທີ 1 · ຕາຂອງທ່ານ", "ຄະແນນ:", "ແຖວກາງ:", "ບັດໃນມືທ່ານ:",
                  "ຜູ້ຫຼິ້ນຄົນອື່ນ:", "ກອງບັດຈົກ", "ທ່າຫຼິ້ນຂອງທ່ານ (ຫຼິ້ນໜຶ່ງທ່າດ້ວຍ `"):
        assert words in shown, (words, shown)
    assert "Center Row" not in shown
    assert "Your hand" not in shown
    assert CARD.search(shown)  # the cards are their codes: [R5]
    assert re.search(r"\b\d+ draw$", shown, re.M), shown  # the notation as it is

    listed = ok("--profile", mover, "moves", env=LAO).stdout
    assert re.search(r"^ *# +ທ່າຫຼິ້ນ +ຄວາມໝາຍ$", listed, re.M), listed
    assert "ຄວາມໝາຍ" in listed
    assert re.search(r"^ຫຼິ້ນໜຶ່ງທ່າດ້ວຍ `dos-client (--profile bob )?move N`\.$", listed, re.M)
    assert re.search(r"^\s*\d+\s+draw\s", listed, re.M), listed
    waiting = ok("--profile", table.waiting(), "moves", env=LAO).stdout
    assert "ຕອນນີ້ທ່ານບໍ່ມີທ່າຫຼິ້ນທີ່ເຮັດໄດ້: ຕອນນີ້ແມ່ນຕາຂອງ" in waiting

    ok("--profile", mover, "draw")
    history = ok("history", env=LAO).stdout
    name = "Ann" if mover == "default" else "Bob"
    assert "ເກມເລີ່ມແລ້ວ" in history
    assert re.search(r"^-- ຮອບທີ 1 ເລີ່ມແລ້ວ; \w+ ຫຼິ້ນກ່ອນ -- ວັນ\S+ \d\d:\d\d UTC\S*$", history, re.M)
    assert f"{name} ຈົກບັດ 1 ໃບ" in history
    assert "drew" not in history
    assert "Round" not in history
    assert "drew 1 card" in ok("history").stdout  # and English for an English reader


@pytest.mark.parametrize("command", [["show"], ["moves"], ["history"], ["games"]])
def test_json_is_the_same_in_every_language(table: Table, command: list[str]) -> None:
    for profile in ("default", "bob"):
        english = ok("--profile", profile, "--json", *command, env=ENGLISH).stdout
        lao = ok("--profile", profile, *command, "--json", env=LAO).stdout
        assert lao == english


def test_errors_in_lao(table: Table) -> None:
    refused = run("--profile", table.waiting(), "move", "draw", env=LAO)
    assert refused.exit_code == 3
    assert refused.stderr.startswith("ຜິດພາດ: ")
    assert "`dos-client --profile" in refused.stderr or "`dos-client wait`" in refused.stderr
    assert "ຈະບອກທ່ານເມື່ອຮອດຕາຂອງທ່ານ." in refused.stderr
    unknown = run("show", "nosuch", env=LAO)
    assert unknown.exit_code == 1
    assert "ຜິດພາດ: ບໍ່ມີເກມທີ່ບັນທຶກໄວ້ຊື່ 'nosuch'; ທີ່ບັນທຶກໄວ້: g" in unknown.stderr
    usage = run("new", "--seat", "Ann", env=LAO)  # click's usage error, in Lao around ours
    assert usage.exit_code == 2
    assert "ວິທີໃຊ້: cli new [OPTIONS]" in usage.stderr
    assert "ເກມໜຶ່ງມີ 2 ຫາ 4 ບ່ອນນັ່ງ: ໃຊ້ --seat, --open ແລະ --bot" in usage.stderr
    assert "Error: no saved game called 'nosuch'" in run("show", "nosuch").stderr


def test_help_in_the_readers_language(config_file: Path) -> None:
    lao = ok("--help", env=LAO).stdout
    assert lao.startswith("ວິທີໃຊ້: cli [OPTIONS] COMMAND [ARGS]...")  # CliRunner calls it cli
    assert "ຕົວເລືອກ:" in lao
    assert "ຄຳສັ່ງ:" in lao
    assert "ສະແດງຂໍ້ຄວາມນີ້ ແລ້ວອອກ." in lao  # click's own --help, through our catalog
    assert "ຈົກບັດ (ແລ້ວ `move` ເພື່ອຈັບຄູ່ດ້ວຍມັນ ຫຼື ເພີ່ມບັດ)." in lao
    english = ok("--help", env=ENGLISH).stdout  # the same process, the next run: English again
    assert english.startswith("Usage: cli [OPTIONS] COMMAND [ARGS]...")
    assert "Show this message and exit." in english
    assert not re.search(r"[\u0e80-\u0eff]", english)


def test_every_request_asks_for_the_readers_language(table: Table,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str | None] = []
    send = requests.Session.request

    def recording(self: requests.Session, method: str, url: str, **kwargs: Any) -> Any:
        asked.append(self.headers.get("Accept-Language"))
        return send(self, method, url, **kwargs)

    monkeypatch.setattr(requests.Session, "request", recording)
    ok("show", env=LAO)
    ok("moves", env=LAO)
    assert asked
    assert set(asked) == {"lo"}
    asked.clear()
    ok("show", env=ENGLISH)
    assert asked
    assert set(asked) == {"en"}
    asked.clear()
    ok("show", "--json", env=LAO)  # what a script reads is English in every language
    assert asked
    assert set(asked) == {"en"}


def test_the_rules_in_the_readers_language(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           config_file: Path) -> None:
    monkeypatch.setattr(docs, "DATA", DATA)
    assert ok("rules", "3.6", env=LAO).stdout.startswith("3.6 **ການຈົກບັດ**:")
    assert ok("rules", "3.6", env=ENGLISH).stdout.startswith("3.6 **Drawing**:")
    top = ok("rules", "4", env=LAO).stdout
    assert top.startswith("## 4. ການຈົບຕາ")
    assert "4.1 **ການຖິ້ມບັດ**" in top
    assert ok("rules", env=LAO).stdout.startswith("# DOS — ກົດກະຕິກາສັ້ນໆ")
    missing = run("rules", "9.9", env=LAO)
    assert missing.exit_code == 2
    assert "ບໍ່ມີກົດຂໍ້ '9.9'; ພາກຕ່າງໆມີ 3, 3.1, 3.6, 4, 4.1" in missing.output
    assert docs.rules_text("3.1", language="fr").startswith("3.1 **Matching**")
    assert docs.rules_text("3.1", language="lo").startswith("3.1 **ການຈັບຄູ່**")
    # A language the rules are not written in yet: the English document.
    (tmp_path / "rules.md").write_text((DATA / "rules.md").read_text(encoding="utf-8"),
                                       encoding="utf-8")
    monkeypatch.setattr(docs, "DATA", tmp_path)
    assert ok("rules", "3.6", env=LAO).stdout.startswith("3.6 **Drawing**:")
