"""The few HTML pages a person meets from an email before the web front end exists: the
unsubscribe page (a GET shows it and changes nothing; its button POSTs)."""

from __future__ import annotations

import html
from typing import Any

from flask import Response, request


def unsubscribe_page(info: dict[str, Any], *, done: bool) -> Response:
    game = html.escape(str(info["game_id"]))
    name = html.escape(str(info.get("name") or f"seat {info['seat']}"))
    if done:
        body = (f"<h1>Unsubscribed</h1><p>{name} gets no more emails from DOS game {game}. "
                "Webhooks, if you set one, still work. To get emails again: "
                f"<code>dos-client notify {game} --email ADDRESS</code></p>")
    elif info.get("unsubscribed"):
        body = (f"<h1>Already unsubscribed</h1><p>{name} gets no emails from DOS game "
                f"{game}.</p>")
    else:
        action = html.escape(request.path)
        body = (f"<h1>Stop emails?</h1><p>{name} gets an email when it is their turn in DOS "
                f"game {game}, and when a round or the game ends.</p>"
                f"<form method=\"post\" action=\"{action}\">"
                "<input type=\"hidden\" name=\"List-Unsubscribe\" value=\"One-Click\">"
                "<button type=\"submit\">Stop the emails of this game</button></form>")
    page = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\">"
            "<meta name=\"robots\" content=\"noindex\"><title>DOS by mail</title></head>"
            f"<body style=\"font-family:sans-serif;max-width:40em;margin:2em auto\">{body}"
            "</body></html>")
    return Response(page, mimetype="text/html",
                    headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
