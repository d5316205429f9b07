"""The cost of ``sergeant-major analyse`` on a 10-hand record: decisions, rollouts and wall time.

The record: three heuristic players, the standard rules, ``max_hands=10``, the first seed from ``--seed`` on
whose game lasts all 10 hands (none reaches 12 tricks in a hand). It is written to ``--record`` and analysed
with :func:`agents.analysis.analyse` at pimc's default samples (20), after a warm-up decision (the compiled
kernels load once per process); the figure is the best of ``--repeats`` runs.

    nice -n 10 python benchmarks/bench_analysis.py [--samples 20] [--hands 10] [--repeats 1]
"""

from __future__ import annotations

import argparse
import time

from agents import act, make_agent
from agents.advice import DEFAULT_SAMPLES
from agents.analysis import analyse
from sm_env.core.game import Game
from sm_env.core.knowledge import player_view
from sm_env.records import game_record, save_record


def heuristic_record(hands: int, seed: int) -> dict:
    """The record of the first game from ``seed`` on, of three heuristic players, that lasts ``hands`` hands."""
    for s in range(seed, seed + 1000):
        game = Game("standard", seed=s, max_hands=hands)
        players = [make_agent("heuristic", seed=s + k) for k in range(3)]
        while not game.is_over:
            game.apply(act(players[game.current_player], player_view(game, game.current_player)))
        if game.hand_number == hands and game.truncated:
            return game_record(game)
    raise SystemExit(f"no game of {hands} hands among seeds {seed}-{seed + 999}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    parser.add_argument("--hands", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--record", default="runs/bench_analysis_record.json")
    args = parser.parse_args()
    record = heuristic_record(args.hands, args.seed)
    save_record(record, args.record)
    analyse(record, samples=1, first_hand=1, hands=1)  # warm-up: the compiled kernels load
    best = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        analysis = analyse(record, samples=args.samples)
        best = min(best, time.perf_counter() - start)
    scored = sum(row["scored"] for row in analysis["seats"])
    print(
        f"record {args.record} (seed {record['seed']}, {len(record['hands'])} hands): "
        f"{len(analysis['decisions'])} decisions, {scored} scored, {analysis['rollouts']:,} rollouts at "
        f"{args.samples} samples: {best:.1f} s ({best / max(scored, 1) * 1000:.1f} ms per scored decision)"
    )


if __name__ == "__main__":
    main()
