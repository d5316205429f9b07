"""Speed of heuristic rollouts (the inner loop of pimc and ismcts): agents.search.rollout.rollout
(pure Python) against agents.search.rollout_kernel (compiled, batched), on the same positions.

Positions: random games stopped at a random decision of the trump, discard or
play phase (the hand ends the rollout). Prints microseconds per rollout
decision for the Python rollout (game.clone() + rollout), the kernel
including loading the positions (RolloutBatch.load, as search would), and
the kernel alone.

    python benchmarks/bench_rollout.py [--positions 2000] [--rules standard]
"""

from __future__ import annotations

import argparse
import random
import time

from agents.players.unseen import deck_of
from agents.search.rollout import rollout
from agents.search.rollout_kernel import RolloutBatch
from sm_env.core.game import DISCARD, PLAY, TRUMP, Game


def positions(rules: str, count: int, seed: int) -> list[tuple[Game, int]]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        game = Game(rules, seed=rng.randrange(10**9), max_hands=1)
        stop = rng.randrange(55)
        for _ in range(stop):
            if game.is_over:
                break
            game.apply(rng.choice(game.legal_actions()))
        if game.phase in (TRUMP, DISCARD, PLAY):
            out.append((game, sum(1 << c for c in game.log.discards or ())))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    found = positions(args.rules, args.positions, args.seed)
    batch = RolloutBatch(args.rules, len(found))
    deck = deck_of(batch.rules)
    for row, (game, out) in enumerate(found):  # compile / warm up
        batch.load(row, game, deck, out)
    batch.run()
    decisions = int((batch.actions >= 0).sum())

    start = time.perf_counter()
    for game, out in found:
        rollout(game.clone(), deck, out)
    python = time.perf_counter() - start

    start = time.perf_counter()
    for row, (game, out) in enumerate(found):
        batch.load(row, game, deck, out)
    loaded = time.perf_counter()
    batch.run()
    end = time.perf_counter()
    with_load, kernel = end - start, end - loaded

    print(f"{len(found)} positions ({args.rules}), {decisions} rollout decisions")
    for name, seconds in (
        ("python rollout (clone + rollout)", python),
        ("kernel, loading included", with_load),
        ("kernel alone", kernel),
    ):
        print(f"{name:<34} {1e6 * seconds / decisions:8.3f} us/decision  {python / seconds:7.1f} x python")


if __name__ == "__main__":
    main()
