"""Speed of the search agents per decision: pimc and ismcts on the pure-Python path (``kernel=0``: deal
sampling with ``random.Random``, rollouts by ``agents.search.rollout.rollout``) against the compiled path (the
default: ``agents.search.world_kernel`` and ``agents.search.rollout_kernel``), in the same run, on the same decisions.

Decisions: every searched decision (the play of a card with two or more legal cards, the default
settings' only searched phase) of one-hand games played by the heuristic, until ``--decisions`` are
collected. Each path plays them in order with one agent seeded ``--seed``; the chosen actions must be
identical (the compiled path draws the same numbers and plays the same rollout cards). Prints ms per
decision and decisions per second for each path, and the speed-up. Any rule set, four players included
(``--rules four-5-3-2-2``).

    python benchmarks/bench_search.py [--decisions 300] [--rules standard] [--agents pimc,ismcts]

``--policy`` adds, on the same decisions, ``pimc:rollout=policy`` (rollouts played by the shipped policy,
every deal x move of a decision in one lockstep batch, ``agents.search.policy_rollout``) next to the compiled
plain ``pimc``: ms per decision, network calls per decision and rows per call, and how often the two pick the
same move; ``--policy-python N`` also plays the first N decisions with the policy rollouts one position at a
time in Python (``kernel=0``, the reference: the same moves, unbatched) for the batching's speed-up.

    python benchmarks/bench_search.py --agents pimc --policy [--policy-python 20]
"""

from __future__ import annotations

import argparse
import random
import time

from agents import make_agent
from agents.players.heuristic import heuristic_action
from sm_env.core.cards import from_mask
from sm_env.core.game import PLAY, Game
from sm_env.core.knowledge import PlayerView, player_view


def decisions(rules: str, count: int, seed: int) -> list[PlayerView]:
    """The first ``count`` searched decisions of heuristic one-hand games."""
    rng = random.Random(seed)
    views: list[PlayerView] = []
    while len(views) < count:
        game = Game(rules, seed=rng.randrange(10**9), max_hands=1)
        while not game.is_over:
            view = player_view(game, game.current_player)
            if game.phase == PLAY and len(from_mask(view.legal)) > 1:
                views.append(view)
            game.apply(heuristic_action(view))
    return views[:count]


def timed(spec: str, views: list[PlayerView], seed: int) -> tuple[float, list[int]]:
    """Seconds per decision and the actions chosen by one agent playing every view in order."""
    agent = make_agent(spec, seed=seed)
    start = time.perf_counter()
    actions = [agent.act(view) for view in views]
    return (time.perf_counter() - start) / len(views), actions


def policy_table(views: list[PlayerView], seed: int, python_count: int) -> None:
    """Plain pimc against pimc with policy rollouts on ``views`` (the module docstring's ``--policy``)."""
    plain = make_agent("pimc", seed=seed)
    guided = make_agent("pimc:rollout=policy", seed=seed)
    guided.act(views[0])  # load the policy and the kernels before timing
    guided = make_agent("pimc:rollout=policy", seed=seed)
    rows = []
    for name, agent in (("pimc", plain), ("pimc:rollout=policy", guided)):
        start = time.perf_counter()
        actions = [agent.act(view) for view in views]
        rows.append((name, (time.perf_counter() - start) / len(views), actions, agent))
    policy = next(iter(guided._rollouts.values())).policy  # the batched network of the rules
    calls, batch = policy.calls / len(views), policy.rows / max(policy.calls, 1)
    same = sum(a == b for a, b in zip(rows[0][2], rows[1][2], strict=True)) / len(views)
    print(
        f"\n{len(views)} decisions, compiled; policy rollouts: {guided.samples} deals per decision, torch on one thread"
    )
    print(f"{'agent':<28} {'ms/decision':>11} {'decisions/s':>11} {'worlds':>7} {'net calls':>9} {'rows/call':>9}")
    for name, seconds, _actions, agent in rows:
        extra = f"{calls:9.1f} {batch:9.1f}" if agent is guided else f"{'-':>9} {'-':>9}"
        print(f"{name:<28} {1e3 * seconds:11.2f} {1 / seconds:11.1f} {agent.worlds / len(views):7.1f} {extra}")
    print(f"same move as plain pimc: {same:.0%} of the decisions")
    if python_count:
        subset = views[:python_count]
        reference = make_agent("pimc:rollout=policy,kernel=0", seed=seed)
        start = time.perf_counter()
        python_actions = [reference.act(view) for view in subset]
        python = (time.perf_counter() - start) / len(subset)
        batched = make_agent("pimc:rollout=policy", seed=seed)
        start = time.perf_counter()
        batched_actions = [batched.act(view) for view in subset]
        compiled = (time.perf_counter() - start) / len(subset)
        agree = "yes" if python_actions == batched_actions else "NO"
        print(
            f"policy rollouts one position at a time in Python (kernel=0), first {len(subset)} decisions: "
            f"{1e3 * python:.1f} ms/decision against {1e3 * compiled:.1f} batched ({python / compiled:.0f}x); "
            f"same moves: {agree}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--agents", default="pimc,ismcts", help="comma-separated agent names (default settings)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", action="store_true", help="also pimc:rollout=policy next to plain pimc")
    parser.add_argument(
        "--policy-python", type=int, default=0, metavar="N", help="with --policy: the Python reference on N decisions"
    )
    args = parser.parse_args(argv)
    if args.decisions < 1 or args.policy_python < 0:
        parser.error("--decisions must be >= 1 and --policy-python >= 0")
    views = decisions(args.rules, args.decisions, args.seed)
    print(f"{len(views)} decisions ({args.rules}), ms per decision and decisions per second, default settings")
    header = f"{'python':>9} {'compiled':>9} {'python/s':>9} {'compiled/s':>10} {'speed-up':>9}"
    print(f"{'agent':<8} {header}  same actions")
    for name in args.agents.split(","):
        timed(name, views[:2], args.seed)  # compile (or load from numba's cache) before timing
        python, python_actions = timed(f"{name}:kernel=0", views, args.seed)
        compiled, compiled_actions = timed(name, views, args.seed)
        same = "yes" if python_actions == compiled_actions else "NO"
        rates = f"{1 / python:9.1f} {1 / compiled:10.1f}"
        print(f"{name:<8} {1e3 * python:9.2f} {1e3 * compiled:9.2f} {rates} {python / compiled:8.1f}x  {same}")
    if args.policy:
        policy_table(views, args.seed, args.policy_python)


if __name__ == "__main__":
    main()
