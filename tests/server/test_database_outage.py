"""The database goes away: every request gets a 503 it can retry, never a 500, and the server
carries on by itself when the database is back (PostgreSQL restarted, a proxy closed idle
connections, a failover)."""

from __future__ import annotations

import os

import sqlalchemy as sa
from server_helpers import assert_problem, auth, started_game, stored_version

from testkit import (
    ON_POSTGRESQL,
    PG_URL,
    build_app,
    dispose,
    normalize_database_url,
    wait_for,
)

UNREACHABLE = "postgresql+psycopg://postgres@127.0.0.1:1/nothing?connect_timeout=2"


def _backends_of(admin: sa.Engine, name: str) -> int:
    with admin.connect() as conn:
        return int(conn.execute(sa.text(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = :name"),
            {"name": name}).scalar_one())


def test_an_unreachable_database_answers_503_to_reads_writes_and_pages() -> None:
    app = build_app(UNREACHABLE, migrate=False)
    try:
        client = app.test_client()
        token = {"Authorization": "Bearer not-checked-before-the-database"}
        for method, path, body in (
            ("GET", "/api/games/abcdefghij", None),
            ("GET", "/api/games/abcdefghij/actions", None),
            ("POST", "/api/games", {"seats": [{"name": "ann"}, {"name": "bob"}]}),
            ("POST", "/api/games/abcdefghij/actions", {"version": 1, "number": 1}),
            ("GET", "/readyz", None),
        ):
            answer = client.open(path, method=method, json=body, headers=token)
            problem = assert_problem(answer, 503)
            assert "Traceback" not in str(problem), problem
            if path != "/readyz":
                assert answer.headers["Retry-After"] == "1"
                assert problem["type"].endswith("/database-unavailable")
        page = client.get("/games/abcdefghij")
        assert page.status_code == 503, page.status_code
        assert b"Traceback" not in page.data
    finally:
        dispose(app)


@ON_POSTGRESQL  # SQLite has no server whose connections could be closed under us
def test_connections_closed_under_the_server_cost_no_500_and_no_half_move(db_url: str) -> None:
    name = f"dos_outage_{os.getpid()}"
    admin = sa.create_engine(normalize_database_url(PG_URL or ""), poolclass=sa.pool.NullPool)

    def close_the_servers_connections() -> int:
        with admin.begin() as conn:
            closed = len(conn.execute(sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = :name"), {"name": name}).all())
        # pg_terminate_backend only signals: wait until the backends are gone, so that the
        # next request meets a closed connection, not one about to close.
        wait_for(lambda: not _backends_of(admin, name), 10, "the backends to exit")
        return closed

    app = build_app(f"{db_url}&application_name={name}")
    try:
        client = app.test_client()
        game_id, _host, seats = started_game(client)
        read = client.get(f"/api/games/{game_id}", headers=auth(seats[0])).get_json()
        mover = seats[read["view"]["current"]]
        assert close_the_servers_connections() >= 1

        # A read is sent again on a new connection: the person never sees the outage.
        again = client.get(f"/api/games/{game_id}", headers=auth(seats[0]))
        assert again.status_code == 200, again.get_data(as_text=True)
        assert again.get_json()["version"] == read["version"]

        # A move on a closed connection is refused whole, with a 503 to retry...
        assert close_the_servers_connections() >= 1
        move = {"version": read["version"], "number": 1}
        first = client.post(f"/api/games/{game_id}/actions", json=move, headers=auth(mover))
        assert_problem(first, 503)
        assert first.headers["Retry-After"] == "1"
        assert stored_version(app, game_id) == read["version"]  # nothing applied
        second = client.post(f"/api/games/{game_id}/actions", json=move, headers=auth(mover))
        assert second.status_code == 200, second.get_data(as_text=True)
        # ... and the game goes on: one move applied, once.
        assert stored_version(app, game_id) > read["version"]
        stale = client.post(f"/api/games/{game_id}/actions", json=move, headers=auth(mover))
        assert_problem(stale, 409)
        assert client.get("/readyz").status_code == 200
    finally:
        dispose(app)
        admin.dispose()
