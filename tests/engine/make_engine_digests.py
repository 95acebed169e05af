"""Write tests/data/engine_digests.json: the digest of each game of tests/engine/same_games.py
as this engine plays it. Run it on an engine known to be right (it was run on the engine of
commit 16ee7d2, before its hot paths were rewritten for speed), from the repository root::

    PYTHONPATH=server:tests/engine .venv/bin/python tests/engine/make_engine_digests.py

When the search bot's choices change (not the engine), ``--search-games`` rewrites only the
games that ask it for decisions (``same_games.asks_search``) and keeps the others, which must
still match: the engine stays checked against the one it was written from.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from same_games import GAMES, asks_search, game_digest

OUTPUT = Path(__file__).resolve().parents[1] / "data" / "engine_digests.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search-games", action="store_true",
                        help="rewrite only the games that ask the search bot")
    args = parser.parse_args()
    if not args.search_games:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip()
        digests = [game_digest(n) for n in range(GAMES)]
        OUTPUT.write_text(json.dumps({"engine_commit": commit, "games": GAMES,
                                      "digests": digests}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(digests)} digests to {OUTPUT}")
        return
    data = json.loads(OUTPUT.read_text(encoding="utf-8"))
    digests = data["digests"]
    searched = [n for n in range(GAMES) if asks_search(n)]
    for n in range(GAMES):
        if n not in searched and game_digest(n) != digests[n]:
            raise SystemExit(f"game {n} asks no search bot and plays differently: the engine "
                             "changed, and this option does not rewrite it")
    for n in searched:
        digests[n] = game_digest(n)
    OUTPUT.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"rewrote the {len(searched)} searched games' digests in {OUTPUT}")


if __name__ == "__main__":
    main()
