"""The trainer: MaskablePPO on the single-seat environment, in resumable segments.

The path from config to result, top to bottom in :func:`train`:

1. seed python ``random``, numpy and torch from ``seed``;
2. build ``train.n_envs`` single-seat environments (training/sb3/single_agent.py):
   the learner plays one seat, opponents from the pool play the others;
3. build MaskablePPO (or, with ``resume``, load the latest checkpoint:
   weights, optimizer, opponent pool, counters and RNG states, see
   training/sb3/checkpoint.py); on a new run with ``pretrain.teacher`` set,
   warm-start it by imitating that agent (training/sb3/warm_start.py);
4. save the resolved config as ``config.yaml`` (only now that everything it
   names has loaded);
5. train in segments of ``train.segment_steps`` learner timesteps. Every
   segment restarts the environments from a seed derived from (seed,
   segment), so a resumed run continues exactly like an uninterrupted one.
   Between segments: add a snapshot of the learner to the opponent pool
   (every ``opponents.snapshot_every``), evaluate (every ``eval.every``),
   write a checkpoint (every ``train.checkpoint_every``, and at the end).

Then :meth:`Trainer.save_final` writes ``final_model.zip`` (SB3 format) and
``final_policy.pt`` (plain tensors), both loadable by ``PPOAgent`` /
``agents.make_agent("ppo:PATH")``.

Run folder::

    config.yaml                 the resolved config (what --resume reads)
    checkpoints/latest.zip      the newest checkpoint (training/sb3/checkpoint.py)
    checkpoints/step_*.zip      older checkpoints (train.keep_checkpoints of them)
    tb/                         TensorBoard logs: SB3 losses and entropy (train/*), rollout reward,
                                balance and quota rate per role (rollout/*), evaluation per role
                                (eval/*), decisions per second (time/*), warm start (pretrain/*)
    eval.jsonl                  every evaluation, one JSON object a line (on resume it is rewritten
                                from the checkpoint, so an evaluation redone after a crash is not
                                listed twice)
    final_model.zip, final_policy.pt, final_eval.json
    summary.json                written last (training/common/runs.py): how far the run went; a run
                                that reached train.total_timesteps is complete
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure

from agents.players.ppo_agent import NumpyPolicy, actor_state, export_policy, policy_from_torch, policy_metadata
from sm_env.core.game import role_names
from sm_env.core.rules import RuleSet
from sm_env.files.atomic import atomic_copy
from sm_env.files.json_files import JsonError, dump_json, nan_to_null, parse_json
from training.common import budget
from training.common.checkpoint import CheckpointError, check_counters, check_finite
from training.common.device import on_cpu, resolve_device
from training.common.progress import progress_bar
from training.common.runs import Backend, checkpoint_at, removed_on_failure, write_lines
from training.common.yaml_config import ConfigError, save_config
from training.evaluation.evaluate import eval_scalars, evaluate_against

from .checkpoint import (
    STATE_ENTRY,
    STATE_FORMAT,
    load_weights,
    read_training_state,
    rng_states,
    set_rng_states,
    write_model_zip,
)
from .config import Config, load_config
from .single_agent import SNAPSHOTS, make_baseline, make_vec_env
from .warm_start import warm_start

_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


def seed_everything(seed: int) -> None:
    """Seed python ``random``, numpy's global RNG and torch."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def segment_seed(seed: int, segment: int) -> int:
    """Seed of the environments in one segment (distinct, reproducible)."""
    return (seed * 1_000_003 + segment * 9_973 + 17) % 2**31


def planned_timesteps(done: int, total: int, segment_steps: int) -> int:
    """The timesteps a run will have reached when it stops: whole segments until ``total`` is passed."""
    return done + max(0, math.ceil((total - done) / segment_steps)) * segment_steps


class RunPPO(MaskablePPO):
    """MaskablePPO whose schedules follow the whole run, not one learn() call."""

    run_total_timesteps: int = 0

    def get_parameters(self) -> dict[str, dict]:
        """SB3's parameters (what ``save`` writes) as CPU tensors: a checkpoint made on a GPU loads anywhere."""
        return {name: on_cpu(state) for name, state in super().get_parameters().items()}

    def _update_current_progress_remaining(self, num_timesteps: int, total_timesteps: int) -> None:
        total = self.run_total_timesteps or total_timesteps
        self._current_progress_remaining = max(0.0, 1.0 - float(num_timesteps) / float(total))


def build_model(cfg: Config, venv: Any) -> RunPPO:
    """The MaskablePPO model of a config (on ``train.device``; seeded from ``seed``)."""
    p = cfg.ppo
    lr = p.learning_rate
    schedule = lr if p.lr_schedule == "constant" else (lambda progress: lr * progress)
    model = RunPPO(
        "MlpPolicy",
        venv,
        learning_rate=schedule,
        n_steps=p.n_steps,
        batch_size=p.batch_size,
        n_epochs=p.n_epochs,
        gamma=p.gamma,
        gae_lambda=p.gae_lambda,
        clip_range=p.clip_range,
        ent_coef=p.ent_coef,
        vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm,
        target_kl=p.target_kl,
        normalize_advantage=p.normalize_advantage,
        policy_kwargs={
            "net_arch": {"pi": list(p.net_arch), "vf": list(p.net_arch)},
            "activation_fn": _ACTIVATIONS[p.activation],
        },
        seed=cfg.seed,
        device=resolve_device(cfg.train.device),
        verbose=0,
    )
    model.run_total_timesteps = cfg.train.total_timesteps
    return model


def actor_modules(model: Any) -> list[Any]:
    """The torch modules of the actor of an SB3 MLP policy: its hidden layers, then its action head."""
    return [model.policy.mlp_extractor.policy_net, model.policy.action_net]


def policy_arrays(model: Any) -> dict[str, np.ndarray]:
    """The actor's weights as numpy arrays (SB3 key names)."""
    return actor_state(actor_modules(model))


def numpy_policy(model: Any, cfg: Config) -> NumpyPolicy:
    """The learner's current policy as a numpy network (for snapshots and exports)."""
    return policy_from_torch(actor_modules(model), cfg.ppo.activation, where="the learner")


def check_opponents(cfg: Config) -> None:
    """Every agent the config names (opponents, evaluation baselines, the warm-start teacher)
    must be one that ``agents.make_agent`` can build."""
    groups = [
        ("opponents.mix", [n for n in cfg.opponents.mix if n not in (SNAPSHOTS, "random")]),
        ("eval.opponents", [n for n in cfg.eval.opponents if n != "random"]),
        ("pretrain.teacher", [cfg.pretrain.teacher] if cfg.pretrain.teacher else []),
    ]
    for key, names in groups:
        for name in names:
            try:
                make_baseline(name, 0)
            except Exception as err:  # noqa: BLE001 - report any failure with the key
                raise ConfigError(f"{key}: agent {name!r} is not available: {err}") from None


class Trainer:
    """One run: the objects of a training run and the steps between segments."""

    def __init__(self, cfg: Config, run_dir: str, resume: bool = False, quiet: bool = False) -> None:
        self.cfg = cfg
        self.run_dir = run_dir
        self.quiet = quiet
        check_opponents(cfg)
        os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
        torch.set_num_threads(cfg.train.torch_threads)
        seed_everything(cfg.seed)
        self.rollout = cfg.ppo.n_steps * cfg.train.n_envs
        self.segment_steps = math.ceil(cfg.train.segment_steps / self.rollout) * self.rollout
        env_kwargs = {
            "rules": cfg.env.rules,
            "episode": cfg.env.episode,
            "max_hands": cfg.env.max_hands,
            "reward": cfg.env.reward,
            "reward_scale": cfg.env.reward_scale,
            "learner_seats": cfg.env.learner_seats,
            "exchange_start": cfg.env.exchange_start,
            "dense_reward": cfg.env.dense_reward,
            "torch_threads": None,  # set above, train.torch_threads: the envs leave it as it is
        }
        pool_kwargs = {
            "mix": cfg.opponents.mix,
            "pool_size": cfg.opponents.pool_size,
            "snapshot_deterministic": cfg.opponents.snapshot_deterministic,
        }
        self.env_kwargs, self.pool_kwargs = env_kwargs, pool_kwargs
        self.venv = make_vec_env(env_kwargs, cfg.train.n_envs, cfg.train.vec_env, pool_kwargs=pool_kwargs)
        self.model = build_model(cfg, self.venv)
        self.segment = 0
        self.snapshots: list[tuple[str, dict[str, np.ndarray]]] = []
        self.last = {"snapshot": 0, "eval": 0, "checkpoint": 0}
        self.eval_history: list[dict[str, Any]] = []
        self.wall = 0.0  # seconds spent in learn() over the whole run
        if resume:
            try:
                self._load(os.path.join(run_dir, "checkpoints", "latest.zip"))
            except BaseException:
                self.close()
                raise
        self.start_timesteps = int(self.model.num_timesteps)  # where this call started
        self.start_wall = self.wall
        self.model.set_logger(configure(os.path.join(run_dir, "tb"), ["tensorboard"]))
        self.pretrain_stats: dict[str, float] | None = None
        if cfg.pretrain.teacher and not resume:
            progress = cfg.train.progress_bar and not quiet
            if not quiet:
                print(
                    f"warm start: {cfg.pretrain.teacher} plays {cfg.pretrain.decisions} decisions, then the policy "
                    f"imitates them for {cfg.pretrain.epochs} epochs",
                    file=sys.stderr,
                )
            self.pretrain_stats = warm_start(self.model, cfg, env_kwargs, pool_kwargs, progress)
            if not quiet:
                print(
                    f"warm start done in {self.pretrain_stats['seconds']:.0f} s: the policy plays the teacher's "
                    f"move {self.pretrain_stats['accuracy']:.0%} of the time",
                    file=sys.stderr,
                )

    # -- state ---------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "num_timesteps": int(self.model.num_timesteps),
            "n_updates": int(self.model._n_updates),
            "segment": self.segment,
            "last": dict(self.last),
            "wall": self.wall,
            "snapshots": [
                {"name": n, "arrays": {k: torch.from_numpy(v) for k, v in a.items()}} for n, a in self.snapshots
            ],
            "rng": rng_states(),
            "eval_history": dump_json(nan_to_null(self.eval_history), f"{STATE_ENTRY}: eval_history"),
            "config": dump_json(self.cfg.to_dict(), f"{STATE_ENTRY}: config"),
        }

    def _load(self, path: str) -> None:
        """Restore a checkpoint; eval.jsonl is rewritten from its evaluation history."""
        if not os.path.isfile(path):
            raise ConfigError(f"cannot resume: no checkpoint at {path}")
        state = read_training_state(path)
        check_counters(path, state, ("num_timesteps", "n_updates", "segment"), (), STATE_ENTRY)
        check_counters(path, {"wall": state.get("wall", 0.0)}, (), ("wall",), STATE_ENTRY)
        check_finite(path, state["snapshots"], "snapshots")
        try:
            eval_history = parse_json(state.get("eval_history", "[]"), f"{path}: {STATE_ENTRY}: eval_history")
        except (JsonError, TypeError) as err:
            raise CheckpointError(f"{err}; the checkpoint is damaged") from None
        if not isinstance(eval_history, list):
            raise CheckpointError(f"{path}: {STATE_ENTRY}: eval_history is not a list; the checkpoint is damaged")
        load_weights(self.model, path, self.cfg.ppo.net_arch, self.cfg.ppo.activation)
        try:
            self.model.num_timesteps = state["num_timesteps"]
            self.model._n_updates = state["n_updates"]
            self.segment = state["segment"]
            self.last = {key: int(state["last"][key]) for key in self.last}
            self.wall = float(state.get("wall", 0.0))
            self.eval_history = eval_history
            for snap in state["snapshots"]:
                self._add_snapshot(snap["name"], {k: v.numpy() for k, v in snap["arrays"].items()})
            set_rng_states(state["rng"])
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise CheckpointError(f"{path}: the training state is damaged ({type(err).__name__})") from None
        self._write_eval_log()

    def _write_eval_log(self) -> None:
        """eval.jsonl from the evaluation history, atomically."""
        write_lines(os.path.join(self.run_dir, "eval.jsonl"), self.eval_history)

    def _add_snapshot(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        self.snapshots.append((name, arrays))
        del self.snapshots[: -self.cfg.opponents.pool_size]
        self.venv.env_method("add_snapshot", name, arrays, self.cfg.ppo.activation)

    def save_checkpoint(self) -> str:
        cfg = self.cfg
        directory = os.path.join(self.run_dir, "checkpoints")
        latest = os.path.join(directory, "latest.zip")
        meta = policy_metadata(
            cfg.ppo.net_arch, cfg.ppo.activation, rules=cfg.env.rules, num_timesteps=int(self.model.num_timesteps)
        )
        write_model_zip(self.model, latest, meta, self._state())
        if cfg.train.keep_checkpoints > 0:
            numbered = os.path.join(directory, f"step_{self.model.num_timesteps:010d}.zip")
            atomic_copy(latest, numbered)
            old = sorted(f for f in os.listdir(directory) if f.startswith("step_") and f.endswith(".zip"))
            for name in old[: -cfg.train.keep_checkpoints]:
                os.unlink(os.path.join(directory, name))
        self.last["checkpoint"] = int(self.model.num_timesteps)
        return latest

    def save_final(self) -> str:
        cfg = self.cfg
        meta = policy_metadata(
            cfg.ppo.net_arch, cfg.ppo.activation, rules=cfg.env.rules, num_timesteps=int(self.model.num_timesteps)
        )
        path = os.path.join(self.run_dir, "final_model.zip")
        write_model_zip(self.model, path, meta, None)
        export_policy(
            numpy_policy(self.model, cfg),
            os.path.join(self.run_dir, "final_policy.pt"),
            rules=cfg.env.rules,
            num_timesteps=int(self.model.num_timesteps),
        )
        return path

    # -- training ------------------------------------------------------------------
    def _due(self, what: str, every: int) -> bool:
        return every > 0 and self.model.num_timesteps // every > self.last[what] // every

    def train_segment(self, callback: Any = None) -> None:
        """One segment: restart the envs from the segment's seed, learn, bookkeeping."""
        cfg = self.cfg
        model = self.model
        self.venv.seed(segment_seed(cfg.seed, self.segment))
        model._last_obs = None  # learn() resets the envs (with the seeds above)
        start_steps = model.num_timesteps
        start_decisions = sum(self.venv.get_attr("decisions"))
        started = time.perf_counter()
        model.learn(self.segment_steps, callback=callback, reset_num_timesteps=False, progress_bar=False)
        elapsed = time.perf_counter() - started
        self.wall += elapsed
        decisions = sum(self.venv.get_attr("decisions")) - start_decisions
        self.segment += 1
        logger = model.logger
        logger.record("time/decisions_per_second", (model.num_timesteps - start_steps) / elapsed)
        logger.record("time/engine_decisions_per_second", decisions / elapsed)
        if self._due("snapshot", cfg.opponents.snapshot_every) and "snapshots" in cfg.opponents.mix:
            self._add_snapshot(f"step_{model.num_timesteps}", policy_arrays(model))
            self.last["snapshot"] = int(model.num_timesteps)
        logger.record("pool/snapshots", len(self.snapshots))
        if self._due("eval", cfg.eval.every):
            self.evaluate(cfg.eval.deals)
            self.last["eval"] = int(model.num_timesteps)
        logger.dump(model.num_timesteps)
        done = model.num_timesteps >= cfg.train.total_timesteps or budget.spent(self.wall, cfg.train.max_hours)
        if done or self._due("checkpoint", cfg.train.checkpoint_every):
            self.save_checkpoint()

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """Duplicate evaluation of the current policy; logged, and added to eval.jsonl (rewritten atomically)."""
        cfg = self.cfg
        directory = os.path.join(self.run_dir, "checkpoints")
        path = os.path.join(directory, "eval_policy.pt")
        export_policy(numpy_policy(self.model, cfg), path, rules=cfg.env.rules)
        progress = final and cfg.train.progress_bar and not self.quiet
        results = evaluate_against(f"ppo:{path}", cfg.eval, cfg.env.rules, deals, progress)
        entry = {
            "num_timesteps": int(self.model.num_timesteps),
            "wall": self.wall,  # seconds of training so far (learn() only; evaluations and saving not counted)
            "deals": deals,
            "final": final,
            "results": results,
        }
        self.eval_history.append(entry)
        self._write_eval_log()
        logger = self.model.logger
        for tag, value in eval_scalars(results).items():
            logger.record(tag, value)
        if final:
            logger.dump(self.model.num_timesteps)
        return results

    def close(self) -> None:
        """Close the environments."""
        self.venv.close()

    # -- the run layer (training/common/runs.py) -------------------------------------
    def progress(self) -> int:
        """Learner decisions trained so far (the whole run)."""
        return int(self.model.num_timesteps)

    def train(self, stop: Any = None, stop_after_segments: int | None = None) -> None:
        """Segments until ``train.total_timesteps`` or ``train.max_hours`` of training, or until ``stop`` is set (a
        Ctrl-C: checked after each segment) or ``stop_after_segments`` segments of this call are done; a checkpoint
        at the end either way. Under a budget the bar aims at the decisions where it ends (no ETA before the first
        segment gives a rate)."""
        cfg, model = self.cfg, self.model
        hours = cfg.train.max_hours
        bar = None
        if cfg.train.progress_bar and not self.quiet:
            total = planned_timesteps(int(model.num_timesteps), cfg.train.total_timesteps, self.segment_steps)
            name = f"{cfg.name} (budget {hours:g} h)" if hours else cfg.name
            bar = progress_bar(None if hours else total, name, "step", initial=int(model.num_timesteps), leave=True)
        callback = ProgressCallback(bar, cfg.train.n_envs, role_names(RuleSet.from_any(cfg.env.rules)))
        segments = 0
        try:
            while model.num_timesteps < cfg.train.total_timesteps and not stop and not budget.spent(self.wall, hours):
                self.train_segment(callback)
                segments += 1
                if bar is not None and hours:
                    done, seconds = model.num_timesteps - self.start_timesteps, self.wall - self.start_wall
                    rate = done / seconds if seconds > 0 else 0.0
                    bar.total = budget.aim(int(model.num_timesteps), total, self.wall, rate, hours)
                    bar.refresh()
                if stop_after_segments is not None and segments >= stop_after_segments:
                    break
        finally:
            if bar is not None:
                bar.close()
        if self.last["checkpoint"] != model.num_timesteps:
            self.save_checkpoint()

    def final_outputs(self) -> list[tuple[str, str]]:
        """:meth:`save_final`, then every output of the run and how to use it."""
        self.save_final()
        policy = f"ppo:{self.run_dir}/final_model.zip"
        return [
            (
                "final_model.zip",
                f"the trained policy; play against it: sergeant-major play --opponents {policy} {policy}",
            ),
            ("final_policy.pt", "the same policy as plain tensors (agents.make_agent('ppo:PATH') loads either)"),
            ("eval.jsonl", "every evaluation, one JSON object a line (pandas.read_json(path, lines=True))"),
            ("tb/", f"TensorBoard logs: tensorboard --logdir {self.run_dir}/tb"),
        ]

    def details(self) -> str:
        return ""

    def facts(self) -> dict[str, Any]:
        return {"num_timesteps": int(self.model.num_timesteps)}


class ProgressCallback(BaseCallback):
    """SB3 callback: advances the tqdm bar (if any) and logs per-role rollout statistics (``roles``: the rule
    set's role names, :func:`sm_env.core.game.role_names`)."""

    def __init__(self, bar: Any, n_envs: int, roles: tuple[str, ...]) -> None:
        super().__init__()
        self.bar = bar
        self.n_envs = n_envs
        self.roles = roles
        self.sums = np.zeros(len(roles))
        self.counts = np.zeros(len(roles))
        self.made = 0

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.n_envs)
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done:
                role = self.roles.index(info["first_role"])
                self.sums[role] += info["balance"]
                self.counts[role] += 1
                self.made += info["balance"] >= 0
        return True

    def _on_rollout_end(self) -> None:
        for i, role in enumerate(self.roles):
            if self.counts[i]:
                self.logger.record(f"rollout/balance_{role}", self.sums[i] / self.counts[i])
        total = self.counts.sum()
        if total:
            self.logger.record("rollout/quota_rate", self.made / total)
        self.sums[:] = 0
        self.counts[:] = 0
        self.made = 0


def start(cfg: Config, run_dir: str, resume: bool = False, quiet: bool = False) -> Trainer:
    """The trainer of a run, new or resumed: built (the checkpoint loaded and checked on ``resume``), then the
    config saved as ``run_dir/config.yaml``, never before. A new run that fails here removes the folder it made."""
    with removed_on_failure(run_dir, resume):
        trainer = Trainer(cfg, run_dir, resume=resume, quiet=quiet)
        save_config(cfg, os.path.join(run_dir, "config.yaml"))
    return trainer


def train(
    cfg: Config, run_dir: str, resume: bool = False, quiet: bool = False, stop_after_segments: int | None = None
) -> Trainer:
    """Run (or continue) training; returns the finished :class:`Trainer` (:func:`start`, :meth:`Trainer.train`).

    ``stop_after_segments`` stops early after that many segments of this call
    (a checkpoint is written), as if the run had been interrupted.
    """
    trainer = start(cfg, run_dir, resume=resume, quiet=quiet)
    try:
        trainer.train(stop_after_segments=stop_after_segments)
    except BaseException:
        trainer.close()
        raise
    return trainer


def backend(prog: str) -> Backend:
    """The SB3 trainer as the run layer sees it (``sergeant-major train``)."""

    return Backend(
        prog=prog,
        load_config=load_config,
        latest_checkpoint=checkpoint_at("checkpoints", "latest.zip"),
        length=lambda cfg: (cfg.train.total_timesteps, "train.total_timesteps"),
        unit="learner decisions",
        build=lambda cfg, run_dir, resume, args: start(cfg, run_dir, resume=resume, quiet=args.quiet),
        reached=lambda cfg, summary: budget.reached(
            summary, cfg.train.total_timesteps, cfg.train.max_hours, "learner decisions"
        ),
        further=lambda cfg: budget.further(
            "train.total_timesteps", cfg.train.total_timesteps, "train.max_hours", cfg.train.max_hours
        ),
    )
