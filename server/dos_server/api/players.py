"""HTTP views of ratings: a player's rating by their name, and the leaderboard. Thin: parse,
call services/ratings.py, serialize. Both are public: a name is what a player chose to show."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import validate

from dos_server.edge import Blueprint
from dos_server.schemas import Schema
from dos_server.services import ratings

blp = Blueprint("players", __name__, url_prefix="/api",
                description="Ratings: players by name, and the leaderboard")


class LeaderboardQuery(Schema):
    # Query values arrive as strings: a strict Integer would reject every one of them.
    limit = ma.fields.Integer(load_default=50, validate=validate.Range(min=1, max=100))
    offset = ma.fields.Integer(load_default=0, validate=validate.Range(min=0, max=2**31 - 1))


@blp.route("/players/<name>")
class Player(MethodView):
    @blp.response(200)
    @blp.alt_response(404, description="no player goes by this name")
    def get(self, name: str) -> dict[str, Any]:
        """A player's rating, rated games and latest rating changes (newest first)."""
        return ratings.player(name)


@blp.route("/leaderboard")
class Leaderboard(MethodView):
    @blp.arguments(LeaderboardQuery, location="query")
    @blp.response(200)
    @blp.alt_response(422, description="invalid limit or offset")
    def get(self, query: dict[str, Any]) -> dict[str, Any]:
        """The players by rating, highest first: those with a player name and a rated game
        who did not hide from it. Paged: ``limit`` (1-100, default 50) and ``offset``."""
        return ratings.leaderboard(query["limit"], query["offset"])
