"""The ``dos-client`` command: the root group, its global options, and the commands of
``dos_client.commands`` registered on it. Thin: parse, call ``api``, print with ``render``.

Heavy imports (requests, rich) happen inside the commands, so ``--help`` starts fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from dos_client import i18n
from dos_client.commands import (
    account,
    chat,
    docs,
    follow,
    lobby,
    notes,
    nudge,
    orders,
    play,
    ratings,
    seat,
)
from dos_client.config import Store
from dos_client.context import Settings, emit_json
from dos_client.errors import ClientError, DosApiError
from dos_client.i18n import N_, _

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


class DosGroup(click.Group):
    """Turns client errors into one line on stderr and a documented exit code, in the reader's
    language (``dos_client.i18n``)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        i18n.use(None)  # the environment's language, until --json says English
        with i18n.localized(self):
            return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ClientError as error:
            settings = ctx.obj if isinstance(ctx.obj, Settings) else None
            if settings is not None and settings.debug:
                raise
            if settings is not None and settings.as_json:
                if isinstance(error, DosApiError):
                    emit_json({"error": error.problem, "status": error.status})
                else:
                    emit_json({"error": {"detail": error.message}, "status": None})
            click.echo(_("Error: {message}").format(message=error.message), err=True)
            ctx.exit(error.exit_code)


@click.group(cls=DosGroup, context_settings={"auto_envvar_prefix": "DOS",
                                              "help_option_names": ["-h", "--help"]},
             help=N_("Play DOS games on a DOS-by-mail server from your terminal.\n\n"
                     "\b\nGlobal options go before or after the command "
                     "(`dos-client show --json`).\n\n"
                     "\b\nExit codes: 0 ok, 1 error, 2 usage (wrong command, option or value),\n"
                     "3 refused (not your turn, game over, illegal, ambiguous or unreadable\n"
                     "move), 4 stale (the game moved on since your list: nothing was played),\n"
                     "5 not authorized, 6 server unreachable, 7 `wait` timed out."))
@click.option("--server", metavar="URL",
              help=N_("DOS server (default http://127.0.0.1:5000)."))
@click.option("--profile", default="default", show_default=True,
              help=N_("Which saved identity to use (several players on one machine)."))
@click.option("--json", "as_json", is_flag=True, help=N_("Print machine-readable JSON."))
@click.option("--debug", is_flag=True, help=N_("Show tracebacks."))
@click.version_option(package_name="dos-by-mail", prog_name="dos-client")
@click.pass_context
def cli(ctx: click.Context, server: str | None, profile: str, as_json: bool, debug: bool) -> None:
    if as_json:
        i18n.use("en")  # what a script reads is the same in every language
    ctx.obj = Settings(server, profile, as_json, debug)


def _late(field: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A global option given after the command (`dos-client show --json`) sets ``field``."""
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        settings = ctx.find_object(Settings)
        if settings is not None and value not in (None, False):
            setattr(settings, field, value.rstrip("/") if field == "server" else value)
            if field == "as_json":
                i18n.use("en")
        return value
    return callback


def _global_options() -> list[click.Option]:
    common: dict[str, Any] = {"expose_value": False, "allow_from_autoenv": False}
    return [
        click.Option(["--server"], metavar="URL", callback=_late("server"),
                     help=N_("DOS server (also before the command)."), **common),
        click.Option(["--profile"], callback=_late("profile"),
                     help=N_("Saved identity to use (also before the command)."), **common),
        click.Option(["--json", "as_json"], is_flag=True, callback=_late("as_json"),
                     help=N_("Print machine-readable JSON."), **common),
        click.Option(["--debug"], is_flag=True, callback=_late("debug"),
                     help=N_("Show tracebacks."), **common),
    ]


def _accept_global_options(group: click.Group) -> None:
    """Every command takes --server, --profile, --json and --debug after its name too."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            _accept_global_options(command)
        else:
            command.params.extend(_global_options())


def _complete_games(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[CompletionItem]:
    """Saved game names (and ids) of the profile on the command line."""
    from click.shell_completion import CompletionItem

    profile = ctx.find_root().params.get("profile") or "default"
    try:
        games = Store(profile).games
    except ClientError:
        return []
    names = [*games, *(str(e["game_id"]) for e in games.values())]
    return [CompletionItem(n) for n in dict.fromkeys(names) if n.startswith(incomplete)]


def _complete_game_arguments(group: click.Group) -> None:
    for command in group.commands.values():
        if isinstance(command, click.Group):
            _complete_game_arguments(command)
            continue
        for param in command.params:
            if isinstance(param, click.Argument) and param.name in ("game", "games_", "words"):
                param._custom_shell_complete = _complete_games


for _module in (lobby, play, follow, seat, orders, nudge, chat, notes, docs, ratings):
    for _command in _module.COMMANDS:
        cli.add_command(_command)
for _command in (account.server, account.login, account.logout, account.whoami):
    cli.add_command(_command)
_accept_global_options(cli)
_complete_game_arguments(cli)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    sys.exit(cli.main(args=list(argv) if argv is not None else None, prog_name="dos-client"))


if __name__ == "__main__":
    main()
