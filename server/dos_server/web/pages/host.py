"""The host's page: invites, starting, cancelling, removing a seat."""

from __future__ import annotations

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _

from dos_server import urls
from dos_server.problems import Problem
from dos_server.services import access, chat, lobby, read
from dos_server.web import auth
from dos_server.web.blueprint import bp
from dos_server.web.forms import Page


def host_and_sit(created: lobby.Created, seat: int | None) -> None:
    """This browser keeps a new game's host token and, if it plays ``seat``, claims it."""
    game_id = created.game.id
    auth.remember_host(game_id, created.host_token)
    mine = [i for i in created.invites if i.seat == seat]
    if seat is not None and mine:
        joined = lobby.join_game(game_id, mine[0].invite, None, None)
        auth.remember_seat(game_id, joined.player_token)


def _host_token(game_id: str) -> str:
    token = auth.host_token(game_id)
    if token is None:
        raise Problem(403, "host-only", _("Host only"),
                      _("only the browser that created this game holds its host controls "
                        "(or sign in with the host token)"))
    return token


@bp.get("/games/<game_id>/host")
def host(game_id: str) -> Page:
    token = _host_token(game_id)
    game = access.get_game(game_id)
    viewer = access.authenticate(game, token)
    body = read.game_body(game, viewer)
    invites = read.invites_body(game, viewer)
    links = [{"seat": i["seat"], "name": i["name"],
              "url": urls.join_url(game_id, i["invite"])}
             for i in invites["invites"] if i["invite"]]
    code_url = (urls.join_code_url(game_id, invites["invite_code"])
                if invites["invite_code"] and body["status"] == "waiting" else None)
    return render_template("host.html", game=body, links=links, code_url=code_url,
                           signed_in=auth.player_token(game_id) is not None,
                           chat=chat.settings_body(game, viewer))


@bp.post("/games/<game_id>/start")
def start(game_id: str) -> Page:
    lobby.start_now(game_id, _host_token(game_id))
    flash(_("The game has started."))
    return redirect(url_for("web.table", game_id=game_id), 303)


@bp.post("/games/<game_id>/cancel")
def cancel(game_id: str) -> Page:
    lobby.cancel(game_id, _host_token(game_id))
    flash(_("The game was cancelled."))
    return redirect(url_for("web.host", game_id=game_id), 303)


@bp.post("/games/<game_id>/seats/<int:seat>/remove")
def remove_seat(game_id: str, seat: int) -> Page:
    lobby.remove_seat(game_id, _host_token(game_id), seat)
    flash(_("Seat %(seat)s was removed; the seats after it moved up.", seat=seat + 1))
    return redirect(url_for("web.host", game_id=game_id), 303)
