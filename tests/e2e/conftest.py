"""End-to-end fixtures; they live in e2e_server.py, a module with a unique name."""

from e2e_server import gunicorn_server

__all__ = ["gunicorn_server"]
