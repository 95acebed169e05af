"""Benchmark of the searching bot (dos_engine.search) against greedy. A measurement, not a test.

Run it from the repository root::

    .venv/bin/python bench/bots.py                                        # the default pairings
    .venv/bin/python bench/bots.py --quick                                # a smoke run
    .venv/bin/python bench/bots.py --level search-1 --heads-up 200 --four 0 --target 200

Everything runs in this one process, on one core (``--cpu N`` pins it). Pairings:

* heads-up: the search bot against ``greedy``, ``--heads-up`` games to ``--target`` points,
  the search bot in seat 0 in even games and seat 1 in odd ones (the first dealer is drawn from
  the seed anyway). Game wins, and every round's winner, with 95% Wilson intervals; a round is
  a much quicker sample of the same skill, so both are reported.
* four players: the search bot and three ``greedy`` (chance is 25%), the search bot's seat
  turning with the game number.
* time per decision of the search bot: every call, and the calls that searched (more than one
  sensible action), p50 / p99 / max, in CPU seconds of this process (the machine is shared,
  so wall time is printed beside it). ``--decisions N`` also times every level on the same N
  positions (half heads-up, half 4 players, from greedy games), without playing whole games.

Games are seeded ``bench-bots:<pairing>:<n>``, the bots ``bench-bots:<n>``: a run replays, and
``--first`` splits a pairing over several runs (game numbers ``first`` onwards).
Figures are printed and written as JSON to ``bench/results/bots.json`` (git-ignored), after
every game, so a run stopped early still leaves its figures. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dos_engine
from common import RESULTS_DIR, percentile
from dos_engine import Action, Options, View, greedy, make_strategy, play_game
from dos_engine.search import LEVELS

RESULTS = RESULTS_DIR / "bots.json"
NAMES = ("north", "east", "south", "west")


def wilson(wins: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% for z = 1.96)."""
    if total == 0:
        return (0.0, 1.0)
    p = wins / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


class Timed:
    """Wraps a strategy and records the CPU and wall time of every decision."""

    def __init__(self, strategy: Any, record: Decisions) -> None:
        self.strategy = strategy
        self.record = record

    def __call__(self, view: View, legal: Sequence[Action]) -> Action:
        cpu, wall = time.process_time(), time.perf_counter()
        action = self.strategy(view, legal)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        self.record.cpu.append(cpu)
        self.record.wall.append(wall)
        if len(legal) > 1:
            self.record.searched_cpu.append(cpu)
        return action


@dataclass
class Decisions:
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    searched_cpu: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "decisions": len(self.cpu),
            "searched": len(self.searched_cpu),
            "cpu_p50_s": percentile(self.cpu, 0.50),
            "cpu_p99_s": percentile(self.cpu, 0.99),
            "searched_cpu_p50_s": percentile(self.searched_cpu, 0.50),
            "searched_cpu_p99_s": percentile(self.searched_cpu, 0.99),
            "cpu_max_s": max(self.cpu, default=float("nan")),
            "wall_p50_s": percentile(self.wall, 0.50),
            "wall_p99_s": percentile(self.wall, 0.99),
        }


@dataclass
class Pairing:
    name: str
    level: str
    players: int
    target: int
    games: int = 0
    wins: int = 0
    rounds: int = 0
    round_wins: int = 0
    points_for: int = 0  # points the search bot scored
    points_against: int = 0  # points the other seats scored
    seconds: float = 0.0
    decisions: Decisions = field(default_factory=Decisions)

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        del out["decisions"]
        out["win_rate"] = self.wins / self.games if self.games else float("nan")
        out["win_interval"] = wilson(self.wins, self.games)
        out["round_win_rate"] = self.round_wins / self.rounds if self.rounds else float("nan")
        out["round_interval"] = wilson(self.round_wins, self.rounds)
        out["chance"] = 1 / self.players
        out.update(self.decisions.summary())
        return out


def play_pairing(
    pairing: Pairing, games: int, options: Options, report: Any, first: int = 0
) -> None:
    """Play games ``first`` .. ``first + games - 1`` of the search bot against greedy."""
    start = time.perf_counter()
    for number in range(first, first + games):
        seat = number % pairing.players
        bot = Timed(make_strategy(pairing.level, f"bench-bots:{number}"), pairing.decisions)
        strategies = [bot if s == seat else greedy for s in range(pairing.players)]
        seed = f"bench-bots:{pairing.name}:{number}"
        game, record = play_game(NAMES[: pairing.players], seed, strategies, options)
        pairing.games += 1
        pairing.wins += game.winner == seat
        round_wins, rounds, points_for, points_against = _rounds(record, seat)
        pairing.rounds += rounds
        pairing.round_wins += round_wins
        pairing.points_for += points_for
        pairing.points_against += points_against
        pairing.seconds = time.perf_counter() - start
        report()
        low, high = wilson(pairing.wins, pairing.games)
        rlow, rhigh = wilson(pairing.round_wins, pairing.rounds)
        print(f"  {pairing.name} game {pairing.games}: won {pairing.wins} "
              f"({pairing.wins / pairing.games:.1%}, 95% {low:.1%}-{high:.1%}); rounds "
              f"{pairing.round_wins}/{pairing.rounds} ({rlow:.1%}-{rhigh:.1%}); "
              f"{pairing.seconds:.0f} s", flush=True)


def _rounds(record: Any, seat: int) -> tuple[int, int, int, int]:
    """Round wins, rounds, points for and against ``seat``, replayed from the game's record."""
    game, events = dos_engine.start_game(record.players, record.seed, record.options)
    del events
    wins = rounds = points_for = points_against = 0
    for actor, text in record.actions:
        for event in game.play(dos_engine.parse_action(text), actor):
            if event.kind is dos_engine.EventKind.ROUND_OVER:
                rounds += 1
                scored = int(event.data["scored"])
                if event.seat == seat:
                    wins += 1
                    points_for += scored
                else:
                    points_against += scored
    return wins, rounds, points_for, points_against


def print_pairing(pairing: Pairing) -> None:
    s = pairing.summary()
    low, high = s["win_interval"]
    rlow, rhigh = s["round_interval"]
    chance = s["chance"]
    print(f"\n{pairing.name}: {pairing.level} vs greedy, {pairing.players} players, games to "
          f"{pairing.target}")
    print(f"  games:  {pairing.wins}/{pairing.games} won = {s['win_rate']:.1%} "
          f"(95% Wilson {low:.1%}-{high:.1%}; chance {chance:.0%}; interval "
          f"{'excludes' if low > chance or high < chance else 'includes'} chance)")
    print(f"  rounds: {pairing.round_wins}/{pairing.rounds} won = {s['round_win_rate']:.1%} "
          f"(95% Wilson {rlow:.1%}-{rhigh:.1%})")
    print(f"  points: {pairing.points_for} scored, {pairing.points_against} conceded "
          f"({pairing.points_for / max(1, pairing.rounds):.1f} / "
          f"{pairing.points_against / max(1, pairing.rounds):.1f} a round)")
    print(f"  time per decision (CPU): p50 {s['cpu_p50_s'] * 1000:.0f} ms, p99 "
          f"{s['cpu_p99_s'] * 1000:.0f} ms, max {s['cpu_max_s'] * 1000:.0f} ms over "
          f"{s['decisions']} decisions; searched ones ({s['searched']}): p50 "
          f"{s['searched_cpu_p50_s'] * 1000:.0f} ms, p99 {s['searched_cpu_p99_s'] * 1000:.0f} ms; "
          f"wall p50 {s['wall_p50_s'] * 1000:.0f} ms, p99 {s['wall_p99_s'] * 1000:.0f} ms")
    print(f"  {pairing.seconds:.0f} s for the pairing")


def positions(count: int, wanted: int, seed: str) -> list[tuple[View, list[Action]]]:
    """``wanted`` positions with a choice to make, from greedy self-play of ``count`` players
    (every third such position of a game, games seeded ``seed:<n>``)."""
    out: list[tuple[View, list[Action]]] = []
    number = 0
    while len(out) < wanted:
        game = dos_engine.Game.new(list(NAMES[:count]), f"{seed}:{number}", Options())
        step = 0
        while not game.is_over and len(out) < wanted:
            legal = game.legal_actions()
            if len(legal) > 1 and step % 3 == 0:
                out.append((game.view(game.current), legal))
            step += len(legal) > 1
            game.play(greedy(game.view(game.current), legal))
        number += 1
    return out


def time_levels(levels: Sequence[str], wanted: int) -> dict[str, dict[str, Any]]:
    """CPU per decision of each level on the same positions (half heads-up, half 4 players)."""
    found = positions(2, wanted // 2, "bench-bots:timing2") + positions(
        4, wanted - wanted // 2, "bench-bots:timing4")
    out: dict[str, dict[str, Any]] = {}
    for level in levels:
        record = Decisions()
        bot = Timed(make_strategy(level, "bench-bots:timing"), record)
        for view, legal in found:
            bot(view, legal)
        out[level] = record.summary()
        s = out[level]
        print(f"  {level}: CPU per decision p50 {s['cpu_p50_s'] * 1000:.0f} ms, p99 "
              f"{s['cpu_p99_s'] * 1000:.0f} ms, max {s['cpu_max_s'] * 1000:.0f} ms over "
              f"{s['decisions']} positions (wall p50 {s['wall_p50_s'] * 1000:.0f} ms, p99 "
              f"{s['wall_p99_s'] * 1000:.0f} ms)", flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--level", action="append", choices=sorted(LEVELS),
                        help="search level(s) to measure (default search-2)")
    parser.add_argument("--heads-up", type=int, default=100, help="heads-up games (100)")
    parser.add_argument("--four", type=int, default=100, help="four-player games (100)")
    parser.add_argument("--target", type=int, default=200, help="target score (200)")
    parser.add_argument("--quick", action="store_true", help="4 + 4 games to 50 points")
    parser.add_argument("--first", type=int, default=0,
                        help="number of the first game (to split a pairing over runs)")
    parser.add_argument("--decisions", type=int, default=0,
                        help="also time every level on this many positions from greedy games")
    parser.add_argument("--cpu", type=int, help="pin this process to one CPU")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON file ({RESULTS})")
    args = parser.parse_args(argv)
    if args.quick:
        args.heads_up, args.four, args.target = 4, 4, 50
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    levels = args.level or ["search-2"]
    options = Options(target_score=args.target)
    pairings: list[Pairing] = []
    timing: dict[str, dict[str, Any]] = {}

    def report() -> None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({
            "python": platform.python_version(),
            "machine": platform.machine(),
            "levels": {name: asdict(LEVELS[name]) for name in levels},
            "pairings": [p.summary() for p in pairings],
            "time_per_decision": timing,
        }, indent=2) + "\n")

    if args.decisions > 0:
        print(f"time per decision, every level, {args.decisions} positions:")
        timing.update(time_levels(sorted(LEVELS), args.decisions))
        report()

    for level in levels:
        for name, players, games in (("heads-up", 2, args.heads_up), ("four", 4, args.four)):
            if games <= 0:
                continue
            pairing = Pairing(f"{level}/{name}", level, players, args.target)
            pairings.append(pairing)
            play_pairing(pairing, games, options, report, args.first)
    for pairing in pairings:
        print_pairing(pairing)
    print(f"\nwritten to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
