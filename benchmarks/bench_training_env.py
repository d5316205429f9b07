"""Speed of the training environment (training/sb3/single_agent.py).

The learner plays its lowest legal action; prints learner decisions (env
steps), engine decisions (all seats) and episodes per second, for random and
heuristic opponents, hand and game episodes, and both paths of the env (the
compiled engine, the default, and ``compiled=False``, the pure-Python one),
for each rule set of ``--rules`` (three and four players alike).

    python benchmarks/bench_training_env.py [--seconds 3] [--rules standard four-5-3-2-2]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from training.sb3.single_agent import SingleSeatEnv


def bench(seconds: float, **env_kwargs: Any) -> dict[str, float]:
    """Steps per second of one env over about ``seconds`` seconds."""
    env = SingleSeatEnv(**env_kwargs)
    env.reset(seed=0)
    steps = episodes = 0
    first = env.decisions
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(int(env.action_masks().argmax()))  # the lowest legal action
            steps += 1
            if terminated or truncated:
                episodes += 1
                env.reset()
    elapsed = time.perf_counter() - start
    return {
        "learner_steps_per_s": steps / elapsed,
        "engine_decisions_per_s": (env.decisions - first) / elapsed,
        "episodes_per_s": episodes / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per configuration")
    parser.add_argument("--rules", nargs="+", default=["standard"], help="rule sets (presets) to measure")
    args = parser.parse_args()
    for opponent in ("random", "heuristic"):
        for episode in ("hand", "game"):
            for compiled in (True, False):
                for rules in args.rules:  # side by side, so that the rule sets share the machine's load
                    result = bench(
                        args.seconds, rules=rules, episode=episode, opponents={opponent: 1.0}, compiled=compiled
                    )
                    figures = "  ".join(f"{k} {v:,.0f}" for k, v in result.items())
                    path = "compiled" if compiled else "python"
                    print(f"{rules:<13} opponents {opponent:<9} episode {episode:<4} {path:<8}  {figures}", flush=True)


if __name__ == "__main__":
    main()
