"""deploy/, checked as far as this machine allows: the systemd units parse and pass
``systemd-analyze verify``, their ExecStart lines name real entry points (run here with the
environment file template, as systemd would pass it), the template names only settings the
server reads (and every one production needs), Caddy validates the site, and Postfix reads
the relay/MX recipe and answers the lookups it relies on. (tests/mail/test_postfix.py runs a
real Postfix on the same files.)"""

from __future__ import annotations

import ast
import http.client
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa

from dos_server import config, web
from dos_server.config import normalize_database_url
from testkit import BIN, PYTHONPATH, ROOT, free_port, wait_for

DEPLOY = ROOT / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
INSTALLED_BIN = "/opt/dos/.venv/bin/"  # where docs/operations.md installs the venv
PLAY_DOMAIN = "play.example.org"
# Names read outside config.DEFAULTS: the key and the database (config.py), the instance folder
# (create_app), gunicorn's workers, connections and keep-alive (gunicorn_conf.py), the metrics' folder
# (prometheus-client, dos_server/metrics.py).
READ_ELSEWHERE = {"SECRET_KEY", "DATABASE_URL", "DOS_INSTANCE_PATH", "WEB_CONCURRENCY",
                  "DOS_WORKER_CONNECTIONS", "DOS_KEEPALIVE_SECONDS", "PROMETHEUS_MULTIPROC_DIR"}
REQUIRED = {"DOS_ENV_NAME", "SECRET_KEY", "DOS_PUBLIC_URL", "DATABASE_URL", "DOS_PROXY_COUNT",
            "DOS_MAIL_DOMAIN", "DOS_MAIL_FROM", "DOS_SMTP_HOST", "DOS_SMTP_PORT",
            "DOS_SMTP_SECURITY"}


def unit_sections(path: Path) -> dict[str, dict[str, list[str]]]:
    """A unit file as systemd reads it: sections of keys, each with its values in order."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        assert not stripped.endswith("\\"), f"{path.name}:{number}: keep each setting on one line"
        if stripped.startswith("["):
            assert stripped.endswith("]"), f"{path.name}:{number}: {line}"
            current = sections.setdefault(stripped[1:-1], {})
            continue
        assert current is not None, f"{path.name}:{number}: a setting before any section"
        key, equals, value = stripped.partition("=")
        assert equals, f"{path.name}:{number}: not KEY=VALUE: {line}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def env_template() -> tuple[dict[str, str], set[str]]:
    """The template's settings as systemd's EnvironmentFile reads them, and every name it
    mentions (commented-out ones too)."""
    values: dict[str, str] = {}
    names: set[str] = set()
    for line in (DEPLOY / "dos.env.example").read_text().splitlines():
        found = re.match(r"#?([A-Z][A-Z0-9_]*)=(.*)$", line.strip())
        if found is None:
            continue
        names.add(found.group(1))
        if not line.startswith("#"):
            value = found.group(2)
            assert not value.startswith(("'", '"')), f"{line}: no quotes needed"
            values[found.group(1)] = value
    return values, names


def production_env(tmp_path: Path) -> dict[str, str]:
    """The template's environment for a process here: its own database and instance folder."""
    values, _names = env_template()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DOS_") and k not in READ_ELSEWHERE}
    env.update(values)
    metrics = tmp_path / "metrics"  # the template's /run/dos, which systemd would make
    metrics.mkdir(exist_ok=True)
    env.update({"PYTHONPATH": PYTHONPATH, "DATABASE_URL": f"sqlite:///{tmp_path / 'dos.db'}",
                "DOS_INSTANCE_PATH": str(tmp_path / "instance"),
                "PROMETHEUS_MULTIPROC_DIR": str(metrics)})
    return env


def exec_start(path: Path) -> list[str]:
    (line,) = unit_sections(path)["Service"]["ExecStart"]
    return shlex.split(line)


def web_bind() -> str:
    (unit,) = [u for u in UNITS if exec_start(u)[0].endswith("/gunicorn")]
    args = exec_start(unit)
    return args[args.index("--bind") + 1]


# -- systemd --------------------------------------------------------------------------------------


def test_the_units_are_web_worker_and_mail_in() -> None:
    programs = {path.name: exec_start(path) for path in UNITS}
    assert set(programs) == {"dos-web.service", "dos-worker.service", "dos-mailin.service"}
    assert programs["dos-worker.service"][1:] == ["worker"]
    assert programs["dos-mailin.service"][1:] == ["mail-in", "--lmtp"]  # Postfix speaks LMTP
    for path in UNITS:
        sections = unit_sections(path)
        assert set(sections) == {"Unit", "Service", "Install"}, path.name
        service = sections["Service"]
        assert service["User"] == ["dos"], path.name
        assert service["EnvironmentFile"] == ["/etc/dos/dos.env"], path.name
        assert service["Restart"] == ["on-failure"], path.name
        assert sections["Install"]["WantedBy"] == ["multi-user.target"], path.name


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if _required():
            pytest.fail("systemd-analyze is missing: .ci/run installs it (apt-get install systemd)")
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    # verify checks that each ExecStart program exists: point them at this venv's programs.
    for path in UNITS:
        (tmp_path / path.name).write_text(path.read_text().replace(INSTALLED_BIN, f"{BIN}/"))
    done = subprocess.run([analyze, "verify", *sorted(str(p) for p in tmp_path.iterdir())],
                          capture_output=True, text=True, timeout=60)
    # A setting systemd does not understand is only a warning: there must be none.
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr


def test_exec_start_names_real_entry_points(tmp_path: Path) -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    env = production_env(tmp_path)
    for path in UNITS:
        program, *args = exec_start(path)
        assert program.startswith(INSTALLED_BIN), (path.name, program)
        name = program.removeprefix(INSTALLED_BIN)
        if name == "gunicorn":  # loads the config module, the logger class and the app
            done = subprocess.run([str(BIN / "gunicorn"), "--check-config", *args], env=env,
                                  capture_output=True, text=True, timeout=120)
        else:
            assert name in scripts, (path.name, name)  # an entry point of this distribution
            done = subprocess.run([str(BIN / name), *args, "--help"], env=env,
                                  capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (path.name, done.stdout + done.stderr)
    args = exec_start(DEPLOY / "systemd" / "dos-web.service")
    module, _, attribute = args[args.index("--logger-class") + 1].rpartition(".")
    code = f"import {module}; {module}.{attribute}"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert web_bind().startswith("127.0.0.1:")  # only Caddy reaches gunicorn


# -- the environment file -----------------------------------------------------------------------


def test_env_template_names_only_settings_the_server_reads() -> None:
    values, names = env_template()
    known = ({f"DOS_{key}" for key in (*config.DEFAULTS, *web.DEFAULTS)} | READ_ELSEWHERE
             | {"DOS_SECRET_KEY"})
    assert names - known == set()
    assert REQUIRED - set(values) == set()
    assert values["DOS_ENV_NAME"] == "production"
    assert values["DOS_PROXY_COUNT"] == "1"  # Caddy alone in front
    assert urlsplit(values["DOS_PUBLIC_URL"]).scheme == "https"
    url = sa.make_url(normalize_database_url(values["DATABASE_URL"]))
    assert url.drivername == "postgresql+psycopg"
    assert (url.username, url.database) == ("dos", "dos")


def test_the_server_starts_on_the_template(tmp_path: Path) -> None:
    code = ("import json; from dos_server import create_app; c = create_app().config; "
            "print(json.dumps({k: c[k] for k in ('ENV_NAME', 'PROXY_COUNT', 'TRUSTED_HOSTS', "
            "'SMTP_HOST', 'SMTP_PORT', 'SMTP_SECURITY', 'MAIL_DOMAIN', 'MAILIN_PORT', "
            "'SESSION_COOKIE_SECURE')}))")
    done = subprocess.run([sys.executable, "-c", code], env=production_env(tmp_path),
                          capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"ENV_NAME": "production", "PROXY_COUNT": 1,
                    "TRUSTED_HOSTS": ["dos.example.org"], "SMTP_HOST": "127.0.0.1",
                    "SMTP_PORT": 25, "SMTP_SECURITY": "none", "MAIL_DOMAIN": PLAY_DOMAIN,
                    "MAILIN_PORT": 2525, "SESSION_COOKIE_SECURE": True}


# -- Caddy ----------------------------------------------------------------------------------------


def _required() -> bool:
    """CI installs the deploy tools (.ci/run): there a missing one is a failure, not a skip."""
    return bool(os.environ.get("CI") or os.environ.get("DOS_REQUIRE_DEPLOY_TOOLS"))


def _caddy() -> str:
    caddy = shutil.which("caddy")
    if caddy is None:
        if _required():
            pytest.fail("caddy is missing: .ci/run installs it (apt-get install caddy)")
        pytest.skip("Caddy is not installed (apt-get install caddy)")
    return caddy


def test_caddy_validates_the_site(tmp_path: Path) -> None:
    caddy = _caddy()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOS_")}
    env.update({"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path),
                "XDG_CONFIG_HOME": str(tmp_path)})
    site = str(DEPLOY / "caddy" / "Caddyfile")
    done = subprocess.run([caddy, "validate", "--config", site, "--adapter", "caddyfile"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Valid configuration" in done.stdout + done.stderr
    assert "not formatted" not in done.stderr  # `caddy fmt` would leave it as it is
    adapted = subprocess.run([caddy, "adapt", "--config", site, "--adapter", "caddyfile"],
                             env=env, capture_output=True, text=True, timeout=60, check=True)
    server = json.loads(adapted.stdout)["apps"]["http"]["servers"]["srv0"]
    assert server["listen"] == [":443"]  # TLS, with http redirected to it
    (route,) = server["routes"]
    values, _names = env_template()
    assert route["match"] == [{"host": [urlsplit(values["DOS_PUBLIC_URL"]).hostname]}]
    text = json.dumps(route)
    assert json.dumps([{"dial": web_bind()}]) in text  # the web unit's gunicorn
    assert '"flush_interval": -1' in text  # long-polls are not buffered
    assert "trusted_proxies" not in adapted.stdout  # clients' X-Forwarded-* are replaced


def test_the_site_serves_the_app_over_tls_as_one_trusted_hop(tmp_path: Path) -> None:
    """The site's own routes (adapted from the Caddyfile) in front of the web unit's gunicorn,
    on the template's production settings. Only what this machine cannot do is replaced:
    free ports for 80/443, and Caddy's internal CA instead of ACME (trusting nothing
    system-wide). A client that spoofs X-Forwarded-For still counts as itself."""
    caddy = _caddy()
    if shutil.which("curl") is None:  # it sends the site's name (SNI, Host) to loopback
        pytest.fail("curl is missing (apt-get install curl)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOS_")}
    env.update({"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path),
                "XDG_CONFIG_HOME": str(tmp_path)})
    adapted = subprocess.run([caddy, "adapt", "--config", str(DEPLOY / "caddy" / "Caddyfile"),
                              "--adapter", "caddyfile"], env=env, capture_output=True,
                             text=True, timeout=60, check=True)
    site = json.loads(adapted.stdout)
    web, https, http = free_port(), free_port(), free_port()
    server = site["apps"]["http"]["servers"]["srv0"]
    server["listen"] = [f"127.0.0.1:{https}"]
    text = json.dumps(site).replace(json.dumps(web_bind()), json.dumps(f"127.0.0.1:{web}"))
    site = json.loads(text)
    site["apps"]["http"].update({"http_port": http, "https_port": https})
    site["apps"]["tls"]["automation"]["policies"][0]["issuers"] = [{"module": "internal"}]
    site["apps"]["pki"] = {"certificate_authorities": {"local": {"install_trust": False}}}
    site["storage"] = {"module": "file_system", "root": str(tmp_path / "caddy")}
    site["admin"] = {"disabled": True}
    site["logging"]["logs"]["log0"]["writer"] = {"output": "file",
                                                  "filename": str(tmp_path / "access.log")}
    (tmp_path / "caddy.json").write_text(json.dumps(site))
    app_env = production_env(tmp_path)
    app_env["DOS_RATE_LIMIT_CREATE"] = "2 per minute"
    subprocess.run([str(BIN / "flask"), "--app", "dos_server", "db", "upgrade"], env=app_env,
                   check=True, capture_output=True, timeout=120)
    args = exec_start(DEPLOY / "systemd" / "dos-web.service")[1:]
    args[args.index("--bind") + 1] = f"127.0.0.1:{web}"
    host = urlsplit(env_template()[0]["DOS_PUBLIC_URL"]).hostname
    assert host is not None
    with (tmp_path / "web.log").open("w") as log, (tmp_path / "caddy.log").open("w") as errors:
        gunicorn = subprocess.Popen([str(BIN / "gunicorn"), *args], env=app_env, stdout=log,
                                    stderr=subprocess.STDOUT)
        proxy = subprocess.Popen([caddy, "run", "--config", str(tmp_path / "caddy.json")],
                                 env=env, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        # In production the app answers only for its own host, even on loopback.
        wait_for(lambda: _ready(web, host), 60, "gunicorn", (tmp_path / "web.log").read_text)
        assert _ready(web, "127.0.0.1") is False
        wait_for(lambda: _listening(https), 30, "Caddy", (tmp_path / "caddy.log").read_text)
        base = f"https://{host}:{https}"

        def curl(path: str, *args: str) -> tuple[int, str]:
            done = subprocess.run(
                ["curl", "-sk", "--resolve", f"{host}:{https}:127.0.0.1", "-o", "/dev/null",
                 "-w", "%{http_code} %{scheme}", *args, base + path],
                capture_output=True, text=True, timeout=60)
            code, scheme = done.stdout.split()
            return int(code), scheme

        assert curl("/readyz") == (200, "HTTPS")
        for number in range(3):  # each from a "different" address, as the client claims
            code, _scheme = curl("/api/games", "-X", "POST", "-H",
                                 "Content-Type: application/json", "-H",
                                 f"X-Forwarded-For: 198.51.100.{number}", "--data",
                                 '{"seats": [{"name": "ann"}, {"bot": "random"}]}')
            assert code == (201 if number < 2 else 429), number
        logged = (tmp_path / "access.log").read_text()
        assert "/api/games" not in logged  # no request URIs in Caddy's log
        assert '"status":201' in logged
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)
        gunicorn.terminate()
        gunicorn.wait(timeout=30)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _ready(port: int, host: str) -> bool:
    """Whether gunicorn on loopback ``port`` answers /readyz for ``host`` with 200."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/readyz", headers={"Host": host})
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


# -- Postfix --------------------------------------------------------------------------------------


def test_postfix_reads_the_recipe_and_answers_its_lookups(tmp_path: Path) -> None:
    postconf, postmap = shutil.which("postconf"), shutil.which("postmap")
    if postconf is None or postmap is None:
        pytest.skip("Postfix is not installed (apt-get install postfix)")
    folder = DEPLOY / "postfix"
    for name in ("master.cf", "dynamicmaps.cf"):
        shutil.copy(f"/etc/postfix/{name}", tmp_path / name)
    if Path("/etc/postfix/dynamicmaps.cf.d").is_dir():
        shutil.copytree("/etc/postfix/dynamicmaps.cf.d", tmp_path / "dynamicmaps.cf.d")
    fragments = [(folder / name).read_text() for name in ("main.cf.dos", "main.cf.dkim")]
    (tmp_path / "main.cf").write_text("compatibility_level = 3.6\n" + "".join(
        text.replace("/etc/postfix/", f"{tmp_path}/") for text in fragments))
    for name in ("dos_transport", "dos_recipients", "dos_verify"):
        shutil.copy(folder / name, tmp_path / name)
    subprocess.run([postmap, "-c", str(tmp_path), str(tmp_path / "dos_transport"),
                    str(tmp_path / "dos_verify")], check=True, timeout=30)
    shown = subprocess.run([postconf, "-c", str(tmp_path), "-n"], capture_output=True,
                           text=True, timeout=30, check=True)
    assert shown.stderr == "", shown.stderr  # no unknown or misspelt parameter
    settings = dict(line.split(" = ", 1) for line in shown.stdout.splitlines())
    assert settings["relay_domains"] == PLAY_DOMAIN
    restrictions = settings["smtpd_recipient_restrictions"].split(", ")
    assert restrictions[0].startswith("check_recipient_access hash:")  # before mynetworks
    assert settings["unverified_recipient_reject_code"] == "550"

    def lookup(key: str, table: str) -> str | None:
        done = subprocess.run([postmap, "-c", str(tmp_path), "-q", key, table],
                              capture_output=True, text=True, timeout=30)
        return done.stdout.strip() if done.returncode == 0 else None

    values, _names = env_template()
    assert values["DOS_MAIL_DOMAIN"] == PLAY_DOMAIN
    mailin = f"{values['DOS_MAILIN_HOST']}:{values['DOS_MAILIN_PORT']}"
    assert lookup(PLAY_DOMAIN, f"hash:{tmp_path}/dos_transport") == f"lmtp:inet:{mailin}"
    assert lookup(PLAY_DOMAIN, f"hash:{tmp_path}/dos_verify") == "reject_unverified_recipient"
    recipients = f"regexp:{tmp_path}/dos_recipients"
    token = "n62pa9t6e3.dtwtjmpcyybs.2.1.6ubiv5hhe2ab4uyx6rik3sk7"  # a reply address's shape
    assert lookup(f"play+{token}@{PLAY_DOMAIN}", recipients) == "OK"
    assert lookup(f"unsubscribe+{token}@{PLAY_DOMAIN}", recipients) == "OK"
    for refused in (f"postmaster@{PLAY_DOMAIN}", f"play@{PLAY_DOMAIN}",
                    f"play+{token}@other.example.org", f"play+a/b@{PLAY_DOMAIN}"):
        assert lookup(refused, recipients) is None, refused


# -- upgrades -------------------------------------------------------------------------------------

LAST_STOPPING_REVISION = 5  # 0005 made a filled-in column required: that upgrade needed a stop
NOT_ADDITIVE = {"drop_column", "drop_table", "alter_column", "drop_constraint", "drop_index",
                "rename_table", "execute"}


def test_revisions_after_0005_only_add_so_old_code_runs_on_the_new_schema() -> None:
    """docs/operations.md's compatibility rule: between `db upgrade` and the reload, the old
    code runs on the new schema, so a revision adds tables and nullable (or defaulted) columns
    and changes nothing that is there."""
    revisions = sorted((ROOT / "migrations" / "versions").glob("[0-9]*.py"))
    checked = [p for p in revisions if int(p.name.partition("_")[0]) > LAST_STOPPING_REVISION]
    assert checked
    for path in checked:
        (upgrade,) = [node for node in ast.parse(path.read_text()).body
                      if isinstance(node, ast.FunctionDef) and node.name == "upgrade"]
        for node in ast.walk(upgrade):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            assert node.func.attr not in NOT_ADDITIVE, (path.name, node.func.attr)
            if node.func.attr != "add_column":
                continue
            for column in ast.walk(node):
                if isinstance(column, ast.Call) and getattr(column.func, "attr", "") == "Column":
                    words = {k.arg: k.value for k in column.keywords if k.arg}
                    required = ("nullable" in words and isinstance(words["nullable"], ast.Constant)
                                and words["nullable"].value is False)
                    assert not required or "server_default" in words, (path.name,
                                                                       ast.unparse(column))


# -- the documents ----------------------------------------------------------------------------------


def test_operations_guide_names_every_deploy_file_and_the_readme_points_to_it() -> None:
    guide = (ROOT / "docs" / "operations.md").read_text()
    for path in sorted(p for p in DEPLOY.rglob("*") if p.is_file()):
        assert str(path.relative_to(ROOT)) in guide, path
    assert "docs/operations.md" in (ROOT / "README.md").read_text()
