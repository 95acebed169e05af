"""POST /inbound/email: a raw RFC 5322 message from a provider's inbound hook or a
``procmail | curl`` pipe (play by email), authenticated by INBOUND_SECRET."""

from __future__ import annotations

import secrets
from typing import Any

import marshmallow as ma
from flask import current_app, request
from flask.views import MethodView

from dos_server.edge import Blueprint
from dos_server.problems import Problem
from dos_server.services import inbound
from dos_server.services.words import _

blp = Blueprint("inbound", __name__, url_prefix="/inbound",
                description="Play by email: receive players' replies")


class InboundOut(ma.Schema):
    id = ma.fields.Integer(required=True)
    status = ma.fields.String(required=True, metadata={
        "description": "processed | rejected (answered with an error) | ignored | failed | received"})
    duplicate = ma.fields.Boolean(required=True, metadata={
        "description": "this Message-ID was received before; it was not handled again"})


@blp.route("/email")
class InboundEmail(MethodView):
    @blp.doc(requestBody={
        "required": True,
        "description": "the raw email (RFC 5322, as message/rfc822 or application/octet-stream)",
        "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
    })
    @blp.response(200, InboundOut)
    @blp.alt_response(401, description="missing or wrong shared secret")
    @blp.alt_response(404, description="inbound email is not enabled (INBOUND_SECRET unset)")
    @blp.alt_response(413, description="message larger than INBOUND_MAX_BYTES")
    @blp.alt_response(422, description="empty body")
    def post(self) -> dict[str, Any]:
        """Receive one email (the raw message as the body); it is stored, then processed."""
        config = current_app.config
        secret = config.get("INBOUND_SECRET")
        if not secret:
            raise Problem(404, "inbound-disabled", "Inbound email is not enabled",
                          _("this server does not accept email over HTTP: set "
                            "DOS_INBOUND_SECRET to a long random string and send it as "
                            "'Authorization: Bearer ...'"))
        scheme, _space, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(
                given.strip().encode(), str(secret).encode()):
            raise Problem(401, "unauthorized", "Not authorized",
                          _("send the server's INBOUND_SECRET as 'Authorization: Bearer "
                            "<secret>'"),
                          headers={"WWW-Authenticate": 'Bearer realm="dos-inbound"'})
        request.max_content_length = int(config["INBOUND_MAX_BYTES"])
        raw = request.get_data(cache=False)
        if not raw.strip():
            raise Problem(422, "invalid-input", "Invalid input",
                          _("send the raw email (RFC 5322: headers, blank line, body) as the "
                            "body"))
        stored = inbound.store(raw, "http")
        status = stored.status if stored.duplicate else inbound.process(stored.id)
        return {"id": stored.id, "status": status, "duplicate": stored.duplicate}
