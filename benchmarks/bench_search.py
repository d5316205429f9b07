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
"""

from __future__ import annotations

import argparse
import random
import time

from agents import make_agent
from agents.heuristic import heuristic_action
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--agents", default="pimc,ismcts", help="comma-separated agent names (default settings)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    main()
