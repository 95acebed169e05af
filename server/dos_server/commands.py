"""The app's command line (``dos-server ...``, ``flask --app dos_server ...``), loaded when a
command line asks for a command, not when the app is built.

Every web worker builds the same app but never runs a command, and the commands' modules
stay imported for the worker's life: Flask-Migrate imports Alembic and Mako (about 10 MiB),
the notification worker requests and the mail modules, the operator's tools their services.
So ``app.cli`` is :class:`Commands`: the first time a command line names a command it does not
hold yet (or lists them, ``--help``), it imports each module of :data:`MODULES` and calls its
``register_cli(app)``, which adds that module's commands as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import click
from flask.cli import AppGroup

if TYPE_CHECKING:
    from flask import Flask

# The modules whose register_cli(app) adds commands (a new command module goes here).
MODULES = (
    "dos_server.migrate",  # db (Flask-Migrate)
    "dos_server.worker",  # worker
    "dos_server.mailin",  # mail-in, inbound
    "dos_server.admin_cli",  # admin, ratings
    "dos_server.ops",  # backup, restore, retention
    "dos_server.localmail",  # mail
)


class Commands(AppGroup):
    """``app.cli``, whose commands are registered on first use (see the module's docstring)."""

    def __init__(self, app: Flask) -> None:
        super().__init__(app.name)
        self.app = app
        self.loaded = False

    def load(self) -> None:
        """Register every module's commands (once)."""
        if self.loaded:
            return
        self.loaded = True
        for name in MODULES:
            importlib.import_module(name).register_cli(self.app)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and not self.loaded:
            self.load()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load()
        return super().list_commands(ctx)


__all__ = ["MODULES", "Commands"]
