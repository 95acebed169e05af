"""Email notifications: a text part (the reference) and a real HTML part, threaded per game
and seat, with one-click unsubscribe (RFC 8058) and the headers of automatic mail.

Every email answers "what happened, what do I hold, what can I do": the subject names the
opponents, the body tells what the others did since the player's last turn, each opponent's
hand size, the table, and the numbered moves with a play line bound to this email's version.

Headers are written as they must appear on the wire: the message policy allows lines up to
RFC 5322's 998 characters, so ``List-Unsubscribe`` stays the plain ``<https://...>,
<mailto:...>`` form that mail clients look for (folding at 78 turned it into RFC 2047
encoded-words, which no client reads as a link).

Automatic mail: every email carries ``Auto-Submitted: auto-generated`` (RFC 3834; answers to
a player's email ``auto-replied``) and ``X-Auto-Response-Suppress: All`` (Exchange: no
out-of-office or read receipts back). ``Precedence: bulk`` is not sent: it is not a standard,
RFC 3834 discourages it, and large providers file "bulk" mail as promotions while these are
personal, transactional emails.
"""

from __future__ import annotations

import email.policy
import html
import logging
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any

from flask import current_app

from dos_server import urls

log = logging.getLogger("dos_server.email")

# RFC 5322's hard line limit: long headers are never folded into encoded-words.
POLICY = email.policy.default.clone(max_line_length=998)


class DeliveryError(Exception):
    """A failed attempt; ``retry_after`` (seconds) when the other side asked for a pause."""

    def __init__(self, message: str, status: int | None = None,
                 retry_after: float | None = None, permanent: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.permanent = permanent


def thread_id(game_id: str, seat: int, domain: str) -> str:
    """The Message-ID every email of one game and seat refers to, so they thread together."""
    return f"<game-{game_id}.seat-{seat}@{domain}>"


# -- subjects ---------------------------------------------------------------------------------


def opponents(payload: Mapping[str, Any]) -> list[str]:
    return [name for index, name in enumerate(payload["names"]) if index != payload["seat"]]


def game_label(payload: Mapping[str, Any]) -> str:
    """How emails name the game: its title and id when the host gave one, else its id."""
    title = payload.get("game_title")
    return f"{title} ({payload['game_id']})" if title else str(payload["game_id"])


def subject(payload: Mapping[str, Any]) -> str:
    event = payload["event"]
    data = payload.get("data") or {}
    names = payload["names"]
    title = f"DOS {game_label(payload)}"
    versus = f" (vs {', '.join(opponents(payload))})"
    if event == "your_turn":
        return f"{title}: your turn{versus}"
    if event == "reminder":
        return f"{title}: reminder, your turn is running out{versus}"
    if event == "timed_out":
        return f"{title}: your turn timed out{versus}"
    if event == "caught":
        return f"{title}: caught without calling DOS{versus}"
    if event == "round_over":
        return f"{title}: round {data.get('round', '?')} over{versus}"
    if event == "game_over":
        winner = data.get("winner")
        result = f"{names[winner]} won" if winner is not None else "ended"
        return f"{title}: game over, {result}{versus}"
    if event == "invited":
        return f"{title}: you are invited to play (with {', '.join(opponents(payload))})"
    if event == "new_address":
        return f"{title}: your new reply address{versus}"
    if event == "undeliverable":
        return f"{title}: we could not reach you"
    return title


# -- building ---------------------------------------------------------------------------------


def build(payload: dict[str, Any], message_id: str) -> EmailMessage:
    if payload["event"] == "digest":
        return _build_digest(payload, message_id)
    if payload["event"] in ("login_code", "confirm_email"):  # signing in (issue #14)
        from dos_server.delivery.account_mail import build_account_mail

        return build_account_mail(payload, message_id)
    if payload["event"] == "mail_reply":  # the answer to a player's email (issue #6)
        from dos_server.delivery.mailreply import build_reply

        return build_reply(payload, message_id)
    domain = current_app.config["MAIL_DOMAIN"]
    game = payload["game_id"]
    message = new_message(
        subject(payload), message_id, payload["event"],
        thread=thread_id(game, payload["seat"], domain),
        unsubscribe=payload["unsubscribe"], unsubscribe_mailto=payload.get("unsubscribe_mailto"),
    )
    message["List-Id"] = f"DOS game {game} <{game}.games.{domain}>"
    message["X-DOS-Game"] = game
    if payload.get("reply_to"):
        message["Reply-To"] = payload["reply_to"]
    message.set_content(text_body(payload))
    message.add_alternative(html_body(payload), subtype="html")
    return message


def new_message(subject_line: str, message_id: str, event: str, *, thread: str | None = None,
                references: str | None = None, unsubscribe: str | None = None,
                unsubscribe_mailto: str | None = None) -> EmailMessage:
    """The headers every email of ours has: threading, one-click unsubscribe, the event."""
    config = current_app.config
    message = EmailMessage(policy=POLICY)
    message["Subject"] = subject_line
    message["From"] = config["MAIL_FROM"]
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = f"<{message_id}@{config['MAIL_DOMAIN']}>"
    if thread:
        message["In-Reply-To"] = thread
        message["References"] = references or thread
    if unsubscribe:
        links = [f"<{unsubscribe}>"]
        if unsubscribe_mailto:
            links.append(f"<mailto:{unsubscribe_mailto}>")
        message["List-Unsubscribe"] = ", ".join(links)
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message["Auto-Submitted"] = "auto-generated"
    message["X-Auto-Response-Suppress"] = "All"
    message["X-DOS-Event"] = event
    return message


# -- the text part (the reference) ------------------------------------------------------------


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _summary(payload: Mapping[str, Any]) -> list[str]:
    event = payload["event"]
    data = payload.get("data") or {}
    names = payload["names"]
    view = payload.get("view")
    if event == "your_turn":
        return [f"It is your turn in DOS game {game_label(payload)}."]
    if event == "reminder":
        return [f"Your turn in DOS game {game_label(payload)} is still waiting: it ends at "
                f"{_when(payload.get('deadline'))}, then the {data.get('policy') or 'timeout'} "
                "bot plays it for you."]
    if event == "timed_out":
        lines = [f"Your turn ran out of time, so the {data.get('policy', 'random')} bot played "
                 "it for you."]
        if view and view.get("current") == payload["seat"]:
            lines.append("It is your turn again: its own email has your moves.")
        return lines
    if event == "caught":
        return ["You ended a turn on two cards without calling DOS and were caught: "
                "you drew two cards."]
    if event == "round_over":
        winner = data.get("winner")
        who = names[winner] if winner is not None else "somebody"
        return [f"Round {data.get('round', '?')} is over: {who} went out "
                f"and scored {data.get('scored', 0)}."]
    if event == "game_over":
        winner = data.get("winner")
        if winner is None:
            return [f"The game is over ({data.get('reason') or 'ended early'})."]
        scores = data.get("scores") or []
        points = f" with {scores[winner]} points" if winner < len(scores) else ""
        return [f"The game is over: {'you' if winner == payload['seat'] else names[winner]} "
                f"won{points}."]
    if event == "invited":
        return ["You are invited to a game of DOS.", f"Join with: {data.get('join')}"]
    if event == "new_address":
        return ["Your seat's tokens were replaced, so replies to earlier emails of this game "
                "no longer play. This email has your new reply address: reply to it (or to "
                "any later email) to play."]
    if event == "mail_reply":
        return list(data.get("lines", []))
    if event == "undeliverable":
        return [f"We could not deliver your {data.get('channel')} notifications "
                f"({data.get('target')}): {data.get('error')}. Check the address."]
    return []


def _when(moment: str | None) -> str:
    """An ISO timestamp as people read it: 2029-01-01 10:00 UTC."""
    if not moment:
        return "?"
    return moment[:16].replace("T", " ") + " UTC"


def _others(payload: Mapping[str, Any]) -> list[str]:
    """Each opponent's hand size, marking anyone about to go out."""
    view = payload["view"]
    names = payload["names"]
    out = []
    for index, size in enumerate(view.get("hand_sizes") or []):
        if index == payload["seat"]:
            continue
        mark = "  <- close to going out" if 1 <= size <= 2 else ""
        out.append(f"  {names[index]}: {_plural(size, 'card')}{mark}")
    return out


def _scores(payload: Mapping[str, Any], scores: Sequence[int],
            points: Sequence[int] | None = None) -> list[str]:
    names = payload["names"]
    width = max(len(n) for n in names)
    head = f"  {'player':<{width}}  " + ("left in hand  " if points else "") + "total"
    lines = [head]
    for index, name in enumerate(names):
        you = "  (you)" if index == payload["seat"] else ""
        added = f"{str(points[index]) + ' pts':>12}  " if points else ""
        lines.append(f"  {name:<{width}}  {added}{scores[index]:>5}{you}")
    return lines


def _table(payload: Mapping[str, Any]) -> list[str]:
    view = payload["view"]
    names = payload["names"]
    target = (view.get("options") or {}).get("target_score")
    lines = [
        f"Round {view['round']} - {names[view['current']]} to play - version "
        f"{payload['version']}",
        "Scores: " + " · ".join(f"{names[i]} {s}" for i, s in enumerate(view["scores"]))
        + (f" (target {target})" if target else ""),
        "Center Row: " + "  ".join(f"{c['position']}:[{c['card']}]"
                                   for c in view["center_row"]),
    ]
    if view.get("hand") is not None:
        lines.append("Your hand:  " + " ".join(f"[{c}]" for c in view["hand"]))
    return lines


def text_body(payload: Mapping[str, Any]) -> str:
    event = payload["event"]
    data = payload.get("data") or {}
    view = payload.get("view")
    lines = [f"Hello {payload.get('name') or ''},", "", *_summary(payload), ""]
    over = event == "game_over" or (view is not None and view.get("phase") == "over")
    if event in ("your_turn", "reminder") and payload.get("deadline"):
        lines += [f"Your turn ends at {_when(payload['deadline'])}.", ""]
    since = payload.get("since") or []
    if since:
        lines.append("What was played, and since:" if event == "timed_out"
                     else "Since your last turn:")
        lines += [f"  {line}" for line in since]
        lines.append("")
    if event == "round_over" and data.get("scores"):
        lines += ["Scores:", *_scores(payload, data["scores"], data.get("points")), ""]
    if event == "game_over":
        if data.get("scores"):
            lines += ["Final scores:", *_scores(payload, data["scores"]), ""]
        if payload.get("record"):
            lines += ["The game's record (every shuffle can be re-derived from it):",
                      f"  {payload['record']}", ""]
        if payload.get("rematch"):
            lines += [f"Play again: {payload['rematch']}", ""]
    elif view is not None and not over:
        if view.get("hand_sizes"):
            lines += ["Opponents:", *_others(payload), ""]
        lines += [*_table(payload), ""]
    moves = payload.get("moves") or []
    my_turn = bool(moves and view is not None and view.get("current") == payload["seat"]
                   and not over)
    if my_turn:
        lines.append("Your moves:")
        lines += [f"  {m['number']:>2}. {m['action']:<12} {m['description']}" for m in moves]
        lines.append("")
        lines.append("To play one from a terminal (the number of your move in place of 1):")
        lines.append(f"  {urls.play_line(payload['game_id'], 1, payload['version'])}")
        lines.append(f"  (--at {payload['version']} makes it this list's move, or nothing if "
                     "the game has moved on)")
        lines.append("")
    if payload.get("reply_to") and not over and event != "invited":
        if my_turn:
            lines.append("Or reply to this email with a move number, a move (like: m1 R5; "
                         "end), or one of: show, moves, history, resign, help.")
        else:
            lines.append("Reply to this email with show, moves, history, resign or help.")
        lines.append("")
    if payload.get("table"):
        lines.append(("Join in the browser: " if event == "invited" else "Open your table: ")
                     + payload["table"])
    if event != "invited" and payload.get("game_id"):
        lines.append(f"See the game: dos-client show {payload['game_id']}")
    if event != "invited":
        lines.append(f"All your games: {urls.all_games_url()}")
    if payload.get("unsubscribe"):
        lines.append(f"Stop these emails: {stop_link(payload)}")
    return "\n".join(lines) + "\n"


def stop_link(payload: Mapping[str, Any]) -> str:
    """The unsubscribe link a person clicks: the page (rows queued before it existed carry
    only the API's one-click link, which shows a page in a browser too)."""
    return str(payload.get("unsubscribe_page") or payload["unsubscribe"])


# -- the HTML part ----------------------------------------------------------------------------

# Card chips: explicit colours for background, text and border, so they read the same in dark
# mode and need no images; the card's code is the chip's text.
CHIP_COLOURS = {
    "R": ("#c62828", "#ffffff"),
    "G": ("#2e7d32", "#ffffff"),
    "B": ("#1565c0", "#ffffff"),
    "Y": ("#f9d71c", "#000000"),
    "W": ("#000000", "#ffffff"),
}


def chip(code: str) -> str:
    background, colour = CHIP_COLOURS.get(code[:1].upper(), ("#eeeeee", "#000000"))
    return (f'<span class="card" style="display:inline-block;min-width:2.2em;padding:2px 4px;'
            f"margin:1px;border:1px solid #555555;border-radius:4px;background:{background};"
            f"color:{colour};font-family:ui-monospace,Menlo,Consolas,monospace;"
            f'font-weight:bold;text-align:center">{html.escape(code)}</span>')


def _chips(text: str) -> str:
    """A move's notation with its card codes as chips (``m2 B3+Y4`` -> m2 [B3]+[Y4])."""
    out = []
    for word in text.split(" "):
        cards = word.split("+")
        if all(c[:1].upper() in CHIP_COLOURS and len(c) >= 2 and "=" not in c[:2]
               for c in cards) and not word.isalpha():
            out.append("+".join(chip(c) for c in cards))
        else:
            out.append(html.escape(word))
    return " ".join(out)


def _p(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


def html_body(payload: Mapping[str, Any]) -> str:
    """The same content as :func:`text_body`, laid out: chips for cards, a table of moves."""
    event = payload["event"]
    data = payload.get("data") or {}
    view = payload.get("view")
    names = payload.get("names", [])
    parts = [f"<p>Hello {html.escape(payload.get('name') or '')},</p>"]
    parts += [_p(line) for line in _summary(payload)]
    over = event == "game_over" or (view is not None and view.get("phase") == "over")
    if event in ("your_turn", "reminder") and payload.get("deadline"):
        parts.append(_p(f"Your turn ends at {_when(payload['deadline'])}."))
    since = payload.get("since") or []
    if since:
        title = "What was played, and since:" if event == "timed_out" else \
            "Since your last turn:"
        parts.append(f"<p><b>{title}</b></p><ul>"
                     + "".join(f"<li>{html.escape(s)}</li>" for s in since) + "</ul>")
    if event in ("round_over", "game_over") and data.get("scores"):
        points = data.get("points") if event == "round_over" else None
        rows = "".join(
            f"<tr><td>{html.escape(name)}{' (you)' if i == payload['seat'] else ''}</td>"
            + (f"<td align=\"right\">{points[i]} pts</td>" if points else "")
            + f"<td align=\"right\">{data['scores'][i]}</td></tr>"
            for i, name in enumerate(names))
        head = "<th>player</th>" + ("<th>left in hand</th>" if points else "") + "<th>total</th>"
        parts.append(f"<table class=\"scores\" cellpadding=\"4\"><tr>{head}</tr>{rows}</table>")
    if event == "game_over" and payload.get("record"):
        parts.append(f"<p>The game's record: <a href=\"{html.escape(payload['record'])}\">"
                     f"{html.escape(payload['record'])}</a></p>")
    if view is not None and not over:
        if view.get("hand_sizes"):
            others = [
                f"{html.escape(names[i])}: {_plural(size, 'card')}"
                + (" <b>(close to going out)</b>" if 1 <= size <= 2 else "")
                for i, size in enumerate(view["hand_sizes"]) if i != payload["seat"]]
            parts.append("<p><b>Opponents:</b> " + " · ".join(others) + "</p>")
        parts.append(_p(_table(payload)[0]) + _p(_table(payload)[1]))
        parts.append("<p><b>Center Row:</b> " + " ".join(
            f"{c['position']}:{chip(c['card'])}" for c in view["center_row"]) + "</p>")
        if view.get("hand") is not None:
            parts.append("<p><b>Your hand:</b> " + " ".join(chip(c) for c in view["hand"])
                         + "</p>")
    moves = payload.get("moves") or []
    if moves and view is not None and view.get("current") == payload["seat"] and not over:
        rows = "".join(
            f"<tr><td align=\"right\">{m['number']}</td><td class=\"move\" "
            f"data-move=\"{html.escape(m['action'])}\">{_chips(m['action'])}</td>"
            f"<td>{html.escape(m['description'])}</td></tr>" for m in moves)
        parts.append("<p><b>Your moves:</b></p><table class=\"moves\" cellpadding=\"3\">"
                     f"<tr><th>#</th><th>move</th><th>what it does</th></tr>{rows}</table>")
        parts.append("<p>To play one from a terminal (the number of your move in place of 1):"
                     f"<br><code>{html.escape(urls.play_line(payload['game_id'], 1, payload['version']))}"
                     "</code></p>")
        if payload.get("reply_to"):
            parts.append(_p("Or reply to this email with a move number, a move (like: m1 R5; "
                            "end), or one of: show, moves, history, resign, help."))
    footer = []
    if payload.get("table"):
        footer.append(f"<a href=\"{html.escape(payload['table'])}\">"
                      + ("Join in the browser" if event == "invited" else "Open your table")
                      + "</a>")
    if event != "invited" and payload.get("game_id"):
        footer.append(f"See the game: <code>dos-client show {html.escape(payload['game_id'])}"
                      "</code>")
    if payload.get("unsubscribe"):
        footer.append(f"<a href=\"{html.escape(stop_link(payload))}\">Stop these emails</a>")
    if footer:
        parts.append("<p style=\"font-size:smaller\">" + " · ".join(footer) + "</p>")
    return ("<!doctype html><html><head><meta charset=\"utf-8\">"
            "<meta name=\"color-scheme\" content=\"light dark\"></head>"
            "<body style=\"font-family:sans-serif\">" + "".join(parts) + "</body></html>")


def pre_html(text: str, footer: str = "") -> str:
    """An HTML part for plain messages (help, errors): the text, monospaced."""
    return ("<!doctype html><html><body>"
            f"<pre style=\"font-family: ui-monospace, monospace\">{html.escape(text)}</pre>"
            f"{footer}</body></html>")


# -- sending ----------------------------------------------------------------------------------


def send(target: str, payload: dict[str, Any], message_id: str,
         timeout: float | None = None) -> None:
    """Deliver one email over SMTP, or (no SMTP_HOST) to the log and the instance folder.

    ``timeout``: at most this many seconds per SMTP operation (the worker keeps a send
    inside its lease), besides ``SMTP_TIMEOUT``.
    """
    config = current_app.config
    message = build(payload, message_id)
    message["To"] = target
    host = config.get("SMTP_HOST")
    if not host:
        folder = Path(current_app.instance_path) / "outbox"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{message_id}.eml").write_bytes(bytes(message))
        log.info("email written to %s (no SMTP_HOST set): %s to %s",
                 folder, message["Subject"], target)
        return
    limit = float(config["SMTP_TIMEOUT"])
    with connect(timeout=limit if timeout is None else min(limit, timeout)) as smtp:
        try:
            smtp.send_message(message)
        except smtplib.SMTPRecipientsRefused as error:
            raise DeliveryError(f"the mail server refused {target}: {error}",
                                permanent=True) from None
        except (OSError, smtplib.SMTPException) as error:
            raise DeliveryError(f"SMTP {host}:{config['SMTP_PORT']}: {error}") from None


class connect:  # noqa: N801 - used as a context manager like smtplib.SMTP
    """An SMTP session as configured (security, login); failures become DeliveryError."""

    def __init__(self, timeout: float | None = None) -> None:
        self.config = current_app.config
        self.timeout = float(self.config["SMTP_TIMEOUT"]) if timeout is None else timeout
        self.smtp: smtplib.SMTP | None = None

    def _where(self) -> str:
        return f"SMTP {self.config['SMTP_HOST']}:{self.config['SMTP_PORT']}"

    def __enter__(self) -> smtplib.SMTP:
        config = self.config
        host, port = str(config["SMTP_HOST"]), int(config["SMTP_PORT"])
        security = str(config["SMTP_SECURITY"]).lower()
        try:
            # SMTP_CA_FILE: trust a private CA (a self-hosted relay) besides the system's.
            context = ssl.create_default_context(cafile=config.get("SMTP_CA_FILE") or None)
            if security == "ssl":
                self.smtp = smtplib.SMTP_SSL(host, port, timeout=self.timeout, context=context)
            else:
                self.smtp = smtplib.SMTP(host, port, timeout=self.timeout)
            if security == "starttls":
                self.smtp.ehlo()
                if not self.smtp.has_extn("starttls"):
                    raise DeliveryError(
                        f"{self._where()} offers no STARTTLS, and DOS_SMTP_SECURITY is "
                        "starttls: for a relay on this host set DOS_SMTP_SECURITY=none")
                self.smtp.starttls(context=context)
            if config.get("SMTP_USERNAME"):
                self.smtp.login(config["SMTP_USERNAME"], config.get("SMTP_PASSWORD") or "")
        except DeliveryError:
            self._close()
            raise
        except (OSError, smtplib.SMTPException) as error:
            self._close()
            raise DeliveryError(f"{self._where()}: {error}") from None
        return self.smtp

    def _close(self) -> None:
        if self.smtp is not None:
            try:
                self.smtp.quit()
            except (OSError, smtplib.SMTPException):
                self.smtp.close()
            self.smtp = None

    def __exit__(self, *exc: object) -> None:
        self._close()


def _build_digest(payload: dict[str, Any], message_id: str) -> EmailMessage:
    """The daily digest: every game waiting on this address, one thread per address."""
    games = payload["games"]
    count = len(games)
    message = new_message(
        f"DOS: {count} game{'s' if count != 1 else ''} waiting on you", message_id, "digest",
        thread=f"<digest.{payload['thread']}@{current_app.config['MAIL_DOMAIN']}>",
        unsubscribe=payload["unsubscribe"], unsubscribe_mailto=payload.get("unsubscribe_mailto"),
    )
    lines = ["These DOS games are waiting on you:", ""]
    for game in games:
        deadline = f" (your turn ends at {_when(game['deadline'])})" if game.get("deadline") \
            else ""
        versus = f" vs {', '.join(game['opponents'])}" if game.get("opponents") else ""
        label = game_label({"game_id": game["id"], "game_title": game.get("game_title")})
        lines += [f"- game {label} as {game['name']}{versus}{deadline}",
                  *([f"  open your table: {game['table']}"] if game.get("table") else []),
                  f"  or see your moves: dos-client moves {game['id']}",
                  f"  then play one:  {game['line']}",
                  f"  stop emails for this game: {stop_link(game)}", ""]
    lines.append(f"All your games (sign in with this address): {urls.all_games_url()}")
    text = "\n".join(lines) + "\n"
    message.set_content(text)
    message.add_alternative(pre_html(text), subtype="html")
    return message
