"""The web worker's HTTP server: gunicorn's gevent worker serving through gevent's own WSGI server
(``gevent.pywsgi``), which costs a request less CPU than gunicorn's parser and response writer
under gevent (docs/performance.md, "The HTTP server").

gevent's server reads requests leniently; this handler reads them as strictly as gunicorn does,
so that nothing in front of it (Caddy, a load balancer) can read a request's end elsewhere
(request smuggling): one ``Content-Length`` of digits or one ``Transfer-Encoding: chunked``,
never both; no folded, nameless, spaced or control-character header lines; CRLF line ends;
HTTP/1.0 and 1.1 only. A bad request gets 400 (414 or 431 for one too large) and its connection
is closed. As under gunicorn's worker, a request's line and headers must arrive within the
keep-alive time, which also closes an idle connection.

Imported by the worker once forked (``dos_server.gunicorn_conf``), never by gunicorn's master.
"""

from __future__ import annotations

import contextlib
import re
import time
from typing import IO, Any

import gevent  # type: ignore[import-untyped]
from gevent.pywsgi import OldMessage  # type: ignore[import-untyped]
from gunicorn.workers.ggevent import (  # type: ignore[import-untyped]
    GeventPyWSGIWorker,
    PyWSGIHandler,
)

from dos_server.logs import redact

# gunicorn's limits (limit_request_line, limit_request_fields, limit_request_field_size).
MAX_REQUEST_LINE = 4094
MAX_HEADER_FIELDS = 100
MAX_HEADER_LINE = 8190
# A connection reads through a buffer of this size: parked long-polls keep theirs.
READ_BUFFER = 1024
# gunicorn's keepalive of our config; without keep-alive, still the time for a request's head.
KEEPALIVE_SECONDS = 75.0

_REQUEST_LINE = re.compile(r"[A-Z]{1,20} [\x21-\x7e\x80-\xff]+ HTTP/1\.[01]\r\n")
_HEADER_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([\x20-\x7e\x80-\xff\t]*?)[ \t]*\r\n")
_DIGITS = re.compile(r"[0-9]{1,18}")


class BadRequest(ValueError):
    """A request this server does not read: answered with ``status`` and closed."""

    status = "400 Bad Request"


class RequestLineTooLong(BadRequest):
    status = "414 URI Too Long"


class HeadersTooLarge(BadRequest):
    status = "431 Request Header Fields Too Large"


def read_headers(rfile: IO[bytes], version: str) -> Any:
    """The header lines up to the empty line, checked (BadRequest or its kinds if not), in the
    message class gevent's handler reads its own into."""
    headers = OldMessage()
    while True:
        line = rfile.readline(MAX_HEADER_LINE + 3)
        if line == b"\r\n":
            break
        if len(line) > MAX_HEADER_LINE + 2:
            raise HeadersTooLarge("header line too long")
        if not line.endswith(b"\r\n"):
            raise BadRequest("header line without CRLF, or the connection closed")
        found = _HEADER_LINE.fullmatch(line)
        if found is None:
            raise BadRequest(f"invalid header line {line[:100]!r}")
        if len(headers) >= MAX_HEADER_FIELDS:
            raise HeadersTooLarge("too many header fields")
        headers[found.group(1).decode("latin-1")] = found.group(2).decode("latin-1")
    lengths = headers.get_all("content-length") or []
    codings = headers.get_all("transfer-encoding") or []
    if len(lengths) > 1:
        raise BadRequest("more than one Content-Length")
    if lengths and not _DIGITS.fullmatch(lengths[0]):
        raise BadRequest(f"invalid Content-Length {lengths[0][:40]!r}")
    if codings:
        if lengths:
            raise BadRequest("both Content-Length and Transfer-Encoding")
        if len(codings) > 1 or codings[0].lower() != "chunked":
            raise BadRequest(f"unsupported Transfer-Encoding {', '.join(codings)[:60]!r}")
        if version != "HTTP/1.1":
            raise BadRequest("Transfer-Encoding in an HTTP/1.0 request")
    return headers


class Handler(PyWSGIHandler):  # type: ignore[misc]
    """One connection of the worker, its requests read strictly (see the module's text)."""

    # The worker sets gunicorn's keepalive: the time for a request's head, and for an idle
    # connection; 0 means one request a connection (and KEEPALIVE_SECONDS for the head).
    keepalive: float = KEEPALIVE_SECONDS
    _head_timer: gevent.Timeout | None = None  # from the request line's first wait to its headers

    def __init__(self, sock: Any, address: Any, server: Any, rfile: Any = None) -> None:
        super().__init__(sock, address, server,
                         rfile if rfile is not None else sock.makefile("rb", READ_BUFFER))

    def read_requestline(self) -> str:
        self.environ = None  # the request before's, on a kept-alive connection
        timer = self._head_timer = gevent.Timeout.start_new(self.keepalive or KEEPALIVE_SECONDS)
        try:
            line: str = self.rfile.readline(MAX_REQUEST_LINE + 3).decode("latin-1")
        except gevent.Timeout as out:
            if out is not timer:
                raise
            return ""  # no request within the keep-alive time: the connection closes
        return line  # handle_one_request closes the timer if read_request is not reached

    def read_request(self, raw_requestline: str) -> bool:
        timer = self._head_timer
        assert timer is not None, "read_requestline starts it"
        try:
            if len(raw_requestline) > MAX_REQUEST_LINE + 2:
                raise RequestLineTooLong("request line too long")
            if not _REQUEST_LINE.fullmatch(raw_requestline):
                raise BadRequest(f"invalid request line {raw_requestline[:100]!r}")
            self.requestline = raw_requestline.rstrip()
            self.command, self.path, self.request_version = self.requestline.split(" ")
            self.headers = read_headers(self.rfile, self.request_version)
        except gevent.Timeout as out:
            if out is not timer:
                raise
            raise BadRequest("request headers not received in time") from None
        finally:
            timer.close()  # before the application runs
        self.time_start = time.time()  # the access log's time runs from the request, not idle
        self.content_length = int(self.headers.get("content-length", 0)) or None
        connection = self.headers.get("connection", "").lower()
        self.close_connection = not self.keepalive or (
            connection == "close" if self.request_version == "HTTP/1.1"
            else connection != "keep-alive")
        return True

    def handle(self) -> None:
        with contextlib.suppress(OSError):  # the client went away (while its 400 was sent)
            super().handle()

    def handle_one_request(self) -> Any:
        try:
            return super().handle_one_request()
        finally:
            if self._head_timer is not None:
                self._head_timer.close()
                self._head_timer = None

    def _handle_client_error(self, error: Exception) -> tuple[str, bytes]:
        status = error.status if isinstance(error, BadRequest) else BadRequest.status
        self.server.log.debug(redact(f"Invalid request from {self.client_address}: {error}"))
        body = status.encode("latin-1")
        head = (f"HTTP/1.1 {status}\r\nConnection: close\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        return status.split(" ", 1)[0], head.encode("latin-1") + body

    def log_request(self) -> None:
        if self.environ is not None:  # a rejected request is logged above, not as an access
            super().log_request()

    def log_error(self, message: str, *args: Any) -> None:
        self.server.log.warning(redact(message % args if args else message))

    def _log_error(self, kind: Any, value: Any, traceback: Any) -> None:
        if not issubclass(kind, gevent.GreenletExit):
            path = redact(getattr(self, "path", "") or "")
            self.server.log.error("Error handling request %s", path,
                                  exc_info=(kind, value, traceback))


class Worker(GeventPyWSGIWorker):  # type: ignore[misc]
    """gunicorn's gevent worker on gevent's WSGI server, with :class:`Handler`."""

    wsgi_handler = Handler

    def init_process(self) -> None:
        Handler.keepalive = float(self.cfg.keepalive)
        super().init_process()


