"""Browser benchmark of the web card table: a move, from the tap to the new table, with the
table's script (the move answers in place) and without it (a plain form and a full page load).
A measurement, not a test: it never fails on time.

Run it from the repository root (Playwright for Python and the operating system's Chromium;
``DOS_BENCH_CHROMIUM`` names another binary)::

    .venv/bin/python bench/browser_table.py                  # 60 moves each way, SQLite
    .venv/bin/python bench/browser_table.py --moves 100 --backend postgresql
    .venv/bin/python bench/browser_table.py --json           # the results as JSON

It upgrades a fresh database (SQLite: a file in a temporary directory; PostgreSQL: a new database
``dos_bench_table_<pid>`` on ``--pg-url``, dropped at the end) with ``flask db upgrade`` and serves
the app under gunicorn with the product's configuration (``--config
python:dos_server.gunicorn_conf``: 2 gevent workers) on a free loopback port, with an access log
of each request's duration. Games of one person against a greedy bot (``--target`` points: a
short game; a finished game is replaced by a new one) are made with ``POST /api/games`` and the
person's invite is joined over the API; a browser signs in to the seat as an email's link does
(``/games/<id>?token=...``, then the page's Continue button).

Two Chromium contexts (a 390x844 phone with touch) play by tapping, as a person does: a match's
hand cards, then the Center Row card (the timed tap); else the open slot; else End the turn or
Draw a card. Only the last tap of a move is timed; ``--pause`` seconds (untimed) come before each
move, as a person looks at the table. The two modes take turns, ``--block`` moves at a time (the
shared machine's speed drifts), after ``--warm-up`` untimed moves each:

* with JavaScript: from the tap's ``pointerdown`` (its event time) to the first frame after the
  table was swapped in (the ``requestAnimationFrame`` after the swap, then a task), measured in
  the page; the fetch's Resource Timing splits it into the client before the request, the
  request until its first byte (the server), the body, and the parse and swap. Every full page
  load during the moves is counted: there should be none. So are the tables the live update
  swaps in after a move's own answer (its long-poll wakes on the move's commit);
* without JavaScript (``java_script_enabled=False``): from the navigation's start (the form's
  POST) to the new page's ``load`` event, from its Navigation Timing (the POST and its 303 are
  the redirect part, then the GET of the page);
* both: the wall time in this process from just before the touchscreen tap to the new table seen
  (Playwright's own round trips included, alike in both modes).

gunicorn's access log gives the server's own time of the requests the timed moves made: the
move's POST answering the fragment (with the script) or a 303 (without), the whole page's GET,
and the live update's GET of the fragment.

The table page's weight, measured first: the HTML of ``/games/<id>`` and every stylesheet and
script it loads with the browser's cache off, uncompressed (the response bodies), against the
60 KB budget (60,000 B); also the largest table page seen without JavaScript, and the table
fragments a move answers with. Every request of both contexts to a host other than the server
is counted: there should be none.

Figures are printed with the ratio of the two modes and written to
``bench/results/browser_table.json`` (git-ignored). The exit status is 1 if the script's moves
reloaded a page or a request went to another host (correctness), 2 if the benchmark could not
go on (the server did not start, moves kept failing); never because of a time.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
from playwright.sync_api import Browser, BrowserContext, Locator, Page, Request, Response, sync_playwright
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import common
from common import RESULTS_DIR, percentile

RESULTS = RESULTS_DIR / "browser_table.json"
DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
CHROMIUM = os.environ.get("DOS_BENCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE: dict[str, Any] = {"viewport": {"width": 390, "height": 844}, "has_touch": True,
                         "is_mobile": True, "device_scale_factor": 2}
AIM_P50_MS = 150.0  # a move with the script, tap to the new table
BUDGET_BYTES = 60_000  # the table page's HTML, CSS and JavaScript, uncompressed
# gunicorn's access log: method, path, status, microseconds, the X-DOS-Part header.
ACCESS_FORMAT = "%(m)s %(U)s %(s)s %(D)s part=%({x-dos-part}i)s"
ACCESS_LINE = re.compile(r"^(GET|POST) (\S+) (\d{3}) (\d+) part=(\S*)$")

# In the page (with JavaScript): the timed tap's pointerdown, then the table swapped in (the
# body's data-version changes, or a new #table replaces the old one: a refused move), then the
# first frame after it.
PROBE = """
(() => {
  const b = window.__bench = {armed: false, tap: null, click: null, call: null, swap: null,
                              painted: null, swaps: 0};
  const fetch = window.fetch;
  window.fetch = function (...args) {  // when the table's script asks for the move
    if (b.armed && b.click !== null && b.call === null) { b.call = performance.now(); }
    return fetch.apply(this, args);
  };
  document.addEventListener("pointerdown", (event) => {
    if (b.armed && b.tap === null) { b.tap = event.timeStamp; }
  }, true);
  document.addEventListener("click", (event) => {
    if (b.armed && b.click === null) { b.click = event.timeStamp; }
  }, true);
  const seen = () => {
    b.swaps += 1;
    if (!b.armed || b.tap === null || b.swap !== null) { return; }
    b.swap = performance.now();
    requestAnimationFrame(() => setTimeout(() => { b.painted = performance.now(); }, 0));
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes" && r.target === document.body) { seen(); return; }
      for (const node of r.addedNodes) {
        if (node.nodeType === 1 && node.id === "table") { seen(); return; }
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true,
                        attributeFilter: ["data-version"]});
})();
"""
ARM = """() => { const b = window.__bench; b.armed = true; b.tap = null; b.click = null;
  b.call = null; b.swap = null; b.painted = null; performance.clearResourceTimings(); return b.swaps; }"""
TIMINGS = """() => {
  const b = window.__bench;
  const moves = performance.getEntriesByType("resource").filter(
    (e) => e.initiatorType === "fetch" && new URL(e.name).pathname.endsWith("/move"));
  const r = moves.length ? moves[moves.length - 1] : null;
  b.armed = false;
  return {swaps: b.swaps, tap: b.tap, click: b.click, call: b.call, swap: b.swap,
          painted: b.painted,
          fetch: r && {start: r.startTime, requestStart: r.requestStart,
                       connected: r.connectEnd > r.connectStart,
                       responseStart: r.responseStart, responseEnd: r.responseEnd,
                       bytes: r.decodedBodySize}};
}"""
NAVIGATION = """() => {
  const n = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  return {redirectEnd: n.redirectEnd, requestStart: n.requestStart,
          responseStart: n.responseStart, responseEnd: n.responseEnd,
          domContentLoaded: n.domContentLoadedEventEnd, load: n.loadEventEnd,
          fcp: paint ? paint.startTime : null, bytes: n.decodedBodySize,
          redirects: n.redirectCount};
}"""


class BenchError(RuntimeError):
    """Something the benchmark cannot go on with (not a slow figure)."""


# -- the server -------------------------------------------------------------------------------


@contextlib.contextmanager
def database(backend: str, tmp: Path, pg_url: str) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{tmp / 'bench.sqlite3'}"
        return
    import psycopg

    name = f"dos_bench_table_{os.getpid()}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{pg_url.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Api:
    base: str
    session: requests.Session = field(default_factory=requests.Session)

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = self.session.request(method, self.base + path, json=body, headers=headers,
                                        timeout=60)
        if response.status_code >= 300:
            raise BenchError(f"{method} {path} -> {response.status_code}: {response.text[:300]}")
        return response.json()

    def game(self, target: int) -> tuple[str, str]:
        """A new game of one person against a greedy bot, joined: its id and the person's
        player token."""
        created = self.call("POST", "/api/games", {
            "seats": [{"name": "alice"}, {"bot": "greedy"}],
            "options": {"target_score": target}})
        (invite,) = created["invites"]
        joined = self.call("POST", f"/api/games/{created['id']}/join",
                           {"invite": invite["invite"]})
        return str(created["id"]), str(joined["player_token"])

    def status(self, game_id: str) -> str:
        return str(self.call("GET", f"/api/games/{game_id}")["status"])


# -- playing by tapping -------------------------------------------------------------------------


def version(page: Page) -> int:
    return int(page.locator("body").get_attribute("data-version") or 0)


def matches(page: Page) -> list[tuple[int, list[str]]]:
    """The legal matches the page marks cards with (the table's JSON block; it is there with or
    without the script)."""
    block = page.locator("#table-data")
    if not block.count():
        return []
    found = json.loads(block.text_content() or "{}")["matches"]
    return [(int(position), list(cards)) for position, cards in found]


def hand_card(page: Page, code: str, nth: int = 0) -> Locator:
    return page.locator(f'#play .pick[value="{code}"] + label').nth(nth)


def tap(page: Page, target: Locator) -> None:
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    if box is None:
        raise BenchError("a control to tap has no box")
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def prepare(page: Page) -> tuple[str, Locator] | None:
    """Tap what comes before the timed tap of the next move and answer (its kind, the control
    whose tap plays it): a match (a single card first) picks its hand cards, the open slot
    picks the first card; else End the turn, Draw a card, or any other control. None: nothing
    to play on this page."""
    found = matches(page)
    if found:
        position, cards = ([m for m in found if len(m[1]) == 1] or found)[0]
        seen: dict[str, int] = {}
        for code in cards:
            tap(page, hand_card(page, code, seen.get(code, 0)))
            seen[code] = seen.get(code, 0) + 1
        return f"match{len(cards)}", page.locator(f'#play button.cr-card[data-pos="{position}"]')
    slot = page.locator("#play .cr-slot")
    if slot.count():
        tap(page, page.locator("#play .pick + label").first)
        return "slot", slot.first
    for name in ("End the turn", "Draw a card"):
        button = page.locator("#play .controls button", has_text=name)
        if button.count():
            return name.split()[0].lower(), button.first
    other = page.locator("#play .controls button")
    if other.count():
        return "other", other.first
    return None


@dataclass
class Move:
    kind: str
    wall_ms: float
    page_ms: float  # with the script: pointerdown -> frame after the swap; without: nav -> load
    parts: dict[str, float]
    bytes: int  # the fragment (with the script) or the page (without)
    moved: bool  # the version changed (not a refusal)
    connected: bool = False  # the move's fetch opened a new connection


@dataclass
class Mode:
    name: str
    script: bool
    context: BrowserContext
    page: Page
    moves: list[Move] = field(default_factory=list)
    warm: int = 0
    refused: int = 0
    games: int = 0
    loads: int = 0  # full page loads while playing (signing in is not counted)
    counting: bool = False
    game_id: str | None = None
    max_page_bytes: int = 0
    late_swaps: int = 0  # tables swapped in again after a timed move's own (the live update)
    last_swaps: int | None = None
    interrupted: int = 0  # moves begun again: the table was swapped while cards were picked


def sign_in(mode: Mode, base: str, api: Api, target: int) -> None:
    game_id, token = api.game(target)
    mode.counting = False
    page = mode.page
    page.goto(f"{base}/games/{game_id}?token={token}")
    page.get_by_role("button", name="Continue as alice").click()
    page.wait_for_url(f"{base}/games/{game_id}")
    page.locator("#table").wait_for()
    if mode.script:
        page.wait_for_load_state("load")
    mode.game_id = game_id
    mode.last_swaps = None
    mode.games += 1
    mode.counting = True


def one_move(mode: Mode, timed: bool) -> bool:
    """Play one move on the mode's page; False if its game is over (or has nothing to play)."""
    page = mode.page
    if page.locator(".over").count() or not page.locator("#table.mine").count():
        return False
    before = version(page)
    chosen = prepare(page)
    if chosen is None:
        return False
    kind, target = chosen
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    if box is None:
        raise BenchError("the move's control has no box")
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    if mode.script:
        swaps = int(page.evaluate(ARM))
        if timed and mode.last_swaps is not None:
            mode.late_swaps += swaps - mode.last_swaps
        t0 = time.perf_counter()
        page.touchscreen.tap(x, y)
        page.wait_for_function("() => window.__bench.painted !== null", timeout=30_000)
        wall = time.perf_counter() - t0
        got = page.evaluate(TIMINGS)
        mode.last_swaps = int(got["swaps"])
        fetch = got["fetch"] or {}
        parts = {}
        if fetch:
            parts = {"tap_to_click": got["click"] - got["tap"],
                     "click_to_fetch_call": got["call"] - got["click"],
                     "fetch_call_to_request": fetch["requestStart"] - got["call"],
                     "request_to_first_byte": fetch["responseStart"] - fetch["requestStart"],
                     "body": fetch["responseEnd"] - fetch["responseStart"],
                     "parse_and_swap": got["swap"] - fetch["responseEnd"],
                     "to_frame": got["painted"] - got["swap"]}
        move = Move(kind, wall * 1000, got["painted"] - got["tap"], parts,
                    int(fetch.get("bytes") or 0), version(page) != before,
                    bool(fetch.get("connected")))
    else:
        t0 = time.perf_counter()
        with page.expect_navigation(wait_until="load", timeout=30_000):
            page.touchscreen.tap(x, y)
        wall = time.perf_counter() - t0
        nav = page.evaluate(NAVIGATION)
        parts = {"post_and_redirect": nav["redirectEnd"],
                 "page_request_to_first_byte": nav["responseStart"] - nav["requestStart"],
                 "page_body": nav["responseEnd"] - nav["responseStart"],
                 "to_load": nav["load"] - nav["responseEnd"]}
        if nav["fcp"] is not None:
            parts["first_contentful_paint"] = nav["fcp"]
        move = Move(kind, wall * 1000, nav["load"], parts, int(nav["bytes"] or 0),
                    version(page) != before)
        mode.max_page_bytes = max(mode.max_page_bytes, move.bytes)
    if not move.moved:
        mode.refused += 1
    if timed:
        mode.moves.append(move)
    else:
        mode.warm += 1
    return True


def unpick(page: Page) -> None:
    for _ in range(page.locator("#play .pick:checked").count()):
        tap(page, page.locator("#play .pick:checked + label").first)


def play_block(mode: Mode, base: str, api: Api, target: int, count: int, timed: bool,
               pause: float) -> None:
    """``count`` moves (new games as they finish), ``pause`` seconds before each (a person
    looks at the table before tapping; the live update settles)."""
    done = 0
    stuck = 0
    while done < count:
        if mode.game_id is None:
            sign_in(mode, base, api, target)
        time.sleep(pause)
        try:
            played = one_move(mode, timed)
        except PlaywrightTimeout as error:
            stuck += 1
            if stuck > 5:
                raise BenchError(f"{mode.name}: moves keep timing out: {error}") from None
            mode.game_id = None
            continue
        except PlaywrightError as error:
            # A control went away under the tap: the live update swapped the table in again
            # (the picks are kept). Begin the move again from nothing picked.
            stuck += 1
            if stuck > 5:
                raise BenchError(f"{mode.name}: moves keep failing: {error}") from None
            mode.interrupted += 1
            unpick(mode.page)
            continue
        if played:
            done += 1
            continue
        if mode.game_id is not None and api.status(mode.game_id) != "finished":
            stuck += 1  # not our turn: the bot moves inside our request, so it should be
            if stuck > 5:
                raise BenchError(f"{mode.name}: the table offers nothing to play")
        mode.game_id = None


# -- the page's weight and its hosts ----------------------------------------------------------


@dataclass
class Weight:
    files: list[dict[str, Any]]
    html: int
    css: int
    js: int
    other: int

    @property
    def total(self) -> int:
        return self.html + self.css + self.js


def weigh(browser: Browser, base: str, api: Api, target: int) -> Weight:
    """The table page's responses with the cache off, with the script."""
    context = browser.new_context(**PHONE)
    page = context.new_page()
    game_id, token = api.game(target)
    page.goto(f"{base}/games/{game_id}?token={token}")
    page.get_by_role("button", name="Continue as alice").click()
    page.wait_for_url(f"{base}/games/{game_id}")
    page.wait_for_load_state("load")
    responses: list[Response] = []
    page.on("response", lambda response: responses.append(response))
    # The sign-in page loaded the stylesheet and dos.js already: without the cache, the table
    # page loads every file it names, as a first visit does.
    cdp = context.new_cdp_session(page)
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    page.reload(wait_until="load")
    page.wait_for_timeout(500)  # a late request (an icon, the manifest) is counted too
    files: list[dict[str, Any]] = []
    sums = {"html": 0, "css": 0, "js": 0, "other": 0}
    seen: set[str] = set()
    for response in responses:
        resource = response.request.resource_type
        if response.status >= 300 or resource in ("fetch", "xhr", "eventsource", "websocket"):
            continue  # a redirect, or the live update's long-poll (not the page's weight)
        if response.url in seen:  # the icon is asked for twice
            continue
        seen.add(response.url)
        kind = {"document": "html", "stylesheet": "css", "script": "js"}.get(resource, "other")
        try:
            size = len(response.body())
        except PlaywrightError as error:  # a body the browser no longer holds
            if kind != "other":
                raise BenchError(f"the body of {response.url} cannot be read: {error}") from None
            size = int(response.headers.get("content-length", 0))
        sums[kind] += size
        files.append({"path": urlsplit(response.url).path.replace(game_id, "<id>"),
                      "kind": kind, "resource": resource, "bytes": size,
                      "encoding": response.headers.get("content-encoding", "identity"),
                      "cache_control": response.headers.get("cache-control")})
    context.close()
    return Weight(files, **sums)


# -- the run ----------------------------------------------------------------------------------


def summary(values: Sequence[float]) -> dict[str, float]:
    return {"n": len(values), "p50": percentile(values, 0.5), "p90": percentile(values, 0.9),
            "mean": statistics.fmean(values) if values else float("nan"),
            "max": max(values) if values else float("nan")}


def parts_summary(moves: Sequence[Move]) -> dict[str, float]:
    keys = sorted({k for m in moves for k in m.parts})
    return {k: statistics.median([m.parts[k] for m in moves if k in m.parts]) for k in keys}


def log_size(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


def server_times(log: Path, start: int, end: int) -> dict[str, dict[str, float]]:
    """gunicorn's own duration of the requests the timed moves made (the access log's bytes
    from ``start`` to ``end``), in ms."""
    found: dict[str, list[float]] = {"move_part": [], "move_form": [], "table_page": [],
                                     "table_part": []}
    if not log.exists():
        return {}
    with log.open("rb") as stream:
        stream.seek(start)
        text = stream.read(end - start).decode(errors="replace")
    for line in text.splitlines():
        hit = ACCESS_LINE.match(line.strip())
        if not hit:
            continue
        method, path, status, micros, part = hit.groups()
        ms = int(micros) / 1000
        if method == "POST" and path.endswith("/move"):
            found["move_part" if part == "table" else "move_form"].append(ms)
        elif method == "GET" and re.fullmatch(r"/games/[^/]+", path) and status == "200":
            found["table_part" if part == "table" else "table_page"].append(ms)
    return {key: summary(values) for key, values in found.items() if values}


def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average": os.getloadavg(),
        "settings": {"moves": args.moves, "warm_up": args.warm_up, "block": args.block,
                     "target": args.target, "pause": args.pause, "backend": args.backend},
    }
    with tempfile.TemporaryDirectory(prefix="dos-bench-table-") as folder:
        tmp = Path(folder)
        log = tmp / "gunicorn.log"
        access = tmp / "access.log"
        with database(args.backend, tmp, args.pg_url) as url:
            env = common.server_env(url)
            common.upgrade_schema(env)
            serving = ["--config", "python:dos_server.gunicorn_conf", "--graceful-timeout", "5",
                       "--access-logfile", str(access), "--access-logformat", ACCESS_FORMAT]
            with common.gunicorn(serving, env, log) as (port, _process):
                base = f"http://127.0.0.1:{port}"
                report.update(measure(args, base, Api(base), access))
            report["server_ms"] = server_times(access, *report.pop("access_log_window"))
            errors = [line for line in log.read_text().splitlines()
                      if "ERROR" in line or "Traceback" in line] if log.exists() else []
            report["server_errors"] = errors[:5]
    report["chromium"] = CHROMIUM
    return report


def measure(args: argparse.Namespace, base: str, api: Api, access: Path) -> dict[str, Any]:
    host = urlsplit(base).netloc
    foreign: list[str] = []

    def watch(request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc != host:
            foreign.append(f"{parts.scheme}://{parts.netloc}{parts.path}")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            modes: list[Mode] = []
            for name, script in (("script", True), ("no script", False)):
                context = browser.new_context(java_script_enabled=script, **PHONE)
                context.on("request", watch)
                if script:
                    context.add_init_script(PROBE)
                page = context.new_page()
                mode = Mode(name, script, context, page)

                def loaded(_page: Page, mode: Mode = mode) -> None:
                    if mode.counting:
                        mode.loads += 1

                page.on("load", loaded)
                modes.append(mode)
            weight = weigh(browser, base, api, args.target)
            for mode in modes:
                play_block(mode, base, api, args.target, args.warm_up, False, args.pause)
            time.sleep(0.5)  # the warm-up's last access log lines
            start = log_size(access)
            while any(len(m.moves) < args.moves for m in modes):
                for mode in modes:
                    left = args.moves - len(mode.moves)
                    if left > 0:
                        play_block(mode, base, api, args.target, min(args.block, left), True,
                                   args.pause)
            for mode in modes:
                mode.counting = False
            time.sleep(0.5)
            end = log_size(access)
            for mode in modes:
                mode.context.close()
        finally:
            browser.close()
    js, plain = modes
    out: dict[str, Any] = {"access_log_window": (start, end)}
    for mode in modes:
        out[mode.name.replace(" ", "_")] = {
            "page_ms": summary([m.page_ms for m in mode.moves]),
            "wall_ms": summary([m.wall_ms for m in mode.moves]),
            "parts_p50_ms": parts_summary(mode.moves),
            "answer_bytes": summary([float(m.bytes) for m in mode.moves]),
            "kinds": {k: sum(1 for m in mode.moves if m.kind == k)
                      for k in sorted({m.kind for m in mode.moves})},
            "warm_up_moves": mode.warm, "refused": mode.refused, "games": mode.games,
            "full_page_loads": mode.loads if mode.script else None,
            "late_swaps": mode.late_swaps if mode.script else None,
            "new_connections": sum(m.connected for m in mode.moves) if mode.script else None,
            "interrupted": mode.interrupted,
        }
    ratio: dict[str, float] = {}
    if js.moves and plain.moves:
        for key in ("page", "wall"):
            ours = [float(getattr(m, f"{key}_ms")) for m in js.moves]
            theirs = [float(getattr(m, f"{key}_ms")) for m in plain.moves]
            for q in (0.5, 0.9):
                ratio[f"{key}_p{round(q * 100)}"] = percentile(ours, q) / percentile(theirs, q)
    largest = plain.max_page_bytes + weight.css + weight.js
    out["ratio_script_to_no_script"] = ratio
    out["weight"] = {"files": weight.files, "html": weight.html, "css": weight.css,
                     "js": weight.js, "total": weight.total, "other": weight.other,
                     "largest_html_seen": plain.max_page_bytes,
                     "largest_total_seen": largest, "budget": BUDGET_BYTES}
    out["third_party_requests"] = {"count": len(foreign), "first": sorted(set(foreign))[:10]}
    return out


def show(report: dict[str, Any]) -> None:
    s = report["settings"]
    print(f"card table in Chromium ({report['chromium']}), gunicorn with the product's config "
          f"on {s['backend']}; {report['cpus']} CPUs, load average "
          f"{', '.join(f'{v:.2f}' for v in report['load_average'])} at the start")
    print(f"{s['moves']} timed moves each way after {s['warm_up']} untimed, in blocks of "
          f"{s['block']}; games of one person against a greedy bot to {s['target']}\n")
    print(f"{'tap to new table, ms':54}{'n':>4} {'p50':>7} {'p90':>7} {'mean':>7} {'max':>7}")
    for key, label in (("script", "with the script (in place)"),
                       ("no_script", "without it (plain form, full load)")):
        mode = report[key]
        for measure_key, what in (("page_ms", "in the page"), ("wall_ms", "wall, Playwright")):
            v = mode[measure_key]
            print(f"{label + ', ' + what:54}{v['n']:4d} {v['p50']:7.1f} {v['p90']:7.1f} "
                  f"{v['mean']:7.1f} {v['max']:7.1f}")
    r = report["ratio_script_to_no_script"]
    if r:
        print(f"script / no script: in the page p50 {r['page_p50']:.2f}x, p90 "
              f"{r['page_p90']:.2f}x; wall p50 {r['wall_p50']:.2f}x, p90 {r['wall_p90']:.2f}x")
    js_p50 = report["script"]["page_ms"]["p50"]
    print(f"aim: p50 under {AIM_P50_MS:.0f} ms with the script: "
          f"{'met' if js_p50 < AIM_P50_MS else 'NOT met'} ({js_p50:.1f} ms)")
    for key, label in (("script", "with the script"), ("no_script", "without it")):
        parts = report[key]["parts_p50_ms"]
        print(f"  {label}, where the time goes (p50 of each part, ms): "
              + ", ".join(f"{k.replace('_', ' ')} {v:.1f}" for k, v in parts.items()))
    for key, label in (("move_part", "POST /move answering the fragment"),
                       ("move_form", "POST /move answering 303"),
                       ("table_page", "GET /games/<id>, the whole page"),
                       ("table_part", "GET /games/<id>, the fragment (live update)")):
        v = report.get("server_ms", {}).get(key)
        if v:
            print(f"  server's own time (gunicorn), {label}: p50 {v['p50']:.1f} ms, "
                  f"p90 {v['p90']:.1f} ms (n {v['n']})")
    for key, label in (("script", "with the script"), ("no_script", "without it")):
        m = report[key]
        extra = (f", full page loads {m['full_page_loads']}, tables swapped in again after the "
                 f"move's own {m['late_swaps']}, moves that opened a connection "
                 f"{m['new_connections']}" if m["full_page_loads"] is not None else "")
        print(f"  {label}: {m['games']} games, moves {m['kinds']}, refused {m['refused']}, "
              f"begun again {m['interrupted']}, answer p50 {m['answer_bytes']['p50']:,.0f} B"
              f"{extra}")
    w = report["weight"]
    print(f"\nthe table page's weight, uncompressed: HTML {w['html']:,} B + CSS {w['css']:,} B "
          f"+ JS {w['js']:,} B = {w['total']:,} B of {w['budget']:,} B "
          f"({w['total'] / w['budget']:.2f}x); the largest table page seen: HTML "
          f"{w['largest_html_seen']:,} B, with CSS and JS {w['largest_total_seen']:,} B")
    for f in w["files"]:
        print(f"  {f['kind']:5} {f['bytes']:7,} B  {f['path']}  ({f['encoding']}, "
              f"cache {f['cache_control']})")
    t = report["third_party_requests"]
    print(f"requests to another host: {t['count']}" + (f" {t['first']}" if t["count"] else ""))
    if report.get("server_errors"):
        print(f"gunicorn log errors: {report['server_errors']}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--moves", type=int, default=60, help="timed moves each way (60)")
    parser.add_argument("--warm-up", type=int, default=5, help="untimed moves each way first (5)")
    parser.add_argument("--block", type=int, default=10,
                        help="moves of one mode before the other's turn (10)")
    parser.add_argument("--target", type=int, default=1,
                        help="the games' target score (1: the first round decides)")
    parser.add_argument("--pause", type=float, default=0.3,
                        help="seconds before each move, untimed (0.3)")
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--pg-url", default=os.environ.get("DOS_BENCH_PG_URL", DEFAULT_PG_URL),
                        help="an admin URL of the PostgreSQL server (a database is created on it)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON file ({RESULTS})")
    args = parser.parse_args(argv)
    if args.moves < 1 or args.block < 1 or args.warm_up < 0 or args.target < 1 or args.pause < 0:
        parser.error("numbers must be positive")
    try:
        report = run(args)
    except (BenchError, common.NotReady) as error:
        print(f"browser_table: {error}", file=sys.stderr)
        return 2
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        show(report)
        print(f"\nwrote {args.output}")
    failures = []
    if report["script"]["full_page_loads"]:
        failures.append(f"{report['script']['full_page_loads']} full page loads with the script")
    if report["third_party_requests"]["count"]:
        failures.append(f"{report['third_party_requests']['count']} requests to another host")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
