"""The engine's errors in the reader's language: each is raised with an N_-marked English
template and its values, ``str(error)`` stays the English sentence, and ``explain(error,
language)`` reads it in the engine's own catalog (standard-library gettext), complete for every
shipped language."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

import dos_engine
from dos_engine import Card, Catch, Game, Match, Options
from dos_engine.errors import (
    AmbiguousActionError,
    DosError,
    IllegalActionError,
    InvalidActionError,
    NotYourTurnError,
    explain,
    message,
)
from dos_engine.options import InvalidOptionsError
from dos_engine.translation import LOCALE, shipped_languages

ENGINE = Path(dos_engine.__file__).resolve().parent

# Translations that name a value the raise site passes besides the English template's own
# (the card's code where English says its name, which is English words).
EXTRA_VALUES = {
    "Center Row card {position} is {name}: its number is declared (=7)": {"card"},
    "Center Row card {position} is {name}: its colour is declared (=B)": {"card"},
    "Center Row card {position} is {name}: it takes no declaration": {"card"},
}


def extracted() -> set[str]:
    """Every message the engine marks, as ``pybabel extract -F server/dos_engine/babel.cfg``
    finds them."""
    with (ENGINE / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    return {message if isinstance(message, str) else message[0]
            for _f, _l, message, _c, _x in extract_from_dir(
                str(ENGINE), method_map, options_map, keywords={"N_": None})}


def catalogs() -> list[Path]:
    return sorted(LOCALE.glob("*/LC_MESSAGES/dos_engine.po"))


def names(template: str) -> set[str]:
    return {field for _text, field, _spec, _conv in string.Formatter().parse(template)
            if field is not None}


def test_lao_is_shipped() -> None:
    assert "lo" in shipped_languages()
    assert [p.parent.parent.name for p in catalogs()] == ["lo"]


def test_every_error_template_is_translated_in_every_shipped_catalog() -> None:
    messages = extracted()
    assert "you may not draw after matching" in messages  # the extraction itself works
    assert "{message} (rule {rule})" in messages
    for path in catalogs():
        with path.open("rb") as po:
            catalog = read_po(po)
        for text in messages:
            entry = catalog.get(text)
            assert entry is not None, f"{path}: {text!r} is not in the catalog (pybabel update)"
            assert entry.string, f"{path}: {text!r} is not translated"
            assert not entry.fuzzy, f"{path}: {text!r} is fuzzy"
            translated = entry.string if isinstance(entry.string, str) else entry.string[0]
            extra = names(translated) - names(text) - EXTRA_VALUES.get(text, set())
            assert not extra, f"{path}: {text!r} names {extra}, which its sentence has not"


def test_each_compiled_catalog_is_its_po_file() -> None:
    for path in catalogs():
        with path.open("rb") as po:
            source = {m.id: m.string for m in read_po(po) if m.id}
        with path.with_suffix(".mo").open("rb") as mo:
            compiled = {m.id: m.string for m in read_mo(mo) if m.id}
        assert compiled == source, f"{path.with_suffix('.mo')} is stale: pybabel compile -D dos_engine"


def refused(game: Game, text: str, seat: int | None = None) -> DosError:
    with pytest.raises(DosError) as info:
        game.play_text(text, seat)
    return info.value


@pytest.fixture
def game() -> Game:
    return Game.new(["ann", "bob"], seed="languages")


def test_a_rule_error_reads_in_lao_with_its_rule_and_stays_english_as_text(game: Game) -> None:
    error = refused(game, "end")
    assert isinstance(error, IllegalActionError)
    assert str(error) == "a turn cannot end empty: match a Center Row card or draw (rule 3.8)"
    assert error.detail == "a turn cannot end empty: match a Center Row card or draw"
    assert error.rule == "3.8"
    assert explain(error, "lo") == ("ຕາໜຶ່ງຕ້ອງມີທ່າຫຼິ້ນກ່ອນຈະຈົບໄດ້: ໃຫ້ຈັບຄູ່ບັດແຖວກາງ ຫຼື "
                                    "ຈົກບັດ (ກົດຂໍ້ 3.8)")
    assert message(error, "lo") == "ຕາໜຶ່ງຕ້ອງມີທ່າຫຼິ້ນກ່ອນຈະຈົບໄດ້: ໃຫ້ຈັບຄູ່ບັດແຖວກາງ ຫຼື ຈົກບັດ"
    for other in ("en", "de", None):  # English itself, a language not shipped, none
        assert explain(error, other) == str(error)


def test_values_fill_the_translated_sentence(game: Game) -> None:
    error = refused(game, "m9 R5")
    assert str(error) == ("there is no Center Row card 9: the Center Row has 2 cards "
                          "(rule 2.3)")
    assert explain(error, "lo") == "ບໍ່ມີບັດແຖວກາງໃບທີ 9: ແຖວກາງມີບັດ 2 ໃບ (ກົດຂໍ້ 2.3)"
    other = game.players[1 - game.current]
    turn = refused(game, "draw", 1 - game.current)
    assert isinstance(turn, NotYourTurnError)
    assert other in explain(turn, "lo")
    assert "ຕາຂອງ" in explain(turn, "lo")


def test_the_action_of_a_turn_an_error_is_about_is_translated_too(game: Game) -> None:
    hand = {card.code for card in game.hands[game.current]}
    missing = next(code for code in ("R5", "G7", "B9", "Y3") if code not in hand)
    error = refused(game, f"draw; m1 {missing}")
    assert str(error).startswith(f"action 2 ('m1 {missing}'): ")
    assert explain(error, "lo").startswith(f"ທ່າຫຼິ້ນທີ 2 ('m1 {missing}'): ")
    assert explain(error, "lo").endswith(")")
    assert "ກົດຂໍ້" in explain(error, "lo")


def test_the_notation_help_inside_a_message_is_translated_and_the_notation_is_not(
        game: Game) -> None:
    error = refused(game, "fly away")
    assert isinstance(error, InvalidActionError)
    assert str(error).startswith("'fly away' is not an action. Actions are: m<CR position>")
    lao = explain(error, "lo")
    assert lao.startswith("'fly away' ບໍ່ແມ່ນທ່າຫຼິ້ນ. ທ່າຫຼິ້ນມີ: m<ຕຳແໜ່ງໃນແຖວກາງ>")
    for notation in ("m1 R5", "m2 B3+Y4", "draw", "end", "dos", "';'"):
        assert notation in lao


def test_an_ambiguous_action_lists_its_candidates_in_any_language() -> None:
    error = AmbiguousActionError("R5", [Match(1, (Card.from_code("R5"),)),
                                        Match(2, (Card.from_code("R5"),))])
    assert str(error) == "'R5' could mean any of: m1 R5, m2 R5. Say which one."
    assert explain(error, "lo") == "'R5' ອາດໝາຍເຖິງອັນໃດອັນໜຶ່ງໃນ: m1 R5, m2 R5. ກະລຸນາບອກວ່າແມ່ນອັນໃດ."
    catch = AmbiguousActionError("a", [Catch(1), Catch(2)])
    assert "catch 1, catch 2" in explain(catch, "lo")


def test_options_and_card_errors_are_translated() -> None:
    with pytest.raises(InvalidOptionsError) as info:
        Options.from_dict({"target_score": 0})
    assert str(info.value) == "target_score must be a whole number from 1 to 10000"
    assert explain(info.value, "lo") == "target_score ຕ້ອງເປັນຈຳນວນເຕັມແຕ່ 1 ຫາ 10000"
    with pytest.raises(InvalidActionError) as card:
        Card.from_code("Q7")
    assert explain(card.value, "lo").startswith("'Q7' ບໍ່ແມ່ນບັດ.")

