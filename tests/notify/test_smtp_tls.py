"""Email over TLS with a login: a real aiosmtpd server with STARTTLS or implicit TLS and AUTH,
its certificate issued by a test CA (trustme) that the app trusts through SMTP_CA_FILE."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiosmtpd.smtp import AuthResult, LoginPassword
from flask import Flask
from notify_helpers import create, rows, run_worker

from testkit import SmtpSink

USER, PASSWORD = "dos-mailer", "correct horse battery staple"


class TlsSink(SmtpSink):
    """Collects messages; accepts only USER/PASSWORD, and only over TLS."""

    def __init__(self, context: ssl.SSLContext, implicit: bool) -> None:
        options: dict[str, Any] = {"authenticator": self.authenticate, "auth_require_tls": True,
                                   "server_hostname": "127.0.0.1"}
        if implicit:
            # aiosmtpd only counts STARTTLS as TLS for auth_require_tls; here the whole
            # connection is TLS already.
            options.update(ssl_context=context, auth_require_tls=False)
        else:
            options.update(tls_context=context, require_starttls=True)
        super().__init__(**options)
        self.logins: list[str] = []

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str,
                     auth_data: Any) -> AuthResult:
        ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == USER
              and auth_data.password.decode() == PASSWORD)
        if ok:
            with self.lock:
                self.logins.append(USER)
        return AuthResult(success=ok, handled=False)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, Path]:
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(server_context)
    ca_file = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    return server_context, ca_file


@pytest.fixture(params=["starttls", "ssl"])
def tls_server(request: pytest.FixtureRequest,
               certificates: tuple[ssl.SSLContext, Path]) -> Iterator[tuple[str, int, TlsSink]]:
    sink = TlsSink(certificates[0], implicit=request.param == "ssl").start()
    try:
        yield request.param, sink.port, sink
    finally:
        sink.stop()


def test_email_goes_over_tls_with_a_login(
    make_app: Callable[..., Flask], tls_server: tuple[str, int, TlsSink],
    certificates: tuple[ssl.SSLContext, Path],
) -> None:
    security, port, sink = tls_server
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=port, SMTP_SECURITY=security,
                   SMTP_USERNAME=USER, SMTP_PASSWORD=PASSWORD, SMTP_CA_FILE=str(certificates[1]))
    client = app.test_client()
    create(client, [{"name": "ann", "email": "ann@example.org"}, {"name": "bob"}])
    run_worker(app, passes=3)
    assert [m["X-DOS-Event"] for m in sink.messages].count("invited") == 1
    assert sink.logins
    assert all(r.status == "sent" for r in rows(app, channel="email"))


def test_an_untrusted_certificate_is_not_sent_to(
    make_app: Callable[..., Flask], tls_server: tuple[str, int, TlsSink],
) -> None:
    security, port, sink = tls_server
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=port, SMTP_SECURITY=security,
                   SMTP_USERNAME=USER, SMTP_PASSWORD=PASSWORD)  # no SMTP_CA_FILE
    create(app.test_client(), [{"name": "ann", "email": "ann@example.org"}, {"name": "bob"}])
    run_worker(app, passes=1)
    assert sink.messages == []
    failed = rows(app, channel="email")
    assert failed
    assert all(r.status == "pending" and r.attempts == 1 for r in failed)
    assert all("certificate" in (r.last_error or "").lower() for r in failed)
