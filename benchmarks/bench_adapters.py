"""Speed of every adapter of the project relative to the plain environment, in the same run.

Random legal play over whole hands (``episode="hand"``), the mask read where
each adapter puts it; prints decisions per second and the ratio to
``raw_env`` for:

(a) ``raw_env`` (``observe`` every decision: the peer);
(b) ``sm_env.env()`` (``OrderEnforcingWrapper``; ``last()`` every decision);
(c) ``sm_env.envs.wrappers.mask_in_info(env())`` (Box observation, mask in ``last()``'s info);
(d) ``sm_env.envs.wrappers.rllib_observation_keys(env())`` (renamed keys; ``last()``);
(e) ``sm_env.envs.rllib_env.TurnBasedEnv`` (RLlib's turn-based protocol; needs ray);
(f) ``training.sb3.single_agent.SingleSeatEnv`` (one learner seat, random opponents played inside
    ``step``; every decision counts, the opponents' too; needs the train extra);
(g) the same with heuristic opponents (``agents.players.heuristic``: they read their ``PlayerView``, so the
    pure-Python ``Game`` is stepped along; the heuristic's own thinking counts too), and its peer:
    ``raw_env`` played the same way (two heuristic seats reading ``player_view(env.game, seat)``, one
    random seat observing), so that the last line gives what the adapter itself costs with such opponents.

    python benchmarks/bench_adapters.py [--hands 300] [--repeats 3] [--clock wall|cpu]

Each figure is the best of ``--repeats`` rounds (a round runs every adapter
once, in turn, after a warm-up); the table is Markdown. ``--clock cpu`` times
the process's own CPU time instead of the wall clock (every run is single-threaded
Python): steadier on a machine shared with other work. Every adapter should stay at 0.5 x
``raw_env`` or above (docs/results/speed-adapters.md has the figures).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np

import sm_env
from sm_env.envs.wrappers import mask_in_info, rllib_observation_keys


def run_raw(hands: int, seed: int) -> int:
    e = sm_env.raw_env(episode="hand", compiled=True)
    rng = random.Random(seed)
    decisions = 0
    for h in range(hands):
        e.reset(seed=seed + h)
        while not any(e.terminations.values()):
            mask = e.observe(e.agent_selection)["action_mask"]
            e.step(int(rng.choice(np.flatnonzero(mask))))
            decisions += 1
    return decisions


def _run_last(e, hands: int, seed: int, mask_of: Callable) -> int:
    """Random legal play through ``last()``; ``mask_of(obs, info)`` finds the mask."""
    rng = random.Random(seed)
    decisions = 0
    for h in range(hands):
        e.reset(seed=seed + h)
        while not any(e.terminations.values()):
            obs, _, _, _, info = e.last()
            e.step(int(rng.choice(np.flatnonzero(mask_of(obs, info)))))
            decisions += 1
    return decisions


def run_env(hands: int, seed: int) -> int:
    return _run_last(sm_env.env(episode="hand", compiled=True), hands, seed, lambda obs, info: obs["action_mask"])


def run_mask_in_info(hands: int, seed: int) -> int:
    return _run_last(
        mask_in_info(sm_env.env(episode="hand", compiled=True)), hands, seed, lambda obs, info: info["action_mask"]
    )


def run_rllib_keys(hands: int, seed: int) -> int:
    e = rllib_observation_keys(sm_env.env(episode="hand", compiled=True))
    return _run_last(e, hands, seed, lambda obs, info: obs["action_mask"])


def run_turn_based(hands: int, seed: int) -> int:
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


def run_raw_heuristic(hands: int, seed: int) -> int:
    from agents import act, make_agent
    from sm_env.core.knowledge import player_view

    e = sm_env.raw_env(episode="hand", compiled=True)
    rng = random.Random(seed)
    heuristics = [make_agent("heuristic", seed + s) for s in range(3)]
    decisions = 0
    for h in range(hands):
        e.reset(seed=seed + h)
        learner = h % 3
        game = e.game  # from here on stepped along with the kernels
        for s, agent in enumerate(heuristics):
            agent.reset(seed + 3 * h + s)
        while not any(e.terminations.values()):
            seat = game.current
            if seat == learner:
                action = int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])))
            else:
                action = act(heuristics[seat], player_view(game, seat))
            e.step(action)
            decisions += 1
    return decisions


def run_single_seat(hands: int, seed: int, opponent: str = "random") -> int:
    from training.sb3.single_agent import SingleSeatEnv

    e = SingleSeatEnv(episode="hand", opponents={opponent: 1.0})
    rng = random.Random(seed)
    e.reset(seed=seed)
    for _ in range(hands):
        terminated = False
        while not terminated:
            _, _, terminated, _, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        e.reset()
    return e.decisions


def best_rates(
    runs: list[tuple[str, Callable[[int, int], int]]], hands: int, repeats: int, clock: Callable[[], float]
) -> dict[str, float]:
    """Best decisions per second (of ``clock``) of each run over ``repeats`` rounds; each round runs every
    adapter once, in turn, so that a change of load on the machine touches them all alike."""
    best = dict.fromkeys((name for name, _ in runs), 0.0)
    for _, run in runs:
        run(2, 0)  # warm up: compiled kernels, imports, caches
    for _ in range(repeats):
        for name, run in runs:
            start = clock()
            decisions = run(hands, 0)
            best[name] = max(best[name], decisions / (clock() - start))
    return best


def _available(module: str, what: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        print(f"{module} is not installed: {what} is skipped")
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall clock or process CPU time")
    args = parser.parse_args()
    runs = [
        ("raw_env", run_raw),
        ("env()", run_env),
        ("mask_in_info(env())", run_mask_in_info),
        ("rllib_observation_keys(env())", run_rllib_keys),
    ]
    if _available("ray.rllib", "rllib_env.TurnBasedEnv"):
        runs.append(("rllib_env.TurnBasedEnv", run_turn_based))
    if _available("stable_baselines3", "SingleSeatEnv"):
        runs.append(("SingleSeatEnv (random)", run_single_seat))
        runs.append(("raw_env (heuristic peer)", run_raw_heuristic))
        runs.append(("SingleSeatEnv (heuristic)", lambda hands, seed: run_single_seat(hands, seed, "heuristic")))
    rates = best_rates(runs, args.hands, args.repeats, time.perf_counter if args.clock == "wall" else time.process_time)
    peer = rates["raw_env"]
    unit = "decisions/s" if args.clock == "wall" else "decisions/CPU s"
    print(f"| adapter (best of {args.repeats} rounds, {args.hands} hands) | {unit} | x raw_env |")
    print("| --- | ---: | ---: |")
    for name, rate in rates.items():
        print(f"| {name} | {rate:,.0f} | {rate / peer:.2f} |")
    if "SingleSeatEnv (heuristic)" in rates:
        ratio = rates["SingleSeatEnv (heuristic)"] / rates["raw_env (heuristic peer)"]
        print(f"\nSingleSeatEnv (heuristic) x raw_env (heuristic peer): {ratio:.2f}")


if __name__ == "__main__":
    main()
