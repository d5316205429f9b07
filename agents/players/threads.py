"""Torch on one thread for small products: a policy's forward pass on one observation or a decision's batch.

torch keeps a pool of one thread per core for a product; for one observation waking that pool costs more than
the product, and on a busy machine it waits for the cores (an ``rllib:`` agent took 78 ms a decision with torch
on 2 threads against 2.0 ms on one; ``benchmarks/bench_agents.py`` prints the figures per host). numpy policies
avoid the question: their small products never go to BLAS (``agents.players.ppo_agent.NumpyPolicy.logits``).

:func:`one_thread` sets torch (when it is imported) to one thread inside the block and gives the previous count
back when this thread's outermost block ends. The project's worker processes run on one thread throughout
(``training.common.workers``); this is for the process a user runs agents in (a script, a notebook, ``play``,
``serve``, ``analyse``, an evaluation on one worker).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_held = threading.local()  # per thread: depth (blocks entered) and saved (torch's count before, or None)


@contextmanager
def one_thread() -> Iterator[None]:
    """Torch on one thread inside the block (if torch is imported); its count restored after the outermost block."""
    depth = getattr(_held, "depth", 0)
    if depth == 0:
        torch = sys.modules.get("torch")
        _held.saved = None
        if torch is not None and hasattr(torch, "get_num_threads") and torch.get_num_threads() != 1:
            _held.saved = torch.get_num_threads()
            torch.set_num_threads(1)
    _held.depth = depth + 1
    try:
        yield
    finally:
        _held.depth -= 1
        if _held.depth == 0 and _held.saved is not None:
            sys.modules["torch"].set_num_threads(_held.saved)
            _held.saved = None
