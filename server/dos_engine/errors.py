"""Errors raised by the engine. All are ``ValueError`` subclasses whose message a player can act on.

Every error is raised with its message's English template, marked with ``N_`` for the engine's
catalog (``translation.py``), and the named values it fills in::

    raise IllegalActionError(N_("you cannot catch {name}"), rule="5.2", name=name)

``str(error)`` is the English text; :func:`explain` (or ``error.explain(language)``) is the same
sentence in a reader's language, for the server's answers and pages and for ``dos-client``.
A value that is itself a message of the catalog (the notation's help) is a :class:`Phrase`, and
is translated with the sentence around it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from dos_engine.translation import N_, translator


class Written(Protocol):
    """What an error needs of an action: its canonical text (errors come before actions in
    the engine's import order, so they do not name the ``Action`` class)."""

    def text(self) -> str: ...


class Phrase(str):
    """A value of an error's message that is a message of the catalog itself (marked with
    ``N_`` where it is defined): it is read in the reader's language too."""

    __slots__ = ()


# The frames around a message: its rule, and the action of a turn it is about.
RULE_FRAME = N_("{message} (rule {rule})")
CONTEXT_FRAME = N_("action {number} ({text}): {message}")


def _fill(template: str, params: Mapping[str, object], language: str | None) -> str:
    if not language:
        return template.format(**params) if params else template
    tr = translator(language)
    values = {name: tr.gettext(value) if isinstance(value, Phrase) else value
              for name, value in params.items()}
    try:
        return tr.gettext(template).format(**values)
    except (KeyError, IndexError, ValueError):  # a translation's mistake is no player's
        return template.format(**values)


class DosError(ValueError):
    """Base class of every error the engine raises on purpose.

    ``template`` is the message's English template (``{name}`` placeholders), ``params`` its
    values; ``context`` is ``(number, text)`` when the error is about one action of a turn
    (:func:`with_context`).
    """

    def __init__(self, template: str, /, **params: object) -> None:
        self.template = template
        self.params = dict(params)
        self.context: tuple[int, str] | None = None
        super().__init__(self.explain(None))

    def message(self, language: str | None = None) -> str:
        """The message in ``language`` (English for None or one without a catalog), without
        the rule it names (``rule`` says that apart)."""
        text = _fill(self.template, self.params, language)
        if self.context is not None:
            number, step = self.context
            text = _fill(CONTEXT_FRAME, {"number": number, "text": repr(step), "message": text},
                         language)
        return text

    def explain(self, language: str | None = None) -> str:
        """The whole error in ``language``: ``str(error)`` when English."""
        return self.message(language)

    def _with_context(self, number: int, text: str) -> DosError:
        again = type(self).__new__(type(self))
        again.__dict__.update(self.__dict__)
        again.params = dict(self.params)
        again.context = (number, text)
        ValueError.__init__(again, again.explain(None))
        return again


class InvalidActionError(DosError):
    """The text is not an action in the notation (a syntax error)."""


class IllegalActionError(DosError):
    """The action is well-formed but the rules forbid it now.

    ``rule`` is the RULES.md section that forbids it (for example ``"3.7"``), or ``None`` for
    conditions that are not a rule of the card game (the game is over, say). ``detail`` is
    the English message without the rule.
    """

    def __init__(self, template: str, /, rule: str | None = None, **params: object) -> None:
        self.rule = rule
        super().__init__(template, **params)

    @property
    def detail(self) -> str:
        return self.message(None)

    def explain(self, language: str | None = None) -> str:
        text = self.message(language)
        if not self.rule:
            return text
        return _fill(RULE_FRAME, {"message": text, "rule": self.rule}, language)


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
        super().__init__(N_("{text} could mean any of: {candidates}. Say which one."),
                         text=repr(text), candidates=listed)

    def _with_context(self, number: int, text: str) -> DosError:
        again = super()._with_context(number, text)
        assert isinstance(again, AmbiguousActionError)
        # As before messages were translated: the typed text, prefixed, is what is quoted.
        again.text = f"action {number} ({text!r}): {self.text}"
        ValueError.__init__(again, repr(again.text) + str(self)[len(repr(self.text)):])
        return again


def with_context(error: DosError, number: int, text: str) -> DosError:
    """``error`` again, of the same class, saying it is about action ``number`` (``text``) of a turn."""
    return error._with_context(number, text)


def explain(error: DosError, language: str | None) -> str:
    """``error`` in ``language`` (a shipped language code such as ``lo``; English for None or
    any other): the whole sentence, with its rule; ``str(error)`` in English."""
    return error.explain(language)


def message(error: DosError, language: str | None) -> str:
    """``error``'s message in ``language`` without its rule (the server gives ``rule`` apart)."""
    return error.message(language)
