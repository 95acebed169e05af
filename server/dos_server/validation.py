"""What a stored name or email address may be: one check, used by the schemas and services.

Both functions return the value as it is stored, or raise :class:`ValueError` with a message
a person can act on, in their language (``_()``). Nothing here touches the network (no DNS
lookups).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from email.errors import HeaderParseError, MessageDefect
from email.headerregistry import Address

from dos_server.services.words import _

NAME_MAX = 40  # seats.name is String(40)
TITLE_MAX = 80  # games.title is String(80)
EMAIL_MAX = 254  # RFC 5321's limit on a forward path, less the angle brackets

# Control, format (e.g. zero-width or bidi overrides), surrogate, private-use and unassigned
# code points: invisible or unprintable, so two different names could look the same.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


def _clean_line(raw: str, title: bool) -> str:
    """One line of text a person typed: NFC, trimmed, inner runs of spaces made one (Unicode
    spaces too), printable, 1 to 40 characters for a name, 1 to 80 for a game's ``title``.
    Errors say which it is."""
    text = " ".join(unicodedata.normalize("NFC", raw).split())
    if not text:
        raise ValueError(_("a game title cannot be empty or only spaces; leave it out instead")
                         if title else _("a name cannot be empty or only spaces"))
    bad = [ch for ch in text if unicodedata.category(ch) in _REFUSED_CATEGORIES]
    if bad:
        found = _codepoint(bad[0])
        raise ValueError(
            _("a game title cannot contain invisible or control characters (found %(found)s)",
              found=found) if title
            else _("a name cannot contain invisible or control characters (found %(found)s)",
                   found=found))
    limit = TITLE_MAX if title else NAME_MAX
    if len(text) > limit:
        raise ValueError(
            _("a game title has at most %(most)s characters (this one has %(length)s)",
              most=limit, length=len(text)) if title
            else _("a name has at most %(most)s characters (this one has %(length)s)",
                   most=limit, length=len(text)))
    return text


def clean_name(raw: str) -> str:
    """A player's name: a clean line of 1-40 characters, without ';'."""
    name = _clean_line(raw, title=False)
    if ";" in name:
        raise ValueError(_("a name cannot contain ';' (it separates actions in a turn)"))
    return name


PLAYER_NAME_MIN, PLAYER_NAME_MAX = 3, 40  # identities.player_name is String(40)
_PLAYER_NAME_MARKS = "-_."


def clean_player_name(raw: str) -> str:
    """The name an identity's rating goes by (``/players/<name>``): NFC, 3 to 40 letters,
    digits (any script: a letter's vowel signs too) and ``-_.``, beginning with a letter or
    digit. No spaces: it is a part of a URL."""
    name = unicodedata.normalize("NFC", raw.strip())
    if not PLAYER_NAME_MIN <= len(name) <= PLAYER_NAME_MAX:
        raise ValueError(_("a player name has %(least)s to %(most)s characters (this one has "
                           "%(length)s)", least=PLAYER_NAME_MIN, most=PLAYER_NAME_MAX,
                           length=len(name)))
    allowed = all(ch.isalnum() or ch in _PLAYER_NAME_MARKS
                  or (unicodedata.category(ch).startswith("M") and index > 0)
                  for index, ch in enumerate(name))
    if not allowed or not name[0].isalnum():
        raise ValueError(_("a player name is letters and digits, and may hold - _ or . (no "
                           "spaces); it begins with a letter or a digit"))
    return name


def clean_title(raw: str) -> str:
    """A game's title (shown in subjects and lists): a clean line of 1-80 characters."""
    return _clean_line(raw, title=True)


def name_key(name: str) -> str:
    """What two names must not share within one game (case and spacing do not count)."""
    return clean_name(name).casefold()


def clean_email(raw: str) -> str:
    """An email address (RFC 5322 addr-spec, ASCII local part), as stored and delivered to.

    An internationalized domain is stored in its ASCII (``xn--``) form, which every mail
    server accepts. Refused: control and invisible characters, quoted local parts, more than
    254 characters, anything ``email.headerregistry`` finds a defect in.
    """
    bad = [ch for ch in raw if unicodedata.category(ch) in _REFUSED_CATEGORIES
           or ch.isspace()]
    if bad:
        raise ValueError(_("an email address cannot contain spaces, control or invisible "
                           "characters (found %(found)s)", found=_codepoint(bad[0])))
    local, at, domain = raw.rpartition("@")
    if not at or not local or not domain:
        raise ValueError(_("not an email address: write it as name@example.org"))
    if local.startswith('"'):
        raise ValueError(_("quoted email addresses are not supported; use a plain "
                           "name@domain"))
    try:
        domain = _ascii_domain(domain)
        address = Address(addr_spec=f"{local}@{domain}")
    except (ValueError, IndexError, HeaderParseError, MessageDefect) as error:
        raise ValueError(_("not a valid email address (%(reason)s)",
                           reason=_reason(error))) from None
    if address.username != local or address.domain != domain:
        raise ValueError(_("not a valid email address: write it as name@example.org"))
    stored = f"{local}@{domain}"
    if len(stored) > EMAIL_MAX:
        raise ValueError(_("an email address has at most %(most)s characters", most=EMAIL_MAX))
    return stored


def email_key(address: str) -> str:
    """How addresses are compared: the stored form (see :func:`clean_email`; an
    internationalized domain in its ``xn--`` form), lowercased whole.

    The domain is case-insensitive by definition. The local part is compared
    case-insensitively too: RFC 5321 lets a server treat ``Ann`` and ``ann`` as different
    mailboxes, but no common one does, and people type their address in either case. No
    provider-specific rules (Gmail's dots or ``+tags``): ``a.nn@`` and ``ann@`` stay apart.
    ``address`` must already be clean (as stored).
    """
    return address.lower()


def _ascii_domain(domain: str) -> str:
    if domain.startswith("[") and domain.endswith("]"):  # an address literal
        literal = domain[1:-1]
        ipaddress.ip_address(literal[5:] if literal.lower().startswith("ipv6:") else literal)
        return domain
    try:
        ascii_domain = domain.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(_("%(domain)s is not a valid domain name",
                           domain=repr(domain))) from None
    if not all(_LABEL.match(label) for label in ascii_domain.split(".")):
        raise ValueError(_("%(domain)s is not a valid domain name", domain=repr(domain)))
    return ascii_domain


def _reason(error: Exception) -> str:
    text = str(error).strip().rstrip(")")
    return text or type(error).__name__


def _codepoint(ch: str) -> str:
    return f"U+{ord(ch):04X}"


__all__ = ["EMAIL_MAX", "NAME_MAX", "clean_email", "clean_name", "email_key", "name_key"]
