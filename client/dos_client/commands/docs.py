"""Help inside the product: the ``rules`` of DOS and the shell ``completion`` script."""

from __future__ import annotations

import re

import click

from dos_client.context import Settings, pass_settings


@click.command()
@click.argument("section", required=False)
@pass_settings
def rules(settings: Settings, section: str | None) -> None:
    """The rules of DOS as this server plays them; SECTION (3, 3.6) prints one part."""
    text = rules_text(section)
    settings.emit({"section": section, "text": text}, text.rstrip("\n"))


def rules_text(section: str | None = None) -> str:
    """The players' rules document (package data), or one section of it."""
    from importlib.resources import files

    text = files("dos_client").joinpath("data/rules.md").read_text(encoding="utf-8")
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
        raise click.BadParameter(f"no rule {section!r}; the sections are {', '.join(known)}",
                                 param_hint="SECTION")
    return "\n".join(picked).rstrip() + "\n"


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script: eval "$(dos-client completion bash)"."""
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None
    root = ctx.find_root().command  # the `dos-client` group, which cli.py builds on this module
    click.echo(completer(root, {}, "dos-client", "_DOS_CLIENT_COMPLETE").source())


COMMANDS = (rules, completion)
