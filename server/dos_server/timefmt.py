"""Times as a person reads them: in their IANA time zone, with its name or offset, and
relative where it helps ("in 23 hours"). Emails and pages format every time here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

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


def local_time(when: datetime, zone_name: str | None, now: datetime | None = None) -> str:
    """``when`` in the zone: "Thursday 3 December, 01:53 (Asia/Vientiane, UTC+7)"; the year
    too when it is not ``now``'s; "(UTC)" for no zone."""
    reader = zone(zone_name)
    local = _as_utc(when).astimezone(reader)
    year = local.year != _as_utc(now or datetime.now(UTC)).astimezone(reader).year
    day = f"{local:%A} {local.day} {local:%B}" + (f" {local.year}" if year else "")
    name = reader.key
    where = offset(local)
    label = name if where == name else f"{name}, {where}"
    return f"{day}, {local:%H:%M} ({label})"


def relative(when: datetime, now: datetime | None = None) -> str:
    """How far ``when`` is from ``now``: "in 23 hours", "5 minutes ago", "in 2 days"."""
    seconds = (_as_utc(when) - _as_utc(now or datetime.now(UTC))).total_seconds()
    ahead = seconds >= 0
    seconds = abs(seconds)
    if seconds < 60:
        return "in less than a minute" if ahead else "less than a minute ago"
    if seconds < 90 * 60:
        count, unit = round(seconds / 60), "minute"
    elif seconds < 48 * 3600:
        count, unit = round(seconds / 3600), "hour"
    else:
        count, unit = round(seconds / 86400), "day"
    words = f"{count} {unit}{'s' if count != 1 else ''}"
    return f"in {words}" if ahead else f"{words} ago"


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


__all__ = ["clean_time_zone", "local_time", "offset", "parse", "relative", "zone",
           "zone_list", "zone_names"]
