"""Benchmark of the DOS rules engine (dos_engine). A measurement, not a test: it never fails on time.

Run it from the repository root::

    .venv/bin/python bench/engine.py            # full run (about 20 seconds)
    .venv/bin/python bench/engine.py --quick    # a few seconds
    make bench-engine                           # installs the package (and RLCard) first
    .venv/bin/python bench/engine.py --profile  # cProfile of random self-play

Everything runs in this one process, on one core. It measures, with default rule options and
four players:

* random self-play: every seat picks uniformly among ``game.legal_actions()`` with its own
  seeded ``random.Random``; the timed loop is ``legal_actions()`` + the choice + ``play()``
  (no views), over whole games from ``Game.new``. Rounds are counted from ``game.round_no`` at
  the end of each game (every round of a finished game is complete).
* RLCard's UNO (when the ``bench`` extra is installed: ``pip install -e '.[bench]'``), for
  comparison: four players, each action uniformly random among the legal actions, whole games,
  in the same process and interleaved with the DOS blocks above (block for block, so that the
  machine's load falls on both alike). RLCard's loop is its bare engine, ``UnoGame``, driven
  the way RLCard drives itself: one game reused, ``init_game()`` for each new game (as its
  ``Env.reset()`` does), its ``np_random`` reseeded per game; then the legal actions its
  ``step`` returns in the next state, the choice, ``step`` (no observation encoding, which
  RLCard's environments add on top). The ratio DOS / UNO actions/s is printed.
* greedy self-play: whole games to 200 points through ``dos_engine.play_game`` (which builds a
  view for every decision, as a real bot does).
* ``legal_actions()`` latency on a few thousand states sampled from random self-play (each
  state timed several times, the minimum kept; then the median and worst across states), and
  on one huge hand-made state (40 cards in hand, 12 in the Center Row).

Each figure is printed next to its aim as a ratio, and all of them are written as JSON to
``bench/results/engine.json`` (git-ignored). ``--profile`` prints the 15 functions of the random
self-play loop with the most own time instead, and writes nothing; ``--versus`` measures only
random self-play against RLCard's UNO (several interleaved blocks) and prints the ratio.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import datetime as dt
import gc
import json
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dos_engine
from common import RESULTS_DIR, percentile
from dos_engine import Game

try:  # the `bench` extra: RLCard's UNO, the yardstick of random self-play
    from rlcard.games.uno.game import UnoGame
except ModuleNotFoundError:
    UnoGame = None

RESULTS = RESULTS_DIR / "engine.json"
PLAYERS = ("north", "east", "south", "west")

# Aims (RLCard plays UNO at roughly this pace; the listing budgets keep bots and the server cheap).
AIM_ACTIONS_PER_S = 50_000
AIM_ROUNDS_PER_S = 1_000
AIM_TYPICAL_LISTING_US = 30.0
AIM_HUGE_LISTING_US = 5_000.0
AIM_VERSUS_RLCARD = 1.2  # DOS / RLCard UNO actions/s, RLCard driven as its Env.reset drives it

# The huge state: seat 0 holds 40 cards (all four Wild # and five Wild DOS among them) and
# the Center Row holds 12 (two Wild #, two Wild DOS). Every other card is dealt or drawn.
HUGE_HAND = [
    *("R1", "R1", "R3", "R4", "R5", "R6", "R7", "R8"),
    *("G1", "G3", "G3", "G4", "G5", "G7", "G9", "G10"),
    *("B1", "B3", "B4", "B4", "B5", "B6", "B8"),
    *("Y1", "Y3", "Y4", "Y5", "Y5", "Y6", "Y9", "Y10"),
    *("R#", "G#", "B#", "Y#", "W2", "W2", "W2", "W2", "W2"),
]
HUGE_CENTER_ROW = ["R9", "G6", "R#", "B10", "W2", "Y7", "R10", "G8", "B#", "B7", "W2", "Y8"]
OTHER_HAND_SIZE = 7


@dataclass(frozen=True)
class Settings:
    quick: bool
    selfplay_seconds: float
    greedy_seconds: float
    typical_states: int
    typical_repetitions: int
    huge_repetitions: int
    blocks: int = 5  # random self-play is measured in this many consecutive parts
    sample_every: int = 7  # keep one state in this many from random self-play


FULL = Settings(False, 5.0, 5.0, 4_000, 7, 300, blocks=10)
QUICK = Settings(True, 0.6, 0.6, 600, 3, 40, blocks=2)


@dataclass
class SelfPlay:
    strategy: str
    seconds: float  # wall clock
    cpu_seconds: float  # this process's CPU time: well below ``seconds`` means it was crowded out
    games: int
    rounds: int
    actions: int
    actions_per_s: float = field(init=False)
    rounds_per_s: float = field(init=False)
    games_per_s: float = field(init=False)
    actions_per_round: float = field(init=False)
    rounds_per_game: float = field(init=False)
    # actions/s of each consecutive block of the measurement: their spread shows the noise
    block_actions_per_s: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.actions_per_s = self.actions / self.seconds
        self.rounds_per_s = self.rounds / self.seconds
        self.games_per_s = self.games / self.seconds
        self.actions_per_round = self.actions / max(self.rounds, 1)
        self.rounds_per_game = self.rounds / max(self.games, 1)


@dataclass
class Latency:
    """Times of ``legal_actions()`` in microseconds, and how many actions the states list."""

    samples: int
    repetitions: int
    median_us: float
    p90_us: float
    p99_us: float
    max_us: float
    median_actions: float
    max_actions: int
    phases: dict[str, int] = field(default_factory=dict)
    slowest: dict[str, Any] = field(default_factory=dict)  # the state of ``max_us``


# -- self-play ------------------------------------------------------------------------------


def random_games(seconds: float, seed: str) -> SelfPlay:
    """Play whole random games until ``seconds`` have passed (the last game is finished)."""
    games = rounds = actions = 0
    clock = time.perf_counter
    cpu_start = time.process_time()
    start = clock()
    while True:
        game = Game.new(PLAYERS, f"{seed}-{games}")
        rngs = [random.Random(f"{seed}-{games}-{seat}") for seat in range(len(PLAYERS))]
        played = 0
        while game.winner is None:
            legal = game.legal_actions()
            game.play(legal[rngs[game.current].randrange(len(legal))])
            played += 1
        games += 1
        rounds += game.round_no  # the game ended with a round: all of its rounds are complete
        actions += played
        elapsed = clock() - start
        if elapsed >= seconds:
            return SelfPlay("random", elapsed, time.process_time() - cpu_start, games, rounds, actions)


def uno_games(seconds: float, seed: str) -> SelfPlay:
    """RLCard's UNO as ``random_games`` plays DOS: four players, random legal actions, whole games.

    A game of RLCard's UNO is one hand (the first player out wins), so rounds equal games.
    """
    if UnoGame is None:
        raise RuntimeError("RLCard is not installed: pip install -e '.[bench]'")
    games = actions = 0
    # One game reused, as RLCard's own ``Env.reset()`` reuses its game through ``init_game()``:
    # a new ``UnoGame`` and ``RandomState`` per game would cost RLCard about 40% of its pace.
    game = UnoGame(num_players=len(PLAYERS))
    clock = time.perf_counter
    cpu_start = time.process_time()
    start = clock()
    while True:
        rng = random.Random(f"{seed}-{games}")
        game.np_random.seed(rng.getrandbits(32))  # its deals and shuffles, the same for a seed
        state, _ = game.init_game()
        played = 0
        while not game.is_over():
            legal = state["legal_actions"]
            state, _ = game.step(legal[rng.randrange(len(legal))])
            played += 1
        games += 1
        actions += played
        elapsed = clock() - start
        if elapsed >= seconds:
            return SelfPlay("rlcard-uno", elapsed, time.process_time() - cpu_start, games, games,
                            actions)


def add_blocks(parts: list[SelfPlay]) -> SelfPlay:
    """Consecutive measurements of one strategy, added up (each block's pace kept)."""
    total = SelfPlay(
        parts[0].strategy,
        sum(p.seconds for p in parts),
        sum(p.cpu_seconds for p in parts),
        sum(p.games for p in parts),
        sum(p.rounds for p in parts),
        sum(p.actions for p in parts),
    )
    total.block_actions_per_s = [round(p.actions_per_s) for p in parts]
    return total


def random_blocks(seconds: float, blocks: int, seed: str) -> SelfPlay:
    """``random_games`` in ``blocks`` consecutive parts (new seeds each), added up."""
    return add_blocks([random_games(seconds / blocks, f"{seed}-{n}") for n in range(blocks)])


def versus_blocks(seconds: float, blocks: int, seed: str) -> tuple[SelfPlay, SelfPlay]:
    """DOS and RLCard's UNO random self-play, block after block in turn (``seconds`` each)."""
    dos: list[SelfPlay] = []
    uno: list[SelfPlay] = []
    for n in range(blocks):
        dos.append(random_games(seconds / blocks, f"{seed}-{n}"))
        uno.append(uno_games(seconds / blocks, f"{seed}-{n}"))
    return add_blocks(dos), add_blocks(uno)


def print_versus(dos: SelfPlay, uno: SelfPlay) -> float:
    """Print RLCard's figures and the ratio; return the ratio DOS / UNO actions/s."""
    print_selfplay(uno, with_aims=False)
    spread = ", ".join(f"{rate:,.0f}" for rate in uno.block_actions_per_s)
    print(f"  actions/s of each of {len(uno.block_actions_per_s)} blocks: {spread}")
    ratio = dos.actions_per_s / uno.actions_per_s
    per_block = ", ".join(
        f"{d / u:.2f}x" for d, u in zip(dos.block_actions_per_s, uno.block_actions_per_s, strict=True)
    )
    print(f"  DOS / RLCard UNO actions/s: {dos.actions_per_s:,.0f} / {uno.actions_per_s:,.0f} = "
          f"{ratio:.2f}x ({'meets' if ratio >= AIM_VERSUS_RLCARD else 'misses'} the "
          f"{AIM_VERSUS_RLCARD:.1f}x aim; "
          f"block by block {per_block})")
    # Per CPU second of this process: less sensitive to other work on the machine.
    dos_cpu = dos.actions / dos.cpu_seconds
    uno_cpu = uno.actions / uno.cpu_seconds
    print(f"  per CPU second: {dos_cpu:,.0f} / {uno_cpu:,.0f} = {dos_cpu / uno_cpu:.2f}x")
    return ratio


def greedy_games(seconds: float, seed: str) -> SelfPlay:
    """Play whole games between four ``greedy`` bots (views included) until ``seconds`` pass."""
    strategies = [dos_engine.greedy] * len(PLAYERS)
    games = rounds = actions = 0
    clock = time.perf_counter
    cpu_start = time.process_time()
    start = clock()
    while True:
        game, record = dos_engine.play_game(PLAYERS, f"{seed}-{games}", strategies)
        games += 1
        rounds += game.round_no
        actions += len(record.actions)
        elapsed = clock() - start
        if elapsed >= seconds:
            return SelfPlay("greedy", elapsed, time.process_time() - cpu_start, games, rounds, actions)


# -- legal_actions() latency ----------------------------------------------------------------


def sample_states(count: int, every: int, seed: str) -> list[Game]:
    """Copies of every ``every``-th state met in random self-play, until ``count`` are kept."""
    states: list[Game] = []
    seen = 0
    games = 0
    while True:
        game = Game.new(PLAYERS, f"{seed}-{games}")
        rng = random.Random(f"{seed}-{games}")
        games += 1
        while game.winner is None:
            seen += 1
            if seen % every == 0:
                states.append(game.copy())
                if len(states) >= count:
                    return states
            legal = game.legal_actions()
            game.play(legal[rng.randrange(len(legal))])


def time_listing(game: Game, repetitions: int) -> list[int]:
    """Nanoseconds of each of ``repetitions`` calls of ``legal_actions()`` on copies of ``game``.

    Each call is on a fresh copy (made before the clock starts): a game answers a second call
    in the same state from the listing it made, which would time a copy of a list.
    """
    fresh = [game.copy() for _ in range(repetitions)]
    clock = time.perf_counter_ns
    times: list[int] = []
    for copy in fresh:
        listing = copy.legal_actions
        start = clock()
        listing()
        times.append(clock() - start)
    return times


def describe_state(game: Game) -> dict[str, Any]:
    return {
        "phase": game.phase.value,
        "hand": " ".join(card.code for card in sorted(game.hands[game.current])),
        "center_row": " ".join(
            card.code + ("*" if matched is not None else "")  # * : matched this turn
            for card, matched in zip(game.center_row, game.cr_matched, strict=True)
        ),
        "drawn": None if game.drawn is None else game.drawn.code,
        "legal_actions": len(game.legal_actions()),
    }


def summarize(times_ns: list[int], repetitions: int, action_counts: list[int],
              phases: dict[str, int], slowest: Game) -> Latency:
    values = sorted(t / 1_000 for t in times_ns)
    return Latency(
        samples=len(values),
        repetitions=repetitions,
        median_us=statistics.median(values),
        p90_us=percentile(values, 0.90),
        p99_us=percentile(values, 0.99),
        max_us=values[-1],
        median_actions=statistics.median(action_counts),
        max_actions=max(action_counts),
        phases=phases,
        slowest=describe_state(slowest),
    )


def typical_latency(settings: Settings, seed: str) -> Latency:
    states = sample_states(settings.typical_states, settings.sample_every, seed)
    gc.collect()
    best = [sys.maxsize] * len(states)
    gc.disable()  # as timeit does: a collection would land on whichever state is being timed
    try:
        # One pass over all states per repetition, so that the repetitions of one state are far
        # apart in time and a single interruption of the process cannot spoil all of them.
        for _ in range(settings.typical_repetitions):
            for index, state in enumerate(states):
                best[index] = min(best[index], time_listing(state, 1)[0])
    finally:
        gc.enable()
    counts = [len(state.legal_actions()) for state in states]
    phases = Counter(state.phase.value for state in states)
    slowest = states[max(range(len(states)), key=best.__getitem__)]
    return summarize(best, settings.typical_repetitions, counts, dict(sorted(phases.items())),
                     slowest)


def huge_state() -> Game:
    """A legal start-of-turn state with 40 cards in the current hand and 12 in the Center Row."""
    raw = Game.new(PLAYERS, "bench-huge").to_dict()
    rest = [card.code for card in dos_engine.new_deck()]
    for code in HUGE_HAND + HUGE_CENTER_ROW:
        rest.remove(code)  # raises if the hand and CR ask for more copies than the deck has
    random.Random("bench-huge").shuffle(rest)
    others = [rest[i * OTHER_HAND_SIZE:(i + 1) * OTHER_HAND_SIZE] for i in range(len(PLAYERS) - 1)]
    raw["hands"] = [list(HUGE_HAND), *others]
    raw["draw_pile"] = rest[len(others) * OTHER_HAND_SIZE:]
    raw["discard_pile"] = []
    raw["center_row"] = [{"card": code, "matched_with": None} for code in HUGE_CENTER_ROW]
    raw["current"] = 0
    raw["reshuffles"] = 0
    game = Game.from_dict(raw)  # checks that all 108 cards are there exactly once
    if game.phase is not dos_engine.Phase.START or len(game.hands[0]) != len(HUGE_HAND):
        raise RuntimeError("the huge state is not the start of a 40-card turn")
    return game


def huge_latency(settings: Settings) -> tuple[Latency, Game]:
    game = huge_state()
    game.copy().legal_actions()  # warm the engine's tables of Match objects once
    gc.collect()
    gc.disable()
    try:
        times = time_listing(game, settings.huge_repetitions)
    finally:
        gc.enable()
    count = len(game.legal_actions())
    return summarize(times, 1, [count], {game.phase.value: 1}, game), game


def timer_overhead_ns() -> int:
    """The smallest gap between two back-to-back ``perf_counter_ns()`` readings."""
    clock = time.perf_counter_ns
    best = sys.maxsize
    for _ in range(10_000):
        start = clock()
        best = min(best, clock() - start)
    return best


# -- report ---------------------------------------------------------------------------------


def ratio_more(value: float, aim: float, unit: str) -> str:
    verdict = "meets" if value >= aim else "misses"
    return f"{value / aim:.2f}x of the {aim:,.0f}{unit} aim, {verdict} it"


def ratio_less(value_us: float, aim_us: float) -> str:
    verdict = "within" if value_us < aim_us else "over"
    return f"{value_us / aim_us:.2f}x of the < {format_us(aim_us)} aim, {verdict} it"


def format_us(value_us: float) -> str:
    if value_us >= 1_000:
        return f"{value_us / 1_000:,.2f} ms"
    return f"{value_us:,.1f} µs"


def git(directory: Path, *args: str) -> str | None:
    try:
        found = subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True, text=True, check=True, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip()


def engine_revision(engine: Path) -> dict[str, Any]:
    """The commit the measured engine comes from, and whether its files differ from it."""
    commit = git(engine, "rev-parse", "--short", "HEAD")
    if not commit:
        return {"commit": None, "engine_modified": None}
    changes = git(engine, "status", "--porcelain", "--", ".")
    return {"commit": commit, "engine_modified": bool(changes)}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def steal_seconds() -> float | None:
    """CPU time the hypervisor took from this machine's CPUs so far (Linux), or None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def environment() -> dict[str, Any]:
    engine = Path(dos_engine.__file__).resolve().parent
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "python_build": " ".join(platform.python_build()),
        "compiler": platform.python_compiler(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average_before": load_average(),  # other work on the machine skews every figure
        "engine": str(engine),
        **engine_revision(engine),
    }


def print_selfplay(result: SelfPlay, with_aims: bool) -> None:
    print(f"  {result.games:,} games, {result.rounds:,} rounds, {result.actions:,} actions "
          f"in {result.seconds:.2f} s, CPU {result.cpu_seconds / result.seconds:.0%} of it "
          f"({result.rounds_per_game:.1f} rounds/game, {result.actions_per_round:.1f} actions/round)")
    if result.cpu_seconds < 0.95 * result.seconds:
        print(f"  warning: this process had only {result.cpu_seconds / result.seconds:.0%} of a CPU "
              "(other work ran); rerun on a quiet machine")
    if with_aims:
        print(f"  actions/s: {result.actions_per_s:,.0f} "
              f"({ratio_more(result.actions_per_s, AIM_ACTIONS_PER_S, '')})")
        print(f"  rounds/s:  {result.rounds_per_s:,.0f} "
              f"({ratio_more(result.rounds_per_s, AIM_ROUNDS_PER_S, '')})")
        print(f"  games/s:   {result.games_per_s:,.2f}")
        spread = ", ".join(f"{rate:,.0f}" for rate in result.block_actions_per_s)
        print(f"  actions/s of each of {len(result.block_actions_per_s)} blocks: {spread}")
    else:
        print(f"  games/s:   {result.games_per_s:,.2f} "
              f"(actions/s {result.actions_per_s:,.0f}, rounds/s {result.rounds_per_s:,.0f})")


def print_latency(latency: Latency, aim_us: float, huge: bool) -> None:
    if huge:
        print(f"  {latency.samples} calls; it lists {latency.max_actions:,} legal actions")
    else:
        print(f"  {latency.samples:,} states, min of {latency.repetitions} calls each; "
              f"legal actions per state: median {latency.median_actions:g}, "
              f"max {latency.max_actions}; phases {latency.phases}")
    print(f"  median: {format_us(latency.median_us)} ({ratio_less(latency.median_us, aim_us)})")
    print(f"  worst:  {format_us(latency.max_us)} ({ratio_less(latency.max_us, aim_us)})")
    print(f"  p90 {format_us(latency.p90_us)}, p99 {format_us(latency.p99_us)}")
    if not huge:
        slowest = latency.slowest
        print(f"  slowest state: {slowest['phase']}, hand {slowest['hand']}; "
              f"Center Row {slowest['center_row']}"
              + (f"; drew {slowest['drawn']}" if slowest["drawn"] else "")
              + f"; {slowest['legal_actions']} legal actions")


def run(settings: Settings, output: Path) -> dict[str, Any]:
    env = environment()
    steal_start, wall_start = steal_seconds(), time.perf_counter()
    options = dos_engine.Options()
    print(f"dos_engine benchmark{' (quick)' if settings.quick else ''}: "
          f"{len(PLAYERS)} players, options {options.to_dict()}, one process")
    print(f"Python {env['python']} ({env['implementation']}, {env['python_build']}, "
          f"{env['compiler']})")
    print(f"{env['platform']}; {env['cpu']}, {env['cpu_count']} CPUs; "
          f"load average {env['load_average_before']}")
    revision = "not in git" if env["commit"] is None else (
        f"commit {env['commit']}" + (" with uncommitted changes" if env["engine_modified"] else ""))
    print(f"engine: {env['engine']} ({revision})")

    random_games(min(0.2, settings.selfplay_seconds), "bench-warmup")  # warm caches and the CPU
    print(f"\nrandom self-play (legal_actions + random choice + play, whole games, "
          f"≥ {settings.selfplay_seconds:g} s)")
    uno: SelfPlay | None = None
    versus: float | None = None
    if UnoGame is None:
        selfplay = random_blocks(settings.selfplay_seconds, settings.blocks, "bench-random")
        print_selfplay(selfplay, with_aims=True)
        print("\nRLCard's UNO: not installed (pip install -e '.[bench]'), no ratio")
    else:
        uno_games(min(0.2, settings.selfplay_seconds), "bench-warmup")
        selfplay, uno = versus_blocks(settings.selfplay_seconds, settings.blocks, "bench-random")
        print_selfplay(selfplay, with_aims=True)
        print(f"\nRLCard's UNO random self-play (UnoGame, {len(PLAYERS)} players, whole games, "
              "in turn with the DOS blocks above)")
        versus = print_versus(selfplay, uno)

    print(f"\ngreedy self-play (dos_engine.play_game, views included, whole games to "
          f"{options.target_score}, ≥ {settings.greedy_seconds:g} s)")
    greedy = greedy_games(settings.greedy_seconds, "bench-greedy")
    print_selfplay(greedy, with_aims=False)

    overhead = timer_overhead_ns()
    print(f"\nlegal_actions() on typical states from random self-play "
          f"(timer overhead {overhead} ns, included)")
    typical = typical_latency(settings, "bench-states")
    print_latency(typical, AIM_TYPICAL_LISTING_US, huge=False)

    print(f"\nlegal_actions() on a huge state: {len(HUGE_HAND)} cards in hand, "
          f"{len(HUGE_CENTER_ROW)} in the Center Row")
    huge, huge_game = huge_latency(settings)
    print(f"  hand: {' '.join(c.code for c in sorted(huge_game.hands[0]))}")
    print(f"  Center Row: {' '.join(c.code for c in huge_game.center_row)}")
    print_latency(huge, AIM_HUGE_LISTING_US, huge=True)

    steal_end = steal_seconds()
    steal = None
    if steal_start is not None and steal_end is not None:
        steal = (steal_end - steal_start) / (time.perf_counter() - wall_start)
        print(f"\nhypervisor steal during the run: {steal:.1%} of one CPU")

    env["load_average_after"] = load_average()
    report: dict[str, Any] = {
        "schema": 1,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "quick": settings.quick,
        "settings": asdict(settings),
        "environment": env,
        "players": len(PLAYERS),
        "options": options.to_dict(),
        "aims": {
            "random_actions_per_s": AIM_ACTIONS_PER_S,
            "random_rounds_per_s": AIM_ROUNDS_PER_S,
            "typical_listing_us": AIM_TYPICAL_LISTING_US,
            "huge_listing_us": AIM_HUGE_LISTING_US,
            "random_actions_per_s_vs_rlcard_uno": AIM_VERSUS_RLCARD,
        },
        "ratios": {
            "random_actions_per_s": selfplay.actions_per_s / AIM_ACTIONS_PER_S,
            "random_rounds_per_s": selfplay.rounds_per_s / AIM_ROUNDS_PER_S,
            "random_actions_per_s_vs_rlcard_uno": versus,
            "typical_listing_median": typical.median_us / AIM_TYPICAL_LISTING_US,
            "typical_listing_max": typical.max_us / AIM_TYPICAL_LISTING_US,
            "huge_listing_median": huge.median_us / AIM_HUGE_LISTING_US,
            "huge_listing_max": huge.max_us / AIM_HUGE_LISTING_US,
        },
        "random_selfplay": asdict(selfplay),
        "rlcard_uno_selfplay": None if uno is None else asdict(uno),
        "greedy_selfplay": asdict(greedy),
        "timer_overhead_ns": overhead,
        "steal_cpus": steal,
        "legal_actions_typical": asdict(typical),
        "legal_actions_huge": {
            **asdict(huge),
            "legal_actions": huge.max_actions,
            "hand": HUGE_HAND,
            "center_row": HUGE_CENTER_ROW,
        },
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {output}")
    return report


def profile(seconds: float, top: int = 15) -> None:
    """cProfile random self-play and print the ``top`` functions by own time."""
    random_games(0.2, "bench-warmup")
    profiler = cProfile.Profile()
    profiler.enable()
    result = random_games(seconds, "bench-random")
    profiler.disable()
    if result.cpu_seconds < 0.95 * result.seconds:
        print(f"warning: this process had {result.cpu_seconds / result.seconds:.0%} of a CPU "
              "(other work ran); rerun on a quiet machine")
    print(f"cProfile of random self-play: {result.actions:,} actions, {result.rounds:,} rounds, "
          f"{result.games} games (times are inflated by the profiler)")
    pstats.Stats(profiler).strip_dirs().sort_stats(pstats.SortKey.TIME).print_stats(top)


def versus_only(settings: Settings) -> float:
    """Only random self-play against RLCard's UNO, interleaved; print both and the ratio."""
    random_games(0.2, "bench-warmup")
    uno_games(0.2, "bench-warmup")
    print(f"random self-play, DOS then RLCard's UNO in turn, {settings.blocks} blocks of "
          f"{settings.selfplay_seconds / settings.blocks:g} s each; load average {load_average()}")
    dos, uno = versus_blocks(settings.selfplay_seconds, settings.blocks, "bench-random")
    print("DOS:")
    print_selfplay(dos, with_aims=True)
    print("RLCard UNO:")
    return print_versus(dos, uno)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a short run (a few seconds)")
    parser.add_argument("--seconds", type=float, help="seconds of each self-play measurement")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON file ({RESULTS})")
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile of random self-play instead (writes no JSON)")
    parser.add_argument("--versus", action="store_true",
                        help="only random self-play against RLCard's UNO and the ratio (no JSON)")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.seconds is not None:
        if args.seconds <= 0:
            parser.error("--seconds must be positive")
        settings = dataclasses.replace(settings, selfplay_seconds=args.seconds,
                                       greedy_seconds=args.seconds)
    if args.profile:
        profile(settings.selfplay_seconds)
        return 0
    if args.versus:
        if UnoGame is None:
            parser.error("--versus needs RLCard: pip install -e '.[bench]'")
        versus_only(settings)
        return 0
    run(settings, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
