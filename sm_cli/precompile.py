"""``sergeant-major compile``: compile the numba kernels into numba's on-disk cache now.

The compiled engine and search (``sm_env/compiled``, ``agents/search/*_kernel.py``) are numba functions with
``cache=True``: the first call in a fresh checkout or install compiles them (minutes on a small machine), every
later process loads them from the ``__pycache__`` folders beside their files in about a second. This command
pays that first cost up front, in ``--jobs`` processes at once, by running one tiny workload per part:

- ``engine``: the batched engine (``VectorGame``, ``LearnerVectorEnv`` with random opponents) and ``raw_env``'s
  compiled path, three and four players, checked in lockstep against ``Game``, a saved state restored and a
  broken one refused (the state check's kernel), an illegal action refused;
- ``parallel``: the batched engine's threaded kernels (``VectorGame(parallel=True)``);
- ``search``: the compiled pimc and ISMCTS (world sampler, rollouts, tree), three and four players, and pimc's
  policy rollouts (``pimc:rollout=policy``, three players: the policy's lockstep kernels).

The kernels read the rules as data, so one small workload compiles them for every preset. Nothing is written
but numba's cache (``NUMBA_CACHE_DIR`` when set). One line says what compiles, each part's line comes when it is
done, and a line names the parts not done yet every :data:`HEARTBEAT` seconds; the parts' own first-compile
announcements (:func:`sm_env.compiled.readiness.quiet`) are left out. On an install without torch (the core
install) pimc's policy rollouts, which need it, are skipped, and the search line says so; a part that fails is
reported with its error and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager

PARTS = ("engine", "parallel", "search")
HEARTBEAT = 30.0  # seconds between the lines that name the parts not done yet
ABOUT = "about 5 minutes on 2 shared cores"  # --jobs 2, every part, an empty cache: 5 min 40 s, 292 s of CPU (README)
NO_TORCH = (
    "pimc's policy rollouts (pimc:rollout=policy) skipped: they need torch, which this install lacks "
    "(pip install -e '.[train]' adds it)"
)


def _clock(seconds: float) -> str:
    """``45 s``, ``2 min 05 s``."""
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def _has_torch() -> bool:
    """Whether torch imports here (the training extra, or torch installed by hand)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _engine() -> None:
    import contextlib

    import numpy as np

    from sm_env.compiled.batch import VectorActionError, VectorGame
    from sm_env.compiled.lockstep import lockstep
    from sm_env.compiled.state_check import VectorStateError
    from sm_env.envs.aec import raw_env
    from sm_env.envs.vector_env import LearnerVectorEnv

    for preset in ("standard", "four-5-3-2-2"):
        lockstep(preset, num_games=2, num_slots=2, seed=1, max_hands=2, all_seats=True)
        vec = VectorGame(num_games=2, rules=preset, seed=0)
        vec.reset()
        rows, seats = np.arange(2), np.zeros(2, dtype=np.int64)
        vec.observe(rows=rows, seats=seats, out=np.zeros((2, vec.observation_size), dtype=np.float32))
        vec.full_state(seats=seats)
        with contextlib.suppress(VectorActionError):
            vec.step(np.full(2, -1 % vec.num_actions))  # an illegal action: the kernels that name the legal ones
        state = vec.get_state()
        vec.set_state(state)
        state["st"][0, 0] += 1
        with contextlib.suppress(VectorStateError):
            vec.set_state(state)  # a state that does not replay: the check's error path
        learner = LearnerVectorEnv(2, rules=preset, opponent="random")  # random opponents: random_legal
        learner.reset(seed=0)
        for _ in range(20):
            learner.step(np.array([int(np.flatnonzero(m)[0]) for m in learner.action_masks()]))
        env = raw_env(rules=preset, compiled=True)  # compiled now, and stamped ready (sm_env.compiled.readiness)
        env.reset(seed=0)
        for _ in env.agent_iter(max_iter=40):
            observation, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else int(np.flatnonzero(observation["action_mask"])[0]))


def _parallel() -> None:
    from sm_env.compiled.lockstep import lockstep

    lockstep("standard", num_games=2, num_slots=2, seed=1, max_hands=1, parallel=True)


def _search() -> str | None:
    from agents import make_agent
    from sm_env.core.game import OVER, Game
    from sm_env.core.knowledge import player_view

    torch = _has_torch()
    specs = ("pimc:samples=2", "ismcts:iterations=20") + (("pimc:rollout=policy,samples=2",) if torch else ())
    for preset in ("standard", "four-5-3-2-2"):
        for spec in specs:
            game = Game(rules=preset, seed=0)
            agent = make_agent(spec, seed=0)
            for _ in range(30):
                if game.phase == OVER:
                    break
                game.apply(agent.act(player_view(game, game.current_player)))
    return None if torch else NO_TORCH


_WORK: dict[str, Callable[[], str | None]] = {"engine": _engine, "parallel": _parallel, "search": _search}
"""Each part's workload; what it returns (None, or what it left out and why) ends the part's line."""


def _run(part: str) -> tuple[str, float, str | None, str | None]:
    """One part, its first-compile announcements left out: (part, seconds, error or None, note or None)."""
    from sm_env.compiled.readiness import quiet

    start = time.perf_counter()
    try:
        with quiet():
            note = _WORK[part]()
    except Exception as err:  # reported by the parent with the part's name
        return part, time.perf_counter() - start, f"{type(err).__name__}: {err}", None
    return part, time.perf_counter() - start, None, note


@contextmanager
def _heartbeat(left: Callable[[], list[str]], echo: Callable[[str], None], every: float) -> Iterator[None]:
    """Every ``every`` seconds of the block, one line: the time so far and the parts ``left`` (not done yet)."""
    done = threading.Event()
    start = time.perf_counter()

    def beat() -> None:
        while not done.wait(every):
            names = left()
            if names:
                echo(f"  {_clock(time.perf_counter() - start)}: not done yet: {', '.join(names)}")

    thread = threading.Thread(target=beat, name="compile-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def compile_kernels(
    parts: Sequence[str] = PARTS, jobs: int = 2, echo: Callable[[str], None] = print, heartbeat: float = HEARTBEAT
) -> bool:
    """Compile ``parts`` (names from :data:`PARTS`) in ``jobs`` processes; True when every part compiled. Each
    part's line comes as it ends (what it skipped, if anything, at its end); every ``heartbeat`` seconds a line
    names the parts not done yet (compiling, or waiting for a process)."""
    unknown = [p for p in parts if p not in _WORK]
    if unknown:
        raise ValueError(f"unknown part {unknown[0]!r}; allowed: {', '.join(PARTS)}")
    if not 1 <= jobs <= 64:
        raise ValueError(f"jobs must be 1 to 64, got {jobs}")
    left = list(parts)
    ok = True

    def report(result: tuple[str, float, str | None, str | None]) -> None:
        nonlocal ok
        part, seconds, error, note = result
        ok = ok and error is None
        left.remove(part)
        said = "compiled" if error is None else "FAILED: " + error
        echo(f"{part}: {said} ({_clock(seconds)}){'; ' + note if note else ''}")

    if jobs == 1:
        with _heartbeat(lambda: list(left), echo, heartbeat):
            for part in parts:
                report(_run(part))
        return ok
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(parts)))
    try:
        futures = [pool.submit(_run, part) for part in parts]  # the workers start before the heartbeat's thread
        with _heartbeat(lambda: list(left), echo, heartbeat):
            for future in as_completed(futures):
                report(future.result())
    finally:
        pool.shutdown(cancel_futures=True)
    return ok


def cache_folder() -> str:
    """Where numba keeps the kernels: ``NUMBA_CACHE_DIR``, else the ``__pycache__`` folder beside each kernel's file."""
    return os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ beside each kernel's file"


def main(argv: Sequence[str] | None = None) -> int:
    """The command line of ``sergeant-major compile``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="sergeant-major compile",
        description="Compile the numba kernels (engine, threaded engine, search) into numba's cache now, so that "
        "the first game, search or training run does not wait for them.",
    )
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"what to compile: any of {', '.join(PARTS)} (all)")
    parser.add_argument("--jobs", type=int, default=2, help="processes at once, 1-64 (default 2)")
    args = parser.parse_args(argv)
    if not 1 <= args.jobs <= 64:
        parser.error(f"--jobs must be 1 to 64, got {args.jobs}")
    unknown = [p for p in args.parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; allowed: {', '.join(PARTS)}")
    parts = args.parts or PARTS
    jobs = min(args.jobs, len(parts))
    print(
        f"compiling {', '.join(parts)} with numba, {jobs} at once, into its cache ({cache_folder()}): "
        f"{ABOUT} for every part, once per install; a line every {HEARTBEAT:.0f} s",
        flush=True,
    )
    start = time.perf_counter()
    ok = compile_kernels(parts, args.jobs, echo=lambda line: print(line, flush=True))
    print(f"{'done' if ok else 'failed'} in {_clock(time.perf_counter() - start)}", file=sys.stdout, flush=True)
    return 0 if ok else 1
