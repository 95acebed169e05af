"""Configuration: defaults, then the environment (``DOS_*``, ``DATABASE_URL``, ``SECRET_KEY``)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask

DEFAULTS: dict[str, Any] = {
    "ENV_NAME": "development",  # DOS_ENV_NAME=production makes a missing SECRET_KEY fatal
    "SECRET_KEY_FALLBACKS": [],
    # Every absolute link is built on PUBLIC_URL (dos_server/urls.py), never on a request's
    # Host. In production only PUBLIC_URL's host and TRUSTED_HOSTS (comma-separated) are
    # served; PROXY_COUNT proxies in front are trusted for X-Forwarded-For/-Proto/-Host.
    "PUBLIC_URL": "http://127.0.0.1:5000",
    "TRUSTED_HOSTS": None,
    "PROXY_COUNT": 0,
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "TOKEN_MAX_AGE_DAYS": 400,
    "SQLITE_BUSY_TIMEOUT_SECONDS": 30,
    # No pre-ping: it costs a round trip per request; recycling bounds a connection's age.
    # The pool's size comes from the serving model below (dos_server/serving.py).
    "SQLALCHEMY_ENGINE_OPTIONS": {"pool_recycle": 300},
    # The serving model (dos_server/serving.py): requests a web process works on at once (the
    # others queue, first come first served; 0: no gate), a process's long-poll waiters reading
    # at once (services/watch.py), and how long a request may wait for a pooled connection.
    "REQUESTS_AT_ONCE": 8,
    "WEB_WAIT_LOOKS": 2,
    "POOL_TIMEOUT_SECONDS": 30,
    "RATELIMIT_STORAGE_URI": "memory://",
    "RATELIMIT_HEADERS_ENABLED": True,
    "RATE_LIMIT_CREATE": "30 per minute; 500 per day",  # per client address
    "RATE_LIMIT_JOIN": "60 per minute",
    # Signing in with an email address: per client address (Flask-Limiter) and,
    # in the database, per email address; codes last LOGIN_CODE_MINUTES and survive
    # LOGIN_MAX_ATTEMPTS wrong guesses.
    "RATE_LIMIT_LOGIN": "10 per minute; 100 per day",
    "RATE_LIMIT_LOGIN_VERIFY": "30 per minute; 300 per day",
    "LOGIN_CODES_PER_HOUR": 5,
    "LOGIN_CODE_MINUTES": 15,
    "LOGIN_MAX_ATTEMPTS": 5,
    "SESSION_COOKIE_SAMESITE": "Lax",  # the browser's account session (api/signin.py)
    # Email: with no SMTP_HOST, messages go to the log and to instance/outbox/*.eml.
    "SMTP_HOST": None,
    "SMTP_PORT": 587,
    "SMTP_SECURITY": "starttls",  # starttls | ssl | none
    "SMTP_USERNAME": None,
    "SMTP_PASSWORD": None,
    "SMTP_TIMEOUT": 30,
    "SMTP_CA_FILE": None,  # extra CA bundle to verify the SMTP server's certificate
    "MAIL_FROM": "DOS by mail <dos@localhost>",
    "MAIL_DOMAIN": "localhost",  # Message-IDs and reply addresses
    # Play by email: replies go to play+<token>@MAIL_DOMAIN and come back through
    # ``flask --app dos_server mail-in`` (SMTP/LMTP) or POST /inbound/email (INBOUND_SECRET).
    "MAILIN_HOST": "127.0.0.1",
    "MAILIN_PORT": 2525,
    "INBOUND_SECRET": None,  # unset: POST /inbound/email answers 404
    "INBOUND_REQUIRE_FROM_MATCH": True,  # the From address must be the seat's email on file
    "INBOUND_MAX_BYTES": 1024 * 1024,  # larger messages are refused (SMTP 552, HTTP 413)
    "INBOUND_RETRY_SECONDS": 60,  # the worker processes rows left 'received' this long
    # A message whose processing failed on a bug is retried after these delays (seconds);
    # after the last, it is 'failed' and the sender gets an apology.
    "INBOUND_RETRY_SCHEDULE": [60, 300, 1800, 7200],
    # Worker: polling, batch size, how long a claimed row stays claimed (a killed worker's
    # rows are retried after this), and the Standard Webhooks retry schedule in seconds.
    "WORKER_POLL_SECONDS": 0.25,
    "WORKER_BATCH": 50,
    "WORKER_LEASE_SECONDS": 120,
    "RETRY_SCHEDULE": [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
    "WEBHOOK_TIMEOUT": 15,
    # Attention (services/attention.py): a seat whose page or client read the game within
    # ACTIVE_SECONDS when its turn began gets its your-turn email and webhook only after that
    # long without a look; a look is written at most every LOOK_EVERY_SECONDS.
    "ACTIVE_SECONDS": 600,
    "LOOK_EVERY_SECONDS": 60,
    # A finished game's event rows become one compact archive (services/archive.py) this long
    # after the game last changed; a negative value switches archiving off.
    "ARCHIVE_AFTER_SECONDS": 3 * 24 * 3600,
    # GET /metrics (dos_server/metrics.py) answers only these addresses or networks
    # (comma-separated) or this bearer token; with neither it answers 404.
    "METRICS_ALLOW": None,
    "METRICS_TOKEN": None,
    # Retention (services/retention.py), run by the worker: days after which each thing goes;
    # 0 or less keeps it for ever. Checked every RETAIN_EVERY_SECONDS, RETAIN_BATCH at a time.
    "RETAIN_UNSTARTED_DAYS": 30,  # games never started, with their unclaimed invites
    "RETAIN_SIGNIN_DAYS": 1,  # sign-in requests (codes and links)
    "RETAIN_MAIL_DAYS": 30,  # payloads of sent mail and webhooks, raw bytes of emailed moves
    "RETAIN_MAIL_LOG_DAYS": 180,  # the mail rows themselves, of games over this long
    "RETAIN_EVERY_SECONDS": 600,
    "RETAIN_BATCH": 200,
    # Backups (services/backup.py): where pg_dump/pg_restore are, if not the server's
    # version's /usr/lib/postgresql/<major>/bin or the PATH's.
    "PG_BIN_DIR": None,
    # Webhook URLs must resolve to public internet addresses (no loopback, private networks,
    # link-local/cloud metadata, ...); true only for development and tests.
    "WEBHOOK_ALLOW_PRIVATE": False,
    # A seat is absent, and the other players may vote to hand it to a bot or to end the
    # game (services/abandon.py), after this many timeouts in a row or this many days
    # without a look or a move.
    "ABANDON_TIMEOUTS": 3,
    "ABANDON_DAYS": 7,
    # Table talk (services/chat.py): messages a minute per seat (the host, spectators: one each).
    "CHAT_PER_MINUTE": 10,
    "API_TITLE": "DOS by mail",
    "API_VERSION": "1",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "OPENAPI_REDOC_PATH": "/docs",
    "OPENAPI_REDOC_URL": "https://cdn.jsdelivr.net/npm/redoc@2/bundles/redoc.standalone.js",
}


class ConfigError(RuntimeError):
    """The server cannot start with this configuration."""


def load_config(app: Flask, test_config: dict[str, Any] | None) -> None:
    app.config.from_mapping(DEFAULTS)
    app.config.from_prefixed_env("DOS")
    if os.environ.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = os.environ["SECRET_KEY"]
    if os.environ.get("DATABASE_URL"):
        app.config["SQLALCHEMY_DATABASE_URI"] = os.environ["DATABASE_URL"]
    if test_config:
        app.config.update(test_config)
    uri = app.config.get("SQLALCHEMY_DATABASE_URI") or (
        "sqlite:///" + str(Path(app.instance_path) / "dos.sqlite3")
    )
    app.config["SQLALCHEMY_DATABASE_URI"] = normalize_database_url(uri)
    for name in ("RETRY_SCHEDULE", "INBOUND_RETRY_SCHEDULE"):
        schedule = app.config[name]
        if isinstance(schedule, str):  # from the environment: comma-separated seconds
            app.config[name] = [float(x) for x in schedule.split(",") if x.strip()]
    for name in ("ABANDON_TIMEOUTS", "ABANDON_DAYS"):  # a bad value fails here, not at a vote
        try:
            app.config[name] = int(app.config[name])
        except (TypeError, ValueError):
            raise ConfigError(f"{name} must be a whole number, not "
                              f"{app.config[name]!r}") from None
        if app.config[name] < 1:
            raise ConfigError(f"{name} must be 1 or more, not {app.config[name]}")
    allow = app.config["WEBHOOK_ALLOW_PRIVATE"]
    if isinstance(allow, str):  # from the environment, spelled some other way than JSON
        app.config["WEBHOOK_ALLOW_PRIVATE"] = allow.strip().lower() in ("1", "true", "yes", "on")
    _trusted_hosts(app)
    fallbacks = app.config["SECRET_KEY_FALLBACKS"]
    if isinstance(fallbacks, str):  # from the environment: comma-separated
        app.config["SECRET_KEY_FALLBACKS"] = [k for k in fallbacks.split(",") if k]
    if not app.config.get("SECRET_KEY"):
        if app.config["ENV_NAME"] == "production":
            raise ConfigError(
                "SECRET_KEY is not set. In production set SECRET_KEY (or DOS_SECRET_KEY) to a "
                "long random string; tokens are signed with it."
            )
        app.config["SECRET_KEY"] = _development_secret(Path(app.instance_path))


def _trusted_hosts(app: Flask) -> None:
    """Flask's ``TRUSTED_HOSTS``: in production PUBLIC_URL's host and those listed; any other
    Host header is refused with 400 before a view runs."""
    listed = app.config["TRUSTED_HOSTS"]
    if isinstance(listed, str):  # from the environment: comma-separated
        listed = [host.strip() for host in listed.split(",") if host.strip()]
    listed = list(listed or [])
    if app.config["ENV_NAME"] == "production" or listed:
        public = urlsplit(str(app.config["PUBLIC_URL"])).hostname
        app.config["TRUSTED_HOSTS"] = [*([public] if public else []), *listed]
    else:
        app.config["TRUSTED_HOSTS"] = None
    count = app.config["PROXY_COUNT"]
    try:
        app.config["PROXY_COUNT"] = int(count or 0)
    except ValueError:
        raise ConfigError(f"PROXY_COUNT must be a whole number of proxies, not {count!r}") \
            from None


def normalize_database_url(uri: str) -> str:
    """Accept the usual spellings of a PostgreSQL URL and use the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if uri.startswith(prefix):
            return "postgresql+psycopg://" + uri[len(prefix):]
    return uri


def _development_secret(instance: Path) -> str:
    """A generated key kept in the instance folder, so tokens survive restarts."""
    instance.mkdir(parents=True, exist_ok=True)
    path = instance / "secret_key"
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
