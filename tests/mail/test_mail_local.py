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

import pytest
import requests
from click.testing import Result
from mailtest_helpers import ANN, BJORN, DOMAIN, MailWorld, current, latest, new_game

from dos_server.delivery.mail.smtp import write_to_outbox
from testkit import BIN, PYTHONPATH, ROOT, free_port, parse_email, text_of, wait_for, wait_ready

# gunicorn gives its workers 10 s (gunicorn_conf.graceful_timeout); the rest is for a loaded
# machine.
STOP_SECONDS = 60
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
                "DOS_MAILIN_PORT": str(mailin), "DOS_INSTANCE_PATH": str(tmp_path / "instance")})
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
            code = process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            left = subprocess.run(["ps", "-o", "pid,stat,args", "-g", str(process.pid)],
                                  capture_output=True, text=True).stdout
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail(f"Ctrl-C left processes running after {STOP_SECONDS} s:\n{left}\n"
                        f"{log.read_text()[-3000:]}")
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
        assert f"Open your table: {local.url}/games/" in text_of(answer)  # the script's port
        # The same email answered again, straight into the store: nothing is applied.
        again = dos_server(local, "mail", "reply", "--direct", f"{number:04d}", "1")
        assert "rejected (stale)" in again
        assert "nothing was applied" in again
        assert max(outbox(local)) > number


# -- the pieces, in-process -------------------------------------------------------------------


def test_outbox_files_are_numbered_in_order_and_a_retry_keeps_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "outbox"
    first = write_to_outbox(folder, "msg_a", b"one")
    second = write_to_outbox(folder, "msg_b", b"two")
    assert [first.name, second.name] == ["0001-msg_a.eml", "0002-msg_b.eml"]
    assert write_to_outbox(folder, "msg_a", b"again") == first  # the worker sent it again
    assert first.read_bytes() == b"again"
    assert write_to_outbox(folder, "msg_c", b"three").name == "0003-msg_c.eml"


def test_mail_reply_over_smtp_and_its_refusals(world: MailWorld, tmp_path: Path) -> None:
    game_id = new_game(world)
    _version, address, _state = current(world, game_id)
    if not address:  # the bot is to move: a person's invitation is answered instead
        address = ANN
    email_in = latest(world, address)
    saved = tmp_path / "saved.eml"
    saved.write_bytes(bytes(email_in))
    runner = world.app.test_cli_runner()
    port = str(world.listener.port)

    def reply(*args: str) -> Result:
        return runner.invoke(args=["mail", "reply", *args, "--port", port, "--wait", "0"])

    said = reply(str(saved), "show")
    assert said.exit_code == 0, said.output
    assert f"Replying to {email_in['Reply-To']} from {address}" in said.output
    assert "processed (show)" in said.output
    world.run_worker()
    answer = world.sink.to(address)[-1]
    assert answer["Subject"] == "Re: " + str(email_in["Subject"])
    assert "Center Row:" in text_of(answer)
    # A number the outbox does not have, a file that is not there (the outbox folder is empty:
    # this app sends over SMTP): usage errors, nothing sent.
    for which in ("7", str(tmp_path / "missing.eml")):
        refused = reply(which, "1")
        assert refused.exit_code == 2, refused.output
        assert "There is no email number 7" in refused.output or "neither" in refused.output
    # An email naming no address; a reply address the listener refuses at RCPT; no listener.
    bare = tmp_path / "bare.eml"
    bare.write_bytes(b"Subject: hello\r\n\r\nno addresses\r\n")
    assert "names no address to reply to" in reply(str(bare), "1").output
    forged = EmailMessage()
    forged["From"], forged["To"], forged["Subject"] = "DOS <dos@play.test>", address, "x"
    forged["Reply-To"] = f"play+forged.token@{DOMAIN}"
    forged.set_content("1")
    forged_file = tmp_path / "forged.eml"
    forged_file.write_bytes(bytes(forged))
    refused = reply(str(forged_file), "1")
    assert refused.exit_code == 1
    assert "The mail-in listener refused the reply: 550" in refused.output
    nobody = runner.invoke(args=["mail", "reply", str(saved), "1", "--port", str(free_port())])
    assert nobody.exit_code == 1
    assert "No mail-in listener answers on 127.0.0.1:" in nobody.output
    assert world.inbound() == [("processed", "show")]
