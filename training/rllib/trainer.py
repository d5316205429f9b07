"""PPO self-play with RLlib (new API stack), locally or on a Ray cluster.

    sergeant-major train --backend rllib --config configs/rllib_quickstart.yaml
    sergeant-major train --backend rllib --config configs/rllib_quickstart.yaml --address HEAD:6379
    sergeant-major train --backend rllib --resume runs/rllib_quickstart

One path from config to result (:func:`train_rllib`):

1. Ray through ``training.common.ray_cluster.connect`` (a local instance on loopback only;
   ``--address`` joins a cluster started with ``ray start --head``, and ``--ray-code``
   says how the code reaches its nodes: shipped by default); ``train.runner_resources``
   places the env runners on the nodes that offer those Ray resources;
2. a PPO algorithm over :class:`training.rllib.league.LeagueEnv` with
   :class:`agents.players.rllib_module.ActionMaskingPPOModule`: one module ``shared``
   by the three seats (``policies: shared``) or one per role (``per_role``:
   ``dealer``, ``eldest``, ``middle``; the env names agents by role);
3. ``train.iterations`` calls of ``algo.train()``; every
   ``league.snapshot_every`` iterations the learner's weights join the pool of
   frozen opponents on every env runner; every ``train.checkpoint_every`` a
   checkpoint ``checkpoints/iter_NNNNNN`` (written to a temporary folder and
   renamed, with the league pool and the run's counters, ``sm_state.json``);
   every ``eval.every`` iterations (and at the end when ``eval.final_deals``
   > 0) a duplicate evaluation per role against ``eval.opponents``, each a line
   of ``eval.jsonl`` (iteration, env steps, seconds of training, results);
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

import os
import shutil
import time
from typing import Any

import numpy as np

from sm_env.core.game import ROLE_NAMES
from sm_env.files.json_files import JsonError, nan_to_null, read_json, write_json
from training.common import budget
from training.common.checkpoint import CheckpointError, check_counters, damaged, load_tensors
from training.common.device import resolve_device
from training.common.ray_cluster import CONNECT_TIMEOUT, add_code_argument, connect
from training.common.runs import Backend, add_run_arguments, conclude, progress, run_command, write_lines
from training.common.yaml_config import ConfigError, save_config

from .config import RLlibConfig, load_rllib_config

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
        "critic_state": cfg.ppo.critic == "full",
    }


def _shared_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return "shared"


def _role_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return agent_id  # agents are named by role


def build_algo_config(cfg: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a run; its learner (local, in the driver) on ``train.device``: one GPU for
    ``cuda`` (``cuda:N``: the driver's GPU N), none otherwise."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.players.rllib_module import ActionMaskingPPOModule, FullCriticPPOModule
    from sm_env.core.rules import RuleSet

    from .critic_state import AddCriticState
    from .league import LeagueEnv

    ids = module_ids(cfg)
    device = resolve_device(cfg.train.device)
    gpu = device.type == "cuda"
    model = {"fcnet_hiddens": list(cfg.ppo.hiddens), "fcnet_activation": cfg.ppo.activation}
    module_class, connector = ActionMaskingPPOModule, None
    if cfg.ppo.critic == "full":  # the value function also sees the hidden cards: training/rllib/critic_state.py
        module_class, connector = FullCriticPPOModule, lambda *spaces: [AddCriticState()]
        model["critic_state_size"] = 52 * RuleSet.from_any(cfg.env.rules).num_players
    specs = {mid: RLModuleSpec(module_class=module_class, model_config=model) for mid in ids}
    return (
        PPOConfig()
        .environment(LeagueEnv, env_config=env_config(cfg), disable_env_checking=True)
        .env_runners(
            num_env_runners=cfg.train.num_env_runners,
            num_envs_per_env_runner=cfg.train.envs_per_runner,
            custom_resources_per_env_runner=dict(cfg.train.runner_resources),
        )
        .multi_agent(
            policies=set(ids), policy_mapping_fn=_shared_mapping if cfg.policies == "shared" else _role_mapping
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .learners(
            num_gpus_per_learner=1 if gpu else 0,
            local_gpu_idx=device.index if gpu else 0,
            **({"learner_connector": connector} if connector else {}),
        )
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
            use_kl_loss=cfg.ppo.kl_coeff > 0,
            kl_coeff=cfg.ppo.kl_coeff,
            grad_clip=cfg.ppo.grad_clip,
        )
        .debugging(seed=cfg.seed)
    )


def init_ray(
    address: str | None, num_cpus: int | None = None, code: str = "auto", connect_timeout: float = CONNECT_TIMEOUT
) -> None:
    """Join the cluster at ``address`` (at most ``connect_timeout`` seconds), or start a local instance (no
    dashboard) if none is running; ``code``: how the code reaches the nodes (training/common/ray_cluster.py:
    shipped when joining a cluster)."""
    connect(address, code, num_cpus, connect_timeout)


def _numpy_state(state: Any) -> Any:
    if isinstance(state, dict):
        return {k: _numpy_state(v) for k, v in state.items()}
    return np.asarray(state.detach().cpu() if hasattr(state, "detach") else state)


class RLlibTrainer:
    """A run: algorithm, league, checkpoints, TensorBoard (module docstring)."""

    def __init__(
        self,
        cfg: RLlibConfig,
        run_dir: str,
        resume: bool = False,
        address: str | None = None,
        quiet: bool = False,
        code: str = "auto",
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        import torch

        self.cfg = cfg
        self.run_dir = run_dir
        self.quiet = quiet
        self.checkpoint: str | None = None  # the newest checkpoint of the run
        self.ids = module_ids(cfg)
        torch.set_num_threads(cfg.train.torch_threads)
        torch.manual_seed(cfg.seed)
        os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
        init_ray(address, cfg.train.num_cpus, code, connect_timeout)
        self.algo = build_algo_config(cfg).build_algo()
        self.iteration = 0
        self.env_steps = 0
        self.wall = 0.0
        self.league: dict[str, dict[str, Any]] = {}
        self.evals: list[dict[str, Any]] = []
        if resume:
            latest = latest_checkpoint(run_dir)
            if latest is None:
                raise ConfigError(f"cannot resume {run_dir}: no checkpoint in {run_dir}/checkpoints")
            self._restore(latest)
            self.checkpoint = latest
        save_config(cfg, os.path.join(run_dir, "config.yaml"))  # once it loaded, with this call's overrides
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
        write_json(os.path.join(tmp, STATE_FILE), nan_to_null(state), indent=None)
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
        state_path = os.path.join(path, STATE_FILE)
        try:
            state = read_json(state_path, "a checkpoint's state file")
        except JsonError as err:
            raise CheckpointError(f"{err}; the checkpoint is damaged") from None
        check_counters(state_path, state, ("iteration", "env_steps"), ("wall",), STATE_FILE)
        if not isinstance(state.get("evals", []), list):
            raise damaged(state_path, "evals is not a list")
        self.iteration, self.env_steps, self.wall = state["iteration"], state["env_steps"], state["wall"]
        self.evals = state.get("evals", [])
        write_lines(os.path.join(self.run_dir, "eval.jsonl"), self.evals)  # as far as the checkpoint went
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

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """Duplicate evaluation of the exported policy (``rllib:RUN/policy``, :meth:`export_policy`) per role
        against every ``eval.opponents``, logged to TensorBoard: :func:`training.evaluation.evaluate.evaluate_against`,
        as every trainer reports it."""
        from training.evaluation.evaluate import eval_scalars, evaluate_against

        spec = f"rllib:{os.path.join(self.run_dir, 'policy')}"
        results = evaluate_against(spec, self.cfg.eval, self.cfg.env.rules, deals)
        for tag, value in eval_scalars(results).items():
            self.writer.add_scalar(tag, value, self.env_steps)
        self.evals.append(
            {"iteration": self.iteration, "env_steps": self.env_steps, "wall": self.wall, "final": final,
             "results": results}
        )  # fmt: skip
        write_lines(os.path.join(self.run_dir, "eval.jsonl"), self.evals)
        return results

    # ------------------------------------------------------------------ the run layer (training/common/runs.py)

    def train(self, stop: Any = None) -> None:
        """Iterations until ``train.iterations`` or ``train.max_hours`` of training, or until ``stop`` is set (a
        Ctrl-C: checked after each iteration); checkpoints every ``train.checkpoint_every`` and at the end either
        way, evaluations every ``eval.every`` (progress on stderr, with the time left under a budget)."""
        from training.common.tables import format_table

        cfg = self.cfg
        say = (lambda text: None) if self.quiet or not cfg.train.progress else progress
        hours, start = cfg.train.max_hours, (self.iteration, self.wall)
        while self.iteration < cfg.train.iterations and not stop and not budget.spent(self.wall, hours):
            before = self.env_steps
            figures = self.train_iteration()
            if self.env_steps == before and not self.quiet:  # never silently: RLlib only logs a warning
                timeout = getattr(getattr(self.algo, "config", None), "sample_timeout_s", None)
                progress(
                    f"iteration {self.iteration}/{cfg.train.iterations} sampled no env steps: no env runner "
                    f"returned a sample within RLlib's sample timeout ({timeout} s): they were busy (starting "
                    "up, a lost node) or an episode outlasted it; the next iterations sample as usual"
                )
            balances = " ".join(f"{k.split('_')[-1]} {v:+.2f}" for k, v in figures.items() if "balance_" in k)
            left = ""
            if hours:  # the iterations left at this call's pace, or the budget's end if that comes first
                pace = (self.wall - start[1]) / (self.iteration - start[0])
                ends = budget.aim(self.iteration, cfg.train.iterations, self.wall, 1.0 / pace if pace else 0.0, hours)
                left = f"; about {(ends - self.iteration) * pace / 60:.0f} min left (budget {hours:g} h)"
            say(
                f"iteration {self.iteration}/{cfg.train.iterations}: {self.env_steps} env steps, "
                f"{figures['time/decisions_per_second']:.0f} decisions/s; balance by role: {balances}{left}"
            )
            last = self.iteration == cfg.train.iterations or budget.spent(self.wall, hours)
            if last or stop or self.iteration % cfg.train.checkpoint_every == 0:
                self.checkpoint = self.save_checkpoint()
                say(f"checkpoint: {self.checkpoint}")
            if cfg.eval.every and self.iteration % cfg.eval.every == 0 and not last:
                self.checkpoint = self.save_checkpoint()
                self.export_policy(self.checkpoint)
                results = self.evaluate(cfg.eval.deals)
                say(f"evaluation at iteration {self.iteration}, {cfg.eval.deals} deals:\n{format_table(results)}")
        if self.checkpoint is None:
            self.checkpoint = self.save_checkpoint()

    def progress(self) -> int:
        """Iterations trained so far (the whole run)."""
        return self.iteration

    def final_outputs(self) -> list[tuple[str, str]]:
        """The learner's modules as ``policy/``, and every output of the run and how to use it."""
        policy = self.export_policy(self.checkpoint)
        return [
            ("policy/", f"the learner's modules; play it: sergeant-major play --opponents rllib:{policy} heuristic"),
            ("eval.jsonl", "every evaluation, one JSON object a line (pandas.read_json(path, lines=True))"),
            ("tb/", f"TensorBoard logs: tensorboard --logdir {self.run_dir}/tb"),
        ]

    def details(self) -> str:
        return f"{self.env_steps} env steps sampled"

    def facts(self) -> dict[str, Any]:
        return {
            "iterations": self.iteration,
            "env_steps": self.env_steps,
            "policy": os.path.join(self.run_dir, "policy"),
            "checkpoint": self.checkpoint,
        }

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
    trainer = RLlibTrainer(cfg, run_dir, resume=resume, address=address, quiet=quiet)
    try:
        trainer.train()
        return conclude(backend(), cfg, run_dir, trainer)
    finally:
        trainer.close()


PROG = "sergeant-major train --backend rllib"


def backend(prog: str = PROG) -> Backend:
    """The RLlib trainer as the run layer sees it (``sergeant-major train --backend rllib``)."""

    def build(cfg: RLlibConfig, run_dir: str, resume: bool, args: Any) -> RLlibTrainer:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ConfigError("the rllib backend needs ray[rllib]: pip install -e '.[rllib]'") from None
        address, code = getattr(args, "address", None), getattr(args, "ray_code", "auto")
        waits = getattr(args, "ray_connect_timeout", CONNECT_TIMEOUT)
        return RLlibTrainer(
            cfg, run_dir, resume=resume, address=address, quiet=args.quiet, code=code, connect_timeout=waits
        )

    return Backend(
        prog=prog,
        load_config=load_rllib_config,
        latest_checkpoint=latest_checkpoint,
        length=lambda cfg: (cfg.train.iterations, "train.iterations"),
        unit="iterations",
        build=build,
        stop_point="finishing the current iteration, then writing a checkpoint",
        reached=lambda cfg, summary: budget.reached(summary, cfg.train.iterations, cfg.train.max_hours, "iterations"),
        further=lambda cfg: budget.further(
            "train.iterations", cfg.train.iterations, "train.max_hours", cfg.train.max_hours
        ),
    )


def main(argv: list[str] | None = None) -> int:
    """``sergeant-major train --backend rllib ...``; returns the exit status (2: bad input, 130: interrupted)."""
    import argparse

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("rllib",), default="rllib", help=argparse.SUPPRESS)
    add_run_arguments(parser, "YAML config (configs/rllib_*.yaml)")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray instance)")
    add_code_argument(parser)
    return run_command(backend(), parser, argv)
