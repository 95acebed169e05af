"""Flask-Migrate (Alembic) bound to the app without importing it: ``flask db ...`` and
``flask_migrate.upgrade()`` (the tests') import it when they run.

``flask_migrate`` imports Alembic and Mako (about 10 MiB) at its own import, which every web
worker would then carry for nothing. ``Migrate.init_app`` leaves in ``app.extensions["migrate"]``
what Flask-Migrate's functions and ``migrations/env.py`` read: ``.migrate.get_config()``,
``.directory``, ``.db`` and ``.configure_args``. :class:`MigrateState` is that object, with
``.migrate``, Flask-Migrate's own ``Migrate``, made on first use.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask
    from flask_sqlalchemy import SQLAlchemy


class MigrateState:
    """``app.extensions["migrate"]``, as ``Migrate.init_app`` leaves it."""

    def __init__(self, db: SQLAlchemy, directory: str, **configure_args: Any) -> None:
        self.db = db
        self.directory = directory
        # Migrate's defaults, then ours: env.py passes these to Alembic's context.configure.
        self.configure_args: dict[str, Any] = {"compare_type": True, "render_as_batch": True,
                                               **configure_args}

    @functools.cached_property
    def migrate(self) -> Any:
        from flask_migrate import Migrate

        return Migrate(db=self.db, directory=self.directory, **self.configure_args)

    @property
    def metadata(self) -> Any:
        """Flask-Migrate's older name for ``db.metadata``, which its own env.py may read."""
        return self.db.metadata


def init_app(app: Flask, db: SQLAlchemy, directory: str, **configure_args: Any) -> None:
    app.extensions["migrate"] = MigrateState(db, directory, **configure_args)


def register_cli(app: Flask) -> None:
    """``flask db ...`` (dos_server/commands.py calls this when a command line needs it)."""
    from flask_migrate.cli import db as db_group

    app.cli.add_command(db_group, name="db")


__all__ = ["MigrateState", "init_app", "register_cli"]
