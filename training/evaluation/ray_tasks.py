"""The duplicate evaluation's deals as Ray tasks (``sergeant-major eval --ray [ADDRESS]``).

:func:`play_deals_on_ray` plays deals ``0 .. deals-1`` exactly as the local
process pool of :func:`training.evaluation.evaluate.evaluate` does (the same
:func:`training.evaluation.deals.play_deal`, so the same seed gives identical
results), in chunks of deals, one Ray task per chunk, each worker on one torch
thread (:func:`training.common.workers.limit_threads`). The cluster, the code
shipped to its nodes and the retries are :mod:`training.common.ray_cluster`'s:

- ``address`` None or ``""``: a local Ray instance (started if none is
  running, or the one ``RAY_ADDRESS`` names); otherwise the cluster at that
  address (``ray start --head`` prints it); ``code``: how the code reaches the
  nodes (``ray_cluster.CODE_MODES``);
- results arrive as tasks finish (``on_result`` is called once per deal, for
  a progress bar) and are returned in deal order;
- a chunk whose worker was lost (a crash, a node leaving the cluster) is
  submitted again, up to ``attempts`` times in all, and ``log`` says which;
  the deals already finished are kept. An error raised by the game or an
  agent is not retried: it is raised here.

Needs ``pip install -e ".[rllib]"`` (or just ``ray``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from training.common.ray_cluster import CONNECT_TIMEOUT, as_completed, connect
from training.common.workers import limit_threads

from .deals import DealConfig, init_worker, play_deal


def play_chunk(config: DealConfig, indices: Sequence[int]) -> list[dict[str, Any]]:
    """Play the deals ``indices`` (in a Ray worker); the per-deal results of ``play_deal``."""
    limit_threads()
    init_worker(config)
    return [play_deal(i) for i in indices]


def chunks(deals: int, size: int) -> list[list[int]]:
    """Deal indices ``0 .. deals-1`` in consecutive chunks of at most ``size``."""
    return [list(range(start, min(start + size, deals))) for start in range(0, deals, size)]


def play_deals_on_ray(
    config: DealConfig,
    deals: int,
    address: str | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    chunk_size: int | None = None,
    attempts: int = 3,
    task: Callable[[DealConfig, Sequence[int]], list[dict[str, Any]]] = play_chunk,
    *,
    code: str = "auto",
    timeout: float | None = None,
    log: Callable[[str], None] | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> list[dict[str, Any]]:
    """Play every deal as Ray tasks; the results in deal order (see the module docstring). ``timeout``: the
    longest wait, in seconds, for any chunk to finish (None: no limit); ``connect_timeout``: to join the
    cluster (``ray_cluster.connect``)."""
    connect(address, code, connect_timeout=connect_timeout)
    import ray

    if chunk_size is None:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        chunk_size = max(1, min(50, deals // (4 * cpus)))
    jobs = [(tuple(part), (config, part)) for part in chunks(deals, chunk_size)]
    results: dict[int, dict[str, Any]] = {}
    finished = as_completed(
        task, jobs, attempts=attempts, timeout=timeout, describe=lambda p: f"deals {p[0]}-{p[-1]}", log=log
    )
    for _, out in finished:
        for result in out:
            results[result["index"]] = result
            if on_result is not None:
                on_result(result)
    return [results[i] for i in range(deals)]
