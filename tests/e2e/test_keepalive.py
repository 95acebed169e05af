"""The serving model keeps an idle connection open for the next request: a client (or the
proxy in front) that waits a few seconds between moves sends the next one on the same TCP
connection (gunicorn's own default closes it after 2 s)."""

from __future__ import annotations

import http.client
import time
from urllib.parse import urlsplit

from e2e_server import Server

from dos_server import gunicorn_conf


def test_an_idle_connection_outlives_gunicorns_default(gunicorn_server: Server) -> None:
    assert gunicorn_conf.keepalive >= 60
    address = urlsplit(gunicorn_server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    try:
        connection.request("GET", "/readyz")
        first = connection.getresponse()
        first.read()
        assert first.status == 200
        assert first.getheader("Connection", "").lower() != "close"
        socket_before = connection.sock
        time.sleep(3)  # longer than gunicorn's default keep-alive of 2 s
        connection.request("GET", "/readyz")
        second = connection.getresponse()
        second.read()
        assert second.status == 200
        assert connection.sock is socket_before  # the same TCP connection, not a new one
    finally:
        connection.close()
