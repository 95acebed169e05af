"""Backups that are restored: ``dos-server backup PATH`` and ``dos-server restore PATH``.

- SQLite: the online backup API (``sqlite3.Connection.backup``) copies the database page by
  page into a new file while the server and the worker go on writing; the copy is one
  consistent moment (the API starts again when a writer changes a page it has copied).
- PostgreSQL: ``pg_dump --format=custom`` of the app's schema (the first one of its
  ``search_path``: ``public`` unless ``DATABASE_URL`` says otherwise), which reads one
  snapshot and takes no lock that a game's writes wait for. ``pg_dump``/``pg_restore`` must be
  of the server's major version or newer: those of ``PG_BIN_DIR``, else of
  ``/usr/lib/postgresql/<server major>/bin``, else the ``PATH``'s.

A restore goes into a fresh database (or schema): one that holds tables is refused unless
``force`` (then what it holds is dropped first). PostgreSQL restores into the schema the backup
was taken from, which must be the one ``DATABASE_URL`` names; it is created if missing.

**What a restore sends again.** The backup holds the outbox as it was: a row sent before the
backup is ``sent`` in it and never sent again. A row still ``pending`` at backup time is sent by
the restored worker, with the same ``message_id`` (the email's ``Message-ID``, the webhook's
``webhook-id``); if the old worker sent it after the backup was taken, the receiver gets it a
second time under the same id and dedupes it (the Standard Webhooks contract; mail clients
drop a repeated ``Message-ID``). No new id is made for a message that existed at backup time.
The restore clears the pending rows' leases (no worker of before the restore still holds
one), so they go out at once rather than when the old lease would have run out.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, inspect, make_url, pool, text, update
from sqlalchemy.engine import URL, Engine

from dos_server.extensions import db
from dos_server.models import NotificationRow
from dos_server.services.words import _

SQLITE_MAGIC = b"SQLite format 3\x00"
PGDUMP_MAGIC = b"PGDMP"


class BackupError(RuntimeError):
    """A backup or restore that cannot be done as asked; the message says what to do."""


@dataclass(frozen=True)
class Done:
    kind: str  # sqlite | postgresql
    path: Path
    bytes: int
    revision: str | None  # the schema revision (alembic) the backup holds


# -- the database behind DATABASE_URL ------------------------------------------------------


def _url(uri: str) -> URL:
    return make_url(uri)


def _sqlite_file(url: URL) -> Path:
    if not url.database or url.database == ":memory:":
        raise BackupError(_("an in-memory SQLite database cannot be backed up or restored"))
    return Path(url.database)


def libpq(url: URL) -> tuple[str, dict[str, str]]:
    """``url`` (``postgresql+psycopg://...``) as a libpq connection URI for pg_dump and
    pg_restore, and the environment they need: the password goes in ``PGPASSWORD``, never on
    a command line that ``ps`` shows."""
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    plain = url.set(drivername="postgresql", password=None)
    return plain.render_as_string(hide_password=False), env


def _schema_of(engine: Engine) -> str:
    """The schema the app's tables are in: the first of its ``search_path`` that names one."""
    with engine.connect() as conn:
        found = conn.execute(text("SELECT current_schema()")).scalar()
        if found:
            return str(found)
        path = str(conn.execute(text("SELECT current_setting('search_path')")).scalar())
    for name in (part.strip().strip('"') for part in path.split(",")):
        if name and name != "$user":
            return name
    return "public"


def _pg_tool(name: str, engine: Engine, configured: str | None) -> str:
    """The path of ``name`` (pg_dump, pg_restore) of a version that can read this server."""
    with engine.connect() as conn:
        server = int(str(conn.execute(text("SHOW server_version_num")).scalar())) // 10000
    places = [Path(configured)] if configured else []
    places.append(Path(f"/usr/lib/postgresql/{server}/bin"))
    candidates = [str(place / name) for place in places if (place / name).exists()]
    on_path = shutil.which(name)
    if on_path:
        candidates.append(on_path)
    for tool in candidates:
        version = subprocess.run([tool, "--version"], capture_output=True, text=True,
                                 check=False).stdout
        match = re.search(r"(\d+)(?:\.\d+)?", version)
        if match and int(match.group(1)) >= server:
            return tool
    raise BackupError(_("no %(tool)s of PostgreSQL %(major)s or newer was found; install the "
                        "client tools of the server's version or set DOS_PG_BIN_DIR")
                      % {"tool": name, "major": server})


def _run(command: list[str], env: dict[str, str], what: str) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackupError(_("%(what)s failed: %(error)s")
                          % {"what": what, "error": done.stderr.strip()[-2000:]})


def _revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if "alembic_version" not in inspect(conn).get_table_names():
            return None
        found = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return None if found is None else str(found)


# -- backup ----------------------------------------------------------------------------------


def backup(path: Path, force: bool = False, pg_bin: str | None = None) -> Done:
    """Back the app's database up into ``path`` (refused if it exists, unless ``force``)
    while the server and worker go on; the file appears only once it is complete."""
    if path.exists() and not force:
        raise BackupError(_("%(path)s exists already; choose another name or give --force "
                            "to replace it") % {"path": str(path)})
    if not path.parent.is_dir():
        raise BackupError(_("the folder %(path)s does not exist") % {"path": str(path.parent)})
    engine = db.engine
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    partial = Path(name)
    try:
        if engine.dialect.name == "sqlite":
            source = _sqlite_file(engine.url)
            with closing(sqlite3.connect(source)) as src, \
                    closing(sqlite3.connect(partial)) as dst:
                src.backup(dst)
            kind = "sqlite"
        else:
            uri, env = libpq(engine.url)
            schema = _schema_of(engine)
            _run([_pg_tool("pg_dump", engine, pg_bin), "--format=custom", "--no-owner",
                  "--no-acl", f"--schema={schema}", f"--file={partial}", f"--dbname={uri}"],
                 env, "pg_dump")
            kind = "postgresql"
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return Done(kind, path, path.stat().st_size, _revision(engine))


def kind_of(path: Path) -> str:
    """What a backup file is, by its first bytes."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        raise BackupError(_("there is no backup at %(path)s") % {"path": str(path)}) from None
    except OSError as error:
        raise BackupError(_("%(path)s cannot be read: %(error)s")
                          % {"path": str(path), "error": str(error)}) from None
    if head == SQLITE_MAGIC:
        return "sqlite"
    if head.startswith(PGDUMP_MAGIC):
        return "postgresql"
    raise BackupError(_("%(path)s is not a backup made by dos-server backup (neither a SQLite "
                        "database nor a pg_dump archive)") % {"path": str(path)})


# -- restore ---------------------------------------------------------------------------------


def restore(path: Path, force: bool = False, pg_bin: str | None = None) -> Done:
    """Restore the backup at ``path`` into the app's database, which must be empty unless
    ``force``. Stop the server and the worker first: a restore replaces what they read."""
    kind = kind_of(path)
    engine = db.engine
    db.session.remove()
    db.engine.dispose()
    dialect = engine.dialect.name
    if kind != ("sqlite" if dialect == "sqlite" else "postgresql"):
        raise BackupError(_("%(path)s is a %(kind)s backup and DATABASE_URL is a %(db)s "
                            "database: restore it into a database of its kind")
                          % {"path": str(path), "kind": kind, "db": dialect})
    if kind == "sqlite":
        _restore_sqlite(path, _sqlite_file(engine.url), force)
    else:
        _restore_postgresql(path, engine, force, pg_bin)
    _release_leases(engine.url)
    return Done(kind, path, path.stat().st_size, _revision(engine))


def _not_empty(tables: list[str]) -> BackupError:
    return BackupError(_("the target database is not empty (%(count)d tables, e.g. "
                         "%(table)s); restore into a fresh database, or give --force to "
                         "replace everything in it") % {"count": len(tables),
                                                        "table": sorted(tables)[0]})


def _restore_sqlite(path: Path, target: Path, force: bool) -> None:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as src:
        check = src.execute("PRAGMA quick_check").fetchone()
        if not check or check[0] != "ok":
            raise BackupError(_("%(path)s is damaged: %(error)s")
                              % {"path": str(path), "error": str(check)})
        target.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(target)) as dst:
            tables = [str(row[0]) for row in dst.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
            if tables and not force:
                raise _not_empty(tables)
            src.backup(dst)  # replaces every page of the target


def _restore_postgresql(path: Path, engine: Engine, force: bool, pg_bin: str | None) -> None:
    uri, env = libpq(engine.url)
    tool = _pg_tool("pg_restore", engine, pg_bin)
    listing = subprocess.run([tool, "--list", str(path)], capture_output=True, text=True,
                             env=env, check=False)
    if listing.returncode != 0:
        raise BackupError(_("pg_restore cannot read %(path)s: %(error)s")
                          % {"path": str(path), "error": listing.stderr.strip()[-2000:]})
    schemas = set(re.findall(r"^\d+; \d+ \d+ SCHEMA - (\S+) ", listing.stdout, re.M))
    schemas |= set(re.findall(r"^\d+; \d+ \d+ TABLE (?!DATA )(\S+) ", listing.stdout, re.M))
    if len(schemas) != 1:
        raise BackupError(_("%(path)s holds no single schema of tables (found: %(found)s)")
                          % {"path": str(path), "found": ", ".join(sorted(schemas)) or "-"})
    schema = schemas.pop()
    wanted = _schema_of(engine)
    if wanted != schema:
        raise BackupError(_("the backup holds the schema %(schema)s and DATABASE_URL names "
                            "%(wanted)s: restore into a database whose search_path names "
                            "%(schema)s") % {"schema": schema, "wanted": wanted})
    quoted = '"' + schema.replace('"', '""') + '"'
    with engine.begin() as conn:
        tables = inspect(conn).get_table_names(schema=schema)
        if tables and not force:
            raise _not_empty(tables)
        if tables:
            conn.execute(text(f"DROP SCHEMA {quoted} CASCADE"))
        conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {quoted}"))
    engine.dispose()
    # The schema exists now: every entry but its CREATE SCHEMA, in one transaction.
    keep = [line for line in listing.stdout.splitlines()
            if not re.match(r"^\d+; \d+ \d+ SCHEMA - ", line)]
    with tempfile.NamedTemporaryFile("w", suffix=".list", delete=False) as handle:
        handle.write("\n".join(keep) + "\n")
    try:
        _run([tool, "--no-owner", "--no-acl", "--single-transaction", "--exit-on-error",
              f"--use-list={handle.name}", f"--dbname={uri}", str(path)], env, "pg_restore")
    finally:
        Path(handle.name).unlink(missing_ok=True)


def _release_leases(url: URL) -> None:
    """No worker of before the restore holds a lease now: the pending rows are due as they
    were scheduled, without waiting for the old leases to run out."""
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            if "notifications" in inspect(conn).get_table_names():
                conn.execute(update(NotificationRow).where(NotificationRow.status == "pending")
                             .values(lease_until=None, lease_owner=None))
    finally:
        engine.dispose()


def describe(done: Done) -> dict[str, Any]:
    return {"kind": done.kind, "path": str(done.path), "bytes": done.bytes,
            "revision": done.revision}


__all__ = ["BackupError", "Done", "backup", "describe", "kind_of", "libpq", "restore"]
