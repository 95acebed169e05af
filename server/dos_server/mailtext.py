"""Reading the text of an email reply: pure parsing, no database, no Flask.

What a player wrote is found the way a person would find it: the text/plain part (or the HTML
part as text, without what it quotes), charsets and transfer encodings decoded, and then the
non-empty lines outside the quotes (above, below or between them), up to the signature
("-- "), the device footer ("Sent from my iPhone") or a client's original-message block.
:mod:`dos_server.services.inbound` decides what those lines mean for a game; this module only
reads them.

The behaviour is pinned by ``tests/mail/test_mailtext.py`` over the real-shaped messages in
``tests/data/mail/``.
"""

from __future__ import annotations

import email.policy
import re
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import parseaddr
from html.parser import HTMLParser

MAX_COMMAND_LINES = 20


# -- headers ----------------------------------------------------------------------------------


def message_id(raw: bytes) -> str:
    """The Message-ID of a raw message, white space folded; "" when it has none we can read."""
    try:
        headers = BytesParser(policy=email.policy.compat32).parsebytes(raw, headersonly=True)
        value = headers.get("Message-ID")
    except Exception:  # a header block we cannot read has no usable Message-ID
        return ""
    return " ".join(str(value or "").split())[:998]


def header(message: Message, name: str) -> str:
    """A header's value, stripped; "" when absent or unreadable."""
    try:
        value = message.get(name)
    except Exception:  # a header the parser cannot make sense of
        return ""
    return str(value or "").strip()


def address(value: str) -> str | None:
    """The lower-case address in a From-style header value, or None if there is none."""
    _, found = parseaddr(value)
    found = found.strip().lower()
    return found if "@" in found and "\n" not in found else None


_AUTO_SUBJECTS = re.compile(
    r"^(automatic reply|auto(matic)?[- ]?reply|out of office|réponse automatique|"
    r"automatische antwort|respuesta automática|risposta automatica)\b", re.I)
_DAEMONS = ("mailer-daemon", "postmaster")


def is_automatic(message: Message, mail_from: str | None, sender: str | None) -> bool:
    """Mail that must never be answered: auto-replies, bounces (DSNs), list traffic, our own
    mail. RFC 3834 ``Auto-Submitted`` other than ``no``; ``X-Autoreply``/``X-Autorespond``;
    ``Precedence: auto_reply|bulk|junk|list``; Exchange's out-of-office shapes; delivery
    reports (``multipart/report``, a null or MAILER-DAEMON/postmaster sender)."""
    if header(message, "Auto-Submitted").split(";")[0].strip().lower() not in ("", "no"):
        return True
    if header(message, "X-Autoreply") or header(message, "X-Autorespond"):
        return True
    if header(message, "Precedence").lower() in ("auto_reply", "bulk", "junk", "list"):
        return True
    if header(message, "X-MS-Exchange-Inbox-Rules-Loop"):
        return True  # Exchange: a message an inbox rule (out of office) sent
    if header(message, "X-Auto-Response-Suppress") and _AUTO_SUBJECTS.match(
            header(message, "Subject")):
        return True  # Exchange/Outlook: "Automatic reply: ..."
    if message.get_content_type() == "multipart/report":
        return True  # a delivery status notification (RFC 3464) or a read receipt
    if header(message, "X-DOS-Event") or header(message, "List-Id"):
        return True  # our own email coming back, or a mailing list
    if mail_from is not None and mail_from.strip() in ("", "<>"):
        return True  # a bounce (null envelope sender)
    senders = [(sender or "").split("@")[0], (mail_from or "").strip("<> ").split("@")[0]]
    return any(local.lower() in _DAEMONS for local in senders)


# -- body -------------------------------------------------------------------------------------


def body_text(message: Message) -> str:
    """The text/plain part, or the HTML part as text; charsets and transfer encodings decoded."""
    assert isinstance(message, EmailMessage)
    part = message.get_body(preferencelist=("plain",))
    is_html = False
    if part is None:
        part = message.get_body(preferencelist=("html",))
        is_html = True
    if part is None:
        return ""
    try:
        text = part.get_content()
    except (LookupError, UnicodeError, KeyError):  # unknown charset: best effort
        payload = part.get_payload(decode=True)
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(text, str):
        return ""
    return html_to_text(text) if is_html else text


class _HtmlText(HTMLParser):
    BLOCK = frozenset({"p", "div", "br", "tr", "li", "pre", "table", "hr", "h1", "h2", "h3",
                       "h4", "h5", "h6", "ul", "ol"})
    SKIP = frozenset({"style", "script", "head", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.quoted = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag == "blockquote":
            if not self.quoted:
                self.parts.append("\n> (quoted)\n")  # the command reader stops here
            self.quoted += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag == "blockquote":
            self.quoted = max(0, self.quoted - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping and not self.quoted:
            self.parts.append(re.sub(r"[ \t\r\n]+", " ", data))


def html_to_text(markup: str) -> str:
    """HTML as plain lines; blockquotes become one "> (quoted)" line, styles and scripts go."""
    parser = _HtmlText()
    parser.feed(markup)
    parser.close()
    return "".join(parser.parts)


# -- the lines the player wrote ---------------------------------------------------------------


# Where the player's own text ends: a client's "original message" block, a forward, a device
# footer. Everything below is the message answered (Outlook quotes it without "> ").
_ENDS = [
    re.compile(r"^-{2,}\s*original message\s*-{2,}$", re.I),
    re.compile(r"^-{2,}\s*forwarded message\s*-{2,}$", re.I),
    re.compile(r"^_{8,}$"),
    re.compile(r"^sent from my\b", re.I),
    re.compile(r"^(sent|envoyé|gesendet) (from|de|von) ", re.I),
    re.compile(r"^get outlook for\b", re.I),
    re.compile(r"^ສົ່ງຈາກ"),  # Lao: "sent from" (a phone's footer)
]
# An attribution line ("On Mon, 1 Jan 2029, DOS <...> wrote:"): skipped, the reply may go on
# below or between the quoted blocks.
_ATTRIBUTION = re.compile(
    r"^(on|am|le|el|il|op)\s.*\b(wrote|schrieb|écrit|escribió|scritto|geschreven)\s*:?$", re.I)
_ON_START = re.compile(r"^(on|am|le|el|il|op)\s", re.I)
_WROTE_END = re.compile(r"\b(wrote|schrieb|écrit|escribió|scritto|geschreven)\s*:?$", re.I)
_WROTE_ANY = re.compile(r"\b(wrote|schrieb|écrit|escribió|scritto|geschreven)\b.*:$", re.I)
# A Lao client's attribution: "ເມື່ອ ວັນຈັນ 1 ມັງກອນ 2029, DOS by mail <...> ຂຽນວ່າ:" (Lao marks
# are not word characters, so \b cannot find the verb: it is matched at the line's end).
_LAO_WROTE = re.compile(r"(ຂຽນວ່າ|ໄດ້ຂຽນ|ຂຽນ)\s*:?$")
_FROM = re.compile(r"^\*?(from|de|von|van|da)\*?\s*:", re.I)
_SENT = re.compile(r"^\*?(sent|date|envoyé|gesendet|enviado|verzonden|data|datum)\*?\s*:", re.I)


def command_lines(text: str) -> list[str]:
    """The non-empty lines the player wrote: top-posted, bottom-posted or between quotes.

    Quoted lines ("> ...") and attribution lines ("On ... wrote:", also wrapped over two
    lines) are skipped; the reading stops at the signature ("-- "), a device footer ("Sent
    from my iPhone") and a client's block of the original message (Outlook's "From:/Sent:"
    or "-----Original Message-----"), below which the answered email follows unquoted.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    skip_to = -1
    for index, raw in enumerate(lines):
        if index <= skip_to:
            continue
        line = raw.strip()
        if raw.rstrip() == "--" or any(end.match(line) for end in _ENDS):
            break
        following = [x.strip() for x in lines[index + 1:index + 5] if x.strip()]
        if _FROM.match(line) and any(_SENT.match(x) for x in following[:3]):
            break  # Outlook's "From: ... / Sent: ... / To: ... / Subject: ..." block
        if line.startswith(">") or _ATTRIBUTION.match(line):
            continue
        if _WROTE_ANY.search(line) and following and following[0].startswith(">"):
            continue  # "Ann wrote on Monday:" right above a quote
        if _LAO_WROTE.search(line) and ("@" in line or (following
                                                        and following[0].startswith(">"))):
            continue  # a Lao client's attribution line
        if _ON_START.match(line) and following and _WROTE_END.search(following[0]):
            # "On Mon, 1 Jan 2029 at 10:00, DOS <...>" wrapped before "wrote:"
            skip_to = next(i for i in range(index + 1, len(lines))
                           if lines[i].strip() == following[0])
            continue
        if line:
            out.append(line)
            if len(out) >= MAX_COMMAND_LINES:
                break
    return out


_NUMBER = re.compile(r"(?:move|play|number|no\.?)?\s*#?\s*(\d{1,6})[.!)]?", re.I)


def move_number(line: str) -> int | None:
    """The number in a line that only chooses a listed move ("3", "#3", "move 3."), else None."""
    found = _NUMBER.fullmatch(line)
    return int(found.group(1)) if found else None


__all__ = ["MAX_COMMAND_LINES", "address", "body_text", "command_lines", "header",
           "html_to_text", "is_automatic", "message_id",
           "move_number"]
