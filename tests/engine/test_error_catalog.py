"""The engine's errors in the reader's language: each is raised with an N_-marked English
template and its values, ``str(error)`` stays the English sentence, and ``explain(error,
language)`` reads it in the engine's own catalog (standard-library gettext). That the catalog is
complete is test_engine_catalog.py's to check."""

from __future__ import annotations

from pathlib import Path

import pytest

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

ENGINE = Path(dos_engine.__file__).resolve().parent

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

