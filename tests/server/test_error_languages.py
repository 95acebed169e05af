"""API errors in the reader's language (issue 25): the ``detail`` of every problem follows the
request's ``Accept-Language`` among the shipped languages, while ``type``, ``title`` and the
``rule`` stay the same stable English for programs. English when the header is absent or names
a language not shipped."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from flask_babel import force_locale
from server_helpers import assert_problem, auth, create, started_game, stored_state, stored_version

from dos_engine import Game
from dos_engine.errors import AmbiguousActionError, DosError
from dos_server import tokens
from dos_server.errors import NotAuthenticated
from dos_server.problems import problem_of
from dos_server.services import words

LAO = re.compile("[\u0e80-\u0eff]")
Send = Callable[[dict[str, str]], Any]
ENGLISH_ASKS = ({}, {"Accept-Language": "en"}, {"Accept-Language": "de-DE,de;q=0.9"},
                {"Accept-Language": "*"})


def in_languages(send: Send, status: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``send`` asked in Lao and in ways that mean English: the Lao answer and the English one.

    The Lao detail is Lao; every English way gets the same English detail; everything else of
    the answer (type, title, status, rule, candidates, current_version, ...) is the same."""
    lao = assert_problem(send({"Accept-Language": "lo-LA,lo;q=0.9,en;q=0.5"}), status)
    english = [assert_problem(send(headers), status) for headers in ENGLISH_ASKS]
    first = english[0]
    for other in english[1:]:
        assert other["detail"] == first["detail"]
    assert LAO.search(lao["detail"]), lao
    assert not LAO.search(first["detail"]), first
    assert lao["detail"] != first["detail"]
    assert lao["type"] == first["type"]
    assert lao["title"] == first["title"]
    assert lao.get("rule") == first.get("rule")
    assert set(lao) == set(first)
    for key in set(first) - {"detail", "errors"}:
        assert lao[key] == first[key], key
    return lao, first


def messages(tree: Any) -> list[str]:
    if isinstance(tree, dict):
        return [m for value in tree.values() for m in messages(value)]
    if isinstance(tree, list):
        return [m for item in tree for m in messages(item)]
    return [tree]


def test_field_errors_of_a_422_are_in_lao_and_keyed_as_in_english(client: FlaskClient) -> None:
    body = {"seats": [{"name": "ann;bob"}, {"name": "x" * 41}], "vacation_days": "x",
            "nonsense": 1}
    lao, english = in_languages(lambda h: client.post("/api/games", json=body, headers=h), 422)
    assert english["detail"].startswith("The request has invalid fields: ")
    assert lao["detail"].startswith("ຄຳຂໍນີ້ມີຊ່ອງຂໍ້ມູນທີ່ບໍ່ຖືກຕ້ອງ: ")
    assert "seats.0.name: " in lao["detail"]  # the fields keep their (API) names
    # The same fields, each message in Lao: marshmallow's own and ours.
    assert lao["errors"].keys() == english["errors"].keys()
    assert lao["errors"]["json"].keys() == english["errors"]["json"].keys()
    assert english["errors"]["json"]["nonsense"] == ["Unknown field."]
    assert lao["errors"]["json"]["nonsense"] == ["ບໍ່ຮູ້ຈັກຊ່ອງນີ້."]
    assert lao["errors"]["json"]["vacation_days"] == ["ບໍ່ແມ່ນຈຳນວນເຕັມທີ່ຖືກຕ້ອງ."]
    assert all(LAO.search(m) for m in messages(lao["errors"])), lao["errors"]
    assert "';'" in lao["errors"]["json"]["seats"]["0"]["name"][0]


def test_a_missing_field_and_a_range_are_in_lao(client: FlaskClient) -> None:
    game_id, _host, seats = started_game(client)
    url = f"/api/games/{game_id}/actions"
    lao, english = in_languages(
        lambda h: client.post(url, json={"version": 0, "turn": "end"},
                              headers={**auth(seats[0]), **h}), 422)
    assert english["errors"]["json"]["version"] == ["Must be greater than or equal to 1."]
    assert lao["errors"]["json"]["version"] == ["ຕ້ອງຫຼາຍກວ່າ ຫຼື ເທົ່າກັບ 1."]
    missing, _ = in_languages(lambda h: client.post(url, json={"turn": "end"},
                                                    headers={**auth(seats[0]), **h}), 422)
    assert missing["errors"]["json"]["version"] == ["ຂາດຂໍ້ມູນຂອງຊ່ອງທີ່ຈຳເປັນ."]


def test_a_service_refusing_fields_answers_in_lao(client: FlaskClient) -> None:
    body = {"seats": [{"bot": "random"}, {"bot": "random"}]}  # no person: the service says so
    lao, english = in_languages(lambda h: client.post("/api/games", json=body, headers=h), 422)
    assert english["errors"]["json"]["seats"] == ["at least one seat must be a person, not a bot"]
    assert lao["errors"]["json"]["seats"] == ["ຢ່າງໜ້ອຍໜຶ່ງບ່ອນນັ່ງຕ້ອງເປັນຄົນ, ບໍ່ແມ່ນບອດ"]


def test_bad_tokens_are_refused_in_lao(client: FlaskClient) -> None:
    game_id, host, _seats = started_game(client)
    url = f"/api/games/{game_id}/actions"
    lao, english = in_languages(lambda h: client.get(url, headers={**auth("garbage"), **h}), 401)
    assert english["detail"].startswith("this is not a valid token for this server")
    assert lao["detail"].startswith("ນີ້ບໍ່ແມ່ນໂທເຄັນທີ່ຖືກຕ້ອງ")
    # tokens.py words its own refusals in English; they are read in Lao all the same.
    link, english_link = in_languages(
        lambda h: client.post("/api/login/verify", json={"link": "garbage"}, headers=h), 401)
    assert english_link["detail"] == "this is not a valid sign-in link for this server"
    assert link["detail"] == "ນີ້ບໍ່ແມ່ນລິ້ງເຂົ້າສູ່ລະບົບທີ່ຖືກຕ້ອງສຳລັບເຊີບເວີນີ້"
    # A good token that may not do this: 403.
    forbidden, _ = in_languages(lambda h: client.get(url, headers={**auth(host), **h}), 403)
    assert "ທ່າຫຼິ້ນທີ່ເຮັດໄດ້" in forbidden["detail"]


def test_no_such_game_route_or_method_in_lao(client: FlaskClient) -> None:
    game, english = in_languages(lambda h: client.get("/api/games/nosuchgame", headers=h), 404)
    assert english["detail"] == "there is no game 'nosuchgame' on this server; check the game id"
    assert game["detail"] == "ບໍ່ມີເກມ 'nosuchgame' ໃນເຊີບເວີນີ້; ກະລຸນາກວດເບິ່ງລະຫັດເກມ"
    in_languages(lambda h: client.get("/api/no/such/route", headers=h), 404)
    method, _ = in_languages(lambda h: client.delete("/api/login", headers=h), 405)
    assert "DELETE" in method["detail"]


def test_a_stale_version_is_a_409_in_lao_with_its_current_version(client: FlaskClient,
                                                                   app: Flask) -> None:
    game_id, _host, seats = started_game(client)
    state = stored_state(app, game_id)
    version = stored_version(app, game_id)
    url = f"/api/games/{game_id}/actions"
    lao, english = in_languages(
        lambda h: client.post(url, json={"version": version + 5, "turn": "draw"},
                              headers={**auth(seats[state.current]), **h}), 409)
    assert lao["current_version"] == english["current_version"] == version
    assert f"ເວີຊັນ {version + 5}" in lao["detail"]


def test_an_illegal_move_keeps_its_rule_and_reads_in_lao(client: FlaskClient, app: Flask) -> None:
    game_id, _host, seats = started_game(client)
    state = stored_state(app, game_id)
    version = stored_version(app, game_id)
    url = f"/api/games/{game_id}/actions"
    mover = auth(seats[state.current])
    lao, english = in_languages(
        lambda h: client.post(url, json={"version": version, "turn": "end"},
                              headers={**mover, **h}), 422)
    assert english["rule"] == lao["rule"] == "3.8"
    assert english["detail"] == "a turn cannot end empty: match a Center Row card or draw"
    assert lao["detail"] == "ຕາໜຶ່ງຕ້ອງມີທ່າຫຼິ້ນກ່ອນຈະຈົບໄດ້: ໃຫ້ຈັບຄູ່ບັດແຖວກາງ ຫຼື ຈົກບັດ"
    # An action of a turn says which it is, in Lao too; not an action at all: 400.
    turn, _ = in_languages(lambda h: client.post(url, json={"version": version,
                                                             "turn": "draw; end; end"},
                                                  headers={**mover, **h}), 422)
    assert turn["detail"].startswith("ທ່າຫຼິ້ນທີ ")
    nonsense, _ = in_languages(lambda h: client.post(url, json={"version": version,
                                                                 "turn": "fly away"},
                                                      headers={**mover, **h}), 400)
    assert "m1 R5" in nonsense["detail"]  # the notation stays as it is
    other = auth(seats[1 - state.current])
    _waiting, english_waiting = in_languages(
        lambda h: client.post(url, json={"version": version, "turn": "draw"},
                              headers={**other, **h}), 409)
    assert english_waiting["type"].endswith("/not-your-turn")


def _ambiguous_game(client: FlaskClient, app: Flask) -> tuple[str, dict[int, str], Game, str]:
    """A started game whose player to move holds a card that matches two Center Row cards."""
    for _attempt in range(40):
        game_id, _host, seats = started_game(client)
        state = stored_state(app, game_id)
        for card in state.hands[state.current]:
            try:
                state.parse_action(card.code)
            except AmbiguousActionError:
                return game_id, seats, state, card.code
            except DosError:
                continue
    pytest.fail("no deal of 40 had a card matching two Center Row cards")


def test_an_ambiguous_action_lists_the_same_candidates_in_lao(client: FlaskClient,
                                                              app: Flask) -> None:
    game_id, seats, state, code = _ambiguous_game(client, app)
    version = stored_version(app, game_id)
    lao, english = in_languages(
        lambda h: client.post(f"/api/games/{game_id}/actions",
                              json={"version": version, "turn": code},
                              headers={**auth(seats[state.current]), **h}), 422)
    assert lao["candidates"] == english["candidates"]
    assert len(lao["candidates"]) > 1
    assert ", ".join(lao["candidates"]) in lao["detail"]
    assert english["detail"].endswith("Say which one.")


def test_bad_json_is_refused_in_lao(client: FlaskClient) -> None:
    lao, english = in_languages(
        lambda h: client.post("/api/games", data=b'{"seats": [', headers={
            "Content-Type": "application/json", **h}), 400)
    assert english["detail"].startswith("the JSON body is not JSON: ")
    assert lao["detail"].startswith("ເນື້ອໃນບໍ່ແມ່ນ JSON: ")
    deep = b"[" * 40 + b"]" * 40
    in_languages(lambda h: client.post("/api/games", data=deep, headers={
        "Content-Type": "application/json", **h}), 400)


def test_too_many_requests_are_refused_in_lao(make_app: Callable[..., Flask]) -> None:
    app = make_app(RATELIMIT_ENABLED=True, RATE_LIMIT_CREATE="1 per minute")
    client = app.test_client()
    body = {"seats": [{"name": "ann"}, {"name": "bob"}]}
    assert client.post("/api/games", json=body).status_code == 201
    lao, english = in_languages(lambda h: client.post("/api/games", json=body, headers=h), 429)
    assert "1 per 1 minute" in lao["detail"]
    assert "too many requests" in english["detail"]


def test_a_game_not_started_and_a_record_not_ready_are_409_in_lao(client: FlaskClient) -> None:
    created = create(client, [{"name": "ann"}, {"name": "bob"}])
    url = f"/api/games/{created['id']}/record"
    in_languages(lambda h: client.get(url, headers=h), 409)


def test_outside_a_request_the_words_are_english_and_force_locale_is_followed(app: Flask) -> None:
    with app.app_context():  # the worker, a CLI command: no request to choose by
        assert words.language() == "en"
        assert words._("game %(game)s is finished", game="abc") == "game abc is finished"
        with force_locale("lo"):  # an email to a Lao reader
            assert words.language() == "lo"
            assert words._("game %(game)s is finished", game="abc") == "ເກມ abc ຈົບແລ້ວ"
    with app.test_request_context(headers={"Accept-Language": "lo"}):
        assert words.language() == "lo"


def test_an_unknown_time_zone_is_a_422_naming_the_field_in_lao(client: FlaskClient) -> None:
    created = create(client, [{"name": "ann"}, {"name": "bob"}])
    body = {"invite": created["invites"][0]["invite"], "time_zone": "Mars/Olympus"}
    lao, english = in_languages(
        lambda h: client.post(f"/api/games/{created['id']}/join", json=body, headers=h), 422)
    assert english["errors"]["json"]["time_zone"] == [
        "unknown time zone 'Mars/Olympus': give an IANA name, like Asia/Vientiane or "
        "Europe/Paris"]
    assert lao["errors"]["json"]["time_zone"] == [
        "ບໍ່ຮູ້ຈັກເຂດເວລາ 'Mars/Olympus': ກະລຸນາໃຊ້ຊື່ IANA ເຊັ່ນ Asia/Vientiane ຫຼື Europe/Paris"]


def test_an_expired_link_says_so_apart_from_its_words(client: FlaskClient) -> None:
    """Whatever the detail's language, ``expired`` tells an expired link from a bad one."""
    bad = client.post("/api/login/verify", json={"link": "garbage"},
                      headers={"Accept-Language": "lo"}).get_json()
    assert "expired" not in bad
    assert bad["invalid"] is True  # never a link of this server's
    with client.application.test_request_context(headers={"Accept-Language": "lo"}):
        token = tokens.issue_payload("signin", {"g": "g1"})
        with pytest.raises(NotAuthenticated) as refused:  # older than a lifetime of -1 s
            tokens.read_payload("signin", token, -1, "sign-in link")
        expired = problem_of(refused.value)
        assert expired.body()["expired"] is True
        assert "invalid" not in expired.body()
        assert expired.detail == "ລິ້ງເຂົ້າສູ່ລະບົບນີ້ໝົດອາຍຸແລ້ວ"
