"""``python -m dos_engine demo [SEED] [--delay S] [--target N]``: watch two bots play a game.

Turn by turn: whose turn, the Center Row, every hand's size, what the bot did and why (the
engine's own description of each action), a pause between turns, round results, and the
winner at the end. ``--delay 0`` runs it at full speed; the record is checked by replaying.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time

from dos_engine.events import EventKind
from dos_engine.game import Game
from dos_engine.options import Options
from dos_engine.record import GameRecord, replay
from dos_engine.strategies import greedy, make_strategy

PLAYERS = ("greedy-bot", "search-bot")


def _table(game: Game) -> str:
    row = "  ".join(f"{n}:[{card.code}]" for n, card in enumerate(game.center_row, start=1))
    sizes = " · ".join(f"{name} {len(hand)} cards"
                       for name, hand in zip(game.players, game.hands, strict=True))
    return f"  Center Row: {row}\n  Hands: {sizes} · draw pile {len(game.draw_pile)}"


def demo(seed: str, delay: float = 1.0, target: int = 100) -> int:
    game = Game.new(PLAYERS, seed, Options(target_score=target))
    bots = [greedy, make_strategy("search-1", seed)]
    played: list[tuple[int, str]] = []
    print(f"Two bots play DOS to {target} points (seed {seed!r}).")
    while not game.is_over:
        seat, turn = game.current, game.turn_no
        print(f"\nRound {game.round_no} · {game.players[seat]}'s turn · scores "
              + ", ".join(f"{n} {s}" for n, s in zip(game.players, game.scores, strict=True)))
        print(_table(game))
        while game.turn_no == turn and not game.is_over:
            action = bots[seat](game.view(seat), game.legal_actions(seat))
            print(f"  > {action.text():<12} {game.describe(action, seat)}")
            played.append((seat, action.text()))
            for event in game.play(action, seat):
                if event.kind is EventKind.ROUND_OVER:
                    print(f"  Round {event.data['round']} over: {game.players[event.seat or 0]} "
                          f"went out and scores {event.data['scored']}.")
        sys.stdout.flush()
        if delay:
            time.sleep(delay)
    assert game.winner is not None
    record = GameRecord(game.players, seed, game.options, tuple(played))
    assert replay(record) == game, "the record must replay to the same game"
    print(f"\n{game.players[game.winner]} wins, {game.scores[game.winner]} to "
          f"{min(game.scores)}, after {game.round_no} rounds.")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m dos_engine")
    sub = parser.add_subparsers(dest="command", required=True)
    watch = sub.add_parser("demo", help="watch two bots play a whole game, turn by turn")
    watch.add_argument("seed", nargs="?", default=None)
    watch.add_argument("--delay", type=float, default=1.0, help="seconds between turns")
    watch.add_argument("--target", type=int, default=100, help="points to win")
    args = parser.parse_args(argv)
    return demo(args.seed or secrets.token_hex(8), args.delay, args.target)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
