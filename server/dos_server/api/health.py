"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from dos_server.edge import Blueprint
from dos_server.extensions import db
from dos_server.problems import Problem
from dos_server.services import access
from dos_server.services.words import _

blp = Blueprint("health", __name__, description="Health checks")


@blp.route("/healthz")
class Health(MethodView):
    @blp.response(200)
    def get(self) -> dict[str, Any]:
        """The process is up."""
        return {"status": "ok"}


@blp.route("/readyz")
class Ready(MethodView):
    @blp.response(200)
    @blp.alt_response(503, description="the database is not reachable")
    def get(self) -> dict[str, Any]:
        """The database answers: one round trip, as a game read makes (no transaction, no
        session); load balancers call it often."""
        try:
            access.database_round_trip()
        except Exception:
            raise Problem(503, "not-ready", "Not ready",
                          _("the database is not reachable")) from None
        return {"status": "ready", "database": db.engine.dialect.name}


@blp.route("/api/ping")
class Ping(MethodView):
    @blp.response(200)
    def get(self) -> dict[str, Any]:
        """A no-op JSON endpoint: the ceiling benchmarks compare against."""
        return {"pong": True}
