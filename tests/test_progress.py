"""training.common.progress: one progress bar for warm start, training and evaluation."""

from __future__ import annotations

import pytest

pytest.importorskip("tqdm")

from training.common.progress import progress_bar  # noqa: E402


def test_a_disabled_bar_is_silent_and_usable(capsys):
    with progress_bar(10, "deals", "deal", enabled=False) as bar:
        bar.update(3)
        bar.update()
    bar.close()
    captured = capsys.readouterr()
    assert captured.out == captured.err == ""


def test_an_enabled_bar_counts_from_its_start(capsys):
    bar = progress_bar(100, "run", "step", initial=40, leave=True)
    bar.update(10)
    assert (bar.n, bar.total, bar.desc, bar.unit) == (50, 100, "run", "step")
    bar.close()
    assert "run" in capsys.readouterr().err


def test_a_line_is_written_above_an_open_bar(capsys):
    """write_line (every run's progress lines) clears the bar, writes the line, and draws the bar again below it."""
    from training.common.progress import write_line

    bar = progress_bar(100, "run", "step", leave=True)
    bar.update(10)
    write_line("step 10  loss 0.5")
    bar.close()
    err = capsys.readouterr().err
    assert "step 10  loss 0.5\n" in err and err.rindex("run:") > err.index("step 10  loss 0.5")
    write_line("no bar open")
    assert capsys.readouterr().err == "no bar open\n"
