"""HTTP as the serving model reads it (gunicorn's worker on gevent's WSGI server,
``dos_server.gevent_http``), over raw sockets: a request whose end a proxy in front could read
elsewhere (request smuggling) or that breaks HTTP/1.1's syntax is answered 400 (414, 431 when too
large) and its connection closed; well-formed requests, chunked bodies and pipelining work; an idle
connection, or one whose headers trickle in, is closed after the keep-alive time."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator

import pytest
from e2e_server import Server, running_gunicorn, serving

HOST = b"Host: localhost\r\n"
PING = b"GET /api/ping HTTP/1.1\r\n" + HOST + b"\r\n"

# (what is wrong, the raw request, the status it gets)
REFUSED = [
    ("two Content-Lengths", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
    ("the same Content-Length twice", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Content-Length: 4\r\nContent-Length: 4\r\n\r\nabcd", 400),
    ("Content-Length and Transfer-Encoding", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("a coding other than chunked", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400),
    ("Transfer-Encoding twice", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("Transfer-Encoding in HTTP/1.0", b"POST /api/games HTTP/1.0\r\n" + HOST
     + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    ("a space before the colon", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Content-Length : 4\r\n\r\nabcd", 400),
    ("a signed Content-Length", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Content-Length: +4\r\n\r\nabcd", 400),
    ("an underscore in Content-Length", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Content-Length: 0_4\r\n\r\nabcd", 400),
    ("a negative Content-Length", b"POST /api/games HTTP/1.1\r\n" + HOST
     + b"Content-Length: -1\r\n\r\n", 400),
    ("a folded header line", PING.replace(b"\r\n\r\n", b"\r\nX-A: a\r\n b\r\n\r\n"), 400),
    ("a space in a header name", PING.replace(b"\r\n\r\n", b"\r\nX A: b\r\n\r\n"), 400),
    ("a NUL in a header value", PING.replace(b"\r\n\r\n", b"\r\nX-A: a\x00b\r\n\r\n"), 400),
    ("bare LF line ends", b"GET /api/ping HTTP/1.1\nHost: localhost\n\n", 400),
    ("HTTP/0.9", b"GET /api/ping\r\n\r\n", 400),
    ("HTTP/2.0 in plain text", b"GET /api/ping HTTP/2.0\r\n" + HOST + b"\r\n", 400),
    ("a lower-case method", b"get /api/ping HTTP/1.1\r\n" + HOST + b"\r\n", 400),
    ("a request line over 4 KiB", b"GET /api/ping?" + b"a" * 5000 + b" HTTP/1.1\r\n" + HOST
     + b"\r\n", 414),
    ("a header line over 8 KiB", PING.replace(b"\r\n\r\n", b"\r\nX-A: " + b"a" * 9000
                                              + b"\r\n\r\n"), 431),
    ("more than 100 header lines", PING.replace(
        b"\r\n\r\n", b"\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(101)) + b"\r\n"), 431),
]


def exchange(port: int, raw: bytes, wait: float = 5.0) -> tuple[bytes, bool]:
    """Send ``raw``; return what came back and whether the server closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(raw)
        return read_all(sock)


def read_all(sock: socket.socket) -> tuple[bytes, bool]:
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return received, False
    except ConnectionResetError:
        pass
    return received, True


def statuses(received: bytes) -> list[int]:
    """The status of each response in ``received`` (their bodies here are JSON or plain text)."""
    return [int(status) for status in re.findall(rb"HTTP/1\.1 ([0-9]{3}) ", received)]


@pytest.mark.parametrize(("what", "raw", "status"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_malformed_or_ambiguous_request_is_refused_and_closed(
        gunicorn_server: Server, what: str, raw: bytes, status: int) -> None:
    received, closed = exchange(gunicorn_server.port, raw)
    assert statuses(received) == [status], (what, received[:300])
    assert closed, what
    assert b"Traceback" not in received


def test_a_chunked_body_is_read_and_the_connection_kept(gunicorn_server: Server) -> None:
    body = json.dumps({"seats": [{"name": "ann"}, {"name": "bob"}]}).encode()
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:10], body[10:]))
    raw = (b"POST /api/games HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
    received, closed = exchange(gunicorn_server.port, raw, wait=3.0)
    assert statuses(received) == [201], received[:500]
    assert not closed
    assert b'"invites"' in received


def test_pipelined_requests_are_answered_in_order(gunicorn_server: Server) -> None:
    raw = PING + b"GET /api/nothing-here HTTP/1.1\r\n" + HOST + b"Connection: close\r\n\r\n"
    received, closed = exchange(gunicorn_server.port, raw)
    assert statuses(received) == [200, 404]
    assert closed


def test_a_refused_request_is_not_answered_with_the_one_before(gunicorn_server: Server) -> None:
    """On a kept-alive connection, a good request and then a bad one: 200, then 400 and close."""
    received, closed = exchange(gunicorn_server.port, PING + b"GET /api/ping HTTP/2.0\r\n\r\n")
    assert statuses(received) == [200, 400]
    assert closed


@pytest.fixture(scope="module")
def short_keepalive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_gunicorn(tmp_path_factory.mktemp("keepalive"), serving(1),
                          extra_env={"DOS_KEEPALIVE_SECONDS": "2"}) as server:
        yield server


def test_an_idle_connection_is_closed_after_the_keepalive_time(short_keepalive: Server) -> None:
    with socket.create_connection(("127.0.0.1", short_keepalive.port), timeout=10) as sock:
        sock.sendall(PING)
        time.sleep(0.2)
        sock.sendall(PING)  # within the keep-alive time: the same connection answers
        started = time.monotonic()
        received, closed = read_all(sock)
        assert statuses(received) == [200, 200]
        assert closed  # then, idle, it is closed
        assert time.monotonic() - started < 9


def test_headers_that_trickle_in_are_cut_off(short_keepalive: Server) -> None:
    """A client that sends a request's line and then stalls (slowloris) loses its connection
    when the keep-alive time is up, as one that sends nothing does."""
    with socket.create_connection(("127.0.0.1", short_keepalive.port), timeout=10) as sock:
        sock.sendall(b"GET /api/ping HTTP/1.1\r\n" + HOST)
        for _ in range(10):  # 5 s of trickling, past the keep-alive time of 2 s
            time.sleep(0.5)
            try:
                sock.sendall(b"X-Slow: a\r\n")
            except OSError:
                break
        received, closed = read_all(sock)
        assert closed
        assert statuses(received) in ([], [400])

