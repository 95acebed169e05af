"""JSON log lines with a request id; tokens never appear (we log paths, not headers)."""

from __future__ import annotations

import json
import logging
import secrets
import time

from flask import Flask, Response, g, request


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("request_id", "method", "path", "status", "ms"):
            if hasattr(record, key):
                entry[key] = getattr(record, key)
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def init_logging(app: Flask) -> None:
    logger = logging.getLogger("dos_server")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    if not any(isinstance(h.formatter, JsonFormatter) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logger.addHandler(handler)
    logger.propagate = False
    access = logging.getLogger("dos_server.access")

    @app.before_request
    def _start() -> None:
        g.request_id = request.headers.get("X-Request-Id", "")[:64] or secrets.token_hex(8)
        g.started = time.perf_counter()

    @app.after_request
    def _finish(response: Response) -> Response:
        response.headers["X-Request-Id"] = g.get("request_id", "")
        if not app.config.get("TESTING"):
            access.info("request", extra={
                "request_id": g.get("request_id"), "method": request.method,
                # request.path never includes the query string or headers, so no token.
                "path": request.path, "status": response.status_code,
                "ms": round((time.perf_counter() - g.get("started", time.perf_counter())) * 1000, 1),
            })
        return response
