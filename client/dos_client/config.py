"""Saved servers, games and tokens, in the platform's config folder, file mode 0600."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dos_client.errors import ClientError

DEFAULT_SERVER = "http://127.0.0.1:5000"


def config_path() -> Path:
    override = os.environ.get("DOS_CLIENT_CONFIG")
    if override:
        return Path(override)
    from platformdirs import user_config_path

    return user_config_path("dos-client") / "config.json"


class Store:
    """The whole config file: ``{"profiles": {name: {"server", "current", "games"}}}``."""

    def __init__(self, profile: str) -> None:
        self.path = config_path()
        self.profile = profile
        self.data: dict[str, Any] = {"profiles": {}}
        if self.path.exists():
            try:
                loaded = json.loads(self.path.read_text() or '{"profiles": {}}')
            except (OSError, UnicodeDecodeError, ValueError) as error:
                raise ClientError(f"cannot read the config file {self.path}: {error}. Fix or "
                                  "remove it (it holds your saved games and tokens).") from None
            if not isinstance(loaded, dict):
                raise ClientError(f"the config file {self.path} is not a JSON object; fix or "
                                  "remove it")
            self.data = loaded

    @property
    def section(self) -> dict[str, Any]:
        profiles = self.data.setdefault("profiles", {})
        section: dict[str, Any] = profiles.setdefault(
            self.profile, {"server": None, "current": None, "games": {}})
        return section

    @property
    def games(self) -> dict[str, dict[str, Any]]:
        games: dict[str, dict[str, Any]] = self.section.setdefault("games", {})
        return games

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(self.data, handle, indent=2)
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)

    def unique_name(self, base: str) -> str:
        name, n = base, 2
        while name in self.games:
            name, n = f"{base}-{n}", n + 1
        return name
