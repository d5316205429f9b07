"""Speed of the engine and the environment under random legal play.

Prints microseconds per decision and games per second for
(a) the rules core alone (deals included),
(b) raw_env with an observation and mask built every decision (its compiled
    path; (b') the same with ``compiled=False``, the pure-Python path),
(c) the wrapped env().

    python benchmarks/bench_env.py [--games 200] [--seed 0]

Each figure is the best of ``--repeats`` runs (default 3) to damp noise from
other processes; peak memory (RSS) of the process is printed at the end.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from collections.abc import Callable

from sm_env.core.cards import from_mask
from sm_env.core.game import OVER, Game


def bench_core(games: int, seed: int) -> tuple[int, int]:
    """Random legal play on the bare Game; returns (decisions, hands)."""
    rng = random.Random(seed)
    choice = rng.choice
    decisions = hands = 0
    for g in range(games):
        game = Game(seed=seed + g, max_hands=100)
        apply, legal_mask = game.apply, game.legal_mask
        while game.phase != OVER:
            apply(choice(from_mask(legal_mask())))
            decisions += 1
        hands += game.hand_number
    return decisions, hands


def bench_aec(make: Callable[[], object], games: int, seed: int) -> tuple[int, int]:
    """Random legal play through an AEC env, observing the acting agent each decision."""
    rng = random.Random(seed)
    decisions = hands = 0
    env = make()
    for g in range(games):
        env.reset(seed=seed + g)
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            obs = env.observe(agent)
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[rng.randrange(len(legal))]))
            decisions += 1
        hands += env.infos["player_0"]["hand"]  # (env.game would bring the compiled path's Game up to date)
    return decisions, hands


def report(name: str, run: Callable[[], tuple[int, int]], games: int, repeats: int) -> None:
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        decisions, hands = run()
        elapsed = time.perf_counter() - start
        if best is None or elapsed < best[0]:
            best = (elapsed, decisions, hands)
    elapsed, decisions, hands = best
    print(
        f"{name:<28} {1e6 * elapsed / decisions:7.2f} us/decision  {games / elapsed:8.2f} games/s  "
        f"{hands / elapsed:8.1f} hands/s  ({decisions} decisions, {hands / games:.1f} hands/game)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=200, help="games per run (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {args.games} games per run, best of {args.repeats}")
    report("(a) rules core", lambda: bench_core(args.games, args.seed), args.games, args.repeats)
    try:
        from sm_env.envs.aec import env, raw_env
    except ImportError as err:  # the environment is optional for the core figure
        print(f"(b), (c) skipped: {err}")
    else:
        aec_games = max(1, args.games // 4)
        report(
            "(b) raw_env + obs + mask",
            lambda: bench_aec(lambda: raw_env(compiled=True), aec_games, args.seed),
            aec_games,
            args.repeats,
        )
        report(
            "(b') the same, compiled=False",
            lambda: bench_aec(lambda: raw_env(compiled=False), aec_games, args.seed),
            aec_games,
            args.repeats,
        )
        report(
            "(c) env() wrapped",
            lambda: bench_aec(lambda: env(compiled=True), aec_games, args.seed),
            aec_games,
            args.repeats,
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
