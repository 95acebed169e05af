"""The test kit's listeners: a port taken between the look and the bind is picked again, a
listener that failed to bind leaves no event loop open (pytest's warnings are errors here), and a
webhook receiver records only what fully arrived."""

from __future__ import annotations

import gc
import smtplib
import socket

import pytest

import testkit
from testkit import SmtpSink, free_port


def test_free_ports_are_below_the_kernels_ephemeral_range() -> None:
    for _ in range(20):
        assert free_port() in testkit.LISTEN_PORTS
    assert testkit.LISTEN_PORTS.stop <= testkit._ephemeral_low()


def test_a_sink_whose_port_was_taken_listens_on_another(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    taken_port = taken.getsockname()[1]
    picks = iter([taken_port])
    real = testkit.free_port
    monkeypatch.setattr(testkit, "free_port", lambda: next(picks, None) or real())
    try:
        sink = SmtpSink().start()
        try:
            assert sink.port != taken_port
            with smtplib.SMTP("127.0.0.1", sink.port) as client:
                client.sendmail("a@example.org", ["b@example.org"], b"Subject: hi\r\n\r\nhello\r\n")
            assert [m["Subject"] for m in sink.messages] == ["hi"]
        finally:
            sink.stop()
    finally:
        taken.close()
    gc.collect()  # an unclosed event loop of the failed try would warn here


def test_a_sink_on_a_named_port_that_is_taken_says_so() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        with pytest.raises(OSError, match="address already in use"):
            SmtpSink(taken.getsockname()[1]).start()
    finally:
        taken.close()
    gc.collect()


def test_a_receiver_ignores_a_request_whose_sender_died_mid_body() -> None:
    receiver = testkit.Receiver().start()
    try:
        port = receiver.server.server_address[1]  # type: ignore[union-attr]
        with socket.create_connection(("127.0.0.1", port)) as cut_off:
            cut_off.sendall(b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{\"type\"")
        complete = b'{"type": "game.your_turn"}'
        with socket.create_connection(("127.0.0.1", port)) as whole:
            whole.sendall(b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(complete), complete))
            assert whole.recv(100).startswith(b"HTTP/1.0 200")
        assert [r.body for r in receiver.all()] == [complete]
    finally:
        receiver.stop()
