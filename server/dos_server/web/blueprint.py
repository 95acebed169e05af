"""The web blueprint itself, apart from the package, so that the pages can add their routes
to it without importing the package that imports them."""

from __future__ import annotations

from flask import Blueprint

bp = Blueprint("web", __name__, template_folder="templates", static_folder="static",
               static_url_path="/web-static")

__all__ = ["bp"]
