"""A private Postfix instance (Debian's postfix package) configured with deploy/postfix/.

It runs beside any system Postfix: its own config, queue and data directories in a temporary
folder, smtpd on a free loopback port instead of 25, no chroot, started without systemd
(``postfix -c DIR start``). Mail for ``players.test`` lands in Maildirs (the virtual delivery
agent) so a test can read what a player received.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

POSTFIX = shutil.which("postfix") or "/usr/sbin/postfix"
POSTCONF = shutil.which("postconf") or "/usr/sbin/postconf"
POSTMAP = shutil.which("postmap") or "/usr/sbin/postmap"
SENDMAIL = "/usr/sbin/sendmail"
PLAYERS = "players.test"
# The operator's files (docs/operations.md): the tests run Postfix on these, not on a copy.
DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "postfix"
DEPLOY_DOMAIN = "play.example.org"
DEPLOY_TRANSPORT = "lmtp:inet:127.0.0.1:2525"
HASHED_MAPS = ("dos_transport", "dos_verify")
RECIPIENT_MAPS = ("dos_transport", "dos_recipients", "dos_verify")


def main_cf_settings(text: str) -> list[str]:
    """``name = value`` settings of a main.cf fragment (comments out, continuations joined)."""
    settings: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0].isspace() and settings:
            settings[-1] += " " + line.strip()
        else:
            settings.append(line.strip())
    return settings


def recipe(config: Path, domain: str, transport: str) -> tuple[list[str], dict[str, str]]:
    """deploy/postfix's main.cf settings and maps for ``domain``, the maps in ``config`` and
    mail-in at ``transport``: (settings for ``postconf -e``, {map file name: its text})."""
    def adapt(text: str) -> str:
        return (text.replace("/etc/postfix/", f"{config}/")
                .replace(DEPLOY_DOMAIN.replace(".", "\\."), domain.replace(".", "\\."))
                .replace(DEPLOY_DOMAIN, domain).replace(DEPLOY_TRANSPORT, transport))

    settings = main_cf_settings(adapt((DEPLOY / "main.cf.dos").read_text()))
    return settings, {name: adapt((DEPLOY / name).read_text()) for name in RECIPIENT_MAPS}


def available() -> str | None:
    """None if a private Postfix can run here, else why not."""
    if not Path(POSTFIX).exists():
        return "Postfix is not installed (apt-get install postfix)"
    if os.geteuid() != 0:
        return "a Postfix instance needs root"
    return None


class Postfix:
    def __init__(self, root: Path, port: int, play_domain: str, mailin_port: int,
                 lmtp: bool) -> None:
        self.root = root
        self.port = port
        self.config = root / "etc"
        self.queue = root / "spool"
        self.maildirs = root / "maildirs"
        self.play_domain = play_domain
        self.mailin_port = mailin_port
        self.lmtp = lmtp

    def postconf(self, *settings: str) -> None:
        subprocess.run([POSTCONF, "-c", str(self.config), "-e", *settings], check=True)

    def setup(self, users: list[str]) -> Postfix:
        for folder in (self.config, self.queue, self.root / "data", self.maildirs):
            folder.mkdir(parents=True, exist_ok=True)
        for name in ("master.cf", "dynamicmaps.cf", "postfix-files"):
            shutil.copy(f"/etc/postfix/{name}", self.config / name)
        for name in ("dynamicmaps.cf.d", "postfix-files.d"):
            if Path(f"/etc/postfix/{name}").exists():
                shutil.copytree(f"/etc/postfix/{name}", self.config / name, dirs_exist_ok=True)
        (self.config / "main.cf").write_text("compatibility_level = 3.6\n")
        nobody = int(subprocess.run(["id", "-u", "nobody"], capture_output=True, text=True,
                                    check=True).stdout)
        os.chown(self.maildirs, nobody, -1)
        transport = (f"lmtp:inet:127.0.0.1:{self.mailin_port}" if self.lmtp
                     else f"smtp:[127.0.0.1]:{self.mailin_port}")
        settings, maps = recipe(self.config, self.play_domain, transport)
        self.postconf(
            f"queue_directory = {self.queue}", f"data_directory = {self.root / 'data'}",
            "myhostname = mx.dos-test.invalid", "mydomain = dos-test.invalid",
            "mydestination =", "inet_interfaces = loopback-only", "inet_protocols = ipv4",
            "mynetworks = 127.0.0.0/8", "relayhost =", "smtputf8_enable = no",
            "alias_maps =", "alias_database =", "maillog_file = " + str(self.root / "maillog"),
            f"maillog_file_prefixes = {self.root}",
            # deploy/postfix's recipe:
            *settings,
            # where the test's players receive their mail:
            f"virtual_mailbox_domains = {PLAYERS}",
            f"virtual_mailbox_base = {self.maildirs}",
            f"virtual_mailbox_maps = hash:{self.config / 'mailboxes'}",
            f"virtual_uid_maps = static:{nobody}", f"virtual_gid_maps = static:{nobody}",
        )
        for name, text in maps.items():
            (self.config / name).write_text(text)
        (self.config / "mailboxes").write_text(
            "".join(f"{user}@{PLAYERS}  {user}/\n" for user in users))
        for name in (*HASHED_MAPS, "mailboxes"):
            subprocess.run([POSTMAP, "-c", str(self.config), str(self.config / name)],
                           check=True)
        master = (self.config / "master.cf").read_text().splitlines()
        out = []
        for line in master:
            fields = line.split()
            if fields[:2] == ["smtp", "inet"]:
                fields[0] = f"127.0.0.1:{self.port}"
                line = "  ".join(fields)
            out.append(line)
        (self.config / "master.cf").write_text("\n".join(out) + "\n")
        subprocess.run([POSTCONF, "-c", str(self.config), "-F", "*/*/chroot = n"], check=True)
        subprocess.run([POSTFIX, "-c", str(self.config), "set-permissions"],
                       check=True, capture_output=True)
        subprocess.run([POSTFIX, "-c", str(self.config), "check"], check=True)
        return self

    def start(self) -> Postfix:
        subprocess.run([POSTFIX, "-c", str(self.config), "start"], check=True,
                       capture_output=True)
        return self

    def stop(self) -> None:
        subprocess.run([POSTFIX, "-c", str(self.config), "stop"], capture_output=True)
        subprocess.run([POSTFIX, "-c", str(self.config), "abort"], capture_output=True)

    def sendmail(self, sender: str, raw: bytes) -> None:
        subprocess.run([SENDMAIL, "-C", str(self.config), "-f", sender, "-t", "-i"],
                       input=raw, check=True)

    def mailbox(self, user: str) -> list[bytes]:
        folder = self.maildirs / user / "new"
        if not folder.exists():
            return []
        return [path.read_bytes() for path in sorted(folder.iterdir(),
                                                     key=lambda p: p.stat().st_mtime)]

    def log(self) -> str:
        path = self.root / "maillog"
        return path.read_text(errors="replace") if path.exists() else ""

    def flush(self) -> None:
        subprocess.run([POSTFIX, "-c", str(self.config), "flush"], capture_output=True)
        time.sleep(0)
