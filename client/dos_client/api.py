"""The server's HTTP API behind one ``requests.Session``: timeouts, retries, problem+json."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from dos_client.errors import DosApiError, ServerUnreachable
from dos_client.i18n import _

TIMEOUT = (5, 30)  # connect, read (seconds)
MAX_WAIT = 60.0  # the longest long-poll the server grants (seconds)


class _Retry(Retry):
    # urllib3 sleeps through a 429's Retry-After and asks again: a refused nudge's says a day.
    # A 429 is the person's to read, not a reason to wait.
    RETRY_AFTER_STATUS_CODES = frozenset({503})


class DosApi:
    def __init__(self, server: str, token: str | None = None, language: str = "en") -> None:
        self.server = server.rstrip("/")
        self.session = requests.Session()
        # GETs are safe to retry; action and message POSTs carry an Idempotency-Key, so they
        # are too.
        retry = _Retry(total=3, connect=3, read=2, backoff_factor=0.3,
                      status_forcelist=(502, 503, 504),
                      allowed_methods=frozenset({"GET", "POST"}), raise_on_status=False)
        self.session.mount("http://", HTTPAdapter(max_retries=retry))
        self.session.mount("https://", HTTPAdapter(max_retries=retry))
        self.session.headers["Accept"] = "application/json, application/problem+json"
        self.session.headers["User-Agent"] = "dos-client"
        self.session.headers["Accept-Language"] = language  # details, descriptions in it
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def _call(self, method: str, path: str, timeout: tuple[float, float] = TIMEOUT,
              **kwargs: Any) -> dict[str, Any]:
        url = f"{self.server}{path}"
        try:
            response = self.session.request(method, url, timeout=timeout, **kwargs)
        except requests.ConnectionError:
            raise ServerUnreachable(
                _("could not connect to {server}. Is the server running (make run)? Check the "
                  "address with `dos-client server` or --server.").format(server=self.server)
            ) from None
        except requests.Timeout:
            raise ServerUnreachable(
                _("{url} did not answer in time; try again later").format(url=url)) from None
        except requests.RequestException as error:
            raise ServerUnreachable(
                _("request to {url} failed: {error}").format(url=url, error=error)) from None
        if response.status_code >= 400:
            raise DosApiError.from_response(response)
        try:
            body = response.json()
        except ValueError:
            raise ServerUnreachable(
                _("{server} answered with something that is not JSON: is it a DOS "
                  "server?").format(server=self.server)
            ) from None
        return body if isinstance(body, dict) else {"value": body}

    def create_game(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/api/games", json=payload)

    def join(self, game_id: str, invite: str | None = None, code: str | None = None,
             name: str | None = None, time_zone: str | None = None,
             language: str | None = None) -> dict[str, Any]:
        payload = {k: v for k, v in {"invite": invite, "code": code, "name": name,
                                     "time_zone": time_zone, "language": language}.items()
                   if v}
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

    def history(self, game_id: str, after: int = 0, limit: int = 100,
                wait: float = 0) -> dict[str, Any]:
        """Events after ``after``. With ``wait`` (seconds, up to 60) a long-poll: when there is
        none yet, the server answers as soon as one is committed (or with none after ``wait``)."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        if wait > 0:
            params["wait"] = round(min(wait, MAX_WAIT), 3)
        return self._call("GET", f"/api/games/{game_id}/events", params=params,
                          timeout=(TIMEOUT[0], TIMEOUT[1] + wait))

    def say(self, game_id: str, text: str) -> dict[str, Any]:
        """Say ``text`` at the table; retried after a dropped connection, said once."""
        return self._call("POST", f"/api/games/{game_id}/messages", json={"text": text},
                          headers={"Idempotency-Key": str(uuid.uuid4())})

    def messages(self, game_id: str, after: int = 0, limit: int = 50,
                 before: int | None = None, wait: float = 0) -> dict[str, Any]:
        """Table talk after ``after`` (or the newest ``limit`` before ``before``); with
        ``wait`` a long-poll like :meth:`history`'s."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        if before is not None:
            params["before"] = before
        if wait > 0:
            params["wait"] = round(min(wait, MAX_WAIT), 3)
        return self._call("GET", f"/api/games/{game_id}/messages", params=params,
                          timeout=(TIMEOUT[0], TIMEOUT[1] + wait))

    def chat_settings(self, game_id: str, **changes: Any) -> dict[str, Any]:
        if not changes:
            return self._call("GET", f"/api/games/{game_id}/chat")
        return self._call("PATCH", f"/api/games/{game_id}/chat", json=changes)

    def start(self, game_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/start")

    def rematch(self, game_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/rematch")

    def resign(self, game_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/resign")

    def set_notifications(self, game_id: str, seat: int,
                          changes: dict[str, Any]) -> dict[str, Any]:
        return self._call("PUT", f"/api/games/{game_id}/seats/{seat}/notifications",
                          json=changes)

    def vacation(self, game_id: str, days: int) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/vacation", json={"days": days})

    def orders(self, game_id: str, seat: int) -> dict[str, Any]:
        return self._call("GET", f"/api/games/{game_id}/seats/{seat}/orders")

    def set_orders(self, game_id: str, seat: int, orders: list[str]) -> dict[str, Any]:
        return self._call("PUT", f"/api/games/{game_id}/seats/{seat}/orders",
                          json={"orders": orders})

    def notes(self, game_id: str, seat: int) -> dict[str, Any]:
        return self._call("GET", f"/api/games/{game_id}/seats/{seat}/notes")

    def set_notes(self, game_id: str, seat: int, text: str) -> dict[str, Any]:
        return self._call("PUT", f"/api/games/{game_id}/seats/{seat}/notes",
                          json={"text": text})

    def rotate_token(self, game_id: str, seat: int) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/seats/{seat}/token")

    def nudge(self, game_id: str) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/nudge")

    def votes(self, game_id: str) -> dict[str, Any]:
        return self._call("GET", f"/api/games/{game_id}/votes")

    def vote(self, game_id: str, seat: int, choice: str) -> dict[str, Any]:
        return self._call("POST", f"/api/games/{game_id}/votes",
                          json={"seat": seat, "choice": choice})

    # -- the signed-in account (the session's token is the account token) ------------------

    def send_login_code(self, email: str) -> dict[str, Any]:
        return self._call("POST", "/api/login", json={"email": email})

    def verify_login(self, email: str, code: str) -> dict[str, Any]:
        return self._call("POST", "/api/login/verify", json={"email": email, "code": code})

    def me(self) -> dict[str, Any]:
        return self._call("GET", "/api/me")

    def set_settings(self, **fields: Any) -> dict[str, Any]:
        """The account's settings (``digest``, ``time_zone``, ``language``): the fields given."""
        return self._call("PUT", "/api/me/settings", json=fields)

    def sign_out(self, session: str | None = None) -> dict[str, Any]:
        """Revoke the account's session ``session``, or (None) every session of the account."""
        path = "/api/me/sessions" + (f"/{session}" if session is not None else "")
        return self._call("DELETE", path)

    def player(self, name: str) -> dict[str, Any]:
        """A player's rating and latest rated games, by their player name."""
        return self._call("GET", f"/api/players/{quote(name, safe='')}")

    def leaderboard(self, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        return self._call("GET", "/api/leaderboard", params={"limit": limit, "offset": offset})

    def my_games(self) -> dict[str, Any]:
        return self._call("GET", "/api/me/games")

    def my_game_token(self, game_id: str, seat: int | None = None) -> dict[str, Any]:
        """A player token of the account's seat in ``game_id`` (``seat``: which, if several)."""
        return self._call("POST", f"/api/me/games/{game_id}/token",
                          json={} if seat is None else {"seat": seat})
