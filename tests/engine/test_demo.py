"""``make demo`` (``python -m dos_engine demo``): a whole game, turn by turn, naming the winner."""

from __future__ import annotations

import pytest

from dos_engine.__main__ import main


def test_demo_shows_every_turn_and_names_the_winner(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "demo-seed", "--delay", "0", "--target", "25"]) == 0
    out = capsys.readouterr().out
    turns = [line for line in out.splitlines() if "'s turn · scores" in line]
    assert len(turns) >= 4
    assert out.count("Center Row:") == len(turns)  # the table before every turn
    assert "  > " in out  # each action with its description
    assert out.rstrip().splitlines()[-1].split()[1] == "wins,"


def test_demo_usage_is_an_error_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["nonsense"])
    assert exit_.value.code == 2
