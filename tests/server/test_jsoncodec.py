"""The JSON the server writes with orjson is the JSON the standard library wrote."""

from __future__ import annotations

import dataclasses
import json
import uuid
from datetime import UTC, date, datetime

import pytest
from flask import Flask
from flask.json.provider import DefaultJSONProvider

from dos_engine import Options, start_game
from dos_server import jsoncodec


@dataclasses.dataclass
class Point:
    x: int
    y: str


SAMPLES = [
    start_game(["ann", "bob", "ຄຳ"], "seed-1", Options())[0].to_dict(),
    {"b": 1, "a": [1.5, -0.0, 1e16, None, True], "c": {"ລາວ": "ສະບາຍດີ"}},
    {1: "int key", "2": "str key"},
    {"big": 2**70, "small": -(2**70)},  # beyond orjson's 64 bits: json writes it
    [],
    "text with \u2028 and \"quotes\" and \\",
]


@pytest.mark.parametrize("value", SAMPLES)
def test_stored_json_reads_back_as_json_wrote_it(value: object) -> None:
    assert json.loads(jsoncodec.dumps(value)) == json.loads(json.dumps(value))
    assert jsoncodec.loads(jsoncodec.dumps(value)) == json.loads(json.dumps(value))


def test_a_value_json_cannot_write_is_refused_alike() -> None:
    with pytest.raises(TypeError):
        json.dumps({"x": object()})
    with pytest.raises(TypeError):
        jsoncodec.dumps({"x": object()})


ANSWERS = [*SAMPLES[:2], SAMPLES[3],
           {"when": datetime(2026, 12, 6, 13, 5, 1, tzinfo=UTC), "day": date(2026, 12, 6),
            "id": uuid.UUID(int=7), "point": Point(1, "y")}]


@pytest.mark.parametrize("value", ANSWERS)
def test_answers_are_the_documents_flask_wrote(value: object) -> None:
    app = Flask("t")
    ours, flasks = jsoncodec.JsonProvider(app), DefaultJSONProvider(app)
    written = ours.dumps(value)
    assert json.loads(written) == json.loads(flasks.dumps(value))
    if isinstance(value, dict):  # keys sorted, as Flask sorts them
        pairs = json.loads(written, object_pairs_hook=list)
        assert [key for key, _ in pairs] == sorted(value)
    assert ours.response(value).get_json() == flasks.response(value).get_json()


def test_answers_keep_flasks_forms_of_dates() -> None:
    written = json.loads(jsoncodec.JsonProvider(Flask("t")).dumps(
        {"when": datetime(2026, 12, 6, 13, 5, 1, tzinfo=UTC)}))
    assert written == {"when": "Sun, 06 Dec 2026 13:05:01 GMT"}


def test_a_pretty_answer_is_indented_as_before() -> None:
    app = Flask("t")
    provider = jsoncodec.JsonProvider(app)
    provider.compact = False
    assert provider.response({"b": 1, "a": 2}).get_data(as_text=True) == \
        '{\n  "a": 2,\n  "b": 1\n}\n'
