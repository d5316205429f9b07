"""Labelling and evaluation throughput on a Ray cluster of 1, then 2 worker nodes, in one run.

A cluster on this machine (``ray.cluster_utils.Cluster``, every address on loopback): a head node with no
CPU for tasks (it holds the driver's objects only) and worker nodes of one CPU each. For each size (1 worker
node, then a second added) it times, after a warm-up job on every node:

- **labelling** (``training.distill.data.generate`` with ``ray=``): ``--shards`` shards of ``--hands-per-shard``
  hands, pimc with ``--samples`` samples, one task per shard, the driver writing every shard; decisions/s;
- **evaluation** (``training.evaluation.ray_tasks.play_deals_on_ray``): ``--deals`` deals of pimc against the
  heuristic and random, in every seating, one task per ``--chunk`` deals; deals/s;

and, as the peer in the same run, the same labelling and evaluation in one local process (``--workers 1``),
timed before the cluster starts and again after it stops. Every figure is the best of ``--repeats`` timings
(the machine may be shared with other work: the load average is printed).
It prints a Markdown table (the ratio of 2 nodes to 1 node, and of 1 node to the local process) and the
projection for a cluster of ``--project`` cores from the per-core figure, and writes it all to ``--out`` as
JSON.

    python benchmarks/ray_scaling.py [--shards 24] [--hands-per-shard 4] [--samples 10] [--deals 60] \\
        [--chunk 3] [--repeats 2] [--project 64] [--out runs/bench/ray_scaling.json]

What the ratio can show on a machine of 2 cores: whether the work spreads over two nodes and what the driver,
the scheduling and the shipping of results cost, i.e. the parallel efficiency of the job's structure. What it
cannot: two nodes here share 2 cores with the driver, Ray's own processes (GCS, raylets) and anything else
running, so the ratio is bounded by 2 and lowered by that overhead; network costs between machines are absent
(loopback), and so are the effects of tens of nodes on one driver. The projection multiplies the per-core
figure by the cores and by the 2-node efficiency, an estimate, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time

os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every address on loopback

NODE = {"num_cpus": 1, "object_store_memory": 100 * 2**20, "node_ip_address": "127.0.0.1"}


def time_labelling(settings, shards: int, ray) -> tuple[float, int]:
    """Seconds and decisions to label ``shards`` shards into a fresh folder (``ray`` None: this process)."""
    from training.distill import data

    folder = tempfile.mkdtemp(prefix="ray_scaling_")
    try:
        started = time.perf_counter()
        data.generate(folder, shards * settings.chunk_hands, settings, log=lambda _: None, ray=ray)
        seconds = time.perf_counter() - started
        return seconds, len(data.load(folder)["target"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def time_eval(config, deals: int, chunk: int | None) -> float:
    """Seconds to play ``deals`` deals (``chunk`` None: in this process)."""
    from training.evaluation import deals as deal_module
    from training.evaluation.ray_tasks import play_deals_on_ray

    started = time.perf_counter()
    if chunk is None:
        deal_module.init_worker(config)
        for index in range(deals):
            deal_module.play_deal(index)
    else:
        play_deals_on_ray(config, deals, chunk_size=chunk, timeout=600)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=24)
    parser.add_argument("--hands-per-shard", type=int, default=4)
    parser.add_argument("--samples", type=int, default=10, help="pimc samples per labelled decision")
    parser.add_argument("--deals", type=int, default=60)
    parser.add_argument("--chunk", type=int, default=3, help="deals per evaluation task")
    parser.add_argument("--repeats", type=int, default=2, help="timings per figure (the best is kept)")
    parser.add_argument("--project", type=int, default=64, help="cores of the projected cluster")
    parser.add_argument("--out", default=os.path.join("runs", "bench", "ray_scaling.json"))
    args = parser.parse_args()

    import ray
    from ray.cluster_utils import Cluster

    from sm_env.core.rules import RuleSet
    from sm_env.files.atomic import atomic_path
    from training.common.ray_cluster import RayOptions
    from training.distill.data import DataSettings
    from training.evaluation.deals import DealConfig

    settings = DataSettings(seed=1, samples=args.samples, chunk_hands=args.hands_per_shard)
    config = DealConfig(("pimc:samples=4", "heuristic", "random"), "hand", 1, RuleSet(), 0, None, 1)
    rows: dict[str, dict[str, float]] = {}

    def measure(ray, chunk: int | None) -> dict[str, float]:
        """The best labelling and evaluation throughput of ``--repeats`` timings."""
        label, deals = 0.0, 0.0
        for _ in range(args.repeats):
            seconds, decisions = time_labelling(settings, args.shards, ray)
            label = max(label, decisions / seconds)
            deals = max(deals, args.deals / time_eval(config, args.deals, chunk))
        return {"label": label, "eval": deals}

    time_labelling(settings, 1, None)  # warm-up: numba caches, imports
    time_eval(config, 2, None)
    before = measure(None, None)

    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "num_cpus": 0, "include_dashboard": False})
    try:
        options = RayOptions(address=cluster.address, code="installed", timeout=600)
        options.connect()  # joined as --ray ADDRESS joins: on loopback
        for nodes in (1, 2):
            cluster.add_node(**NODE)
            cluster.wait_for_nodes(timeout=120)
            time_labelling(settings, 2 * nodes, options)  # warm-up: a worker started on every node
            time_eval(config, 2 * nodes * args.chunk, args.chunk)
            rows[f"Ray, {nodes} worker node{'s' if nodes > 1 else ''} of 1 CPU"] = measure(options, args.chunk)
    finally:
        ray.shutdown()
        cluster.shutdown()
    after = measure(None, None)
    rows = {"local process (--workers 1)": {k: max(before[k], after[k]) for k in before}, **rows}

    one, two = rows["Ray, 1 worker node of 1 CPU"], rows["Ray, 2 worker nodes of 1 CPU"]
    local = rows["local process (--workers 1)"]
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "settings": vars(args),
        "rows": rows,
        "two_to_one": {k: two[k] / one[k] for k in one},
        "one_node_to_local": {k: one[k] / local[k] for k in one},
        "projected": {k: args.project * one[k] * (two[k] / one[k]) / 2 for k in one},
    }
    print("| run | labelling (decisions/s) | eval (deals/s) |\n| --- | ---: | ---: |")
    for name, row in rows.items():
        print(f"| {name} | {row['label']:.0f} | {row['eval']:.2f} |")
    ratio, versus = result["two_to_one"], result["one_node_to_local"]
    print(f"| 2 nodes / 1 node | {ratio['label']:.2f} x | {ratio['eval']:.2f} x |")
    print(f"| 1 node / local process | {versus['label']:.2f} x | {versus['eval']:.2f} x |")
    projected = result["projected"]
    print(
        f"\nprojected for {args.project} cores (per-core figure x cores x the 2-node efficiency): "
        f"{projected['label']:.0f} decisions/s, {projected['eval']:.1f} deals/s "
        f"(load average during the run: {result['machine']['load'][0]:.1f})"
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with atomic_path(args.out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
