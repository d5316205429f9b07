"""The duplicate evaluation's deals as Ray tasks (``sergeant-major eval --ray [ADDRESS]``).

:func:`play_deals_on_ray` plays deals ``0 .. deals-1`` exactly as the local
process pool of :func:`training.evaluation.evaluate.evaluate` does (the same
:func:`training.evaluation.deals.play_deal`, so the same seed gives identical
results), in chunks of deals, one Ray task per chunk, each worker on one torch
thread (:func:`training.common.workers.limit_threads`):

- ``address`` None or ``""``: a local Ray instance (started if none is
  running, or the one ``RAY_ADDRESS`` names); otherwise the cluster at that
  address (``ray start --head`` prints it);
- results arrive as tasks finish (``on_result`` is called once per deal, for
  a progress bar) and are returned in deal order;
- a chunk whose worker was lost (a crash, a node leaving the cluster) is
  retried by Ray (``max_retries``) and, if Ray gives up, submitted again, up
  to ``attempts`` times in all; the deals already finished are kept. An error
  raised by the game or an agent is not retried: it is raised here.

Needs ``pip install -e ".[rllib]"`` (or just ``ray``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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
) -> list[dict[str, Any]]:
    """Play every deal as Ray tasks; the results in deal order (see the module docstring)."""
    try:
        import ray
        from ray.exceptions import RayTaskError
    except ImportError:
        raise ValueError("--ray needs Ray: pip install -e '.[rllib]' (or pip install ray)") from None
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False)
    if chunk_size is None:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        chunk_size = max(1, min(50, deals // (4 * cpus)))
    remote = ray.remote(max_retries=attempts - 1)(task)
    pending = {remote.remote(config, part): tuple(part) for part in chunks(deals, chunk_size)}
    tries = dict.fromkeys(pending.values(), 1)
    results: dict[int, dict[str, Any]] = {}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        part = pending.pop(ref)
        try:
            out = ray.get(ref)
        except RayTaskError as err:  # the game or an agent raised: not a lost worker
            raise err.as_instanceof_cause() from None
        except ray.exceptions.RayError as err:  # the worker (or its node) was lost
            tries[part] += 1
            if tries[part] > attempts:
                raise RuntimeError(f"deals {part[0]}-{part[-1]} failed {attempts} times on Ray: {err}") from None
            pending[remote.remote(config, list(part))] = part
            continue
        for result in out:
            results[result["index"]] = result
            if on_result is not None:
                on_result(result)
    return [results[i] for i in range(deals)]
