"""One builder per email kind: from an outbox row's payload (and the :class:`Facts` the
dispatch read for it) to a :class:`Letter`, the one context its templates are rendered from
and what sets its headers apart.

Builders read nothing from the database and send nothing; absolute links come from
:mod:`dos_server.urls` (never a request's Host). The words are in the templates,
``templates/email/<kind>/{subject.txt,body.txt,body.html}``; a builder only gathers and shapes
the values they show.

Every game email answers "what happened, what do I hold, what can I do": the subject names the
opponents, the body tells what the others did since the player's last turn, each opponent's
hand size, the table, and the numbered moves with a play line bound to this email's version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dos_server import cards, timefmt, urls
from dos_server.delivery.mail.headers import Headers, digest_thread, game_thread
from dos_server.services import account

Payload = Mapping[str, Any]


@dataclass(frozen=True)
class Facts:
    """What a builder needs besides the payload: read from the database by the dispatch."""

    login_nonce: str | None = None  # the sign-in row's nonce (the code is an HMAC of it)


@dataclass(frozen=True)
class Letter:
    """A built email before rendering: its templates' context and its headers."""

    context: dict[str, Any]
    headers: Headers = field(default_factory=Headers)


Builder = Callable[[Payload, Facts], Letter]


# -- shared values ------------------------------------------------------------------------------


def game_label(game_id: str, title: str | None) -> str:
    """How emails name a game: its title and id when the host gave one, else its id."""
    return f"{title} ({game_id})" if title else str(game_id)


def when(moment: str | None, zone: str | None = None) -> str:
    """An ISO timestamp as the reader reads it, in their zone and language and from now:
    "Thursday 3 December, 01:53 (Asia/Vientiane, UTC+7), in 23 hours" (in Lao "ວັນພະຫັດ
    3 ທັນວາ, 01:53 (Asia/Vientiane, UTC+7), ໃນອີກ 23 ຊົ່ວໂມງ"): the language is the one the
    email is rendered in (:func:`.render.in_language`)."""
    parsed = timefmt.parse(moment)
    if parsed is None:
        return "?"
    return timefmt.when(parsed, zone)


def stop_link(payload: Payload) -> str:
    """The unsubscribe link a person clicks: the page (rows queued before it existed carry
    only the API's one-click link, which shows a page in a browser too)."""
    return str(payload.get("unsubscribe_page") or payload["unsubscribe"])


# -- the game emails ----------------------------------------------------------------------------


def game_context(payload: Payload) -> dict[str, Any]:
    """The context of an email about one seat's game: its state, its moves and its links."""
    event = payload["event"]
    seat = payload["seat"]
    names = list(payload.get("names") or [])
    view = payload.get("view")
    over = event == "game_over" or (view is not None and view.get("phase") == "over")
    signin = payload.get("signin")
    moves = [{**move, "words": cards.words(move["action"]),
              "link": urls.emailed_move_url(payload["game_id"], signin, payload["version"],
                                            move["number"]) if signin else None}
             for move in payload.get("moves") or []]
    return {
        "event": event,
        "game_id": payload.get("game_id"),
        "label": game_label(payload["game_id"], payload.get("game_title")),
        "name": payload.get("name") or "",
        "names": names,
        "seat": seat,
        "opponents": [name for index, name in enumerate(names) if index != seat],
        "others": [{"name": names[index], "size": size}
                   for index, size in enumerate((view or {}).get("hand_sizes") or [])
                   if index != seat],
        "data": payload.get("data") or {},
        "view": view,
        "target": ((view or {}).get("options") or {}).get("target_score"),
        "over": over,
        "deadline": when(payload["deadline"], payload.get("time_zone"))
        if payload.get("deadline") else None,
        "since": payload.get("since") or [],
        "moves": moves,
        "my_turn": bool(moves and view is not None and view.get("current") == seat
                        and not over),
        "version": payload["version"],
        "play_line": urls.play_line(payload["game_id"], 1, payload["version"]),
        "reply_to": payload.get("reply_to"),
        "record": payload.get("record"),
        "rematch": payload.get("rematch"),
        "rematch_standing": payload.get("rematch_standing"),
        "series": payload.get("series"),
        "table": payload.get("table"),
        "all_games": urls.all_games_url(),
        "stop": stop_link(payload) if payload.get("unsubscribe") else None,
        "chat": chat_lines(payload.get("chat"), payload.get("time_zone")),
    }


def chat_lines(lines: Any, zone: str | None) -> list[dict[str, Any]]:
    """Table talk as an email lists it: who, what, and when in the reader's zone."""
    return [{"name": str(line.get("name") or "?"), "text": str(line.get("text") or ""),
             "when": when(line.get("at"), zone)}
            for line in lines or [] if isinstance(line, Mapping)]


def game_headers(payload: Payload) -> Headers:
    return Headers(
        thread=game_thread(payload["game_id"], payload["seat"]),
        unsubscribe=payload["unsubscribe"],
        unsubscribe_mailto=payload.get("unsubscribe_mailto"),
        game=payload["game_id"], game_list=True, reply_to=payload.get("reply_to"))


def build_game(payload: Payload, facts: Facts) -> Letter:
    """your_turn, reminder, timed_out, caught, round_over, game_over, invited, new_address,
    undeliverable: one seat's game; the kind's templates say what happened."""
    return Letter(game_context(payload), game_headers(payload))


def build_nudge(payload: Payload, facts: Facts) -> Letter:
    """A nudge: one seat's game, and since when the player who nudged has been waiting."""
    context = game_context(payload)
    data = context["data"]
    context["waiting_since"] = when(data.get("waiting_since"), payload.get("time_zone"))
    context["by_name"] = data.get("by_name") or _seat_name(context["names"], data.get("by"))
    return Letter(context, game_headers(payload))


def build_message(payload: Payload, facts: Facts) -> Letter:
    """Table talk for a seat that takes an email per message: the messages of the hour."""
    context = game_context(payload)
    context["chat"] = chat_lines(context["data"].get("messages"), payload.get("time_zone"))
    context["said_by"] = sorted({line["name"] for line in context["chat"]})
    return Letter(context, game_headers(payload))


def _seat_name(names: list[str], seat: Any) -> str:
    return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else "?"


def build_mail_reply(payload: Payload, facts: Facts) -> Letter:
    """The answer to a player's emailed move, in the sender's thread: what was applied or what
    was wrong and, when the sender is a seat's player, the table and the moves."""
    shown = payload.get("view") is not None or bool(payload.get("links"))
    context = game_context(payload) if shown else {"data": payload.get("data") or {}}
    context.update(game=shown, subject=payload["subject"])
    return Letter(context, Headers(
        thread=payload.get("in_reply_to"), references=payload.get("references"),
        unsubscribe=payload.get("unsubscribe"),
        unsubscribe_mailto=payload.get("unsubscribe_mailto"),
        game=payload.get("game_id"), reply_to=payload.get("reply_to"), auto_reply=True))


def build_digest(payload: Payload, facts: Facts) -> Letter:
    """The daily digest: every game waiting on this address, one thread per address."""
    games = [{**game, "label": game_label(game["id"], game.get("game_title")),
              "chat": chat_lines(game.get("chat"), game.get("time_zone")),
              "deadline": when(game["deadline"], game.get("time_zone"))
              if game.get("deadline") else None,
              "stop": stop_link(game)} for game in payload["games"]]
    return Letter({"games": games, "all_games": urls.all_games_url()}, Headers(
        thread=digest_thread(payload["thread"]), unsubscribe=payload["unsubscribe"],
        unsubscribe_mailto=payload.get("unsubscribe_mailto")))


# -- the emails of signing in -------------------------------------------------------------------


def build_login_code(payload: Payload, facts: Facts) -> Letter:
    """The one-time code and link. The code itself is never stored: it is recomputed from the
    row's nonce (read by the dispatch) and the secret key; never in the subject, which the
    outbox log shows."""
    if facts.login_nonce is None:
        raise ValueError("a sign-in email needs its row's nonce (the dispatch reads it)")
    code = account.login_code(facts.login_nonce)
    return Letter({
        "code": f"{code[:4]} {code[4:]}",
        "link": account.login_link(payload["login_id"]),
        "minutes": payload["minutes"],
        "server": urls.public_base(),
        "address": payload["address"],
    })


def build_confirm_email(payload: Payload, facts: Facts) -> Letter:
    """The link that confirms a seat's new address."""
    return Letter({"name": payload.get("name") or "", "seat": payload["seat"],
                   "game_id": payload["game_id"], "link": payload["link"]},
                  Headers(game=payload["game_id"]))


# The kinds, by the payload's ``event``: each has its folder of templates.
KINDS: dict[str, Builder] = {
    **dict.fromkeys(("your_turn", "reminder", "timed_out", "caught", "round_over",
                     "game_over", "invited", "new_address", "undeliverable"), build_game),
    "abandoned": build_game,
    "nudge": build_nudge,
    "message": build_message,
    "mail_reply": build_mail_reply,
    "digest": build_digest,
    "login_code": build_login_code,
    "confirm_email": build_confirm_email,
}


__all__ = ["KINDS", "Builder", "Facts", "Letter", "game_label", "stop_link", "when"]
