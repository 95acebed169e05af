"""dos_server: the Flask service that stores DOS games and lets players move by HTTP."""

from __future__ import annotations

from typing import Any

from flask import Flask


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """App factory: defaults, then the environment, then ``test_config``."""
    import os

    from dos_server import i18n, metrics, models, serving  # noqa: F401 - models registers the tables with the metadata
    from dos_server.api import account, games, health, inbound, players
    from dos_server.api import chat as chat_api
    from dos_server.api import metrics as metrics_api
    from dos_server.config import load_config
    from dos_server.database import configure_engine
    from dos_server.edge import check_request
    from dos_server.extensions import api, db, limiter, migrate
    from dos_server.logs import init_logging

    # The instance folder holds the development SQLite database and secret key.
    instance = (test_config or {}).get("INSTANCE_PATH") or os.environ.get("DOS_INSTANCE_PATH")
    app = Flask("dos_server", instance_relative_config=True, instance_path=instance or None)
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
    migrate.init_app(app, db, render_as_batch=True, directory=migrations)
    limiter.init_app(app)
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
    from dos_server.admin_cli import register_cli as register_admin
    from dos_server.localmail import register_cli as register_localmail
    from dos_server.mailin import register_cli as register_mailin
    from dos_server.ops import register_cli as register_ops
    from dos_server.worker import register_cli

    register_cli(app)
    register_mailin(app)
    register_admin(app)
    register_ops(app)
    register_localmail(app)
    with app.app_context():
        configure_engine(app)
    return app


def _migrations_dir() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2] / "migrations")
