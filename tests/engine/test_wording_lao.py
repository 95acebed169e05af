"""The engine's words in Lao: every event kind and every action description of the fixture
positions reads in Lao around the ASCII notation, and English stays as it was. Standard library
only (the .mo is read by gettext), so it runs in ``make test-engine-alone`` too."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from positions import position_from_spec

from dos_engine import Options, start_game
from dos_engine.cards import ALL_CARDS
from dos_engine.events import EventKind
from dos_engine.strategies import greedy
from dos_engine.translation import shipped_languages
from dos_engine.wording import card_name, describe

NAMES = ["ann", "bob"]
LAO = re.compile(r"[\u0e80-\u0eff]")
# What a Lao line may hold in Latin letters: the seats' names, card codes and the words printed
# on the cards or typed as notation (DOS, Wild), and the name of a bot.
NOT_TRANSLATED = re.compile(r"\b(?:ann|bob|DOS|Wild|random|greedy|[RGBYW](?:\d+|#))(?=\W|$)")

# One event of every kind the engine and the server write, as the history gives them.
EVENTS: list[dict[str, Any]] = [
    {"kind": "game_started", "seat": None, "data": {"players": NAMES}},
    {"kind": "round_started", "seat": None, "data": {"round": 2, "first": 1}},
    {"kind": "drew", "seat": 0, "data": {"count": 7, "reason": "deal", "cards": ["R1", "W#"]}},
    {"kind": "drew", "seat": 1, "data": {"count": 7, "reason": "deal"}},
    {"kind": "drew", "seat": 0, "data": {"count": 1, "reason": "draw", "cards": ["G5"]}},
    {"kind": "drew", "seat": 1, "data": {"count": 1, "reason": "double_colour"}},
    {"kind": "drew", "seat": 1, "data": {"count": 2, "reason": "caught"}},
    {"kind": "cr_flipped", "seat": None, "data": {"cards": ["R5", "Y3"], "reason": "refill"}},
    {"kind": "reshuffled", "seat": None, "data": {}},
    {"kind": "matched", "seat": 0,
     "data": {"target": "R5", "position": 2, "cards": ["Y5"], "bonus": None}},
    {"kind": "matched", "seat": 1,
     "data": {"target": "R7", "position": 1, "cards": ["R3", "R4"], "bonus": "double_colour"}},
    {"kind": "matched", "seat": 1,
     "data": {"target": "B4", "position": 3, "cards": ["B4"], "bonus": "single_colour"}},
    {"kind": "added", "seat": 0, "data": {"card": "B9"}},
    {"kind": "placed", "seat": 1, "data": {"card": "W2"}},
    {"kind": "discarded", "seat": 0, "data": {"cards": ["R5", "Y5"]}},
    {"kind": "dos_called", "seat": 0, "data": {}},
    {"kind": "dos_missed", "seat": 1, "data": {}},
    {"kind": "caught", "seat": 1, "data": {"by": 0, "deferred": True}},
    {"kind": "caught", "seat": 0, "data": {"by": 1}},
    {"kind": "turn_ended", "seat": 0, "data": {"next": 1}},
    {"kind": "turn_ended", "seat": 1, "data": {"next": 0}},
    {"kind": "turn_ended", "seat": 1, "data": {}},
    {"kind": "round_over", "seat": 0, "data": {"round": 1, "scored": 35}},
    {"kind": "game_over", "seat": 0, "data": {"scores": [210, 80]}},
    {"kind": "game_ended", "seat": None,
     "data": {"reason": "no person is left playing", "scores": [40, 25]}},
    {"kind": "timed_out", "seat": 1, "data": {"policy": "random", "timeouts": 1}},
    {"kind": "resigned", "seat": 0, "data": {}},
    {"kind": "forfeited", "seat": 1, "data": {"timeouts": 3}},
]
SILENT = {"action", "discarded"}


def assert_lao(line: str) -> None:
    assert LAO.search(line), line
    left = NOT_TRANSLATED.sub("", line)
    assert not re.search(r"[A-Za-z]{2,}", left), f"English left in {line!r}"


def test_lao_is_shipped() -> None:
    assert shipped_languages() == ["en", "lo"]


def test_every_event_kind_is_covered_here() -> None:
    assert {kind.value for kind in EventKind} <= {event["kind"] for event in EVENTS}


@pytest.mark.parametrize("event", EVENTS, ids=[e["kind"] for e in EVENTS])
@pytest.mark.parametrize("me", [None, 0, 1])
def test_every_event_kind_reads_in_lao(event: dict[str, Any], me: int | None) -> None:
    english = describe(event, NAMES, me=me)
    lao = describe(event, NAMES, me=me, language="lo")
    assert (english is None) == (lao is None) == (event["kind"] in SILENT)
    if lao is None:
        return
    assert_lao(lao)
    assert lao != english
    # The notation inside the words is the same in both languages.
    codes = re.findall(r"\b[RGBYW](?:\d+|#)", english)
    assert re.findall(r"\b[RGBYW](?:\d+|#)", lao) == codes


def test_the_reader_and_a_seat_not_known_in_lao() -> None:
    dealt = {"kind": "drew", "seat": 1, "data": {"count": 7, "reason": "deal", "cards": ["R1"]}}
    assert describe(dealt, NAMES, me=1, language="lo") == "ທ່ານ ໄດ້ຮັບການແຈກບັດ 7 ໃບ (R1)"
    assert describe(dealt, NAMES, language="lo") == "bob ໄດ້ຮັບການແຈກບັດ 7 ໃບ (R1)"
    ended = {"kind": "turn_ended", "seat": 0, "data": {"next": 1}}
    assert describe(ended, NAMES, me=1, language="lo") == "ann ຈົບຕາ; ຕໍ່ໄປແມ່ນຕາຂອງທ່ານ"
    unknown = {"kind": "round_over", "seat": 5, "data": {}}
    assert describe(unknown, NAMES, language="lo") == \
        "ຮອບທີ ? ຈົບແລ້ວ: ຜູ້ຫຼິ້ນຄົນໜຶ່ງ ໝົດບັດໃນມື ແລະ ໄດ້ ? ຄະແນນ"


def test_one_plural_form_in_lao_two_in_english() -> None:
    one = {"kind": "drew", "seat": 0, "data": {"count": 1, "reason": "draw"}}
    two = {"kind": "drew", "seat": 0, "data": {"count": 2, "reason": "draw"}}
    assert describe(one, NAMES) == "ann drew 1 card"
    assert describe(two, NAMES) == "ann drew 2 cards"
    assert describe(one, NAMES, language="lo") == "ann ຈົກບັດ 1 ໃບ"
    assert describe(two, NAMES, language="lo") == "ann ຈົກບັດ 2 ໃບ"


def test_a_language_without_a_catalog_is_english() -> None:
    for event in EVENTS:
        assert describe(event, NAMES, language="fr") == describe(event, NAMES)
        assert describe(event, NAMES, language=None) == describe(event, NAMES)


def test_card_names() -> None:
    by_code = {card.code: card for card in ALL_CARDS}
    assert [card_name(by_code[c]) for c in ("R5", "B#", "W2")] == ["red 5", "blue Wild #",
                                                                   "Wild DOS"]
    assert [card_name(by_code[c], "lo") for c in ("R5", "B#", "W2")] == ["ແດງ 5", "Wild # ຟ້າ",
                                                                         "Wild DOS"]
    assert all(card_name(card) == card.name() for card in ALL_CARDS)


POSITIONS = json.loads((Path(__file__).resolve().parents[1] / "data" / "positions.json")
                       .read_text(encoding="utf-8"))["positions"]


def test_every_action_of_the_fixture_positions_is_described_in_lao() -> None:
    told = 0
    for position in POSITIONS:
        game = position_from_spec(position["state"])
        seat = position["seat"]
        for action in game.legal_actions(seat):
            lao = game.describe(action, seat, language="lo")
            assert_lao(lao)
            assert lao != game.describe(action, seat)
            told += 1
    assert told > 100


def test_a_whole_game_in_lao() -> None:
    game, events = start_game(NAMES, "lao", Options(dos_call=True, target_score=30))
    while not game.is_over:
        seat = game.current
        legal = game.legal_actions(seat)
        for action in legal:
            assert_lao(game.describe(action, seat, language="lo"))
        events += game.play(greedy(game.view(seat), legal), seat)
    for event in events:
        line = describe(event.for_viewer(0), NAMES, me=0, language="lo")
        if line is not None:
            assert_lao(line)
