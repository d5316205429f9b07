"""Worker processes that may run torch: one thread each.

A process started with torch's default settings takes one thread per core; several such workers on a
small machine then fight over the cores (an evaluation of an ``rllib:`` agent on two workers ran 10-30
times slower than on one). Every process the project spawns (evaluation workers, distillation labelling
workers, sub-process environments) therefore runs with one thread:

- :func:`spawn_pool`: a ``spawn`` process pool whose workers start with ``OMP_NUM_THREADS=1`` (and the
  BLAS equivalents) in their environment and call :func:`limit_threads` before the pool's own
  initializer;
- :func:`limit_threads`: called first thing in a worker (a pool's, a Ray task's, a sub-process
  environment's): the thread variables, and ``torch.set_num_threads(1)`` if torch is already imported.

Never call :func:`limit_threads` in the main process: a trainer sets its own torch thread count. Work done
in the main process as a worker would do it (an evaluation on ``workers: 1``) runs under
:func:`one_torch_thread`, which gives the thread count back afterwards; so the deals are played with one
torch thread wherever they are played.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from typing import Any

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


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


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Torch on one thread inside the block (if torch is imported), its thread count restored after."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    limit_threads()
    if initializer is not None:
        initializer(*initargs)


def spawn_pool(processes: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()) -> Pool:
    """A ``spawn`` pool of ``processes`` workers, each on one thread (see the module docstring), each then
    running ``initializer(*initargs)``."""
    with _one_thread_environment():
        return mp.get_context("spawn").Pool(processes, initializer=_start_worker, initargs=(initializer, initargs))
