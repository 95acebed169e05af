"""Write tests/data/engine_digests.json: the digest of each game of tests/engine/same_games.py
as this engine plays it. Run it on an engine known to be right (it was run on the engine of
commit 16ee7d2, before its hot paths were rewritten for speed), from the repository root::

    PYTHONPATH=server:tests/engine .venv/bin/python tests/engine/make_engine_digests.py
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from same_games import GAMES, game_digest

OUTPUT = Path(__file__).resolve().parents[1] / "data" / "engine_digests.json"


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    digests = [game_digest(n) for n in range(GAMES)]
    OUTPUT.write_text(json.dumps({"engine_commit": commit, "games": GAMES, "digests": digests},
                                 indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(digests)} digests to {OUTPUT}")


if __name__ == "__main__":
    main()
