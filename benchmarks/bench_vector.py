"""Speed of the batched engine (sm_env.compiled.batch) next to OpenSpiel and raw_env, in one run.

Random legal play; decisions are player decisions (OpenSpiel's chance nodes,
the deal, are timed but not counted; our deals are timed too). Printed side
by side, in decisions/s and microseconds per decision:

- OpenSpiel 2.x C++ ``oh_hell`` (3 players, 16 tricks): stepping with
  ``legal_actions()``, and with an observer (``make_observation``, the
  information-state tensor) read at every decision;
- ``sm_env`` ``raw_env`` with an observation and a mask every decision (its
  compiled path, and ``compiled=False``: the pure-Python reference path);
- ``VectorGame`` (``--num-games`` slots): ``legal_mask()`` + ``step()``, and
  the same with ``observe()`` at every step (into a reused buffer, as a
  trainer does; ``--fresh`` allocates a new array each time); in the calling
  thread, and with ``parallel=True`` when ``--threads`` is above 1 (the
  ratios use the faster of the two).

Ratios are to OpenSpiel with its observer (the issue's peer) and, for the
stepping figure, also to OpenSpiel stepping alone; for ``raw_env`` the
ratio is of times per decision (target at most 1.0). Needs ``pip install
.[bench]`` for OpenSpiel (skipped if missing).

    python benchmarks/bench_vector.py [--seconds 3] [--num-games 1024] [--threads 2] [--clock cpu]
    python benchmarks/bench_vector.py --clock cpu --seconds 1 --presets          # a table for every preset
    python benchmarks/bench_vector.py --presets calls four-5-3-2-2               # or for the named ones

``--clock cpu`` times by the CPU time of this process instead of the wall
clock: on a machine busy with other work it is less disturbed (for the
single-thread rows; the threads of ``parallel=True`` add up).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

import numba
import numpy as np

from sm_env.compiled.batch import VectorGame
from sm_env.compiled.kernels import random_legal

clock: Callable[[], float] = time.perf_counter  # the clock of every loop (--clock)


def timed(run: Callable[[float], int], seconds: float, repeats: int) -> float:
    """Best decisions/s of ``repeats`` runs of about ``seconds`` each."""
    best = 0.0
    for _ in range(repeats):
        start = clock()
        decisions = run(seconds)
        best = max(best, decisions / (clock() - start))
    return best


def openspiel_runner(observer: bool) -> Callable[[float], int] | None:
    try:
        import pyspiel
        from open_spiel.python.observation import make_observation
    except ImportError:
        return None
    game = pyspiel.load_game("oh_hell", {"players": 3, "num_tricks_fixed": 16})
    obs = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True)) if observer else None
    rng = random.Random(0)

    def run(seconds: float) -> int:
        decisions = 0
        end = clock() + seconds
        while clock() < end:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(rng.choice(state.chance_outcomes())[0])
                    continue
                if obs is not None:
                    obs.set_from(state, state.current_player())
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        return decisions

    return run


def raw_env_runner(compiled: bool = True, rules: str = "standard") -> Callable[[float], int]:
    from sm_env.envs.aec import raw_env

    env = raw_env(rules=rules, compiled=compiled)
    rng = random.Random(0)
    env.reset(seed=-1 % 2**32)  # one game to compile / warm up, not timed
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(int(env.observe(env.agent_selection)["action_mask"].nonzero()[0][0]))

    def run(seconds: float) -> int:
        decisions = 0
        end = clock() + seconds
        seed = 0
        while clock() < end:
            env.reset(seed=seed)
            seed += 1
            while True:
                agent = env.agent_selection
                if env.terminations[agent] or env.truncations[agent]:
                    break
                legal = env.observe(agent)["action_mask"].nonzero()[0]
                env.step(int(legal[rng.randrange(len(legal))]))
                decisions += 1
        return decisions

    return run


def vector_runner(
    num_games: int, observe: bool, fresh: bool, parallel: bool, rules: str = "standard"
) -> Callable[[float], int]:
    game = VectorGame(num_games, rules=rules, seed=0, parallel=parallel)
    game.reset()
    state = np.arange(1, num_games + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    actions = np.zeros(num_games, dtype=np.int64)
    mask = np.empty((num_games, game.num_actions), dtype=np.int8)
    obs = np.empty((num_games, game.observation_size), dtype=np.float32)
    for _ in range(3):  # compile / warm up
        random_legal(game.legal_mask(), state, actions)
        game.observe()
        game.step(actions)

    def run(seconds: float) -> int:
        steps = 0
        end = clock() + seconds
        while clock() < end:
            for _ in range(20):
                game.legal_mask(out=mask)
                if observe:
                    game.observe() if fresh else game.observe(out=obs)
                random_legal(mask, state, actions)
                game.step(actions)
            steps += 20
        return steps * num_games

    return run


def preset_table(presets: list[str], args: argparse.Namespace, os_obs: float) -> None:
    """One row per preset: raw_env's time per decision and VectorGame's speed, each as a ratio to OpenSpiel
    with its observer (``os_obs`` decisions/s, measured in this run). Targets: raw_env at most 1.2 times
    OpenSpiel's time per decision; VectorGame at least 10 times its decisions/s with masks, 5 with observations.
    A preset the compiled engine does not run shows raw_env's pure-Python path and no VectorGame figures."""
    from sm_env.compiled.support import supports
    from sm_env.core.rules import RuleSet

    print()
    print(
        "| preset | path | raw_env us/decision | raw_env time / OpenSpiel (<= 1.2) "
        "| VectorGame + mask / OpenSpiel (>= 10) | VectorGame + observe / OpenSpiel (>= 5) |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name in presets:
        compiled = supports(RuleSet.from_any(name))
        raw = timed(raw_env_runner(rules=name), args.seconds, args.repeats)
        cells = [name, "compiled" if compiled else "Python", f"{1e6 / raw:.2f}", f"{os_obs / raw:.2f}"]
        if compiled:
            for observe in (False, True):
                rate = timed(
                    vector_runner(args.num_games, observe, args.fresh, False, rules=name), args.seconds, args.repeats
                )
                cells.append(f"{rate / os_obs:.1f}")
        else:
            cells += ["-", "-"]
        print("| " + " | ".join(cells) + " |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per run (default 3)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure, best kept (default 3)")
    parser.add_argument("--num-games", type=int, default=1024, help="VectorGame slots (default 1024)")
    parser.add_argument("--threads", type=int, default=2, help="numba threads for parallel=True (default 2)")
    parser.add_argument("--fresh", action="store_true", help="observe() into a fresh array every step")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall clock or process CPU time")
    parser.add_argument(
        "--presets",
        nargs="*",
        metavar="NAME",
        help="also print a table per preset (no names: every preset) of raw_env and VectorGame against OpenSpiel",
    )
    args = parser.parse_args(argv)
    global clock
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    print(
        f"python {sys.version.split()[0]}, numba {numba.__version__} ({numba.get_num_threads()} threads), "
        f"{args.num_games} slots, best of {args.repeats} x {args.seconds:g} s ({args.clock} clock)"
    )
    rows: list[tuple[str, float]] = []

    def add(name: str, runner: Callable[[float], int] | None) -> float | None:
        if runner is None:
            print(f"{name:<44} skipped (pip install .[bench] for open-spiel)")
            return None
        rate = timed(runner, args.seconds, args.repeats)
        rows.append((name, rate))
        print(f"{name:<44} {rate:14,.0f} decisions/s  {1e6 / rate:8.3f} us/decision", flush=True)
        return rate

    os_step = add("OpenSpiel oh_hell: step + legal_actions", openspiel_runner(False))
    os_obs = add("OpenSpiel oh_hell: + observer every decision", openspiel_runner(True))
    raw = add("sm_env raw_env: step + observe", raw_env_runner())
    raw_py = add("  raw_env(compiled=False): step + observe", raw_env_runner(compiled=False))
    vec_step = add("VectorGame: step + legal_mask", vector_runner(args.num_games, False, args.fresh, False))
    vec_obs = add("VectorGame: step + legal_mask + observe", vector_runner(args.num_games, True, args.fresh, False))
    if numba.get_num_threads() > 1:
        threads = numba.get_num_threads()
        par_step = add(
            f"  parallel={threads} threads: step + legal_mask", vector_runner(args.num_games, False, args.fresh, True)
        )
        par_obs = add(f"  parallel={threads} threads: + observe", vector_runner(args.num_games, True, args.fresh, True))
        vec_step, vec_obs = max(vec_step, par_step), max(vec_obs, par_obs)
    if os_obs:
        print(f"ratio VectorGame step + mask / OpenSpiel with observer:  {vec_step / os_obs:6.1f} x  (target >= 14)")
        print(f"ratio VectorGame + observe / OpenSpiel with observer:    {vec_obs / os_obs:6.1f} x  (target >= 7)")
        print(f"ratio VectorGame step + mask / OpenSpiel step alone:     {vec_step / os_step:6.1f} x")
        print(f"time per decision raw_env / OpenSpiel with observer:     {os_obs / raw:6.2f} x  (target <= 1.0)")
        print(f"  the same with raw_env(compiled=False):                 {os_obs / raw_py:6.2f} x")
    if args.presets is not None:
        if not os_obs:
            sys.exit("--presets needs OpenSpiel (pip install .[bench]): the table is of ratios to it")
        from sm_env.core.rules import PRESETS

        unknown = [name for name in args.presets if name not in PRESETS]
        if unknown:
            sys.exit(f"unknown preset(s) {', '.join(unknown)}; the presets: {', '.join(PRESETS)}")
        preset_table(args.presets or list(PRESETS), args, os_obs)


if __name__ == "__main__":
    main()
