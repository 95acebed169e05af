"""The operator's commands: ``dos-server backup PATH``, ``dos-server restore PATH`` and
``dos-server retention`` (the logic is services/backup.py and services/retention.py)."""

from __future__ import annotations

from pathlib import Path

import click
from flask import Flask, current_app

from dos_server.models import utcnow
from dos_server.services import backup, retention
from dos_server.services.words import _


def register_cli(app: Flask) -> None:
    @app.cli.command("backup")
    @click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--force", is_flag=True, help="Replace PATH if it exists.")
    def backup_command(path: Path, force: bool) -> None:
        """Back the database up into PATH, safely while the server runs."""
        try:
            done = backup.backup(path, force, current_app.config["PG_BIN_DIR"])
        except backup.BackupError as error:
            raise click.ClickException(str(error)) from None
        click.echo(_("backed up the %(kind)s database (revision %(revision)s) into %(path)s: "
                     "%(bytes)d bytes") % backup.describe(done))

    @app.cli.command("restore")
    @click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--force", is_flag=True,
                  help="Replace everything in a database that is not empty.")
    def restore_command(path: Path, force: bool) -> None:
        """Restore the backup at PATH into a fresh database (stop the server and worker)."""
        try:
            done = backup.restore(path, force, current_app.config["PG_BIN_DIR"])
        except backup.BackupError as error:
            raise click.ClickException(str(error)) from None
        click.echo(_("restored the %(kind)s backup %(path)s (revision %(revision)s); run "
                     "`dos-server db upgrade` if this server is newer") % backup.describe(done))

    @app.cli.command("retention")
    def retention_command() -> None:
        """Apply every retention rule now, until nothing is left to remove."""
        done = retention.run_all(utcnow())
        click.echo(", ".join(f"{key} {value}" for key, value in sorted(done.items())))
