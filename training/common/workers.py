"""Worker processes that may run torch: one thread each.

A process started with torch's default settings takes one thread per core; several such workers on a
small machine then fight over the cores (an evaluation of an ``rllib:`` agent on two workers ran 10-30
times slower than on one). Every process the project spawns (evaluation workers, distillation labelling
workers, sub-process environments) therefore runs with one thread:

- :func:`spawn_pool`: a ``spawn`` process pool whose workers start with ``OMP_NUM_THREADS=1`` (and the
  BLAS equivalents) in their environment and call :func:`limit_threads` and :func:`die_with_parent` before
  the pool's own initializer (every pool of the project is one: eval, tournament, distill's labelling,
  the play-outs' labelling);
- :func:`die_with_parent`: a worker ends when the process that started it does, ``kill -9`` included (no
  orphan keeps computing): on Linux the kernel kills it at once (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), and
  everywhere a watchdog thread ends it within :data:`PARENT_POLL` seconds of its parent's end;
- :func:`limit_threads`: called first thing in a worker (a pool's, a Ray task's, a sub-process
  environment's): the thread variables, and ``torch.set_num_threads(1)`` if torch is already imported.

Never call :func:`limit_threads` in the main process: a trainer sets its own torch thread count. Work done
in the main process as a worker would do it (an evaluation on ``workers: 1``) runs under
:func:`agents.players.threads.one_thread`, which gives the thread count back afterwards; so the deals are
played with one torch thread wherever they are played.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from typing import Any

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
PARENT_POLL = 0.5  # seconds between the watchdog's looks at the parent
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def limit_threads() -> None:
    """This process (a worker) computes on one thread: torch, OpenMP and BLAS."""
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


@contextmanager
def _one_thread_environment() -> Iterator[None]:
    """The thread variables set to 1 while child processes start (the parent's values come back after)."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def die_with_parent(parent: int | None = None, kernel: bool = True) -> None:
    """This process (a worker) ends when ``parent`` (default: its parent now) does (module docstring). On Linux,
    the kernel's signal comes when the parent *thread* that started this process ends. A pool's replacement
    workers (``maxtasksperchild``) are started by its handler thread, which ends first when the pool shuts down:
    killed then, an idle replacement dies holding the pool's queue lock and the shutdown waits for it for ever
    (seen with the play-outs' labelling pool). So they pass ``kernel=False``: the watchdog alone."""
    parent = os.getppid() if parent is None else parent
    if kernel and sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog alone
            pass
    if os.getppid() != parent:  # the parent ended before the signal was asked for
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="parent-watchdog", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:  # an orphan is adopted by another process (init, a subreaper)
        time.sleep(PARENT_POLL)
    os._exit(1)


def _start_worker(
    initializer: Callable[..., None] | None, initargs: tuple[Any, ...], parent: int, kernel: bool = True
) -> None:
    die_with_parent(parent, kernel)
    limit_threads()
    if initializer is not None:
        initializer(*initargs)


def spawn_pool(
    processes: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    maxtasksperchild: int | None = None,
) -> Pool:
    """A ``spawn`` pool of ``processes`` workers, each on one thread and ending with this process (see the module
    docstring), each then running ``initializer(*initargs)``; ``maxtasksperchild``: as ``multiprocessing.Pool``'s
    (a fresh worker after that many tasks; then the workers end with this process by the watchdog alone, see
    :func:`die_with_parent`)."""
    with _one_thread_environment():
        return mp.get_context("spawn").Pool(
            processes,
            initializer=_start_worker,
            initargs=(initializer, initargs, os.getpid(), maxtasksperchild is None),
            maxtasksperchild=maxtasksperchild,
        )
