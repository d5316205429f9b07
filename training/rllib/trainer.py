"""PPO self-play with RLlib (new API stack), locally or on a Ray cluster.

    sergeant-major train --backend rllib --config configs/rllib_quickstart.yaml
    sergeant-major train --backend rllib --config configs/rllib_quickstart.yaml --address HEAD:6379
    sergeant-major train --backend rllib --resume runs/rllib_quickstart

One path from config to result (:func:`train_rllib`):

1. ``ray.init()`` (a local instance; ``--address`` joins a cluster started with
   ``ray start --head``);
2. a PPO algorithm over :class:`training.rllib.league.LeagueEnv` with
   :class:`agents.rllib_module.ActionMaskingPPOModule`: one module ``shared``
   by the three seats (``policies: shared``) or one per role (``per_role``:
   ``dealer``, ``eldest``, ``middle``; the env names agents by role);
3. ``train.iterations`` calls of ``algo.train()``; every
   ``league.snapshot_every`` iterations the learner's weights join the pool of
   frozen opponents on every env runner; every ``train.checkpoint_every`` a
   checkpoint ``checkpoints/iter_NNNNNN`` (written to a temporary folder and
   renamed, with the league pool and the run's counters, ``sm_state.json``);
   every ``eval.every`` iterations (and at the end when ``eval.final_deals``
   > 0) a duplicate evaluation per role against ``eval.opponents``;
4. ``policy/``: the learner's modules, playable as ``rllib:RUN/policy``.

TensorBoard (``RUN/tb``) gets the SB3 trainer's figures: ``rollout/balance_<role>``,
``rollout/quota_rate``, ``eval/<opponent>/<role>_balance``,
``eval/<opponent>/<role>_advantage``, ``eval/<opponent>/win_rate``,
``eval/<opponent>/difference``, ``time/decisions_per_second``,
``pool/snapshots``, and the PPO losses as ``train/<module>/<name>``.
(RLlib's own ``episode_return_mean`` sums all seats: always 0 in this
zero-sum game, so it is not logged.)
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from typing import Any

import numpy as np

from sm_env.atomic import atomic_path
from sm_env.core.game import ROLE_NAMES
from training.common.checkpoint import load_tensors
from training.common.yaml_config import save_config

from .config import RLlibConfig

LEARNER_MODULES = os.path.join("learner_group", "learner", "rl_module")
STATE_FILE = "sm_state.json"
LEAGUE_FILE = "league.pt"


def module_ids(cfg: RLlibConfig) -> list[str]:
    """The module ids of a run: ``["shared"]`` or the three roles."""
    return ["shared"] if cfg.policies == "shared" else list(ROLE_NAMES)


def env_config(cfg: RLlibConfig) -> dict[str, Any]:
    """The LeagueEnv config of a run."""
    return {
        "rules": cfg.env.rules,
        "episode": cfg.env.episode,
        "max_hands": cfg.env.max_hands,
        "reward": cfg.env.reward,
        "agent_names": "seats" if cfg.policies == "shared" else "roles",
        "league": {"mix": dict(cfg.league.mix), "seed": cfg.seed},
    }


def _shared_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return "shared"


def _role_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return agent_id  # agents are named by role


def build_algo_config(cfg: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a run."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import ActionMaskingPPOModule

    from .league import LeagueEnv

    ids = module_ids(cfg)
    model = {"fcnet_hiddens": list(cfg.ppo.hiddens), "fcnet_activation": "tanh"}
    specs = {mid: RLModuleSpec(module_class=ActionMaskingPPOModule, model_config=model) for mid in ids}
    return (
        PPOConfig()
        .environment(LeagueEnv, env_config=env_config(cfg), disable_env_checking=True)
        .env_runners(num_env_runners=cfg.train.num_env_runners, num_envs_per_env_runner=cfg.train.envs_per_runner)
        .multi_agent(
            policies=set(ids), policy_mapping_fn=_shared_mapping if cfg.policies == "shared" else _role_mapping
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            lr=cfg.ppo.lr,
            gamma=cfg.ppo.gamma,
            lambda_=cfg.ppo.lambda_,
            clip_param=cfg.ppo.clip_param,
            entropy_coeff=cfg.ppo.entropy_coeff,
            vf_loss_coeff=cfg.ppo.vf_loss_coeff,
            train_batch_size_per_learner=cfg.ppo.train_batch_size,
            minibatch_size=cfg.ppo.minibatch_size,
            num_epochs=cfg.ppo.num_epochs,
        )
        .debugging(seed=cfg.seed)
    )


def init_ray(address: str | None, num_cpus: int | None = None) -> None:
    """Join the cluster at ``address``, or start a local instance (no dashboard) if none is running."""
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)


def _numpy_state(state: Any) -> Any:
    if isinstance(state, dict):
        return {k: _numpy_state(v) for k, v in state.items()}
    return np.asarray(state.detach().cpu() if hasattr(state, "detach") else state)


class RLlibTrainer:
    """A run: algorithm, league, checkpoints, TensorBoard (module docstring)."""

    def __init__(self, cfg: RLlibConfig, run_dir: str, resume: bool = False, address: str | None = None) -> None:
        import torch

        self.cfg = cfg
        self.run_dir = run_dir
        self.ids = module_ids(cfg)
        torch.set_num_threads(cfg.train.torch_threads)
        torch.manual_seed(cfg.seed)
        os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
        if not resume:
            save_config(cfg, os.path.join(run_dir, "config.yaml"))
        init_ray(address, cfg.train.num_cpus)
        self.algo = build_algo_config(cfg).build_algo()
        self.iteration = 0
        self.env_steps = 0
        self.wall = 0.0
        self.league: dict[str, dict[str, Any]] = {}
        self.evals: list[dict[str, Any]] = []
        if resume:
            latest = latest_checkpoint(run_dir)
            if latest is None:
                raise ValueError(f"cannot resume {run_dir}: no checkpoint in {run_dir}/checkpoints")
            self._restore(latest)
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(os.path.join(run_dir, "tb"))

    # ------------------------------------------------------------------ league

    def _broadcast(self, name: str, states: dict[str, Any]) -> int:
        from .league import add_snapshot_on_runner

        keep = self.cfg.league.pool_size
        sizes = self.algo.env_runner_group.foreach_env_runner(
            lambda runner: add_snapshot_on_runner(runner, name, states, keep)
        )
        return max(sizes) if sizes else 0

    def add_snapshot(self) -> int:
        """The learner's current weights join the pool of frozen opponents; the pool size."""
        states = _numpy_state(self.algo.learner_group.get_weights(module_ids=self.ids))
        name = f"snapshot_{self.iteration}"
        self.league[name] = states
        while len(self.league) > self.cfg.league.pool_size:
            self.league.pop(min(self.league, key=lambda n: int(n.rsplit("_", 1)[-1])))
        return self._broadcast(name, states)

    # ------------------------------------------------------------------ checkpoints

    def save_checkpoint(self) -> str:
        """``checkpoints/iter_NNNNNN`` (temporary folder, then renamed); older ones beyond keep are removed."""
        import torch

        final = os.path.join(self.run_dir, "checkpoints", f"iter_{self.iteration:06d}")
        tmp = final + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.algo.save_to_path(os.path.abspath(tmp))
        state = {"iteration": self.iteration, "env_steps": self.env_steps, "wall": self.wall, "evals": self.evals}
        with open(os.path.join(tmp, STATE_FILE), "w", encoding="utf-8") as handle:
            json.dump(state, handle)
        league = {n: {m: {k: torch.from_numpy(np.array(v)) for k, v in s.items()} for m, s in st.items()}
                  for n, st in self.league.items()}  # fmt: skip
        torch.save(league, os.path.join(tmp, LEAGUE_FILE))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        for old in checkpoints(self.run_dir)[: -self.cfg.train.keep_checkpoints]:
            shutil.rmtree(old, ignore_errors=True)
        return final

    def _restore(self, path: str) -> None:
        self.algo.restore_from_path(os.path.abspath(path))
        with open(os.path.join(path, STATE_FILE), encoding="utf-8") as handle:
            state = json.load(handle)
        self.iteration, self.env_steps, self.wall = state["iteration"], state["env_steps"], state["wall"]
        self.evals = state.get("evals", [])
        league = load_tensors(os.path.join(path, LEAGUE_FILE), path, LEAGUE_FILE)
        for name in sorted(league, key=lambda n: int(n.rsplit("_", 1)[-1])):
            states = {m: {k: v.numpy() for k, v in s.items()} for m, s in league[name].items()}
            self.league[name] = states
            self._broadcast(name, states)

    def export_policy(self, checkpoint: str) -> str:
        """``policy/``: the learner's modules from ``checkpoint`` (playable as ``rllib:RUN/policy``)."""
        target = os.path.join(self.run_dir, "policy")
        tmp = target + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(os.path.join(checkpoint, LEARNER_MODULES), tmp)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
        return target

    # ------------------------------------------------------------------ training

    def train_iteration(self) -> dict[str, float]:
        """One ``algo.train()``; the figures logged for it."""
        from .league import collect_stats_on_runner, rollout_figures

        started = time.perf_counter()
        result = self.algo.train()
        elapsed = time.perf_counter() - started
        self.iteration += 1
        self.wall += elapsed
        runners = result.get("env_runners", {})
        steps = int(runners.get("num_env_steps_sampled", 0))
        self.env_steps += steps
        figures = rollout_figures(self.algo.env_runner_group.foreach_env_runner(collect_stats_on_runner))
        figures["time/decisions_per_second"] = steps / elapsed if elapsed > 0 else 0.0
        for mid, stats in result.get("learners", {}).items():
            if mid in self.ids:
                for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "vf_explained_var"):
                    if key in stats:
                        figures[f"train/{mid}/{key}"] = float(stats[key])
        every = self.cfg.league.snapshot_every
        if every and self.iteration % every == 0:
            figures["pool/snapshots"] = self.add_snapshot()
        for key, value in figures.items():
            self.writer.add_scalar(key, value, self.env_steps)
        return figures

    def evaluate(self, deals: int, policy: str) -> dict[str, Any]:
        """Duplicate evaluation of ``rllib:policy`` per role against every ``eval.opponents`` (logged):
        :func:`training.evaluation.evaluate.evaluate_against`, as every trainer reports it."""
        from training.evaluation.evaluate import eval_scalars, evaluate_against

        results = evaluate_against(f"rllib:{policy}", self.cfg.eval, self.cfg.env.rules, deals)
        for tag, value in eval_scalars(results).items():
            self.writer.add_scalar(tag, value, self.env_steps)
        self.evals.append({"iteration": self.iteration, "env_steps": self.env_steps, "results": results})
        return results

    def close(self) -> None:
        """Stop the algorithm and flush the logs."""
        self.writer.close()
        self.algo.stop()


def checkpoints(run_dir: str) -> list[str]:
    """The run's checkpoints, oldest first."""
    folder = os.path.join(run_dir, "checkpoints")
    if not os.path.isdir(folder):
        return []
    names = sorted(n for n in os.listdir(folder) if n.startswith("iter_") and not n.endswith(".tmp"))
    return [os.path.join(folder, n) for n in names]


def latest_checkpoint(run_dir: str) -> str | None:
    """The newest checkpoint of a run, or None."""
    found = checkpoints(run_dir)
    return found[-1] if found else None


def train_rllib(
    cfg: RLlibConfig, run_dir: str, resume: bool = False, address: str | None = None, quiet: bool = False
) -> dict[str, Any]:
    """Run (or continue) a training run to ``train.iterations``; the summary (also ``RUN/summary.json``)."""
    trainer = RLlibTrainer(cfg, run_dir, resume=resume, address=address)
    say = (lambda *a: None) if quiet or not cfg.train.progress else (lambda *a: print(*a, flush=True))
    try:
        checkpoint = latest_checkpoint(run_dir) if resume else None
        while trainer.iteration < cfg.train.iterations:
            figures = trainer.train_iteration()
            balances = " ".join(f"{k.split('_')[-1]} {v:+.2f}" for k, v in figures.items() if "balance_" in k)
            say(
                f"iteration {trainer.iteration}/{cfg.train.iterations}: {trainer.env_steps} env steps, "
                f"{figures['time/decisions_per_second']:.0f} decisions/s; balance by role: {balances}"
            )
            last = trainer.iteration == cfg.train.iterations
            if last or trainer.iteration % cfg.train.checkpoint_every == 0:
                checkpoint = trainer.save_checkpoint()
                say(f"checkpoint: {checkpoint}")
            if cfg.eval.every and trainer.iteration % cfg.eval.every == 0 and not last:
                policy = trainer.export_policy(trainer.save_checkpoint())
                say(json.dumps(trainer.evaluate(cfg.eval.deals, policy)))
        if checkpoint is None:
            checkpoint = trainer.save_checkpoint()
        policy = trainer.export_policy(checkpoint)
        summary: dict[str, Any] = {
            "iterations": trainer.iteration,
            "env_steps": trainer.env_steps,
            "train_seconds": trainer.wall,
            "policy": policy,
            "checkpoint": checkpoint,
        }
        if cfg.eval.final_deals > 0:
            summary["final_eval"] = trainer.evaluate(cfg.eval.final_deals, policy)
        with atomic_path(os.path.join(run_dir, "summary.json")) as tmp, open(tmp, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
        say(f"policy: {policy}  (play it: sergeant-major play --opponents rllib:{policy} heuristic)")
        return summary
    finally:
        trainer.close()


def main(argv: list[str] | None = None) -> int:
    """``sergeant-major train --backend rllib ...``; returns the exit status (2: bad input)."""
    import argparse

    from training.cli import fresh_run_dir
    from training.sb3.config import ConfigError

    from .config import load_rllib_config

    prog = "sergeant-major train --backend rllib"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("rllib",), default="rllib")
    parser.add_argument("--config", help="YAML config (configs/rllib_*.yaml)")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its latest checkpoint")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray instance)")
    parser.add_argument("--run-dir", help="run folder (default: <output_dir>/<name>, or <name>-2, ... if used)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if bool(args.resume) == bool(args.config):
        parser.error("give --config FILE (a new run) or --resume RUN_DIR (continue a run)")
    try:
        if args.resume:
            run_dir = args.resume
            if latest_checkpoint(run_dir) is None:
                raise ConfigError(f"cannot resume {run_dir}: no RLlib checkpoint in {run_dir}/checkpoints")
            cfg = load_rllib_config(os.path.join(run_dir, "config.yaml"), args.sets)
        else:
            cfg = load_rllib_config(args.config, args.sets)
            if args.run_dir:
                run_dir = args.run_dir
                if latest_checkpoint(run_dir) is not None:
                    raise ConfigError(f"{run_dir} already holds a run: continue it with --resume {run_dir}")
            else:
                run_dir, cfg.name = fresh_run_dir(cfg.output_dir, cfg.name)
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ConfigError("the rllib backend needs ray[rllib]: pip install -e '.[rllib]'") from None
    except ConfigError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    print(f"{'resuming' if args.resume else 'new run'}: {run_dir}", flush=True)
    try:
        train_rllib(cfg, run_dir, resume=bool(args.resume), address=args.address, quiet=args.quiet)
    except KeyboardInterrupt:
        latest = latest_checkpoint(run_dir)
        where = f"the last checkpoint is {latest}" if latest else "no checkpoint was written yet"
        print(f"\ninterrupted: {where}; continue with: sergeant-major train --backend rllib --resume {run_dir}")
        return 130
    return 0
