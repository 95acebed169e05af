"""Webhooks signed per the Standard Webhooks spec (the ``standardwebhooks`` package)."""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import requests
from flask import current_app
from requests.adapters import HTTPAdapter
from standardwebhooks.webhooks import Webhook
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection

from dos_server import netguard
from dos_server.delivery import DeliveryError

# -- connecting only to the address that was checked (see dos_server/netguard.py) -------------


def _connect_checked(conn: HTTPConnection) -> socket.socket:
    """A connection's ``_new_conn``: resolve once, check every address, connect to one.

    ``conn.host`` stays the name, so the ``Host`` header, SNI and certificate check use it.
    """
    addresses = netguard.resolve_public(conn.host, conn.port)  # UnsafeUrl passes through requests
    error: OSError | None = None
    for address in addresses:
        try:
            return connection.create_connection(
                (str(address), conn.port), conn.timeout,
                source_address=conn.source_address, socket_options=conn.socket_options)
        except TimeoutError as failure:
            raise ConnectTimeoutError(
                conn, f"Connection to {conn.host} ({address}) timed out.") from failure
        except OSError as failure:
            error = failure
    raise NewConnectionError(conn, f"Failed to establish a new connection to {conn.host}: "
                                   f"{error}")


class _PinnedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _connect_checked(self)


class _PinnedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _connect_checked(self)


class _PinnedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _PinnedHTTPConnection


class _PinnedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _PinnedHTTPSConnection


class _PinnedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _PinnedHTTPPool,
                                                   "https": _PinnedHTTPSPool}


class PinnedSession(requests.Session):
    """A session that connects only to public addresses (see dos_server/netguard.py).

    Proxy settings from the environment are ignored: through a proxy the address we check
    would be the proxy's, not the receiver's.
    """

    def __init__(self) -> None:
        super().__init__()
        self.trust_env = False
        adapter = _PinnedAdapter()
        self.mount("http://", adapter)
        self.mount("https://", adapter)


_SESSIONS: dict[tuple[int, bool], requests.Session] = {}


def _session(allow_private: bool) -> requests.Session:
    """One keep-alive session per worker process (a new TCP connection per webhook costs).

    Unless private addresses are allowed, it is a :class:`PinnedSession`: every new
    connection resolves the host once, refuses it unless every address is public, and
    connects to the address it checked (DNS that changed since the URL was set is caught).
    """
    key = (os.getpid(), allow_private)
    if key not in _SESSIONS:
        if not any(pid == key[0] for pid, _ in _SESSIONS):
            _SESSIONS.clear()  # a forked child does not share its parent's sockets
        _SESSIONS[key] = requests.Session() if allow_private else PinnedSession()
    return _SESSIONS[key]


def shown_url(target: str) -> str:
    """``target`` as errors and logs may show it: its origin only.

    Many webhook URLs carry their secret in the path or query (Slack, Discord, ...), and
    errors end up in log lines and in rows an operator reads.
    """
    try:
        parts = urlsplit(target)
        origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    except ValueError:
        return "<unparseable URL>"
    return origin + ("/…" if parts.path.strip("/") or parts.query else "")


def _scrubbed(error: Exception, target: str) -> str:
    """The error's text without the URL's path and query (requests quotes them)."""
    text = str(error)
    parts = urlsplit(target)
    tail = parts.path + (f"?{parts.query}" if parts.query else "")
    for secret in (target, tail, parts.path, parts.query):  # longest first
        if secret.strip("/"):
            text = text.replace(secret, "/…")
    return text


def body_of(payload: dict[str, Any]) -> str:
    public = {k: v for k, v in payload.items() if k != "secret"}
    return json.dumps(public, separators=(",", ":"), sort_keys=True)


def send(target: str, payload: dict[str, Any], message_id: str,
         timeout: float | None = None) -> None:
    """POST the event; 2xx is success. The same ``webhook-id`` is used on every retry.

    A URL we may not call (see :mod:`dos_server.netguard`) is a permanent failure.
    ``timeout``: at most this many seconds (the worker keeps a send inside its lease),
    besides ``WEBHOOK_TIMEOUT``.
    """
    limit = float(current_app.config["WEBHOOK_TIMEOUT"])
    timeout = limit if timeout is None else min(limit, timeout)
    allow_private = bool(current_app.config["WEBHOOK_ALLOW_PRIVATE"])
    try:
        netguard.split_url(target)
    except netguard.UnsafeUrl as error:
        raise DeliveryError(f"refused {shown_url(target)}: {_scrubbed(error, target)}",
                            permanent=True) from None
    body = body_of(payload)
    now = datetime.now(UTC)
    signature = Webhook(payload["secret"]).sign(message_id, now, body)
    headers = {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
        "user-agent": "dos-by-mail-webhooks",
    }
    try:
        response = _session(allow_private).post(
            target, data=body.encode(), headers=headers,
            timeout=timeout, allow_redirects=False)
    except netguard.UnsafeUrl as error:
        raise DeliveryError(f"refused {shown_url(target)}: {_scrubbed(error, target)}",
                            permanent=True) from None
    except requests.RequestException as error:
        raise DeliveryError(f"POST {shown_url(target)}: {type(error).__name__}: "
                            f"{_scrubbed(error, target)}") from None
    if 200 <= response.status_code < 300:
        return
    if response.status_code == 410:
        raise DeliveryError(f"{shown_url(target)} answered 410 Gone: endpoint disabled", status=410,
                            permanent=True)
    raise DeliveryError(f"{shown_url(target)} answered HTTP {response.status_code}",
                        status=response.status_code,
                        retry_after=_retry_after(response.headers.get("Retry-After")))


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
