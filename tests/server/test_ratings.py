"""Ratings (services/ratings.py), on both backends: rated and casual games, who is rated
(signed-in humans: bots and seats of no identity left out, two at least), resigned seats last,
ties, idempotent updates, concurrent game ends, the rebuild that equals the incremental values
(and its command), the player and leaderboard API, player names and hiding, the export and
deletion of an identity's rating."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem
from sqlalchemy import delete, select

from dos_engine import Game
from dos_server.database import write_transaction
from dos_server.extensions import db
from dos_server.models import GameRow, RatingChangeRow, RatingRow, SeatRow
from dos_server.services import ratings
from dos_server.services.access import get_game
from rating_kit import bearer, new_game, people, play_out, sign_in

NAMES = ("ann", "bob", "cid", "dan")


def _changes(app: Flask, game_id: str) -> list[tuple[int, str, int]]:
    with app.app_context():
        rows = db.session.execute(select(RatingChangeRow).where(
            RatingChangeRow.game_id == game_id).order_by(RatingChangeRow.seat)).scalars().all()
        found = [(row.seat, row.email_key, row.rank) for row in rows]
        db.session.remove()
    return found


def _ratings(app: Flask) -> dict[str, tuple[float, float, int]]:
    with app.app_context():
        rows = db.session.execute(select(RatingRow)).scalars().all()
        found = {row.email_key: (row.mu, row.sigma, row.games) for row in rows}
        db.session.remove()
    return found


def _game_ids(app: Flask) -> list[str]:
    """The finished games, in the order they ended."""
    with app.app_context():
        found = list(db.session.execute(select(GameRow.id).where(GameRow.status == "finished")
                                        .order_by(GameRow.finished_at)).scalars())
        db.session.remove()
    return found


def _sign_in_all(client: FlaskClient, app: Flask, *names: str) -> dict[str, str]:
    return {name: sign_in(client, app, f"{name}@example.org") for name in names}


def _scores_ranks(body: dict[str, Any], seats: list[int]) -> list[int]:
    scores = body["view"]["scores"]
    return [1 + sum(1 for other in seats if scores[other] > scores[seat]) for seat in seats]


# -- the finishing order ----------------------------------------------------------------------


def _seat(index: int, key: str | None, bot: str | None = None,
          resigned: bool = False) -> SeatRow:
    return SeatRow(index=index, owner_key=key, bot=bot, resigned=resigned)


def test_ties_share_a_rank_resigned_seats_rank_last_bots_and_strangers_are_left_out() -> None:
    game = GameRow(seats=[_seat(0, "a"), _seat(1, "b"), _seat(2, "c"), _seat(3, "d")])
    placed = ratings.finishing_order(game, [10, 30, 10, 0], {"a", "b", "c", "d"})
    assert [(p.seat, p.rank) for p in placed] == [(0, 2), (1, 1), (2, 2), (3, 4)]
    game = GameRow(seats=[_seat(0, "a", resigned=True), _seat(1, "b"), _seat(2, "c"),
                          _seat(3, "d", resigned=True)])
    placed = ratings.finishing_order(game, [90, 0, 5, 80], {"a", "b", "c", "d"})
    assert [(p.seat, p.rank) for p in placed] == [(0, 3), (1, 2), (2, 1), (3, 3)]
    # A bot, a seat of no identity, an address that never signed in: the rest keep their order.
    game = GameRow(seats=[_seat(0, None, bot="greedy"), _seat(1, "b"), _seat(2, None),
                          _seat(3, "x")])
    placed = ratings.finishing_order(game, [99, 1, 50, 3], {"b", "d"})
    assert placed == []  # one signed-in human: nobody is rated
    game = GameRow(seats=[_seat(0, None, bot="greedy"), _seat(1, "b"), _seat(2, None),
                          _seat(3, "d")])
    placed = ratings.finishing_order(game, [99, 1, 50, 3], {"b", "d"})
    assert [(p.seat, p.email_key, p.rank) for p in placed] == [(1, "b", 2), (3, "d", 1)]
    # One identity in two seats is left out of the game.
    game = GameRow(seats=[_seat(0, "a"), _seat(1, "a"), _seat(2, "b")])
    assert ratings.finishing_order(game, [5, 0, 1], {"a", "b"}) == []


def test_the_display_value_is_the_ordinal_to_one_decimal() -> None:
    assert ratings.shown(ratings.MU, ratings.SIGMA) == 0.0
    assert ratings.shown(30.0, 2.0) == 24.0
    assert ratings.change_of(25.0, 25 / 3, 27.0, 8.0) == {"before": 0.0, "after": 3.0,
                                                           "change": 3.0}


# -- rated and casual games -------------------------------------------------------------------


def test_a_rated_game_moves_its_signed_in_players_ratings(app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, "ann", "bob")
    game_id, tokens = new_game(client, people("ann", "bob"))
    body = play_out(client, game_id, tokens)
    assert body["rated"] is True
    ranks = _scores_ranks(body, [0, 1])
    assert _changes(app, game_id) == [(0, "ann@example.org", ranks[0]),
                                      (1, "bob@example.org", ranks[1])]
    winner = ranks.index(1)
    shown = [seat["rating"] for seat in body["seats"]]
    assert shown[winner]["change"] > 0 > shown[1 - winner]["change"]
    for entry in shown:
        assert entry["before"] == 0.0
        assert entry["after"] == round(entry["before"] + entry["change"], 1)
    stored = _ratings(app)
    assert stored["ann@example.org"][2] == stored["bob@example.org"][2] == 1
    winner_key = f"{NAMES[winner]}@example.org"
    assert stored[winner_key][0] > ratings.MU


def test_a_casual_game_moves_nothing_and_says_so(app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, "ann", "bob")
    game_id, tokens = new_game(client, people("ann", "bob"), rated=False)
    body = play_out(client, game_id, tokens)
    assert body["rated"] is False
    assert [seat["rating"] for seat in body["seats"]] == [None, None]
    assert _changes(app, game_id) == []
    assert _ratings(app) == {}


def test_rated_is_chosen_at_creation_and_checked(app: Flask, client: FlaskClient) -> None:
    one_person = [{"name": "ann", "email": "ann@example.org"}, {"bot": "greedy"}]
    answer = client.post("/api/games", json={"seats": one_person, "rated": True})
    body = assert_problem(answer, 422)
    assert "rated" in str(body)
    answer = client.post("/api/games", json={"seats": people("ann", "bob"), "rated": 1})
    assert_problem(answer, 422)  # only JSON true or false
    with app.app_context():
        assert db.session.execute(select(GameRow)).first() is None  # nothing stored
    # Default: rated when it could be, casual when it could not.
    created = client.post("/api/games", json={"seats": one_person}).get_json()
    assert created["rated"] is False
    created = client.post("/api/games", json={"seats": people("ann", "bob")}).get_json()
    assert created["rated"] is True


def test_bots_are_left_out_and_one_signed_in_human_is_not_enough(
        app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, "ann", "bob")
    seats = [*people("ann", "bob"), {"name": "robo", "bot": "greedy"}]
    game_id, tokens = new_game(client, seats)
    body = play_out(client, game_id, tokens, seed=1)
    assert body["rated"] is True
    rated = _changes(app, game_id)
    assert [seat for seat, _key, _rank in rated] == [0, 1]  # not the bot
    assert sorted(rank for *_rest, rank in rated) in ([1, 2], [1, 1])
    assert body["seats"][2]["rating"] is None
    # cid never signed in: ann alone is a signed-in human, and nobody is rated.
    game_id, tokens = new_game(client, people("ann", "cid"))
    play_out(client, game_id, tokens, seed=2)
    assert _changes(app, game_id) == []
    assert _ratings(app)["ann@example.org"][2] == 1


def test_a_resigned_seat_ranks_last(app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, "ann", "bob", "cid")
    game_id, tokens = new_game(client, people("ann", "bob", "cid"))
    resigned = client.post(f"/api/games/{game_id}/resign", headers=bearer(tokens[2]))
    assert resigned.status_code == 200, resigned.get_data(as_text=True)
    body = play_out(client, game_id, {0: tokens[0], 1: tokens[1]}, seed=3)
    ranks = dict((seat, rank) for seat, _key, rank in _changes(app, game_id))
    assert ranks[2] == 3
    assert {ranks[0], ranks[1]} <= {1, 2}
    assert ranks[0] == _scores_ranks(body, [0, 1])[0]


def test_a_game_ended_by_the_last_persons_resignation_is_rated(
        app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, "ann", "bob")
    game_id, tokens = new_game(client, people("ann", "bob"))
    for seat in (0, 1):  # then no person is left playing: the game ends as it stands
        resigned = client.post(f"/api/games/{game_id}/resign", headers=bearer(tokens[seat]))
        assert resigned.status_code == 200, resigned.get_data(as_text=True)
    body = client.get(f"/api/games/{game_id}").get_json()
    assert body["status"] == "finished"
    assert _changes(app, game_id) == [(0, "ann@example.org", 1), (1, "bob@example.org", 1)]
    first, second = (seat["rating"] for seat in body["seats"])
    assert first is not None
    assert first == second  # tied, from the same start: moved alike


def test_apply_is_idempotent(app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, "ann", "bob")
    game_id, tokens = new_game(client, people("ann", "bob"))
    play_out(client, game_id, tokens)
    before = _ratings(app)
    with app.app_context():
        with write_transaction():
            game = get_game(game_id, for_update=True)
            assert ratings.apply(game, Game.from_dict(game.state or {})) == []
        db.session.remove()
    assert _ratings(app) == before
    assert len(_changes(app, game_id)) == 2


def _finished_games(client: FlaskClient, plan: list[tuple[str, ...]]) -> list[str]:
    ids = []
    for number, names in enumerate(plan):
        game_id, tokens = new_game(client, people(*names))
        play_out(client, game_id, tokens, seed=number)
        ids.append(game_id)
    return ids


PLAN = [("ann", "bob"), ("bob", "cid"), ("ann", "cid", "dan"), ("ann", "bob", "cid", "dan"),
        ("dan", "bob"), ("cid", "ann", "bob")]


def _assert_close(found: dict[str, tuple[float, float, int]],
                  expected: dict[str, tuple[float, float, int]]) -> None:
    assert found.keys() == expected.keys()
    for key, (mu, sigma, games) in expected.items():
        assert abs(found[key][0] - mu) < 1e-9, key
        assert abs(found[key][1] - sigma) < 1e-9, key
        assert found[key][2] == games, key


def test_the_rebuild_equals_the_incremental_ratings(app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, *NAMES)
    ids = _finished_games(client, PLAN)
    incremental = _ratings(app)
    assert {key: games for key, (_mu, _sigma, games) in incremental.items()} == {
        "ann@example.org": 4, "bob@example.org": 5, "cid@example.org": 4, "dan@example.org": 3}
    with app.app_context():
        changes = [(c.game_id, c.email_key, c.mu_before, c.sigma_before, c.mu_after,
                    c.sigma_after) for c in db.session.execute(
                        select(RatingChangeRow).order_by(RatingChangeRow.id)).scalars()]
        # Spoil the stored values: the rebuild puts them right from the ranks alone.
        db.session.execute(delete(RatingRow))
        for change in db.session.execute(select(RatingChangeRow)).scalars():
            change.mu_after = change.mu_before = 0.0
        db.session.commit()
        assert ratings.rebuild() == len(ids)
        db.session.remove()
    _assert_close(_ratings(app), incremental)
    with app.app_context():
        rebuilt = [(c.game_id, c.email_key, c.mu_before, c.sigma_before, c.mu_after,
                    c.sigma_after) for c in db.session.execute(
                        select(RatingChangeRow).order_by(RatingChangeRow.id)).scalars()]
        db.session.remove()
    for old, new in zip(changes, rebuilt, strict=True):
        assert old[:2] == new[:2]
        assert all(abs(a - b) < 1e-9 for a, b in zip(old[2:], new[2:], strict=True))
    # The command does the same.
    result = app.test_cli_runner().invoke(args=["ratings", "rebuild"])
    assert result.exit_code == 0, result.output
    assert f"from {len(ids)} rated game(s)" in result.output
    _assert_close(_ratings(app), incremental)


def test_concurrent_game_ends_with_common_players_both_count(
        app: Flask, client: FlaskClient) -> None:
    _sign_in_all(client, app, "ann", "bob", "cid")
    ids = _finished_games(client, [("ann", "bob", "cid"), ("cid", "bob", "ann"),
                                   ("bob", "ann")])
    expected = _ratings(app)
    # Undo the ratings, then end the three games again at once, each in its own transaction
    # (opposite player orders: locked by key, they queue instead of deadlocking).
    with app.app_context():
        db.session.execute(delete(RatingChangeRow))
        db.session.execute(delete(RatingRow))
        db.session.commit()
        db.session.remove()
    start = threading.Barrier(len(ids))
    failures: list[BaseException] = []

    def end(game_id: str) -> None:
        try:
            with app.app_context():
                start.wait()
                with write_transaction():
                    game = get_game(game_id, for_update=True)
                    ratings.apply(game, Game.from_dict(game.state or {}))
                db.session.remove()
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=end, args=(game_id,)) for game_id in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    found = _ratings(app)
    assert {key: games for key, (_mu, _sigma, games) in found.items()} == {
        key: games for key, (_mu, _sigma, games) in expected.items()}
    # Whatever order they committed in, a later rebuild gives the values of the games'
    # finishing order, which is what the incremental ratings were first.
    with app.app_context():
        assert ratings.rebuild() == 3
        db.session.remove()
    _assert_close(_ratings(app), expected)


@pytest.mark.parametrize("rated", [False, True])
def test_a_rematch_keeps_rated(app: Flask, client: FlaskClient, rated: bool) -> None:
    game_id, tokens = new_game(client, people("ann", "bob"), rated=rated)
    play_out(client, game_id, tokens)
    pressed = client.post(f"/api/games/{game_id}/rematch", headers=bearer(tokens[0]))
    assert pressed.status_code == 201, pressed.get_data(as_text=True)
    new_id = pressed.get_json()["game"]["id"]
    with app.app_context():
        row = db.session.get(GameRow, new_id)
        assert row is not None
        assert row.rated is rated
        db.session.remove()


@pytest.fixture
def rated(app: Flask, client: FlaskClient) -> dict[str, str]:
    """ann, bob and cid signed in, with two rated games between them."""
    accounts = _sign_in_all(client, app, "ann", "bob", "cid")
    _finished_games(client, [("ann", "bob"), ("bob", "cid", "ann")])
    return accounts


def _settings(client: FlaskClient, token: str, **body: Any) -> Any:
    return client.put("/api/me/settings", json=body, headers=bearer(token))


def test_player_names_are_checked_and_unique_case_aside(
        app: Flask, client: FlaskClient, rated: dict[str, str]) -> None:
    ann, bob = rated["ann"], rated["bob"]
    named = _settings(client, ann, player_name="Ann_the-1.st")
    assert named.status_code == 200, named.get_data(as_text=True)
    assert named.get_json()["player_name"] == "Ann_the-1.st"
    for bad in ["ab", "x" * 41, "ann smith", "ann/x", ".ann", "ann;", "", 5, "a\u200bnn"]:
        body = assert_problem(_settings(client, bob, player_name=bad), 422)
        assert "player_name" in str(body), bad
    taken = assert_problem(_settings(client, bob, player_name="ANN_THE-1.ST"), 409)
    assert taken["type"].endswith("/player-name-taken")
    with app.app_context():
        from dos_server.models import IdentityRow
        assert db.session.get(IdentityRow, "bob@example.org").player_name is None  # nothing stored
        db.session.remove()
    assert _settings(client, bob, player_name="ສົມສັກ").status_code == 200  # Lao letters and signs
    assert _settings(client, ann, player_name="Ann_the-1.st").status_code == 200  # own name again
    me = client.get("/api/me", headers=bearer(ann)).get_json()
    assert me["player_name"] == "Ann_the-1.st"
    assert me["leaderboard_hidden"] is False
    assert me["rating"]["games"] == 2
    # Giving a name up frees it.
    assert _settings(client, ann, player_name=None).get_json()["player_name"] is None
    assert _settings(client, rated["cid"], player_name="ann_THE-1.st").status_code == 200


def test_the_player_api_and_the_leaderboard_with_hiding_and_paging(
        app: Flask, client: FlaskClient, rated: dict[str, str]) -> None:
    for name in ("ann", "bob", "cid"):
        assert _settings(client, rated[name], player_name=name.title()).status_code == 200
    page = client.get("/api/players/ann").get_json()  # any case
    assert page["name"] == "Ann"
    assert page["games"] == 2
    assert page["on_leaderboard"] is True
    assert [change["players"] for change in page["recent"]] == [3, 2]  # newest first
    for change in page["recent"]:
        assert change["after"] == round(change["before"] + change["change"], 1)
    assert page["recent"][0]["before"] == page["recent"][1]["after"]
    assert page["rating"] == page["recent"][0]["after"]
    assert "email" not in str(page)
    assert "example.org" not in str(page)
    assert_problem(client.get("/api/players/nobody"), 404)
    # What could be nobody's name is nobody's: never a query PostgreSQL refuses (a NUL).
    for hostile in ("%00", "ann%00", "x" * 500, "a%20b", "%E2%80%AE"):
        assert_problem(client.get(f"/api/players/{hostile}"), 404)
        assert client.get(f"/players/{hostile}").status_code == 404
    board = client.get("/api/leaderboard").get_json()
    assert board["total"] == 3
    assert [p["rank"] for p in board["players"]] == [1, 2, 3]
    listed = [p["rating"] for p in board["players"]]
    assert listed == sorted(listed, reverse=True)
    assert {p["name"] for p in board["players"]} == {"Ann", "Bob", "Cid"}
    # Hidden: off the leaderboard, the player page stays.
    assert _settings(client, rated["bob"], leaderboard_hidden=True).status_code == 200
    board = client.get("/api/leaderboard?limit=1&offset=1").get_json()
    assert board["total"] == 2
    assert len(board["players"]) == 1
    assert board["players"][0]["rank"] == 2
    assert "Bob" not in str(client.get("/api/leaderboard").get_json())
    assert client.get("/api/players/bob").get_json()["on_leaderboard"] is False
    for query in ("limit=0", "limit=101", "offset=-1", "limit=x"):
        assert_problem(client.get(f"/api/leaderboard?{query}"), 422)
    # A named player without a rated game is not listed; one without a name never is.
    dan = sign_in(client, app, "dan@example.org")
    assert _settings(client, dan, player_name="Dan").status_code == 200
    assert client.get("/api/players/dan").get_json()["rating"] is None
    assert client.get("/api/leaderboard").get_json()["total"] == 2


def test_the_export_holds_the_rating_and_deletion_removes_it(
        app: Flask, client: FlaskClient, rated: dict[str, str]) -> None:
    _settings(client, rated["ann"], player_name="Ann")
    exported = client.get("/api/me/export", headers=bearer(rated["ann"])).get_json()
    assert exported["identity"]["player_name"] == "Ann"
    assert exported["ratings"]["rating"]["games"] == 2
    assert len(exported["ratings"]["changes"]) == 2
    before = _ratings(app)
    game_id = _game_ids(app)[0]
    shown = client.get(f"/api/games/{game_id}")  # an answer the process keeps, and its tag
    assert shown.get_json()["seats"][0]["rating"] is not None
    assert client.delete("/api/me", headers=bearer(rated["ann"])).status_code == 200
    again = client.get(f"/api/games/{game_id}", headers={"If-None-Match": shown.headers["ETag"]})
    assert again.status_code == 200  # not 304: the answer changed without a new version
    assert again.get_json()["seats"][0]["rating"] is None  # ann's change is gone with her
    assert again.get_json()["seats"][1]["rating"] is not None
    after = _ratings(app)
    assert "ann@example.org" not in after
    assert after == {key: value for key, value in before.items() if key != "ann@example.org"}
    with app.app_context():
        keys = set(db.session.execute(select(RatingChangeRow.email_key)).scalars())
        db.session.remove()
    assert "ann@example.org" not in keys
    assert_problem(client.get("/api/players/ann"), 404)
    # A rebuild replays what is left: the three-player game without ann; the two-player
    # game, bob's alone now, counts no more.
    with app.app_context():
        assert ratings.rebuild() == 1
        db.session.remove()
    assert {key: games for key, (_mu, _sigma, games) in _ratings(app).items()} == {
        "bob@example.org": 1, "cid@example.org": 1}
