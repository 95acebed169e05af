"""Play by email on one machine, as the README shows it: `make run`'s processes (the very
script it runs: web, worker and mail-in), emails in the instance's outbox folder, and
`dos-server mail list` / `dos-server mail reply N "1"` answering one as a mail client would.
SQLite in the instance folder (make run's default) and, with TEST_DATABASE_URL, PostgreSQL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import requests
from mailtest_helpers import ANN, BJORN

from testkit import BIN, PYTHONPATH, ROOT, free_port, parse_email, text_of, wait_for, wait_ready

SEATS = [{"name": "Ann", "email": ANN}, {"name": "Bjørn", "email": BJORN}, {"bot": "greedy"}]


@dataclass(frozen=True)
class Local:
    url: str
    outbox: Path
    env: dict[str, str]
    log: Path


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def make_run(tmp_path: Path, db_url: str) -> Iterator[Local]:
    """scripts/run-local as `make run` starts it, on free ports; stopped the way Ctrl-C
    stops it (SIGINT to the whole process group), which must end every process."""
    web, mailin = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOS_")}
    env.pop("DATABASE_URL", None)
    env.update({"PYTHONPATH": PYTHONPATH, "BIN": str(BIN), "PORT": str(web),
                "DOS_MAILIN_PORT": str(mailin), "DOS_INSTANCE_PATH": str(tmp_path / "instance"),
                "DOS_PUBLIC_URL": f"http://127.0.0.1:{web}"})
    if not db_url.startswith("sqlite"):  # SQLite: make run's own default, in the instance
        env["DATABASE_URL"] = db_url
    log = tmp_path / "run.log"
    with log.open("w") as out:
        process = subprocess.Popen([str(ROOT / "scripts" / "run-local")], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_ready(web, process, log, timeout=60)
        wait_for(lambda: listening(mailin), 30, "the mail-in listener", log.read_text)
        yield Local(f"http://127.0.0.1:{web}", tmp_path / "instance" / "outbox", env, log)
    finally:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in the terminal
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    assert code == 0, log.read_text()[-3000:]
    wait_for(lambda: not _group_alive(process.pid), 30, "every process to stop", log.read_text)
    assert not listening(web)
    assert not listening(mailin)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def dos_server(local: Local, *args: str) -> str:
    done = subprocess.run([str(BIN / "dos-server"), *args], cwd=ROOT, env=local.env,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def outbox(local: Local) -> dict[int, EmailMessage]:
    return {int(path.name.partition("-")[0]): parse_email(path.read_bytes())
            for path in sorted(local.outbox.glob("*.eml"))}


def turn_email(local: Local) -> tuple[int, EmailMessage] | None:
    """The latest email listing moves, if it is the last email to its address."""
    emails = outbox(local)
    for number in sorted(emails, reverse=True):
        if "Your moves:" in text_of(emails[number]):
            later = [n for n in emails if n > number and emails[n]["To"] == emails[number]["To"]]
            return None if later else (number, emails[number])
    return None


def test_play_by_email_locally_with_dos_server_mail_reply(db_url: str, tmp_path: Path) -> None:
    with make_run(tmp_path, db_url) as local:
        created = requests.post(f"{local.url}/api/games", json={"seats": SEATS},
                                timeout=30).json()
        started = requests.post(f"{local.url}/api/games/{created['id']}/start", timeout=30,
                                headers={"Authorization": f"Bearer {created['host_token']}"})
        assert started.status_code == 200, started.text
        wait_for(lambda: turn_email(local) is not None, 30, "a your-turn email in the outbox",
                 local.log.read_text)
        found = turn_email(local)
        assert found is not None
        number, email_in = found
        # The numbered list shows it, with its address and subject.
        listed = dos_server(local, "mail", "list").splitlines()
        line = next(line for line in listed if line.split()[0] == str(number))
        assert str(email_in["To"]) in line
        assert str(email_in["Subject"]) in line
        assert dos_server(local, "mail", "list", "--to", "nobody@example.org").startswith(
            "No emails in")
        # Move 1, by SMTP to the running mail-in listener; the worker writes the answer.
        said = dos_server(local, "mail", "reply", str(number), "1")
        assert f"Replying to {email_in['Reply-To']} from {email_in['To']}" in said
        assert "The mail-in listener answered: 250" in said
        assert "processed (applied)" in said
        assert "Applied: " in said
        answer_file = Path(said.split("The answer: ", 1)[1].splitlines()[0])
        answer = parse_email(answer_file.read_bytes())
        assert answer_file.parent == local.outbox
        assert answer["X-DOS-Event"] == "mail_reply"
        assert answer["To"] == email_in["To"]
        assert answer["Subject"] == "Re: " + str(email_in["Subject"])
        assert str(email_in["Message-ID"]) in str(answer["References"])
        assert "Applied: " in text_of(answer)
        # The same email answered again, straight into the store: nothing is applied.
        again = dos_server(local, "mail", "reply", "--direct", f"{number:04d}", "1")
        assert "rejected (stale)" in again
        assert "nothing was applied" in again
        assert max(outbox(local)) > number
