"""``python -m dos_engine demo [SEED]``: watch two bots play a whole game, round by round."""

from __future__ import annotations

import secrets
import sys

from dos_engine.events import EventKind
from dos_engine.game import Game
from dos_engine.record import replay
from dos_engine.strategies import RandomStrategy, greedy, play_game


def demo(seed: str) -> int:
    players = ["greedy-bot", "random-bot"]
    game, record = play_game(players, seed, [greedy, RandomStrategy(seed)])
    print(f"Seed {seed!r}: {len(record.actions)} actions over {game.round_no} rounds.")
    check = Game.new(players, seed)
    for seat, text in record.actions:
        for event in check.play(check.parse_action(text), seat):
            if event.kind is EventKind.ROUND_OVER:
                data = event.data
                print(f"  round {data['round']}: {players[event.seat or 0]} went out "
                      f"and scored {data['scored']} -> scores {data['scores']}")
    assert replay(record) == game, "replay must equal the live game"
    assert game.winner is not None
    print(f"{players[game.winner]} wins {game.scores[game.winner]} to "
          f"{min(game.scores)}; the record replays to the same state.")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "demo":
        return demo(argv[1] if len(argv) > 1 else secrets.token_hex(8))
    print("usage: python -m dos_engine demo [SEED]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
