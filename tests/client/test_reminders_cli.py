"""`dos-client notify --reminders`: each seat chooses when it is reminded of its turn."""

from __future__ import annotations

from cli_helpers import Table, as_json, ok, run


def test_notify_sets_and_shows_the_reminders(table: Table) -> None:
    assert as_json("--profile", "bob", "notify")["reminders"] == ["80%"]  # the default
    assert as_json("--profile", "bob", "notify", "--reminders", "1h,50%")["reminders"] \
        == ["50%", "1h"]
    assert "Reminders: 50%, 1h." in ok("--profile", "bob", "notify").stdout
    assert as_json("notify")["reminders"] == ["80%"]  # Ann's seat: her own choice
    assert as_json("--profile", "bob", "notify", "--reminders", "off")["reminders"] == []
    assert "Reminders: off." in ok("--profile", "bob", "notify").stdout
    assert as_json("--profile", "bob", "notify", "--reminders", "default")["reminders"] \
        == ["80%"]


def test_bad_reminders_are_refused_and_change_nothing(table: Table) -> None:
    as_json("--profile", "bob", "notify", "--reminders", "30m")
    refused = run("--profile", "bob", "notify", "--reminders", "soon")
    assert refused.exit_code == 2, refused.output
    assert "reminder" in refused.stderr
    assert as_json("--profile", "bob", "notify")["reminders"] == ["30m"]
