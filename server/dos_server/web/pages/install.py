"""What a phone needs to add the site to its home screen: the web app manifest (its words in
the template ``manifest.webmanifest``, its icons in ``static/icons/``, made by
``scripts/make_icons.py``)."""

from __future__ import annotations

from flask import Response, render_template

from dos_server.web.blueprint import bp

MANIFEST_TYPE = "application/manifest+json"


@bp.get("/manifest.webmanifest")
def manifest() -> Response:
    response = Response(render_template("manifest.webmanifest"), mimetype=MANIFEST_TYPE)
    response.cache_control.public = True
    response.cache_control.max_age = 3600  # names no one and nothing private
    return response
