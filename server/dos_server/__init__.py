"""dos_server: the Flask service that stores DOS games and lets players move by HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# gunicorn's master imports this package for dos_server.gunicorn_conf and forks its workers
# from it: Flask (and everything else) is imported by create_app, in the workers.
if TYPE_CHECKING:
    from flask import Flask


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """App factory: defaults, then the environment, then ``test_config``."""
    import os

    from flask import Flask

    from dos_server import i18n, metrics, migrate, models, serving  # noqa: F401 - models registers the tables with the metadata
    from dos_server.api import account, games, health, inbound, players
    from dos_server.api import chat as chat_api
    from dos_server.api import metrics as metrics_api
    from dos_server.commands import Commands
    from dos_server.config import load_config
    from dos_server.database import configure_engine
    from dos_server.edge import check_request
    from dos_server.extensions import api, db, init_limiter
    from dos_server.jsoncodec import JsonProvider
    from dos_server.logs import init_logging

    # The instance folder holds the development SQLite database and secret key.
    instance = (test_config or {}).get("INSTANCE_PATH") or os.environ.get("DOS_INSTANCE_PATH")
    app = Flask("dos_server", instance_relative_config=True, instance_path=instance or None)
    app.json = JsonProvider(app)
    app.cli = Commands(app)  # the commands' modules are imported when a command line runs
    load_config(app, test_config)
    if app.config["PROXY_COUNT"]:
        from werkzeug.middleware.proxy_fix import ProxyFix

        count = app.config["PROXY_COUNT"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=count, x_proto=count,  # type: ignore[method-assign]
                                x_host=count)
    init_logging(app)
    serving.configure(app)  # before the database is bound: the pool is sized there
    db.init_app(app)
    migrations = app.config.get("MIGRATIONS_DIR", _migrations_dir())
    migrate.init_app(app, db, directory=migrations)
    init_limiter(app)
    i18n.init_app(app)
    app.before_request(check_request)  # path parameters and headers, before any view
    metrics.init_app(app)  # GET /metrics, and the requests' counts and times
    api.init_app(app)
    api.register_blueprint(health.blp)
    api.register_blueprint(metrics_api.blp)
    api.register_blueprint(games.blp)
    api.register_blueprint(games.unsubscribe_blp)
    api.register_blueprint(chat_api.blp)
    api.register_blueprint(inbound.blp)
    api.register_blueprint(account.blp)
    api.register_blueprint(players.blp)
    from dos_server import web
    from dos_server.cards import chip

    # The card macro (templates/cards.html) of the pages and the emails draws its chips.
    app.add_template_global(chip, "chip")
    web.init_app(app)  # the pages
    with app.app_context():
        configure_engine(app)
    return app


def _migrations_dir() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2] / "migrations")
