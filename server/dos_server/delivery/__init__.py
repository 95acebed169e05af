"""Channels: how an outbox row reaches a person (SMTP email) or a program (webhook)."""

from __future__ import annotations


class DeliveryError(Exception):
    """A failed attempt; ``retry_after`` (seconds) when the other side asked for a pause."""

    def __init__(self, message: str, status: int | None = None,
                 retry_after: float | None = None, permanent: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.permanent = permanent


__all__ = ["DeliveryError"]
