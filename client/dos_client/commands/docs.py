"""Help inside the product: the ``rules`` of DOS and the shell ``completion`` script."""

from __future__ import annotations

import re
from importlib.resources import files
from importlib.resources.abc import Traversable

import click

from dos_client import i18n
from dos_client.context import Settings, pass_settings
from dos_client.i18n import N_, _

# The players' rules (package data): rules.md in English, rules.<language>.md beside it in each
# language it is written in, with the same section numbers.
DATA: Traversable = files("dos_client").joinpath("data")


@click.command(
    help=N_("The rules of DOS as this server plays them; SECTION (3, 3.6) prints one part."))
@click.argument("section", required=False)
@pass_settings
def rules(settings: Settings, section: str | None) -> None:
    text = rules_text(section)
    settings.emit({"section": section, "text": text}, text.rstrip("\n"))


def rules_text(section: str | None = None, language: str | None = None) -> str:
    """The players' rules document in ``language`` (default: the reader's) if it is written in
    it, else in English; or one section of it."""
    code = language or i18n.language()
    translated = DATA.joinpath(f"rules.{code}.md")
    document = translated if code != i18n.DEFAULT_LANGUAGE and translated.is_file() \
        else DATA.joinpath("rules.md")
    text = document.read_text(encoding="utf-8")
    if section is None:
        return text
    wanted = section.strip().rstrip(".")
    lines = text.splitlines()
    top = re.compile(r"^## (\d+)\. ")
    item = re.compile(r"^(\d+\.\d+) ")
    picked: list[str] = []
    for line in lines:
        heading, numbered = top.match(line), item.match(line)
        if picked and (heading or (numbered and "." in wanted)):
            break
        if (heading and heading.group(1) == wanted) or (numbered and numbered.group(1) == wanted) or picked:
            picked.append(line)
    if not picked:
        known = [m.group(1) for line in lines if (m := top.match(line) or item.match(line))]
        raise click.BadParameter(
            _("no rule {section!r}; the sections are {sections}").format(
                section=section, sections=", ".join(known)), param_hint="SECTION")
    return "\n".join(picked).rstrip() + "\n"


@click.command(
    help=N_("Print the shell completion script: eval \"$(dos-client completion bash)\"."))
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None
    root = ctx.find_root().command  # the `dos-client` group, which cli.py builds on this module
    click.echo(completer(root, {}, "dos-client", "_DOS_CLIENT_COMPLETE").source())


COMMANDS = (rules, completion)
