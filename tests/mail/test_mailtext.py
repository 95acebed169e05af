"""Reading what a player wrote (dos_server.mailtext): pure, no database, no Flask.

A corpus of real-shaped messages in tests/data/mail/ (Gmail, Outlook, Apple Mail, Thunderbird,
Mutt; quoted-printable, base64, 8bit; UTF-8, windows-1252, iso-8859-1, an unknown charset)
pins the lines taken as commands: top-posted, bottom-posted and interleaved replies.
"""

from __future__ import annotations

import ast
import email
import email.policy
import sys
from email.message import EmailMessage
from pathlib import Path

import pytest

from dos_server import mailtext
from dos_server.mailtext import (
    MAX_COMMAND_LINES,
    address,
    body_text,
    command_lines,
    header,
    html_to_text,
    is_automatic,
    message_id,
    move_number,
)

CORPUS = Path(__file__).resolve().parents[1] / "data" / "mail"


def _raw(name: str) -> bytes:
    return (CORPUS / name).read_bytes()


def _message(name: str) -> EmailMessage:
    message = email.message_from_bytes(_raw(name), policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


CORPUS_COMMANDS = {
    # Gmail top post, multipart/alternative: the plain part, up to "On ... wrote:"
    "gmail_top_post.eml": ["3"],
    # the attribution wrapped before "wrote:" (a long sender) still stops the reading
    "gmail_wrapped_attribution.eml": ["m1 R5", "end"],
    # Outlook desktop, windows-1252 quoted-printable, "-----Original Message-----"
    "outlook_original_message.eml": ["draw", "That\u2019s all \u2013 Ann"],
    # Outlook's "From: / Sent: / To: / Subject:" header block without a rule above it
    "outlook_from_sent.eml": ["m2 Y4"],
    # Apple Mail on a phone: HTML only, "Sent from my iPhone", blockquote type=cite
    "apple_mail_html_only.eml": ["m1 R5"],
    # Thunderbird, UTF-8 quoted-printable with soft line breaks, then a "-- " signature
    "thunderbird_qp_signature.eml": [
        "m1 R5; m2 B3+Y4; end",
        "Takk for spillet, dette var en veldig lang linje som blir brutt av quoted-printable "
        "koding",
    ],
    # base64 UTF-8 from a French client: "Le ... a écrit :"
    "base64_french.eml": ["show"],
    # Mutt, iso-8859-1 8bit: the second line is kept (the server ignores what is not a move)
    "latin1_8bit.eml": ["m1 R5", "Merci, H\u00e9l\u00e8ne"],
    # "> draw" in the quote is not a command; what is written below the quote is
    "quoted_trap.eml": ["3", "cheers"],
    # bottom-posting: the command below the quote (which holds "draw" and numbers)
    "bottom_post.eml": ["2"],
    # interleaved: commands between the quoted blocks, the attribution skipped
    "interleaved.eml": ["m1 R5", "end"],
    # a bottom post whose quote holds a number and "draw", then a signature with a number
    "bottom_post_trap.eml": ["show"],
    # a charset Python does not know: the bytes are read as UTF-8, best effort
    "unknown_charset.eml": ["m1 R5", "Gr\u00fc\u00dfe"],
    # an auto-reply still has lines; it is is_automatic that keeps it from being answered
    "auto_reply.eml": ["I am away until 8 January 2029 with limited access to email."],
}


def test_the_corpus_is_all_listed() -> None:
    assert sorted(p.name for p in CORPUS.glob("*.eml")) == sorted(CORPUS_COMMANDS)


@pytest.mark.parametrize(("name", "expected"), sorted(CORPUS_COMMANDS.items()))
def test_command_lines_of_real_shaped_messages(name: str, expected: list[str]) -> None:
    assert command_lines(body_text(_message(name))) == expected


@pytest.mark.parametrize(("name", "expected"), [
    ("gmail_top_post.eml", ["3"]),
    ("outlook_from_sent.eml", ["m2 Y4"]),
])
def test_the_html_alternative_gives_the_same_commands(name: str, expected: list[str]) -> None:
    html = _message(name).get_body(preferencelist=("html",))
    assert html is not None
    assert command_lines(html_to_text(html.get_content())) == expected


def test_body_text_prefers_plain_and_decodes_transfer_encodings() -> None:
    gmail = body_text(_message("gmail_top_post.eml"))
    assert gmail.splitlines()[:3] == ["3", "", "On Mon, 1 Jan 2029 at 10:00, DOS by mail "
                                               "<dos@play.test> wrote:"]
    assert "gmail_quote" not in gmail
    assert "\u2019" in body_text(_message("outlook_original_message.eml"))  # cp1252 0x92
    assert "Bj\u00f8rn \u00d8deg\u00e5rd" in body_text(_message("thunderbird_qp_signature.eml"))
    assert "a \u00e9crit :" in body_text(_message("base64_french.eml"))


def test_body_text_of_html_only_drops_styles_and_quotes() -> None:
    text = body_text(_message("apple_mail_html_only.eml"))
    assert "m1 R5" in text
    assert "> (quoted)" in text
    assert "Your moves" not in text
    assert "<" not in text


def test_body_text_without_a_text_part_is_empty() -> None:
    message = EmailMessage()
    message.set_content(b"\x89PNG", maintype="image", subtype="png")
    assert body_text(message) == ""


def test_message_id_headers_and_sender() -> None:
    raw = _raw("outlook_original_message.eml")
    assert message_id(raw) == "<DB7PR01MB1234@DB7PR01MB1234.eurprd01.prod.outlook.com>"
    assert message_id(b"Subject: no id\r\n\r\nbody") == ""
    assert message_id(b"Message-ID:  <a@b>\r\n  folded\r\n\r\n") == "<a@b> folded"
    message = _message("thunderbird_qp_signature.eml")
    assert header(message, "X-Missing") == ""
    assert address(header(message, "From")) == "bjorn@example.org"
    assert address("Ann <ANN@Example.ORG>") == "ann@example.org"
    assert address("no address here") is None
    assert address("") is None


def test_is_automatic() -> None:
    assert is_automatic(_message("auto_reply.eml"), None, "ann@example.org")
    human = _message("gmail_top_post.eml")
    assert not is_automatic(human, "bjorn@example.org", "bjorn@example.org")
    assert is_automatic(human, "<>", "bjorn@example.org")  # a bounce: null envelope sender
    assert is_automatic(human, "", "bjorn@example.org")
    assert is_automatic(human, None, "mailer-daemon@example.org")
    assert is_automatic(human, None, "postmaster@example.org")
    for name, value in [("Auto-Submitted", "auto-generated"), ("Precedence", "bulk"),
                        ("Precedence", "list"), ("List-Id", "<dos.example.org>"),
                        ("X-DOS-Event", "your_turn")]:
        marked = _message("gmail_top_post.eml")
        marked[name] = value
        assert is_automatic(marked, None, "bjorn@example.org"), (name, value)
    not_auto = _message("gmail_top_post.eml")
    not_auto["Auto-Submitted"] = "no"
    assert not is_automatic(not_auto, None, "bjorn@example.org")


@pytest.mark.parametrize(("text", "expected"), [
    ("3", 3), ("#3", 3), ("move 3", 3), ("move #12.", 12), ("no. 4", 4), ("play 2!", 2),
    ("number 7)", 7), ("0", 0), ("3 please", None), ("m1 R5", None), ("1234567", None), ("", None),
])
def test_move_number(text: str, expected: int | None) -> None:
    assert move_number(text) == expected


def test_command_lines_stops_at_the_signature_and_the_line_limit() -> None:
    assert command_lines("m1 R5\n--\nAnn") == ["m1 R5"]
    assert command_lines("m1 R5\n-- \nAnn") == ["m1 R5"]
    assert command_lines("m1 R5\n---\nAnn") == ["m1 R5", "---", "Ann"]
    many = "\n".join(f"line {i}" for i in range(MAX_COMMAND_LINES + 5))
    assert len(command_lines(many)) == MAX_COMMAND_LINES
    assert command_lines("") == []
    assert command_lines("\r\n\r\n  \r\n") == []


@pytest.mark.parametrize("stop", [
    "---------- Forwarded message ---------",
    "________________________________",
    "Get Outlook for iOS",
    "Envoyé de mon iPhone",
    "Gesendet von meinem iPhone",
    "*From:* DOS by mail\n*Sent:* Monday",
])
def test_command_lines_stop_lines(stop: str) -> None:
    assert command_lines(f"draw\n{stop}\nmore") == ["draw"]


@pytest.mark.parametrize("attribution", [
    "Am 01.01.2029 um 10:00 schrieb:",
    "On Mon, 1 Jan 2029 at 10:00, DOS by mail <dos@play.test> wrote:",
    "On Mon, 1 Jan 2029 at 10:00, DOS by mail <dos@play.test>\nwrote:",
    "Le lun. 1 janv. 2029 à 10:00, DOS <dos@play.test> a écrit :",
])
def test_attribution_lines_are_skipped_not_taken(attribution: str) -> None:
    assert command_lines(f"{attribution}\n> 1. draw\n> 2. m1 R5\n3\n> more") == ["3"]


def test_the_module_needs_only_the_standard_library() -> None:
    tree = ast.parse(Path(mailtext.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= sys.stdlib_module_names | {"__future__"}


def test_inbound_still_offers_the_readers() -> None:
    from dos_server.services import inbound

    assert inbound.command_lines is command_lines
    assert inbound.html_to_text is html_to_text
    assert inbound.body_text is body_text
