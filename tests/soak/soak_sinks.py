"""The soak's outside world as a process of its own: an SMTP sink (testkit.SmtpSink) and two
webhook receivers that answer 500 at random (testkit.Receiver). Run apart from the test, so the
scripted players' threads never hold up an SMTP conversation or a webhook answer.

``python soak_sinks.py DIR FAIL_RATE`` prints one JSON line with the ports, then appends what
arrives to ``DIR/mail.jsonl`` and ``DIR/hooks.jsonl`` (one JSON object a line, written before
the sender gets its answer) until SIGTERM. :class:`SinkLog` reads them back.
"""

from __future__ import annotations

import base64
import json
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from testkit import Received, Receiver, SmtpSink


class _Log:
    """One JSON object a line, flushed at once; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.file: IO[str] = path.open("a", encoding="utf-8")
        self.lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.file.write(json.dumps(record) + "\n")
            self.file.flush()


class LoggingSink(SmtpSink):
    def __init__(self, log: _Log) -> None:
        super().__init__()
        self.log = log

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.log.write({"rcpts": list(envelope.rcpt_tos),
                        "raw": base64.b64encode(bytes(envelope.content)).decode()})
        return "250 OK"


def main(folder: Path, fail_rate: float) -> None:
    mail, hooks = _Log(folder / "mail.jsonl"), _Log(folder / "hooks.jsonl")
    sink = LoggingSink(mail).start()
    receivers = []
    for number in (0, 1):
        def record(receipt: Received, number: int = number) -> None:
            hooks.write({"receiver": number, "path": receipt.path, "headers": receipt.headers,
                         "body": base64.b64encode(receipt.body).decode(),
                         "status": receipt.status})

        receivers.append(Receiver(fail_rate=fail_rate, seed=number, on_receive=record).start())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(json.dumps({"smtp": sink.port,
                      "receivers": [r.url("") for r in receivers]}), flush=True)
    stop.wait()
    for receiver in receivers:
        receiver.stop()
    sink.stop()


@dataclass
class SinkLog:
    """What the sinks process recorded, read incrementally."""

    folder: Path

    def __post_init__(self) -> None:
        self.offsets: dict[str, int] = {}
        self.lock = threading.Lock()

    def new(self, name: str) -> list[dict[str, Any]]:
        """The records of ``name`` (mail, hooks) written since the last call."""
        with self.lock:
            path = self.folder / f"{name}.jsonl"
            if not path.exists():
                return []
            with path.open("rb") as handle:
                handle.seek(self.offsets.get(name, 0))
                data = handle.read()
            complete = data[:data.rfind(b"\n") + 1]
            self.offsets[name] = self.offsets.get(name, 0) + len(complete)
        return [json.loads(line) for line in complete.splitlines()]

    def all(self, name: str) -> list[dict[str, Any]]:
        path = self.folder / f"{name}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]

    def mail(self) -> list[tuple[list[str], bytes]]:
        return [(r["rcpts"], base64.b64decode(r["raw"])) for r in self.all("mail")]

    def hooks(self) -> list[tuple[int, Received]]:
        return [(r["receiver"], Received(r["path"], r["headers"], base64.b64decode(r["body"]),
                                         r["status"], 0.0)) for r in self.all("hooks")]


if __name__ == "__main__":
    main(Path(sys.argv[1]), float(sys.argv[2]))
