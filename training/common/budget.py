"""A run's time budget (``max_hours``: the vector PPO, DMC, SB3, RLlib and play-out configs; standard library only).

The budget counts training time alone, summed over the calls of a resumed run (the seconds each trainer keeps
in its checkpoint or ``times.json``; evaluations and saving are not counted). A run stops at its first safe
point past the budget (the end of a rollout, segment, iteration or round) as it stops at its length: with a
checkpoint, its final evaluation and exit status 0. The run is then complete (:func:`reached`), and a bigger
budget goes on with it (:func:`further`). Its progress bar aims at whichever comes first, the budget or the
length (:func:`aim`), so that the ETA reads the budget's end.
"""

from __future__ import annotations

from typing import Any

MAX_HOURS = 7 * 24  # the most a budget may say: a week of training
HOURS_HELP = (
    "a time budget: hours of training (evaluations and saving not counted; a resumed run counts its earlier "
    "calls), after which the run stops at its next safe point with a checkpoint and its final evaluation, as "
    "at its length; the progress ETA aims at whichever comes first (0: no budget)"
)


def budget_seconds(hours: float) -> float | None:
    """The budget of ``hours`` in seconds; None for no budget (0)."""
    return 3600.0 * hours if hours > 0 else None


def spent(seconds: float, hours: float) -> bool:
    """Whether ``seconds`` of training have used a budget of ``hours`` (never without one)."""
    budget = budget_seconds(hours)
    return budget is not None and seconds >= budget


def aim(done: int, total: int, seconds: float, rate: float, hours: float) -> int:
    """Where a progress bar of ``done`` out of ``total`` aims under a budget of ``hours``: ``total``, or the
    count reached when the budget ends at ``rate`` a second from ``seconds`` of training, whichever is first
    (``total`` without a budget or a rate)."""
    budget = budget_seconds(hours)
    if budget is None or rate <= 0:
        return total
    return min(total, done + max(0, round((budget - seconds) * rate)))


def reached(summary: dict[str, Any], length: int, hours: float, unit: str) -> str | None:
    """Why a finished run is complete, read from its ``summary.json`` (``progress``, ``train_seconds``): its
    progress reached ``length`` (in ``unit``), or its training time the budget of ``hours``; None when neither
    (or the summary cannot say)."""
    try:
        done, seconds = int(summary["progress"]), float(summary.get("train_seconds", 0.0))
    except (KeyError, TypeError, ValueError):
        return None
    if done >= length:
        return f"{done} {unit}, the config asks for {length}"
    if spent(seconds, hours):
        return f"{seconds / 3600:.2f} hours of training, the budget is {hours:g} h"
    return None


def further(key: str, length: int, hours_key: str, hours: float) -> str:
    """How a complete run goes further (the run layer's ``further``, with ``{prog}`` and ``{run_dir}``): a bigger
    length, and with a budget a bigger budget."""
    more = f"--set {key}=N (now {length})"
    if hours > 0:
        more = f"--set {hours_key}=H (now {hours:g}) or {more}"
    return f"{{prog}} --resume {{run_dir}} {more}"
