"""/metrics adds up the processes of one server: gunicorn's two workers and the notification
worker, each counting into PROMETHEUS_MULTIPROC_DIR (prometheus-client's multiprocess mode),
as `make run` and deploy/ start them. Real HTTP, a real SMTP server, parsed with
prometheus-client's parser."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import requests
from e2e_server import running_gunicorn, server_env, serving, stop
from prometheus_client.parser import text_string_to_metric_families

from testkit import BIN, ROOT, SmtpSink, wait_for

TOKEN = "metrics-" + "t" * 24

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> Samples:
    answer = requests.get(f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=10)
    assert answer.status_code == 200, answer.text
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(answer.text)
            for sample in family.samples}


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum over every series of ``name`` whose labels include ``labels``."""
    return sum(value for (sample, series), value in samples.items() if sample == name
               and set(labels.items()) <= set(series))


def requests_but_scrapes(samples: Samples) -> float:
    return sum(value for (sample, series), value in samples.items()
               if sample == "dos_http_requests_total" and ("route", "/metrics") not in series)


def test_the_workers_and_the_worker_add_up(tmp_path: Path) -> None:
    folder = tmp_path / "metrics"
    folder.mkdir()
    sink = SmtpSink().start()
    extra = {"PROMETHEUS_MULTIPROC_DIR": str(folder), "DOS_METRICS_TOKEN": TOKEN,
             "DOS_SMTP_HOST": "127.0.0.1", "DOS_SMTP_PORT": str(sink.port),
             "DOS_SMTP_SECURITY": "none", "DOS_WORKER_POLL_SECONDS": "0.05",
             "DOS_INSTANCE_PATH": str(tmp_path / "instance")}
    try:
        with running_gunicorn(tmp_path, serving(2), extra) as server:
            env = {**server_env(server.database), **extra}
            log = (tmp_path / "worker.log").open("wb")
            worker = subprocess.Popen([str(BIN / "flask"), "--app", "dos_server", "worker"],
                                      cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                _play(server.url, tmp_path, sink)
            finally:
                stop(worker)
                log.close()
    finally:
        sink.stop()


def _play(url: str, tmp_path: Path, sink: SmtpSink) -> None:
    before = scrape(url)
    made = 0  # every request below but the scrapes, each on a new connection

    def call(method: str, path: str, token: str | None = None, **body: object) -> dict[str, Any]:
        nonlocal made
        made += 1
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        answer = requests.request(method, url + path, json=body or None, headers=headers,
                                  timeout=30)
        assert answer.status_code < 300, answer.text
        return dict(answer.json())

    created = call("POST", "/api/games", seats=[
        {"name": "ann", "email": "ann@example.org"}, {"name": "bob", "email": "bob@example.org"}])
    tokens = {}
    for invite in created["invites"]:
        joined = call("POST", f"/api/games/{created['id']}/join", invite=invite["invite"])
        tokens[joined["seat"]] = joined["player_token"]
    moves = 0
    while moves < 6:
        mover = 0
        listing = call("GET", f"/api/games/{created['id']}/actions", tokens[mover])
        if not listing["your_turn"]:
            mover = 1
            listing = call("GET", f"/api/games/{created['id']}/actions", tokens[mover])
        call("POST", f"/api/games/{created['id']}/actions", tokens[mover],
             version=listing["version"], number=1)
        moves += 1
    after = scrape(url)
    assert requests_but_scrapes(after) - requests_but_scrapes(before) == made
    assert total(after, "dos_actions_applied_total", source="api") == moves
    # The worker's own figures come from the other process, in the same scrape.
    wait_for(lambda: total(scrape(url), "dos_deliveries_total", channel="email",
                           outcome="sent") == len(sink.messages) > 0,
             60, "the deliveries the worker counted to match the emails received",
             lambda: (tmp_path / "worker.log").read_text(errors="replace"))
    wait_for(lambda: total(scrape(url), "dos_worker_pass_duration_seconds_count") > 0, 60,
             "the worker's pass to be timed")
    processes = {path.stem.rsplit("_", 1)[1] for path in (tmp_path / "metrics").glob("*.db")}
    assert len(processes) >= 2, processes  # gunicorn's workers and the worker wrote there
