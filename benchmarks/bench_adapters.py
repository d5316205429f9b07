"""Speed of the library adapters relative to the plain environment, in the same run.

Random legal play over whole hands (``episode="hand"``), the mask read where
each adapter puts it; prints decisions per second and the ratio to
``raw_env`` for:

(a) ``raw_env`` (observation dict every decision: the peer);
(b) ``sm_env.envs.wrappers.mask_in_info(env())`` (Box observation, mask in info);
(c) ``sm_env.envs.rllib_env.TurnBasedEnv`` (RLlib's turn-based protocol; needs ray).

    python benchmarks/bench_adapters.py [--hands 300] [--repeats 3]

Each figure is the best of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np

import sm_env
from sm_env.envs.wrappers import mask_in_info


def run_raw(hands: int, seed: int) -> int:
    e = sm_env.raw_env(episode="hand")
    rng = random.Random(seed)
    decisions = 0
    for h in range(hands):
        e.reset(seed=seed + h)
        while not any(e.terminations.values()):
            mask = e.observe(e.agent_selection)["action_mask"]
            e.step(int(rng.choice(np.flatnonzero(mask))))
            decisions += 1
    return decisions


def run_mask_in_info(hands: int, seed: int) -> int:
    e = mask_in_info(sm_env.env(episode="hand"))
    rng = random.Random(seed)
    decisions = 0
    for h in range(hands):
        e.reset(seed=seed + h)
        while not any(e.terminations.values()):
            _, _, _, _, info = e.last()
            e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            decisions += 1
    return decisions


def run_rllib(hands: int, seed: int) -> int:
    from sm_env.envs.rllib_env import TurnBasedEnv

    e = TurnBasedEnv({"episode": "hand"})
    rng = random.Random(seed)
    decisions = 0
    for h in range(hands):
        obs, _ = e.reset(seed=seed + h)
        while True:
            (agent,) = obs
            obs, _, terminated, _, _ = e.step({agent: int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))})
            decisions += 1
            if terminated["__all__"]:
                break
    return decisions


def best_rate(run: Callable[[int, int], int], hands: int, repeats: int) -> float:
    """Best decisions per second over ``repeats`` runs."""
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        decisions = run(hands, 0)
        best = max(best, decisions / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = [("raw_env", run_raw), ("mask_in_info(env())", run_mask_in_info)]
    try:
        import ray.rllib  # noqa: F401

        runs.append(("rllib_env.TurnBasedEnv", run_rllib))
    except ImportError:
        print("ray[rllib] is not installed: TurnBasedEnv is skipped")
    peer = None
    for name, run in runs:
        rate = best_rate(run, args.hands, args.repeats)
        peer = peer or rate
        print(f"{name:<24} {rate:9.0f} decisions/s   {rate / peer:5.2f} x raw_env")


if __name__ == "__main__":
    main()
