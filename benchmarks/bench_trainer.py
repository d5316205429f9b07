"""Speed of the batched self-play PPO trainer (training/vector/ppo.py): where its time goes, and per device.

For each network size, on the CPU: one warm-up rollout (kernels compiled, buffers allocated), then ``--rollouts``
rollouts + updates timed phase by phase. Printed per network:

- learner decisions/s (rollout and update together, as training runs);
- the time breakdown: the network's forward (acting, values) and forward+backward+step (update)
  against everything else (engine, sampling, opponents, bookkeeping, batching), and the share outside
  the network;
- the network's floating-point operations per decision: forward for acting (actor + critic), and
  forward+backward per update epoch times ``ppo.n_epochs``; the FLOP/s these make, next to the FLOP/s
  of a plain matrix product of the same shapes measured in the same run (how far from the CPU's limit).

Then one row per device (``--devices``; default: ``cpu``, and ``cuda`` where torch sees CUDA), in the same run:
the training decisions per second of the vector PPO trainer (the first ``--nets`` network, ``--set`` applied)
and of the DMC trainer (its defaults; its replay filled first), each with ``train.device`` set to that device
and the same warm-up and ``--rollouts``.

    python benchmarks/bench_trainer.py                      # default [512, 256] and a larger [1024, 1024]
    python benchmarks/bench_trainer.py --nets 512,256 --critic full --rollouts 3 --set env.num_games=512
    python benchmarks/bench_trainer.py --nets 512,256 --devices cpu cuda   # the per-device rows only matter here

``--actors 0 1 2`` measures instead a trainer's training decisions per second with each ``train.actors`` value
(training/vector/actors.py): DMC (``--trainer dmc``, ``configs/dmc.yaml``) or the vector PPO (``--trainer vector``,
``configs/selfplay_scratch.yaml``, learner decisions), ``--decisions`` decisions a run, the values taken in turn
``--repeats`` times in one process (so that a change of the machine's load touches each alike); the rate of a run
counts its rollouts after the first few (``WARM_ROLLOUTS``: the actors started, DMC's replay filled), as
``metrics.jsonl``'s ``sps`` does; the ratio is each value's median over the first value's::

    python benchmarks/bench_trainer.py --actors 0 1 2 --decisions 800000 --repeats 2
    python benchmarks/bench_trainer.py --trainer vector --actors 0 1 --decisions 200000 --repeats 2

``--rllib-runners 0 1 2`` measures the RLlib route's env steps per second (every seat's decisions) with each
``train.num_env_runners`` value (``configs/scratch_rllib.yaml``, ``--set`` applied, ``--iterations`` iterations a
run; 0 samples in the driver), the values taken in turn ``--repeats`` times in one process, on a local Ray
instance; a run's rate is its env steps over its training seconds (``summary.json``)::

    python benchmarks/bench_trainer.py --rllib-runners 0 1 2 --iterations 7 --repeats 1
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch

from sm_env.observation import OBSERVATION_SIZE
from training.common.device import resolve_device
from training.vector.config import load_dmc_config, load_selfplay_config
from training.vector.dmc import DMC
from training.vector.ppo import NETWORK_PHASES, Timers, VectorPPO, network_flops


def gemm_flops(batch: int, net_arch: list[int], seconds: float = 1.0) -> float:
    """FLOP/s of torch matrix products of the actor's layer shapes on ``batch`` rows (forward only)."""
    sizes = [OBSERVATION_SIZE, *net_arch]
    weights = [torch.randn(a, b) for a, b in zip(sizes, sizes[1:], strict=False)]
    x0 = torch.randn(batch, OBSERVATION_SIZE)
    per_pass = sum(2 * batch * a * b for a, b in zip(sizes, sizes[1:], strict=False))
    passes, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        x = x0
        for w in weights:
            x = x @ w
        passes += 1
    return passes * per_pass / (time.perf_counter() - start)


def bench(net_arch: list[int], rollouts: int, critic: str, overrides: list[str]) -> dict[str, float]:
    """Decisions/s, network share and FLOPs of ``rollouts`` timed rollouts + updates of one network."""
    sets = [f"ppo.net_arch={net_arch}", f"ppo.critic={critic}", "train.progress=false", "train.device=cpu", *overrides]
    cfg = load_selfplay_config(None, sets)
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = VectorPPO(cfg, run_dir, quiet=True)
        trainer.collect()
        trainer.update()  # warm-up
        trainer.timers = Timers()
        decisions, start = 0, time.perf_counter()
        for _ in range(rollouts):
            trainer.collect()
            decisions += int(trainer.update()["decisions"])
        wall = time.perf_counter() - start
    flops = network_flops(net_arch, critic == "full")
    per_decision = flops["act"] + flops["update_epoch"] * cfg.ppo.n_epochs
    timed = sum(trainer.timers.seconds.values())
    return {
        "decisions_per_s": decisions / wall,
        "outside_share": 1.0 - trainer.timers.network_share(),
        "untimed_share": 1.0 - timed / wall,
        "flops_act": flops["act"],
        "flops_update": flops["update_epoch"] * cfg.ppo.n_epochs,
        "flops_per_decision": per_decision,
        "achieved_flops": per_decision * decisions / wall,
        "gemm_flops": gemm_flops(cfg.ppo.batch_size, net_arch),
        "timers": trainer.timers,
        "epochs": cfg.ppo.n_epochs,
    }


def _rate(run, rollouts: int, decisions_of, device: torch.device) -> float:
    """Decisions per second of ``rollouts`` rollouts + updates of ``run`` (warmed up), the device's queue drained
    before the clock stops."""
    start, decisions = time.perf_counter(), 0
    for _ in range(rollouts):
        run.collect()
        decisions += decisions_of(run.update())
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return decisions / (time.perf_counter() - start)


def device_rates(device: str, net_arch: list[int], rollouts: int, critic: str, overrides: list[str]) -> dict:
    """Training decisions/s on ``device`` of the vector PPO trainer (``net_arch``, ``overrides``) and of the DMC
    trainer (its defaults; the replay filled before the clock starts)."""
    torch_device = resolve_device(device, "--devices")
    sets = [f"ppo.net_arch={net_arch}", f"ppo.critic={critic}", "train.progress=false", *overrides]
    with tempfile.TemporaryDirectory() as run_dir:
        ppo = VectorPPO(load_selfplay_config(None, [*sets, f"train.device={device}"]), run_dir, quiet=True)
        ppo.collect()
        ppo.update()  # warm-up
        ppo_rate = _rate(ppo, rollouts, lambda stats: int(stats["decisions"]), torch_device)
    cfg = load_dmc_config(None, ["train.progress=false", f"train.device={device}"])
    with tempfile.TemporaryDirectory() as run_dir:
        dmc = DMC(cfg, run_dir, quiet=True)
        for _ in range(cfg.dmc.replay_rollouts):  # the replay filled: every rollout from here updates
            dmc.collect()
            dmc.update()
        dmc_rate = _rate(dmc, rollouts, lambda stats: cfg.dmc.n_steps * cfg.env.num_games, torch_device)
    return {"device": str(torch_device), "ppo": ppo_rate, "dmc": dmc_rate}


WARM_ROLLOUTS = {"dmc": 10, "vector": 3}  # rollouts of a run left out of its rate
TRAINERS = {  # --trainer: the config file, its loader and the trainer
    "dmc": ("configs/dmc.yaml", load_dmc_config, DMC),
    "vector": ("configs/selfplay_scratch.yaml", load_selfplay_config, VectorPPO),
}


def actors_rate(name: str, actors: int, decisions: int, overrides: list[str]) -> float:
    """Training decisions per second of a run of trainer ``name`` with ``train.actors: actors`` (after its first
    rollouts)."""
    path, load_config, trainer_class = TRAINERS[name]
    sets = ["train.progress=false", "eval.every=0", "eval.final_deals=0", f"train.total_timesteps={decisions}"]
    cfg = load_config(path, [*sets, "train.max_hours=0", f"train.actors={actors}", *overrides])
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = trainer_class(cfg, run_dir, quiet=True)
        try:
            trainer.train()
        finally:
            trainer.close()
    rows, warm = trainer.history, WARM_ROLLOUTS[name]
    if len(rows) <= warm:
        raise SystemExit(f"--decisions {decisions} makes {len(rows)} rollouts; more than {warm} are needed")
    first, last = rows[warm - 1], rows[-1]
    return (last["global_step"] - first["global_step"]) / (last["wall"] - first["wall"])


def rllib_rate(runners: int, iterations: int, overrides: list[str]) -> float:
    """Env steps per second of an RLlib run of ``configs/scratch_rllib.yaml`` with ``runners`` env runners."""
    from training.rllib.config import load_rllib_config
    from training.rllib.trainer import train_rllib

    sets = ["eval.every=0", "eval.final_deals=0", "train.max_hours=0", f"train.iterations={iterations}"]
    sets += [f"train.checkpoint_every={iterations}", f"train.num_env_runners={runners}", "train.progress=false"]
    cfg = load_rllib_config("configs/scratch_rllib.yaml", [*sets, *overrides])
    with tempfile.TemporaryDirectory() as run_dir:
        summary = train_rllib(cfg, run_dir, quiet=True)
    return summary["env_steps"] / summary["train_seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nets", nargs="+", default=["512,256", "1024,1024"], help="hidden sizes, e.g. 512,256")
    parser.add_argument("--rollouts", type=int, default=3, help="timed rollouts per network")
    parser.add_argument("--critic", choices=("observation", "full"), default="observation")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument(
        "--devices",
        nargs="+",
        default=["cpu", *(["cuda"] if torch.cuda.is_available() else [])],
        help="the per-device rows: train.device values (default: cpu, and cuda where present)",
    )
    parser.add_argument("--actors", type=int, nargs="+", help="train.actors values to compare (see above)")
    parser.add_argument("--trainer", choices=tuple(TRAINERS), default="dmc", help="--actors: the trainer measured")
    parser.add_argument("--decisions", type=int, default=800_000, help="--actors: decisions of each run")
    parser.add_argument("--repeats", type=int, default=2, help="--actors: runs of each value, taken in turn")
    parser.add_argument("--rllib-runners", type=int, nargs="+", help="RLlib's train.num_env_runners values to compare")
    parser.add_argument("--iterations", type=int, default=7, help="--rllib-runners: iterations of each run")
    args = parser.parse_args()
    if args.rllib_runners:
        runs: dict[int, list[float]] = {n: [] for n in args.rllib_runners}
        for _ in range(args.repeats):
            for n in args.rllib_runners:
                runs[n].append(rllib_rate(n, args.iterations, args.sets))
                print(f"env runners {n}: {runs[n][-1]:,.0f} env steps/s", flush=True)
        base = statistics.median(runs[args.rllib_runners[0]])
        print(f"\n| train.num_env_runners | RLlib env steps/s (each run) | median / {args.rllib_runners[0]} runners' |")
        print("| ---: | --- | ---: |")
        for n, values in runs.items():
            print(f"| {n} | {', '.join(f'{v:,.0f}' for v in values)} | {statistics.median(values) / base:.2f} |")
        return
    if args.actors:
        rates: dict[int, list[float]] = {n: [] for n in args.actors}
        for _ in range(args.repeats):
            for n in args.actors:
                rates[n].append(actors_rate(args.trainer, n, args.decisions, args.sets))
                print(f"actors {n}: {rates[n][-1]:,.0f} decisions/s", flush=True)
        base = statistics.median(rates[args.actors[0]])
        what = {"dmc": "DMC decisions/s", "vector": "vector PPO learner decisions/s"}[args.trainer]
        print(f"\n| train.actors | {what} (each run) | median / actors {args.actors[0]}'s |")
        print("| ---: | --- | ---: |")
        for n, values in rates.items():
            print(f"| {n} | {', '.join(f'{v:,.0f}' for v in values)} | {statistics.median(values) / base:.2f} |")
        return
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads by default; overrides: {args.sets or 'none'}")
    rows = []
    for text in args.nets:
        net_arch = [int(w) for w in text.split(",")]
        result = bench(net_arch, args.rollouts, args.critic, args.sets)
        rows.append((net_arch, result))
        print(f"\nnet {net_arch}, critic {args.critic}: time by phase (network: {', '.join(NETWORK_PHASES)})")
        print(result["timers"].table())
    print(
        "\n| net | learner decisions/s | outside the network | MFLOP/decision: act | update "
        "(fwd+bwd x epochs) | total | achieved GFLOP/s | matmul GFLOP/s, same shapes |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for net_arch, r in rows:
        print(
            f"| {net_arch} | {r['decisions_per_s']:,.0f} | {100 * r['outside_share']:.1f}% | "
            f"{r['flops_act'] / 1e6:.2f} | {r['flops_update'] / 1e6:.2f} ({r['epochs']} epochs) | "
            f"{r['flops_per_decision'] / 1e6:.2f} | {r['achieved_flops'] / 1e9:.1f} | {r['gemm_flops'] / 1e9:.1f} |"
        )

    first = [int(w) for w in args.nets[0].split(",")]
    rates = [device_rates(device, first, args.rollouts, args.critic, args.sets) for device in args.devices]
    print(f"\n| device | vector PPO learner decisions/s (net {first}) | DMC decisions/s (its defaults) |")
    print("| --- | ---: | ---: |")
    for r in rates:
        print(f"| {r['device']} | {r['ppo']:,.0f} | {r['dmc']:,.0f} |")


if __name__ == "__main__":
    main()
