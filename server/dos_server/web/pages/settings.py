"""The seat's settings: notifications, vacation, a new token, resigning."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import ngettext

from dos_server import i18n, timefmt
from dos_server.errors import DomainError
from dos_server.problems import Problem, problem_of
from dos_server.schemas import NotificationsIn, VacationIn
from dos_server.services import access, chat, lobby, notify, play, read, standing
from dos_server.web import auth, reader
from dos_server.web.blueprint import bp
from dos_server.web.forms import FieldErrors, Page, whole_number


def _player(game_id: str) -> tuple[str, int]:
    token = auth.player_token(game_id)
    if token is None:
        raise Problem(401, "not-signed-in", _("Not signed in"),
                      _("sign in to this game (the link in your email) first"))
    game = access.get_game(game_id)
    viewer = access.authenticate(game, token, allow_host=False)
    assert viewer.seat is not None
    return token, viewer.seat


def _settings(game_id: str, status: int = 200, errors: FieldErrors | None = None,
              new_token: str | None = None, typed: dict[str, Any] | None = None
              ) -> tuple[str, int]:
    """The settings page; after a refused form, ``errors`` beside its fields and what was
    ``typed`` in them instead of what is stored."""
    token, seat = _player(game_id)
    game = access.get_game(game_id)
    viewer = access.authenticate(game, token, allow_host=False)
    body = read.game_body(game, viewer)
    stored = read.seat_settings_body(game, viewer)
    settings = {"chat_email": access.seat_of(game, seat).chat_email, **stored, **(typed or {})}
    until = timefmt.parse(stored["vacation_until"])
    return render_template("settings.html", game=body, settings=settings,
                           orders=standing.orders_body(game, seat),
                           errors=errors or FieldErrors(), events=notify.EVENTS,
                           channels=notify.CHANNELS, new_token=new_token,
                           zones=timefmt.zone_list(), languages=i18n.shipped_languages(),
                           vacation_until=timefmt.local_time(until, stored["time_zone"])
                           if until else None), status


def _field(path: tuple[str, ...]) -> str | None:
    return path[0] if path[:1] in (("email",), ("webhook_url",), ("days",), ("time_zone",),
                                   ("language",), ("reminders",)) else None


@bp.get("/games/<game_id>/settings")
def settings(game_id: str) -> Page:
    return _settings(game_id)


@bp.post("/games/<game_id>/settings/notifications")
def notifications(game_id: str) -> Page:
    token, seat = _player(game_id)
    game = access.get_game(game_id)
    current = read.seat_settings_body(game, access.Viewer(seat=seat))
    email = request.form.get("email", "").strip() or None
    webhook = request.form.get("webhook_url", "").strip() or None
    events = {channel: [e for e in notify.EVENTS if f"{channel}:{e}" in request.form]
              for channel in notify.CHANNELS}
    payload: dict[str, Any] = {"events": events, "digest": "digest" in request.form}
    for field in ("time_zone", "language"):  # a form from before these fields keeps them
        if field in request.form:
            payload[field] = request.form[field].strip() or None
    if "nudges_shown" in request.form:  # a form from before the checkbox keeps the setting
        payload["nudges"] = "nudges" in request.form
    if email != current["email"] or current["email_unsubscribed"]:
        payload["email"] = email
    if webhook != current["webhook_url"]:
        payload["webhook_url"] = webhook
    typed: dict[str, Any] = {"email": email, "webhook_url": webhook, "events": events,
                             "digest": payload["digest"]}
    typed.update({f: payload[f] for f in ("time_zone", "language", "nudges") if f in payload})
    if "reminders" in request.form:  # "50%, 1h": the schema checks each
        typed["reminders"] = request.form["reminders"][:80]
        payload["reminders"] = typed["reminders"].replace(",", " ").split()
    errors = FieldErrors()
    try:
        loaded = NotificationsIn().load(payload)
    except ma.ValidationError as error:
        errors.add_tree(error.messages, _field)
        try:  # the other fields, checked further: every mistake is shown at once
            lobby.check_channels(email, webhook, {f for f in ("email", "webhook_url")
                                                  if f in payload and f not in error.messages})
        except DomainError as refused:
            errors.add_problem(problem_of(refused), _field)
        return _settings(game_id, 422, errors, typed=typed)
    try:
        result = lobby.set_notifications(game_id, token, seat, loaded.get("email"),
                                         loaded.get("webhook_url"), loaded.get("events"),
                                         set(loaded), loaded.get("digest"),
                                         loaded.get("time_zone"), loaded.get("language"),
                                         reminders=loaded.get("reminders"),
                                         nudges=loaded.get("nudges"))
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 422:
            raise
        errors.add_problem(problem, _field)
        return _settings(game_id, 422, errors, typed=typed)
    if "chat_email_shown" in request.form:  # a form from before the checkbox keeps it
        chat.set_settings(game_id, token, {"email": "chat_email" in request.form})
    reader.as_seat(access.get_game(game_id), seat)  # a language just chosen speaks at once
    flash(_("Notification settings saved."))
    if result.get("webhook_secret"):
        flash(_("Webhook signing secret (shown once): %(secret)s", secret=result["webhook_secret"]))
    return redirect(url_for("web.settings", game_id=game_id), 303)


@bp.post("/games/<game_id>/settings/orders")
def orders(game_id: str) -> Page:
    token, seat = _player(game_id)
    try:
        standing.set_orders(game_id, token, seat, request.form.getlist("order"))
    except DomainError as error:  # a value no checkbox sends
        problem = problem_of(error)
        if problem.status != 422:
            raise
        errors = FieldErrors()
        errors.add(None, problem.detail)
        return _settings(game_id, 422, errors)
    flash(_("Standing orders saved."))
    return redirect(url_for("web.settings", game_id=game_id), 303)


@bp.post("/games/<game_id>/settings/vacation")
def vacation(game_id: str) -> Page:
    token, seat = _player(game_id)
    days = whole_number(request.form.get("days", ""))
    try:
        loaded = VacationIn().load({"days": days})
    except ma.ValidationError:
        errors = FieldErrors()
        errors.add("days", _("a whole number of days from 1 to 60"))
        return _settings(game_id, 422, errors, typed={"days": request.form.get("days", "")})
    try:
        result = lobby.start_vacation(game_id, token, loaded["days"])
    except DomainError as error:
        problem = problem_of(error)
        if problem.status != 409:
            raise
        refused = FieldErrors()
        refused.add("days", problem.detail)
        return _settings(game_id, 409, refused, typed={"days": request.form.get("days", "")})
    zone = read.reader_zone(access.get_game(game_id), access.Viewer(seat=seat))
    until = timefmt.parse(result["vacation_until"])
    shown = timefmt.local_time(until, zone) if until else _("now")
    flash(ngettext("Your clock is paused until %(when)s; %(num)s vacation day left this year.",
                   "Your clock is paused until %(when)s; %(num)s vacation days left this year.",
                   result["days_left"], when=shown))
    return redirect(url_for("web.settings", game_id=game_id), 303)


@bp.post("/games/<game_id>/settings/token")
def rotate(game_id: str) -> Page:
    token, seat = _player(game_id)
    result = lobby.rotate_token(game_id, token, seat)
    auth.remember_seat(game_id, result["player_token"])
    return _settings(game_id, new_token=result["player_token"])


@bp.get("/games/<game_id>/resign")
def resign_confirm(game_id: str) -> Page:
    _player(game_id)
    game = read.game_body(access.get_game(game_id), access.Viewer())
    return render_template("resign.html", game=game)


@bp.post("/games/<game_id>/resign")
def resign(game_id: str) -> Page:
    token, _seat = _player(game_id)
    if request.form.get("confirm") != "yes":
        flash(_("Tick the box to confirm that you resign."))
        return redirect(url_for("web.resign_confirm", game_id=game_id), 303)
    play.resign(game_id, token)
    flash(_("You resigned. The random bot plays your seat from now on."))
    return redirect(url_for("web.table", game_id=game_id), 303)
