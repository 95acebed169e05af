"""GET /metrics: Prometheus' scrape, for the operator (dos_server/metrics.py)."""

from __future__ import annotations

from flask import Response
from flask.views import MethodView

from dos_server import metrics
from dos_server.edge import Blueprint

blp = Blueprint("metrics", __name__, description="Prometheus metrics, for the operator")


@blp.route("/metrics")
class Metrics(MethodView):
    @blp.response(200, description="the metrics, in Prometheus' text format",
                  content_type=metrics.CONTENT_TYPE_LATEST)
    @blp.alt_response(403, description="this address or token may not read the metrics")
    @blp.alt_response(404, description="the operator has not configured who may read them "
                                       "(DOS_METRICS_ALLOW, DOS_METRICS_TOKEN)")
    def get(self) -> Response:
        """Requests, turns, waiters, the outbox, deliveries, mail in, the worker, the pool."""
        metrics.require_operator()
        return Response(metrics.exposition(), mimetype=metrics.CONTENT_TYPE_LATEST)
