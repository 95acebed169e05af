"""What this computer says about its person: the IANA time zone and the language, sent when
joining a game so that emails and pages read in them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

_ZONEINFO = "zoneinfo/"


def time_zone(environ: Mapping[str, str] | None = None,
              localtime: Path = Path("/etc/localtime")) -> str | None:
    """The system's IANA zone: from TZ (``Asia/Vientiane``, ``:Asia/Vientiane``), else the
    /etc/localtime link's target; None when neither names one this Python knows."""
    import zoneinfo

    known = zoneinfo.available_timezones()
    environ = os.environ if environ is None else environ
    name = environ.get("TZ", "").lstrip(":")
    if name in known:
        return name
    if name:
        return None  # a POSIX rule (EST5EDT...) or a file path: no IANA name to send
    try:
        target = str(localtime.resolve(strict=True)) if localtime.is_symlink() else ""
    except OSError:
        return None
    _, found, name = target.rpartition(_ZONEINFO)
    return name if found and name in known else None


def language(environ: Mapping[str, str] | None = None) -> str:
    """The person's language, as ``dos_client.i18n`` chooses it from LANGUAGE, LC_ALL,
    LC_MESSAGES and LANG (``lo_LA.UTF-8`` is lo; English for a language the client does not
    speak), whatever --json makes the client itself speak."""
    from dos_client import i18n

    return i18n.language(os.environ if environ is None else environ)
