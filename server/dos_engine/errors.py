"""Errors raised by the engine. All are ``ValueError`` subclasses whose message a player can act on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Written(Protocol):
    """What an error needs of an action: its canonical text (errors come before actions in
    the engine's import order, so they do not name the ``Action`` class)."""

    def text(self) -> str: ...


class DosError(ValueError):
    """Base class of every error the engine raises on purpose."""


class InvalidActionError(DosError):
    """The text is not an action in the notation (a syntax error)."""


class IllegalActionError(DosError):
    """The action is well-formed but the rules forbid it now.

    ``rule`` is the RULES.md section that forbids it (for example ``"3.7"``), or ``None`` for
    conditions that are not a rule of the card game (the game is over, say).
    """

    def __init__(self, message: str, rule: str | None = None) -> None:
        self.rule = rule
        self.detail = message
        super().__init__(f"{message} (rule {rule})" if rule else message)


class NotYourTurnError(IllegalActionError):
    """A seat tried to act while it is another seat's turn."""


class InvalidStateError(DosError):
    """A serialized state that is malformed or breaks an invariant (RULES.md 7)."""


class AmbiguousActionError(DosError):
    """Shorthand that fits more than one legal action; ``candidates`` lists them."""

    def __init__(self, text: str, candidates: Sequence[Written]) -> None:
        self.text = text
        self.candidates = tuple(candidates)
        listed = ", ".join(a.text() for a in self.candidates)
        super().__init__(f"{text!r} could mean any of: {listed}. Say which one.")


def with_context(error: DosError, number: int, text: str) -> DosError:
    """``error`` again, of the same class, saying it is about action ``number`` (``text``) of a turn."""
    prefix = f"action {number} ({text!r}): "
    if isinstance(error, IllegalActionError):
        return type(error)(prefix + error.detail, error.rule)
    if isinstance(error, AmbiguousActionError):
        return type(error)(prefix + error.text, error.candidates)
    return type(error)(prefix + str(error))
