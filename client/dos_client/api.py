"""The server's HTTP API over one keep-alive connection: timeouts, retries, problem+json.

The standard library's ``http.client`` rather than ``requests``: importing requests (with
urllib3, charset_normalizer, idna) took longer than the rest of a ``dos-client move`` (issue
#15), and one JSON connection to one server needs none of it.
"""

from __future__ import annotations

import http.client
import json as jsonlib
import socket
import ssl
import time
import uuid
from typing import Any
from urllib.parse import urlencode, urlsplit

from dos_client.errors import DosApiError, ServerUnreachable

TIMEOUT = (5, 30)  # connect, read (seconds)
RETRY_STATUS = (502, 503, 504)
RETRIES = 3  # GETs are safe to retry; action POSTs carry an Idempotency-Key, so they are too
RETRY_METHODS = ("GET", "POST")
BACKOFF = 0.3  # seconds


class Response:
    """An answer, read whole: what ``DosApiError.from_response`` needs."""

    def __init__(self, status_code: int, reason: str, content: bytes) -> None:
        self.status_code = status_code
        self.reason = reason
        self.content = content

    def json(self) -> Any:
        return jsonlib.loads(self.content)  # ValueError if it is not JSON


class Session:
    """What every request of one ``DosApi`` carries (``session.headers``, as with requests)."""

    def __init__(self) -> None:
        self.headers = {"Accept": "application/json, application/problem+json",
                        "User-Agent": "dos-client"}


class DosApi:
    def __init__(self, server: str, token: str | None = None) -> None:
        self.server = server.rstrip("/")
        self.session = Session()
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self._connection: http.client.HTTPConnection | None = None

    def _connect(self, timeout: tuple[float, float]) -> http.client.HTTPConnection:
        if self._connection is None:
            parts = urlsplit(self.server)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ServerUnreachable(f"{self.server} is not an http:// or https:// address")
            kind = http.client.HTTPSConnection if parts.scheme == "https" else \
                http.client.HTTPConnection
            connection = kind(parts.hostname, parts.port, timeout=timeout[0])
            connection.connect()  # raises before it is kept: a retry connects anew
            self._connection = connection
        assert self._connection.sock is not None
        self._connection.sock.settimeout(timeout[1])
        return self._connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _send(self, method: str, target: str, body: bytes | None, headers: dict[str, str],
              timeout: tuple[float, float]) -> Response:
        """One exchange; a kept-alive connection the server closed meanwhile is reopened."""
        for reuse in (self._connection is not None, False):
            connection = self._connect(timeout)
            try:
                connection.request(method, target, body=body, headers=headers)
                answer = connection.getresponse()
                response = Response(answer.status, answer.reason, answer.read())
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._close()
                if reuse:
                    continue
                raise
            except BaseException:
                self._close()
                raise
            if answer.will_close:
                self._close()
            return response
        raise AssertionError("unreachable")

    def _call(self, method: str, path: str, *, json: Any = None,
              params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
              timeout: tuple[float, float] = TIMEOUT) -> dict[str, Any]:
        url = f"{self.server}{path}"
        parts = urlsplit(url)
        query = "&".join(q for q in (parts.query, urlencode(params or {})) if q)
        target = (parts.path or "/") + (f"?{query}" if query else "")
        sent = {**self.session.headers, **(headers or {})}
        body = None
        if json is not None:
            body = jsonlib.dumps(json).encode()
            sent["Content-Type"] = "application/json"
        tries = RETRIES + 1 if method in RETRY_METHODS else 1
        for attempt in range(tries):
            if attempt > 1:  # as urllib3 did: the first retry at once, then 0.6 s, 1.2 s
                time.sleep(BACKOFF * 2 ** (attempt - 1))
            try:
                response = self._send(method, target, body, sent, timeout)
            except TimeoutError:
                raise ServerUnreachable(f"{url} did not answer in time; try again later") from None
            except ssl.SSLError as error:
                raise ServerUnreachable(f"request to {url} failed: {error}") from None
            except OSError as error:  # refused, reset, no such host
                if attempt + 1 < tries and not isinstance(error, socket.gaierror):
                    continue
                raise ServerUnreachable(
                    f"could not connect to {self.server}. Is the server running (make run)? "
                    "Check the address with `dos-client server` or --server."
                ) from None
            except http.client.HTTPException as error:
                raise ServerUnreachable(f"request to {url} failed: {error!r}") from None
            if response.status_code in RETRY_STATUS and attempt + 1 < tries:
                continue
            break
        if response.status_code >= 400:
            raise DosApiError.from_response(response)
        try:
            answer = response.json()
        except ValueError:
            raise ServerUnreachable(
                f"{self.server} answered with something that is not JSON: is it a DOS server?"
            ) from None
        return answer if isinstance(answer, dict) else {"value": answer}

    def create_game(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/api/games", json=payload)

    def join(self, game_id: str, invite: str | None = None, code: str | None = None,
             name: str | None = None) -> dict[str, Any]:
        payload = {k: v for k, v in {"invite": invite, "code": code, "name": name}.items() if v}
        return self._call("POST", f"/api/games/{game_id}/join", json=payload)

    def game(self, game_id: str) -> dict[str, Any]:
        return self._call("GET", f"/api/games/{game_id}")

    def actions(self, game_id: str) -> dict[str, Any]:
        return self._call("GET", f"/api/games/{game_id}/actions")

    def submit(self, game_id: str, version: int, actions: list[str] | None = None,
               number: int | None = None) -> dict[str, Any]:
        """Play ``actions`` (notation) or the move ``number`` of the list at ``version``."""
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        body: dict[str, Any] = {"version": version}
        if number is not None:
            body["number"] = number
        else:
            body["actions"] = actions
        return self._call("POST", f"/api/games/{game_id}/actions", json=body, headers=headers)

    def history(self, game_id: str, after: int = 0, limit: int = 100) -> dict[str, Any]:
        return self._call("GET", f"/api/games/{game_id}/events",
                          params={"after": after, "limit": limit})

    def start(self, game_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/start")

    def resign(self, game_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/resign")

    def set_notifications(self, game_id: str, seat: int,
                          changes: dict[str, Any]) -> dict[str, Any]:
        return self._call("PUT", f"/api/games/{game_id}/seats/{seat}/notifications",
                          json=changes)

    def vacation(self, game_id: str, days: int) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/vacation", json={"days": days})

    def rotate_token(self, game_id: str, seat: int) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/seats/{seat}/token")
