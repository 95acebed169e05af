"""``dos-server``: the Flask CLI bound to this app (``dos-server worker``, ``dos-server
mail-in``, ``dos-server db upgrade``...), without needing ``--app``."""

from __future__ import annotations

from flask.cli import FlaskGroup

from dos_server import create_app

cli = FlaskGroup(create_app=lambda: create_app(), help="DOS by mail server commands.")


def main() -> None:
    cli.main(prog_name="dos-server")
