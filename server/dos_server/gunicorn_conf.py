"""gunicorn's settings for DOS by mail: the one serving model, used by ``make run``, the Procfile,
the end-to-end tests and the benchmarks (``gunicorn --config python:dos_server.gunicorn_conf``).

gevent workers: a request that waits for a game to change (the long-polls of
``GET /api/games/<id>/events?wait=`` and the pages' ``/games/<id>/wait``) is a greenlet parked on
an event, holding neither a thread nor a database connection (``services/watch.py``), so a
thousand waiting clients do not crowd out the turns. psycopg 3 (>= 3.1.14) detects gevent's
patching and waits cooperatively; SQLAlchemy's pool then queues greenlets instead of threads.

Only the standard library and gunicorn here: gunicorn's master imports this module before it
forks, and nothing may import psycopg before gevent patches the worker (psycopg picks its wait
functions when it is imported).
"""

import os

from gunicorn.workers.base_async import AsyncWorker  # type: ignore[import-untyped]

worker_class = "dos_server.gunicorn_conf.GeventWorker"  # gunicorn's "gevent", imported late
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# Open connections per worker, waiting or not: a long-poll is one of them.
worker_connections = int(os.environ.get("DOS_WORKER_CONNECTIONS", "2000"))
# An idle connection stays open this long: a player's client, or the proxy in front, sends the
# next move on it instead of opening a new TCP connection (gunicorn's default is 2 s). A
# gevent worker holds an idle connection as one parked greenlet within worker_connections.
keepalive = int(os.environ.get("DOS_KEEPALIVE_SECONDS", "75"))
# A stop does not wait out every long-poll (up to 60 s): clients ask again.
graceful_timeout = 10


class GeventWorker(AsyncWorker):  # type: ignore[misc]
    """gunicorn's gevent worker on gevent's own WSGI server (``dos_server.gevent_http.Worker``),
    its modules imported by the worker once forked: the master, which only starts and watches
    workers, then never imports gevent (about 6 MiB of its resident memory). gunicorn makes a
    worker's object in the master before it forks; once forked, the object becomes that worker,
    whose constructor is this one's (AsyncWorker's)."""

    def init_process(self) -> None:
        from dos_server.gevent_http import Worker

        self.__class__ = Worker
        Worker.init_process(self)


def post_worker_init(worker: object) -> None:
    """Once the app is loaded: its objects (modules, the app, SQLAlchemy's metadata) live as
    long as the worker, so full garbage collections need not walk them again and again. Parked
    long-polls outlive the young generations, so full collections come more often than with
    short requests only; each would otherwise pause every request of the worker.

    The greenlet of each connection does not record who spawned it and from where (gevent's
    ``track_greenlet_tree``, a debugging aid): about 1 KiB a parked long-poll."""
    import gc

    import gevent  # type: ignore[import-untyped]

    gevent.config.track_greenlet_tree = False
    gc.freeze()


def child_exit(server: object, worker: object) -> None:
    """A worker that exits stops counting in the live gauges of /metrics (prometheus-client's
    multiprocess mode, when PROMETHEUS_MULTIPROC_DIR is set: dos_server/metrics.py)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined,no-untyped-call]
