"""GET /metrics in one process: who may scrape it, and what a small game makes of it, parsed
with prometheus-client's own parser (tests/e2e/test_metrics_processes.py adds processes up)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import assert_problem, auth, started_game, stored_state

TOKEN = "scrape-me-" + "x" * 20

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: FlaskClient) -> Samples:
    answer = client.get("/metrics", headers=auth(TOKEN))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.mimetype == "text/plain"
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(answer.get_data(as_text=True))
            for sample in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_nobody_scrapes_until_the_operator_says_who(make_app: Callable[..., Flask]) -> None:
    closed = make_app().test_client()
    assert_problem(closed.get("/metrics"), 404)
    guarded = make_app(METRICS_TOKEN=TOKEN, METRICS_ALLOW="10.0.0.0/8").test_client()
    refused = assert_problem(guarded.get("/metrics"), 403)  # the test client is 127.0.0.1
    assert "DOS_METRICS_ALLOW" in refused["detail"]
    assert_problem(guarded.get("/metrics", headers=auth("wrong")), 403)
    assert_problem(guarded.get("/metrics", headers={"Authorization": TOKEN}), 403)
    assert guarded.get("/metrics", headers=auth(TOKEN)).status_code == 200
    inside = guarded.get("/metrics", environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert inside.status_code == 200
    loopback = make_app(METRICS_ALLOW="127.0.0.1, ::1").test_client()
    assert loopback.get("/metrics").status_code == 200


def test_a_wrong_address_list_stops_the_start(make_app: Callable[..., Flask]) -> None:
    with pytest.raises(RuntimeError, match="DOS_METRICS_ALLOW"):
        make_app(METRICS_ALLOW="10.0.0.0/8, the office")


def test_a_small_game_shows_in_the_figures(make_app: Callable[..., Flask]) -> None:
    app = make_app(METRICS_TOKEN=TOKEN)
    client = app.test_client()
    before = scrape(client)
    game_id, _host, seats = started_game(client)
    moves = 0
    while moves < 6:
        state = stored_state(app, game_id)
        mover = state.current
        listing = client.get(f"/api/games/{game_id}/actions", headers=auth(seats[mover]))
        played = client.post(f"/api/games/{game_id}/actions", headers=auth(seats[mover]),
                             json={"version": listing.get_json()["version"], "number": 1})
        assert played.status_code == 200
        moves += 1
    stale = client.post(f"/api/games/{game_id}/actions", headers=auth(seats[0]),
                        json={"version": 1, "actions": ["draw"]})
    assert stale.status_code == 409
    after = scrape(client)

    route = "/api/games/<game_id>/actions"
    assert value(after, "dos_http_requests_total", method="POST", route=route, status="200") \
        - value(before, "dos_http_requests_total", method="POST", route=route,
                status="200") == moves
    assert value(after, "dos_http_requests_total", method="POST", route=route, status="409") \
        - value(before, "dos_http_requests_total", method="POST", route=route,
                status="409") == 1
    assert value(after, "dos_http_request_duration_seconds_count", route=route) \
        - value(before, "dos_http_request_duration_seconds_count", route=route) == moves * 2 + 1
    # A refused move counts no action; each numbered move is one.
    assert value(after, "dos_actions_applied_total", source="api") \
        - value(before, "dos_actions_applied_total", source="api") == moves
    assert value(after, "dos_games", status="active") == 1
    assert value(after, "dos_outbox_dead_letters") == 0
    assert value(after, "dos_long_poll_waiters") == 0
    assert value(after, "dos_db_pool_size") >= 1
    assert ("dos_outbox_oldest_due_seconds", ()) in after
