"""Saved servers, games and tokens, in the platform's config folder, file mode 0600."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dos_client.errors import ClientError
from dos_client.i18n import _

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
        self.data = self._read()
        self._loaded = copy.deepcopy(self.data)  # what we changed is told from what others did

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"profiles": {}}
        try:
            loaded = json.loads(self.path.read_text() or '{"profiles": {}}')
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise ClientError(_("cannot read the config file {path}: {error}. Fix or remove it "
                                "(it holds your saved games and tokens).").format(
                                    path=self.path, error=error)) from None
        if not isinstance(loaded, dict):
            raise ClientError(_("the config file {path} is not a JSON object; fix or remove "
                                "it").format(path=self.path))
        return loaded

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
        """Write our changes over what is on disk now: another dos-client (a `wait` in
        another terminal) may have saved since we read it, and its games and tokens stay."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _locked(self.path.with_name(self.path.name + ".lock")):
            _merge_into(self.data, self._loaded, self._read())
            fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".config-",
                                             suffix=".tmp")  # mode 0600, a name of its own
            try:
                with os.fdopen(fd, "w") as handle:
                    json.dump(self.data, handle, indent=2)
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        self._loaded = copy.deepcopy(self.data)

    def unique_name(self, base: str) -> str:
        name, n = base, 2
        while name in self.games:
            name, n = f"{base}-{n}", n + 1
        return name


def _merge_into(ours: dict[str, Any], base: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Others' changes since ``base`` (what is on disk now: ``theirs``), merged into ``ours``
    in place (callers hold references into it); where both changed a value, ours wins."""
    for key in theirs.keys() | base.keys():
        if key not in theirs:  # removed by someone else: gone, unless we changed it
            if key in ours and key in base and ours[key] == base[key]:
                del ours[key]
        elif key not in ours:  # added by them, or removed by us (back only if they changed it)
            if key not in base or theirs[key] != base[key]:
                ours[key] = theirs[key]
        elif isinstance(ours[key], dict) and isinstance(theirs[key], dict):
            below = base.get(key)
            _merge_into(ours[key], below if isinstance(below, dict) else {}, theirs[key])
        elif key in base and ours[key] == base[key]:  # unchanged by us: theirs
            ours[key] = theirs[key]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock between dos-client processes while the file is read and replaced."""
    try:
        import fcntl
    except ImportError:  # Windows: os.replace alone keeps the file whole
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
