"""WSGI entry point for gunicorn: ``gunicorn dos_server.wsgi:app``."""

from dos_server import create_app

app = create_app()
