"""Client errors and their documented exit codes."""

from __future__ import annotations

from typing import Any

from dos_client.i18n import _

# Exit codes (also in the README):
EXIT_OK = 0
EXIT_ERROR = 1  # anything else
EXIT_USAGE = 2  # a command, option or value that is wrong (click's usage errors, invalid input)
EXIT_REFUSED = 3  # not your turn, illegal or ambiguous move
EXIT_STALE = 4  # someone moved first: the game changed under you
EXIT_AUTH = 5  # bad, expired or revoked token; not your seat
EXIT_UNREACHABLE = 6  # the server did not answer
EXIT_TIMEOUT = 7  # `wait` gave up


class ClientError(Exception):
    exit_code = EXIT_ERROR

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code


class ServerUnreachable(ClientError):
    exit_code = EXIT_UNREACHABLE


class DosApiError(ClientError):
    """A problem+json answer from the server."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        self.kind = str(problem.get("type", "")).rsplit("/", 1)[-1]
        detail = str(problem.get("detail") or problem.get("title") or f"HTTP {status}")
        if problem.get("rule"):
            detail += " " + _("(rule {rule}: `dos-client rules {rule}`)").format(
                rule=problem["rule"])
        super().__init__(detail, _exit_code(status, self.kind))

    @classmethod
    def from_response(cls, response: Any) -> DosApiError:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            body = {"detail": _("the server answered HTTP {status} ({reason}) without "
                                "details").format(status=response.status_code,
                                                  reason=response.reason)}
        return cls(response.status_code, body)


def _exit_code(status: int, kind: str) -> int:
    if kind == "stale-version":
        return EXIT_STALE
    if kind == "invalid-input":  # a value the server cannot accept (an email address, a URL)
        return EXIT_USAGE
    if status in (401, 403):
        return EXIT_AUTH
    if status in (409, 422) or kind in ("illegal-action", "ambiguous-action", "not-your-turn",
                                        "invalid-action"):
        return EXIT_REFUSED
    return EXIT_ERROR
