"""Click's own words that a dos-client user meets, so that pybabel finds them in the client and
the client's catalog translates them: click reads them through standard gettext, whose domain
``dos_client.i18n.localized`` makes the client's (as an application may). Each is exactly as in
click's source (tests/client/test_client_catalog.py checks it against click's own messages).
"""

from __future__ import annotations

from dos_client.i18n import N_, ngettext

CLICK_WORDS = (
    N_("Usage:"),
    N_("Options"),
    N_("Commands"),
    N_("Show this message and exit."),
    N_("Show the version and exit."),
    N_("Error: {message}"),
    N_("Try '{command} {option}' for help."),
    N_("Aborted!"),
    N_("Missing command."),
    N_("Missing argument"),
    N_("Missing option"),
    N_("Missing parameter"),
    N_("No such option {name!r}."),
    N_("No such command {name!r}."),
    N_("Invalid value for {param_hint}: {message}"),
    N_("Invalid value: {message}"),
    N_("Option {name!r} does not take a value."),
    N_("{value!r} is not a valid {number_type}."),
    N_("{value} is not in the range {range}."),
    N_("Confirm the action without prompting."),
    N_("Repeat for confirmation"),
    N_("Error: invalid input"),
    N_("default: {default}"),
)


def _plurals() -> None:
    """Never called: click's plural messages, marked for extraction."""
    ngettext("Got unexpected extra argument ({args})",
             "Got unexpected extra arguments ({args})", 1)
    ngettext("Did you mean {possibility}?", "(Did you mean one of: {possibilities}?)", 1)
    ngettext("Option {name!r} requires an argument.",
             "Option {name!r} requires {nargs} arguments.", 1)
    ngettext("{value!r} is not {choice}.", "{value!r} is not one of {choices}.", 1)
