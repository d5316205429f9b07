"""Speed of policy agents per decision in every kind of host, in one run: ms per decision at batch size one.

Hosts, on the same decisions (every decision of heuristic games, all phases) unless said:

- ``script``: ``agent.act(view)`` in this process's main thread (a user's script, a notebook, ``play``,
  ``analyse``, ``hint``);
- ``thread``: the same in another thread of this process (the web app's worker threads, ``serve``);
- ``unpinned``: ``script`` with a numpy policy's small products on BLAS (``np.matmul``, its thread pool) and
  torch's thread pin switched off (:func:`agents.players.threads.one_thread` a no-op): what every host paid before;
- ``eval-1``, ``eval-2``: ``sergeant-major eval``'s own timing table (``evaluate(..., workers=1 / 2)``, the agent
  against two heuristics, ``--deals`` deals: its decisions, not the list above);
- ``reference``, ``eval-1 ref``: ``script`` and ``eval-1`` in a child process started with
  ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1``: the single-thread figures the other hosts are
  compared with (``ratio``: to ``eval-1 ref`` for the eval hosts, to ``reference`` for the others).

    python benchmarks/bench_agents.py [--agents trained,ppo:PATH,rllib:PATH] [--decisions 2000] [--deals 20]
    python benchmarks/bench_agents.py --agents search --decisions 300 --script-only   # the search's spread

Each host that times decisions one by one prints the mean, the median and the 90th percentile of its ms per
decision (a search's decisions vary: the mean is above the median, and the slowest tenth take several times
it); the eval hosts print their mean. The ratio compares means. The load of the machine is printed beside the
figures (1-minute load average).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import statistics
import subprocess
import sys
import threading
import time

from agents import make_agent
from agents.players.heuristic import heuristic_action
from sm_env.core.game import Game
from sm_env.core.knowledge import PlayerView, player_view

SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def decisions(count: int, seed: int) -> list[PlayerView]:
    """The first ``count`` decisions (every phase) of heuristic games on the standard rules."""
    rng = random.Random(seed)
    views: list[PlayerView] = []
    while len(views) < count:
        game = Game(seed=rng.getrandbits(64), max_hands=1)
        while not game.is_over and len(views) < count:
            view = player_view(game, game.current_player)
            views.append(view)
            game.apply(heuristic_action(view))
    return views


def summary(times: list[float]) -> dict[str, float]:
    """The mean, median and 90th percentile of ``times`` (ms per decision)."""
    ordered = sorted(times)
    return {
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p90": ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)],
    }


def ms_per_decision(spec: str, views: list[PlayerView]) -> dict[str, float]:
    """ms per ``act`` of a fresh agent over ``views`` (after a warm-up of 50 decisions): :func:`summary`."""
    agent = make_agent(spec, seed=0)
    agent.check_rules(views[0].rules)
    for view in views[:50]:
        agent.act(view)
    times = []
    for view in views:
        start = time.perf_counter()
        agent.act(view)
        times.append(1000 * (time.perf_counter() - start))
    return summary(times)


def in_thread(spec: str, views: list[PlayerView]) -> dict[str, float]:
    out: list[dict[str, float]] = []
    worker = threading.Thread(target=lambda: out.append(ms_per_decision(spec, views)))
    worker.start()
    worker.join()
    return out[0]


def unpinned(spec: str, views: list[PlayerView]) -> dict[str, float]:
    import numpy as np

    import agents.players.ppo_agent
    import agents.players.rllib_agent

    saved = agents.players.ppo_agent._rows_times, agents.players.rllib_agent.one_thread
    agents.players.ppo_agent._rows_times, agents.players.rllib_agent.one_thread = np.matmul, contextlib.nullcontext
    try:
        return ms_per_decision(spec, views)
    finally:
        agents.players.ppo_agent._rows_times, agents.players.rllib_agent.one_thread = saved


def in_eval(spec: str, deals: int, workers: int) -> dict[str, float]:
    """``eval``'s own timing: its mean only (it sums the seconds of a seat's decisions)."""
    from training.evaluation.evaluate import evaluate

    result = evaluate([spec, "heuristic"], deals=deals, seed=1, workers=workers, bootstrap=10, progress=False)
    return {"mean": float(result.timing[spec]["ms_per_decision"])}


def reference(spec: str, count: int, seed: int, deals: int) -> dict[str, dict[str, float]]:
    """``script`` and ``eval-1`` in a child process on one thread (the environment variables read at start-up):
    this script again, with ``--child``."""
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", "--agents", spec]
        + ["--decisions", str(count), "--seed", str(seed), "--deals", str(deals)],
        env={**os.environ, **SINGLE_THREAD},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def child(spec: str, count: int, seed: int, deals: int) -> None:
    """What :func:`reference` runs: the two figures as one JSON line."""
    row = {"reference": ms_per_decision(spec, decisions(count, seed))}
    if deals:
        row["eval-1 ref"] = in_eval(spec, deals, 1)
    print(json.dumps(row))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="trained", help="comma-separated agent specs (default trained)")
    parser.add_argument("--decisions", type=int, default=2000, help="decisions timed per host (default 2000)")
    parser.add_argument("--deals", type=int, default=20, help="deals of the eval hosts (default 20; 0 skips them)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--script-only", action="store_true", help="time the script host alone (no ratios)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.agents, args.decisions, args.seed, args.deals)
        return 0
    views = decisions(args.decisions, args.seed)
    for spec in args.agents.split(","):
        if args.script_only:
            ms = ms_per_decision(spec, views)
            figures = ", ".join(f"{k} {v:.3f} ms" for k, v in ms.items())
            print(f"{spec}  (load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; {len(views)} decisions) {figures}")
            continue
        row = reference(spec, args.decisions, args.seed, args.deals)
        row.update(script=ms_per_decision(spec, views), thread=in_thread(spec, views), unpinned=unpinned(spec, views))
        if args.deals:
            row["eval-1"] = in_eval(spec, args.deals, 1)
            row["eval-2"] = in_eval(spec, args.deals, 2)
        print(
            f"{spec}  (load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; {len(views)} decisions; ms per decision:"
            " mean, median, 90th percentile; ratio of the means)"
        )
        for host, ms in row.items():
            peer = row["eval-1 ref"] if host.startswith("eval") else row["reference"]
            spread = "".join(f" {ms[k]:8.3f}" if k in ms else f" {'-':>8}" for k in ("median", "p90"))
            print(f"  {host:<10} {ms['mean']:8.3f}{spread} ms  {ms['mean'] / peer['mean']:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
