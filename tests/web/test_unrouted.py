"""A URL that no route answers: a person gets the site's 404 page, a program its problem."""

from __future__ import annotations

from flask import Flask


def test_an_unrouted_page_is_the_html_404_page(app: Flask) -> None:
    client = app.test_client()
    for path in ("/nowhere", "/games/abc/nowhere", "/new/more", "/me/x"):
        page = client.get(path, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        assert page.status_code == 404, path
        assert page.mimetype == "text/html", path
        text = page.get_data(as_text=True)
        assert "<h1>Not found</h1>" in text
        assert 'href="/new"' in text  # the site's own page, with its navigation
        for accept in ({"Accept": "application/json"}, {"Accept": "*/*"}, {}):  # programs
            assert client.get(path, headers=accept).mimetype == "application/problem+json"
    wrong = client.put("/new", headers={"Accept": "text/html"})
    assert (wrong.status_code, wrong.mimetype) == (405, "text/html")
    assert set(wrong.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "POST"}


def test_the_api_answers_problems_whatever_is_accepted(app: Flask) -> None:
    client = app.test_client()
    for path in ("/api/nowhere", "/api/games/abc/nowhere"):
        answer = client.get(path, headers={"Accept": "text/html"})
        assert (answer.status_code, answer.mimetype) == (404, "application/problem+json")
    missing = client.get("/api/games/nosuchgame", headers={"Accept": "text/html"})
    assert missing.mimetype == "application/problem+json"
    wrong = client.put("/api/games")
    assert (wrong.status_code, wrong.mimetype) == (405, "application/problem+json")
    assert "POST" in wrong.headers["Allow"]
