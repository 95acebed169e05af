"""Times as a person reads them: in their IANA time zone, with its name or offset, and
relative where it helps ("in 23 hours"), in their language (Babel's CLDR data: Lao day and
month names, "ໃນອີກ 23 ຊົ່ວໂມງ"). Emails and pages format every time here.

The language is the ``locale`` given, else Flask-Babel's current one (the request's, or the
one an email is rendered in under ``force_locale``), else English.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Literal
from zoneinfo import ZoneInfo

from babel.dates import format_datetime, format_skeleton, format_timedelta
from flask_babel import get_locale, gettext

ZONE_MAX = 64  # seats.time_zone is String(64)


@lru_cache(maxsize=1)
def zone_names() -> frozenset[str]:
    """Every IANA zone name this server knows."""
    import zoneinfo

    return frozenset(zoneinfo.available_timezones())


@lru_cache(maxsize=1)
def zone_list() -> tuple[str, ...]:
    """The zone names in order, for a form to offer."""
    return tuple(sorted(zone_names()))


def clean_time_zone(raw: object) -> str | None:
    """An IANA zone name as given, or None for none (UTC); ValueError for anything else."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise ValueError("a time zone is an IANA name, like Asia/Vientiane")
    name = raw.strip()
    if len(name) > ZONE_MAX or name not in zone_names():
        raise ValueError(f"unknown time zone {name[:ZONE_MAX]!r}: give an IANA name, like "
                         "Asia/Vientiane or Europe/Paris")
    return name


def zone(name: str | None) -> ZoneInfo:
    """The zone of ``name``; UTC for none or one this server no longer knows."""
    if name and name in zone_names():
        return ZoneInfo(name)
    return ZoneInfo("UTC")


def _as_utc(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def offset(when: datetime) -> str:
    """``when``'s offset from UTC: UTC, UTC+7, UTC+5:30, UTC-3."""
    delta = when.utcoffset() or timedelta(0)
    minutes = int(delta.total_seconds()) // 60
    if minutes == 0:
        return "UTC"
    sign = "+" if minutes > 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def _(message: str, **values: object) -> str:
    """gettext, also where no locale can be chosen (an app but no request, outside
    ``force_locale``): then the English message."""
    try:
        return str(gettext(message, **values))
    except RuntimeError:
        return message % values if values else message


def current_locale(locale: str | None = None) -> str:
    """``locale``, else Flask-Babel's current locale (outside an app: English)."""
    if locale:
        return locale
    try:
        found = get_locale()
    except RuntimeError:  # an app but no request, outside force_locale
        found = None
    return str(found) if found else "en"


# The day as each language writes it ("Thursday 3 December", "ວັນພະຫັດ 3 ທັນວາ"); another
# language gets CLDR's own pattern for a weekday, day and month (its skeleton).
_DAY_PATTERNS = {"en": ("EEEE d MMMM", "EEEE d MMMM y"), "lo": ("EEEE d MMMM", "EEEE d MMMM y")}


def local_day(local: datetime, year: bool, locale: str) -> str:
    """The weekday, day and month (and year) of a local time, in the language."""
    patterns = _DAY_PATTERNS.get(locale.partition("_")[0])
    if patterns is not None:
        return format_datetime(local, patterns[1] if year else patterns[0], tzinfo=local.tzinfo,
                               locale=locale)
    return format_skeleton("yMMMMEEEEd" if year else "MMMMEEEEd", local, tzinfo=local.tzinfo,
                           locale=locale)


def local_time(when: datetime, zone_name: str | None, now: datetime | None = None,
               locale: str | None = None) -> str:
    """``when`` in the zone: "Thursday 3 December, 01:53 (Asia/Vientiane, UTC+7)"; the year
    too when it is not ``now``'s; "(UTC)" for no zone. In Lao "ວັນພະຫັດ 3 ທັນວາ, 01:53
    (Asia/Vientiane, UTC+7)"."""
    language = current_locale(locale)
    reader = zone(zone_name)
    local = _as_utc(when).astimezone(reader)
    year = local.year != _as_utc(now or datetime.now(UTC)).astimezone(reader).year
    day = local_day(local, year, language)
    name = reader.key
    where = offset(local)
    label = name if where == name else f"{name}, {where}"
    clock = format_datetime(local, "HH:mm", tzinfo=reader, locale=language)
    return _("%(day)s, %(time)s (%(zone)s)", day=day, time=clock, zone=label)


def relative(when: datetime, now: datetime | None = None, locale: str | None = None) -> str:
    """How far ``when`` is from ``now``: "in 23 hours", "5 minutes ago", "in 2 days" (Babel's
    ``format_timedelta``, in the language: "ໃນອີກ 23 ຊົ່ວໂມງ")."""
    delta = _as_utc(when) - _as_utc(now or datetime.now(UTC))
    seconds = delta.total_seconds()
    ahead = seconds >= 0
    seconds = abs(seconds)
    if seconds < 60:
        return _("in less than a minute") if ahead else _("less than a minute ago")
    unit: Literal["minute", "hour", "day"] = (
        "minute" if seconds < 90 * 60 else "hour" if seconds < 48 * 3600 else "day")
    # The unit is ours (hours up to two days); the words and plurals are the language's.
    return format_timedelta(delta, granularity=unit, threshold=float("inf"), add_direction=True,
                            locale=current_locale(locale))


def when(moment: datetime, zone_name: str | None, now: datetime | None = None,
         locale: str | None = None) -> str:
    """A time and how far it is: "Thursday 3 December, 01:53 (Asia/Vientiane, UTC+7), in 23
    hours"."""
    now = now or datetime.now(UTC)
    return _("%(time)s, %(relative)s", time=local_time(moment, zone_name, now, locale),
             relative=relative(moment, now, locale))


def parse(moment: str | datetime | None) -> datetime | None:
    """An ISO timestamp (as payloads and bodies carry them) as an aware datetime; None for
    none or one that is not a timestamp."""
    if moment is None or moment == "":
        return None
    if isinstance(moment, datetime):
        return _as_utc(moment)
    try:
        return _as_utc(datetime.fromisoformat(moment))
    except ValueError:
        return None


__all__ = ["clean_time_zone", "current_locale", "local_day", "local_time", "offset", "parse",
           "relative", "when", "zone", "zone_list", "zone_names"]
