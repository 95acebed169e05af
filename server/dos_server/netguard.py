"""Which webhook URLs we may call: http(s) to public internet addresses only (SSRF guard).

A webhook URL is chosen by a player, and the worker POSTs to it from inside the operator's
network; without a guard, ``http://169.254.169.254/`` (cloud metadata), ``http://127.0.0.1:5432``
or ``http://10.0.0.7/admin`` would be reachable through us. So a URL is refused when it is not
http(s), carries credentials, or its host is, or resolves to, any address that is not globally
routable (loopback, private, link-local, CGNAT, multicast, reserved, unspecified, and IPv6 forms
that embed such an IPv4 address). ``WEBHOOK_ALLOW_PRIVATE`` (``DOS_WEBHOOK_ALLOW_PRIVATE=true``)
lifts the address rule for development and tests.

The check runs when the URL is set (:func:`check_webhook_url`) and again at delivery, where
``delivery.webhooks.PinnedSession`` resolves the name once, checks every address
(:func:`resolve_public`) and connects to a checked one, keeping the name for ``Host`` and TLS
(SNI and certificate), so a DNS answer that changes between the check and the connect cannot
bypass it. This module needs only the standard library: the web process checks URLs, and only
the notification worker, which delivers, imports requests and urllib3.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnsafeUrl(ValueError):
    """This URL may not be called; the message says why, for a person to act on."""


def forbidden_reason(address: IPAddress) -> str | None:
    """Why we may not connect to ``address`` (None: a public unicast address)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "an IPv4-mapped IPv6 address"
        embedded = address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None and forbidden_reason(embedded):
            return f"an IPv6 address that embeds {embedded}"
        if address.is_site_local:
            return "a site-local address"
    checks = (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address (cloud metadata lives there)"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private-network address"),
        ("is_reserved", "a reserved address"),
    )
    for attribute, reason in checks:
        if getattr(address, attribute):
            return reason
    if address in _CGNAT:
        return "a shared (CGNAT) address"
    if not address.is_global:
        return "not a public internet address"
    return None


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an IP address if it is one, in any spelling a resolver accepts.

    Besides the dotted quad and IPv6, C resolvers read ``2130706433``, ``0x7f000001``,
    ``0177.0.0.1`` and ``127.1`` as 127.0.0.1; ``inet_aton`` is that reading.
    """
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefxABCDEFX." for c in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def split_url(url: str) -> tuple[str, int]:
    """The host and port of an acceptable webhook URL (checks all but the addresses)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UnsafeUrl(f"not a valid URL ({error})") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl("only http and https URLs can receive webhooks")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UnsafeUrl("the URL must not contain a user name or password; authenticate "
                        "deliveries with the webhook signature instead")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UnsafeUrl("the URL has no host")
    return host, port or (443 if parts.scheme == "https" else 80)


def resolve_public(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to, if all are public; else :class:`UnsafeUrl`."""
    literal = literal_address(host.strip("[]").split("%")[0])
    if literal is not None:
        found = [literal]
    else:
        try:
            answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as error:
            raise UnsafeUrl(f"the host name {host!r} does not resolve ({error}); use a name "
                            "with a public DNS record") from None
        found = []
        for _family, _type, _proto, _name, sockaddr in answers:
            address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
            if address not in found:
                found.append(address)
        if not found:
            raise UnsafeUrl(f"the host name {host!r} has no address")
    for address in found:
        reason = forbidden_reason(address)
        if reason:
            shown = host if literal is not None else f"{host} resolves to {address}, which"
            raise UnsafeUrl(f"{shown} is {reason}; webhooks go only to public internet "
                            "addresses")
    return found


def check_webhook_url(url: str, allow_private: bool) -> None:
    """Refuse (:class:`UnsafeUrl`) a URL the worker may not call."""
    host, port = split_url(url)
    if not allow_private:
        resolve_public(host, port)
