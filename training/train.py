"""Train a policy with MaskablePPO, from a config file to an evaluated result.

    sergeant-major train --config configs/quickstart.yaml
    sergeant-major train --config configs/quickstart.yaml --set ppo.learning_rate=1e-4 train.n_envs=4
    sergeant-major train --resume runs/quickstart              # continue exactly where it stopped
    sergeant-major train --resume runs/quickstart --set train.total_timesteps=400000   # train longer
    sergeant-major train --evaluate runs/quickstart/final_model.zip --eval-config configs/eval.yaml

The path from config to result, top to bottom in :func:`train`:

1. read and validate the config (training/config.py); make the run folder
   ``<output_dir>/<name>`` and save the resolved config there;
2. seed python ``random``, numpy and torch from ``seed``;
3. build ``train.n_envs`` single-seat environments (training/single_agent.py):
   the learner plays one seat, opponents from the pool play the others;
4. build MaskablePPO (or, with ``--resume``, load the latest checkpoint:
   weights, optimizer, opponent pool, counters and RNG states); on a new run
   with ``pretrain.teacher`` set, warm-start it by imitating that agent
   (:func:`collect_teacher_decisions`, :func:`pretrain`);
5. train in segments of ``train.segment_steps`` learner timesteps. Every
   segment restarts the environments from a seed derived from (seed,
   segment), so a resumed run continues exactly like an uninterrupted one.
   Between segments: add a snapshot of the learner to the opponent pool
   (every ``opponents.snapshot_every``), evaluate (every ``eval.every``),
   write a checkpoint (every ``train.checkpoint_every``, and at the end);
6. write ``final_model.zip`` (SB3 format) and ``final_policy.pt`` (plain
   tensors), both loadable by ``PPOAgent`` / ``agents.make_agent("ppo:PATH")``;
7. evaluate the final policy (``eval.final_deals`` deals, duplicate, per role)
   and print the table.

Run folder::

    config.yaml                 the resolved config (what --resume reads)
    checkpoints/latest.zip      the newest checkpoint (SB3 zip + sm_training_state.pt + sm_policy.json)
    checkpoints/step_*.zip      older checkpoints (train.keep_checkpoints of them)
    tb/                         TensorBoard logs: SB3 losses and entropy (train/*), rollout reward,
                                balance and quota rate per role (rollout/*), evaluation per role
                                (eval/*), decisions per second (time/*)
    eval.jsonl                  every evaluation, one JSON object a line
    final_model.zip, final_policy.pt, final_eval.json

Checkpoints are written to a temporary file and moved into place with
``os.replace``, so a run killed at any moment leaves a valid checkpoint.
Loading never unpickles code: the weights and optimizer come from the zip's
``.pth`` entries with ``torch.load(weights_only=True)`` (SB3's
``set_parameters``) and the trainer's own state from ``sm_training_state.pt``
(tensors and plain values, ``weights_only=True`` too).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import shutil
import sys
import time
import zipfile
from typing import Any

import numpy as np

from agents.ppo_agent import META_ENTRY, NumpyPolicy, PPOAgent, export_policy, policy_metadata
from sm_env.atomic import atomic_path
from sm_env.observation import OBSERVATION_SIZE, OFFSETS

from .config import Config, ConfigError, config_from_dict, load_config, load_eval_config, save_config
from .single_agent import ROLES, make_vec_env

STATE_ENTRY = "sm_training_state.pt"
STATE_FORMAT = "sergeant-major-training-state/1"


# ---------------------------------------------------------------------------- seeding and RNG state


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def rng_states() -> dict[str, Any]:
    import torch

    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": (name, torch.from_numpy(np.asarray(keys, dtype=np.int64)), int(pos), int(has_gauss), float(cached)),
        "torch": torch.get_rng_state(),
    }


def set_rng_states(states: dict[str, Any]) -> None:
    import torch

    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = states["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(states["torch"])


def segment_seed(seed: int, segment: int) -> int:
    """Seed of the environments in one segment (distinct, reproducible)."""
    return (seed * 1_000_003 + segment * 9_973 + 17) % 2**31


# ---------------------------------------------------------------------------- model


def _activation(name: str) -> Any:
    import torch

    return {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[name]


def _ppo_class() -> type:
    from sb3_contrib import MaskablePPO

    class RunPPO(MaskablePPO):
        """MaskablePPO whose schedules follow the whole run, not one learn() call."""

        run_total_timesteps: int = 0

        def _update_current_progress_remaining(self, num_timesteps: int, total_timesteps: int) -> None:
            total = self.run_total_timesteps or total_timesteps
            self._current_progress_remaining = max(0.0, 1.0 - float(num_timesteps) / float(total))

    return RunPPO


def build_model(cfg: Config, venv: Any) -> Any:
    p = cfg.ppo
    lr = p.learning_rate
    schedule = lr if p.lr_schedule == "constant" else (lambda progress: lr * progress)
    model = _ppo_class()(
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
            "activation_fn": _activation(p.activation),
        },
        seed=cfg.seed,
        device="cpu",
        verbose=0,
    )
    model.run_total_timesteps = cfg.train.total_timesteps
    return model


def policy_arrays(model: Any) -> dict[str, np.ndarray]:
    """The actor's weights as numpy arrays (SB3 key names)."""
    return {
        key: value.detach().cpu().numpy().copy()
        for key, value in model.policy.state_dict().items()
        if key.startswith("mlp_extractor.policy_net.") or key.startswith("action_net.")
    }


def numpy_policy(model: Any, cfg: Config) -> NumpyPolicy:
    return NumpyPolicy.from_state_dict(policy_arrays(model), cfg.ppo.activation)


# ---------------------------------------------------------------------------- warm start

_BITS = OFFSETS["trump"]  # the 728 card-plane entries before it are 0/1: stored bit-packed


def collect_teacher_decisions(
    cfg: Config, env_kwargs: dict[str, Any], pool_kwargs: dict[str, Any], seed: int
) -> dict[str, np.ndarray]:
    """The teacher plays the learner's seat of the training env for
    ``pretrain.decisions`` decisions. Stored compactly (about 230 bytes a
    decision): card planes and masks bit-packed, the other features as
    float16; plus actions and returns-to-go (reward units after reward_scale)."""
    from agents import act, make_agent
    from sm_env.knowledge import player_view

    from .single_agent import SNAPSHOTS, OpponentPool, SingleSeatEnv

    n = cfg.pretrain.decisions
    mix = {k: v for k, v in pool_kwargs["mix"].items() if k != SNAPSHOTS} or {"random": 1.0}
    env = SingleSeatEnv(**env_kwargs, opponents=OpponentPool(mix))
    teacher = make_agent(cfg.pretrain.teacher, seed)
    n_actions = int(env.action_space.n)
    bits = np.zeros((n, _BITS // 8), dtype=np.uint8)
    scalars = np.zeros((n, OBSERVATION_SIZE - _BITS), dtype=np.float16)
    masks = np.zeros((n, (n_actions + 7) // 8), dtype=np.uint8)
    actions = np.zeros(n, dtype=np.int64)
    returns = np.zeros(n, dtype=np.float32)
    gamma = cfg.ppo.gamma
    obs, _ = env.reset(seed=seed)
    teacher.reset(seed)
    episode_start = 0
    rewards: list[float] = []
    i = 0
    while True:
        action = act(teacher, player_view(env.game, env.seat))
        if i < n:
            bits[i] = np.packbits(obs[:_BITS].astype(np.uint8), bitorder="little")
            scalars[i] = obs[_BITS:]
            masks[i] = np.packbits(env.action_masks(), bitorder="little")
            actions[i] = action
        # past n: finish the episode in progress so that its returns are exact
        obs, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        i += 1
        if terminated or truncated:
            g = 0.0
            for j in range(i - 1, episode_start - 1, -1):
                g = rewards[j - episode_start] + gamma * g
                if j < n:
                    returns[j] = g
            if i >= n:
                break
            obs, _ = env.reset()
            teacher.reset(seed + i)
            episode_start = i
            rewards = []
    return {
        "bits": bits,
        "scalars": scalars,
        "masks": masks,
        "actions": actions,
        "returns": returns,
        "n_actions": np.array(n_actions),
    }


def pretrain(model: Any, cfg: Config, data: dict[str, np.ndarray], seed: int) -> dict[str, float]:
    """Imitation: cross-entropy of the masked policy on the teacher's actions,
    plus (``pretrain.value``) the value loss on its returns."""
    import torch

    p = cfg.pretrain
    policy = model.policy
    optimizer = policy.optimizer
    for group in optimizer.param_groups:
        group["lr"] = p.learning_rate
    n = len(data["actions"])
    rng = np.random.default_rng(seed)
    stats = {"loss": 0.0, "accuracy": 0.0, "value_loss": 0.0}
    policy.set_training_mode(True)
    for epoch in range(p.epochs):
        order = rng.permutation(n)
        seen = correct = 0
        loss_sum = value_sum = 0.0
        for start in range(0, n, p.batch_size):
            idx = order[start : start + p.batch_size]
            obs = np.empty((len(idx), OBSERVATION_SIZE), dtype=np.float32)
            obs[:, :_BITS] = np.unpackbits(data["bits"][idx], axis=1, bitorder="little")[:, :_BITS]
            obs[:, _BITS:] = data["scalars"][idx]
            obs_t = torch.as_tensor(obs)
            actions = torch.as_tensor(data["actions"][idx])
            masks = np.unpackbits(data["masks"][idx], axis=1, bitorder="little")[:, : int(data["n_actions"])]
            values, log_prob, _ = policy.evaluate_actions(obs_t, actions, action_masks=masks)
            loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), torch.as_tensor(data["returns"][idx]))
            total = loss + (cfg.ppo.vf_coef * value_loss if p.value else 0.0)
            optimizer.zero_grad()
            total.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.ppo.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                dist = policy.get_distribution(obs_t, action_masks=masks)
                correct += int((dist.get_actions(deterministic=True) == actions).sum())
            seen += len(idx)
            loss_sum += float(loss.detach()) * len(idx)
            value_sum += float(value_loss.detach()) * len(idx)
        stats = {"loss": loss_sum / seen, "accuracy": correct / seen, "value_loss": value_sum / seen}
        model.logger.record("pretrain/loss", stats["loss"])
        model.logger.record("pretrain/accuracy", stats["accuracy"])
        model.logger.record("pretrain/value_loss", stats["value_loss"])
        model.logger.dump(epoch)
    policy.set_training_mode(False)
    return stats


# ---------------------------------------------------------------------------- checkpoints


def _atomic_model_zip(model: Any, path: str, meta: dict[str, Any], state: dict[str, Any] | None) -> None:
    """model.save to a temporary file, add our entries, then rename it over ``path`` (sm_env.atomic)."""
    import torch

    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with atomic_path(path) as tmp:
        model.save(tmp)
        with zipfile.ZipFile(tmp, "a") as archive:
            archive.writestr(META_ENTRY, json.dumps(meta, indent=1))
            if state is not None:
                buffer = io.BytesIO()
                torch.save(state, buffer)
                archive.writestr(STATE_ENTRY, buffer.getvalue())


def read_training_state(path: str) -> dict[str, Any]:
    import torch

    try:
        with zipfile.ZipFile(path) as archive:
            raw = archive.read(STATE_ENTRY)
    except (OSError, KeyError, zipfile.BadZipFile) as err:
        raise ConfigError(f"{path}: not a training checkpoint ({err})") from None
    state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise ConfigError(f"{path}: {STATE_ENTRY} is not a {STATE_FORMAT} file")
    return state


class Trainer:
    """One run: the objects of a training run and the steps between segments."""

    def __init__(self, cfg: Config, run_dir: str, resume: bool = False, quiet: bool = False) -> None:
        import torch

        self.cfg = cfg
        self.run_dir = run_dir
        self.quiet = quiet
        os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
        torch.set_num_threads(cfg.train.torch_threads)
        seed_everything(cfg.seed)
        self.rollout = cfg.ppo.n_steps * cfg.train.n_envs
        self.segment_steps = math.ceil(cfg.train.segment_steps / self.rollout) * self.rollout
        check_opponents(cfg)
        env_kwargs = {
            "rules": cfg.env.rules,
            "episode": cfg.env.episode,
            "max_hands": cfg.env.max_hands,
            "reward": cfg.env.reward,
            "reward_scale": cfg.env.reward_scale,
            "learner_seats": cfg.env.learner_seats,
            "exchange_start": cfg.env.exchange_start,
            "dense_reward": cfg.env.dense_reward,
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
            self._load(os.path.join(run_dir, "checkpoints", "latest.zip"))
        from stable_baselines3.common.logger import configure

        self.model.set_logger(configure(os.path.join(run_dir, "tb"), ["tensorboard"]))
        self.pretrain_stats: dict[str, float] | None = None
        if cfg.pretrain.teacher and not resume:
            started = time.perf_counter()
            data = collect_teacher_decisions(cfg, env_kwargs, pool_kwargs, seed=cfg.seed + 7)
            collected = time.perf_counter() - started
            self.pretrain_stats = pretrain(self.model, cfg, data, seed=cfg.seed + 11)
            self.pretrain_stats.update(collect_seconds=collected, seconds=time.perf_counter() - started)

    # -- state ---------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        import torch

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
            "eval_history": json.dumps(self.eval_history),
            "config": json.dumps(self.cfg.to_dict()),
        }

    def _load(self, path: str) -> None:
        if not os.path.isfile(path):
            raise ConfigError(f"cannot resume: no checkpoint at {path}")
        state = read_training_state(path)
        self.model.set_parameters(path, exact_match=True, device="cpu")  # weights + optimizer, weights_only
        self.model.num_timesteps = state["num_timesteps"]
        self.model._n_updates = state["n_updates"]
        self.segment = state["segment"]
        self.last = dict(state["last"])
        self.wall = float(state.get("wall", 0.0))
        self.eval_history = json.loads(state.get("eval_history", "[]"))
        for snap in state["snapshots"]:
            self._add_snapshot(snap["name"], {k: v.numpy() for k, v in snap["arrays"].items()})
        set_rng_states(state["rng"])

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
        _atomic_model_zip(self.model, latest, meta, self._state())
        if cfg.train.keep_checkpoints > 0:
            numbered = os.path.join(directory, f"step_{self.model.num_timesteps:010d}.zip")
            with atomic_path(numbered) as tmp:
                shutil.copyfile(latest, tmp)
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
        _atomic_model_zip(self.model, path, meta, None)
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
        done = model.num_timesteps >= cfg.train.total_timesteps
        if done or self._due("checkpoint", cfg.train.checkpoint_every):
            self.save_checkpoint()

    def evaluate(self, deals: int, final: bool = False) -> dict[str, Any]:
        """Duplicate evaluation of the current policy; logged and appended to eval.jsonl."""
        cfg = self.cfg
        directory = os.path.join(self.run_dir, "checkpoints")
        path = os.path.join(directory, "eval_policy.pt")
        export_policy(numpy_policy(self.model, cfg), path)
        results = evaluate_policy_file(path, cfg, deals)
        entry = {"num_timesteps": int(self.model.num_timesteps), "deals": deals, "final": final, "results": results}
        self.eval_history.append(entry)
        with open(os.path.join(self.run_dir, "eval.jsonl"), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
        logger = self.model.logger
        for opponent, per_role in results.items():
            for role, row in per_role.items():
                logger.record(f"eval/{opponent}/{role}_balance", row["balance"])
                if "advantage" in row:
                    logger.record(f"eval/{opponent}/{role}_advantage", row["advantage"])
            logger.record(f"eval/{opponent}/win_rate", per_role["all"]["win_rate"])
            logger.record(f"eval/{opponent}/difference", per_role["all"]["difference"])
        if final:
            logger.dump(self.model.num_timesteps)
        return results

    def close(self) -> None:
        self.venv.close()


class _Progress:
    """SB3 callback: tqdm bar and per-role rollout statistics."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from stable_baselines3.common.callbacks import BaseCallback

        class Progress(BaseCallback):
            def __init__(self, bar: Any, n_envs: int) -> None:
                super().__init__()
                self.bar = bar
                self.n_envs = n_envs
                self.sums = np.zeros(3)
                self.counts = np.zeros(3)
                self.made = 0

            def _on_step(self) -> bool:
                if self.bar is not None:
                    self.bar.update(self.n_envs)
                for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
                    if done:
                        role = ROLES.index(info["first_role"])
                        self.sums[role] += info["balance"]
                        self.counts[role] += 1
                        self.made += info["balance"] >= 0
                return True

            def _on_rollout_end(self) -> None:
                for i, role in enumerate(ROLES):
                    if self.counts[i]:
                        self.logger.record(f"rollout/balance_{role}", self.sums[i] / self.counts[i])
                total = self.counts.sum()
                if total:
                    self.logger.record("rollout/quota_rate", self.made / total)
                self.sums[:] = 0
                self.counts[:] = 0
                self.made = 0

        return Progress(*args, **kwargs)


def check_opponents(cfg: Config) -> None:
    """Every opponent name must be an agent that ``agents.make_agent`` knows."""
    from .single_agent import SNAPSHOTS, make_baseline

    names = [n for n in cfg.opponents.mix if n not in (SNAPSHOTS, "random")]
    for key, group in (("opponents.mix", names), ("eval.opponents", [n for n in cfg.eval.opponents if n != "random"])):
        for name in group:
            try:
                make_baseline(name, 0)
            except Exception as err:  # noqa: BLE001 - report any failure with the key
                raise ConfigError(f"{key}: opponent {name!r} is not available: {err}") from None


# ---------------------------------------------------------------------------- evaluation


def evaluate_policy_file(path: str, cfg: Config, deals: int) -> dict[str, Any]:
    """Evaluate a policy file against every ``eval.opponents`` baseline.

    Two duplicate measurements per opponent, both per role:

    - ``training.evaluate.evaluate([policy, opponent])`` (the project's
      evaluator: the policy against two copies of the opponent, in the 3
      rotations of every deal): the policy's mean balance per role with its
      95% bootstrap CI (``balance``, ``balance_ci``), the opponent's in the
      same evaluation (``opponent_balance``), the game win rate, and the
      overall balance difference policy - opponent with its CI;
    - hand mode only, :func:`role_advantage`: on the same deal, the policy's
      balance in a role minus the opponent's balance in that role when it
      plays all three seats itself (``advantage`` with ``advantage_ci``),
      the direct test of "plays this role better than the opponent would".
    """
    results: dict[str, Any] = {}
    for opponent in cfg.eval.opponents:
        results[opponent] = project_evaluation(path, opponent, deals, cfg)
        if cfg.eval.mode == "hand":
            adv = role_advantage(path, opponent, deals, cfg)
            for role in (*ROLES, "all"):
                results[opponent][role].update(adv[role])
    return results


def project_evaluation(path: str, opponent: str, deals: int, cfg: Config) -> dict[str, Any]:
    from .evaluate import evaluate

    policy = f"ppo:{path}"
    result = evaluate(
        [policy, opponent],
        deals=deals,
        mode=cfg.eval.mode,
        seed=cfg.eval.seed,
        workers=cfg.eval.workers,
        rules=cfg.env.rules,
        max_hands=cfg.eval.max_hands,
        start_balances=cfg.eval.start_balances,
        progress=False,
    )
    me, them = result.agents
    out: dict[str, Any] = {}
    for role in (*ROLES, "all"):
        mine, theirs = result.stats[me][role], result.stats[them][role]
        out[role] = {
            "balance": mine["balance"].mean,
            "balance_ci": [mine["balance"].lo, mine["balance"].hi],
            "opponent_balance": theirs["balance"].mean,
            "win_rate": mine["win_rate"].mean,
            "hands": result.counts[me][role]["hands"],
        }
    diff = result.pairwise[(me, them)]
    out["all"]["difference"] = diff.mean
    out["all"]["difference_ci"] = [diff.lo, diff.hi]
    return out


def role_advantage(path: str, opponent: str, deals: int, cfg: Config) -> dict[str, Any]:
    """Per role: the policy's balance minus the opponent's, same deal, same seat.

    For every deal (drawn from ``eval.seed``; seat 0 deals) the opponent first
    plays all three seats; then, for each role, the policy takes that seat
    against two copies of the opponent (same agent seeds). Returns per role
    (and ``all``) the mean advantage with a 95% percentile bootstrap CI over
    deals.
    """
    from agents import act, make_agent
    from sm_env.game import Game
    from sm_env.knowledge import player_view

    rng = random.Random(cfg.eval.seed)
    learner = PPOAgent(path)
    diffs = np.zeros((deals, 3))
    start = None if cfg.eval.start_balances is None else list(cfg.eval.start_balances)
    players = [make_agent(opponent, 0) for _ in range(3)]

    def play(seed: int, agent_seeds: list[int], learner_seat: int | None) -> list[int]:
        game = Game(cfg.env.rules, seed=seed, first_dealer=0, max_hands=1, start_balances=start)
        for s in range(3):
            players[s].reset(agent_seeds[s])
        while not game.is_over:
            s = game.current
            view = player_view(game, s)
            game.apply(learner.act(view) if s == learner_seat else act(players[s], view))
        return game.scores

    for i in range(deals):
        seed = rng.randrange(2**62)
        agent_seeds = [rng.randrange(2**62) for _ in range(3)]
        base = play(seed, agent_seeds, None)
        for role in range(3):  # seat 0 deals: seat r has role r
            diffs[i, role] = play(seed, agent_seeds, role)[role] - base[role]
    boot = np.random.default_rng(cfg.eval.seed)
    index = boot.integers(0, deals, size=(1000, deals))
    out: dict[str, Any] = {}
    for role, name in enumerate((*ROLES, "all")):
        d = diffs.mean(axis=1) if name == "all" else diffs[:, role]
        means = d[index].mean(axis=1)
        out[name] = {
            "advantage": float(d.mean()),
            "advantage_ci": [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))],
        }
    return out


def format_table(results: dict[str, Any]) -> str:
    def ci(pair: list[float]) -> str:
        return f"[{pair[0]:+.3f}, {pair[1]:+.3f}]"

    lines = [
        f"{'opponent':<11}{'role':<8}{'balance':>9}{'95% CI':>19}{'opp. bal':>10}"
        f"{'advantage':>11}{'95% CI':>19}{'beats it':>10}"
    ]
    for opponent, per_role in results.items():
        for role in (*ROLES, "all"):
            r = per_role[role]
            line = (
                f"{opponent:<11}{role:<8}{r['balance']:>+9.3f}{ci(r['balance_ci']):>19}{r['opponent_balance']:>+10.3f}"
            )
            if "advantage" in r:
                verdict = "yes" if r["advantage_ci"][0] > 0 else ("NO" if r["advantage_ci"][1] < 0 else "unclear")
                line += f"{r['advantage']:>+11.3f}{ci(r['advantage_ci']):>19}{verdict:>10}"
            lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------------- entry point


def train(
    cfg: Config, run_dir: str, resume: bool = False, quiet: bool = False, stop_after_segments: int | None = None
) -> Trainer:
    """Run (or continue) training; returns the finished :class:`Trainer`.

    ``stop_after_segments`` stops early after that many segments of this call
    (a checkpoint is written), as if the run had been interrupted.
    """
    trainer = Trainer(cfg, run_dir, resume=resume, quiet=quiet)
    model = trainer.model
    bar = None
    if cfg.train.progress_bar and not quiet:
        from tqdm import tqdm

        bar = tqdm(
            total=cfg.train.total_timesteps,
            initial=int(model.num_timesteps),
            unit="step",
            dynamic_ncols=True,
            desc=cfg.name,
        )
    callback = _Progress(bar, cfg.train.n_envs)
    segments = 0
    try:
        while model.num_timesteps < cfg.train.total_timesteps:
            trainer.train_segment(callback)
            segments += 1
            if stop_after_segments is not None and segments >= stop_after_segments:
                if trainer.last["checkpoint"] != model.num_timesteps:
                    trainer.save_checkpoint()
                return trainer
        if trainer.last["checkpoint"] != model.num_timesteps:
            trainer.save_checkpoint()
    finally:
        if bar is not None:
            bar.close()
    return trainer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sergeant-major train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", help="YAML config file (see configs/ and `sergeant-major config`)")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its latest checkpoint")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config field, e.g. --set ppo.learning_rate=1e-4 (repeatable)",
    )
    parser.add_argument("--run-dir", help="run folder (default: <output_dir>/<name>)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--evaluate", metavar="POLICY", help="only evaluate a policy file (no training), with --eval-config settings"
    )
    parser.add_argument(
        "--eval-config",
        metavar="FILE",
        default=None,
        help="evaluation settings for --evaluate (default: configs/eval.yaml if it exists)",
    )
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="more overrides, like --set")
    args = parser.parse_args(argv)
    overrides = args.sets + args.overrides
    if args.evaluate or (args.eval_config and not args.config and not args.resume):
        return evaluate_main(args.evaluate, args.eval_config, overrides)
    try:
        if args.resume:
            if args.config:
                parser.error("give either --config (a new run) or --resume RUN_DIR (continue a run), not both")
            run_dir = args.resume
            cfg = load_config(os.path.join(run_dir, "config.yaml"), overrides)
            if not os.path.isfile(os.path.join(run_dir, "checkpoints", "latest.zip")):
                raise ConfigError(f"cannot resume {run_dir}: no checkpoints/latest.zip in it")
        else:
            if not args.config:
                parser.error("--config FILE is needed to start a run (or --resume RUN_DIR to continue one)")
            cfg = load_config(args.config, overrides)
            run_dir = args.run_dir or os.path.join(cfg.output_dir, cfg.name)
            if os.path.exists(os.path.join(run_dir, "checkpoints", "latest.zip")):
                raise ConfigError(
                    f"{run_dir} already holds a run: continue it with --resume {run_dir}, "
                    f"or start another with --set name=NEW_NAME"
                )
        os.makedirs(run_dir, exist_ok=True)
        save_config(cfg, os.path.join(run_dir, "config.yaml"))
        started = time.perf_counter()
        trainer = train(cfg, run_dir, resume=bool(args.resume), quiet=args.quiet)
    except ConfigError as err:
        print(f"sergeant-major train: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        latest = os.path.join(run_dir, "checkpoints", "latest.zip")
        where = f"the last checkpoint is {latest}" if os.path.isfile(latest) else "no checkpoint was written yet"
        print(f"\ninterrupted: {where}; continue with: sergeant-major train --resume {run_dir}", file=sys.stderr)
        return 130
    try:
        model_path = trainer.save_final()
        elapsed = time.perf_counter() - started
        steps = trainer.model.num_timesteps
        print(
            f"trained {steps} learner decisions in {trainer.wall:.0f} s of training "
            f"({steps / max(trainer.wall, 1e-9):.0f} decisions/s); this call took {elapsed:.0f} s"
        )
        print(f"final model: {model_path} (load with agents.make_agent('ppo:{model_path}'))")
        if cfg.eval.final_deals > 0:
            results = trainer.evaluate(cfg.eval.final_deals, final=True)
            with open(os.path.join(run_dir, "final_eval.json"), "w", encoding="utf-8") as handle:
                json.dump(
                    {"num_timesteps": int(steps), "deals": cfg.eval.final_deals, "results": results}, handle, indent=1
                )
            print(
                f"\nduplicate evaluation, {cfg.eval.final_deals} deals x 3 roles, mode {cfg.eval.mode}: "
                "balance = the policy's mean balance per hand against two copies of the opponent; "
                "opp. bal = the opponent's in the same games; advantage = the policy's balance minus the "
                "opponent's own balance in the same seat on the same deal (95% bootstrap CIs over deals)"
            )
            print(format_table(results))
    finally:
        trainer.close()
    return 0


def evaluate_main(policy: str | None, eval_config: str | None, overrides: list[str]) -> int:
    """``--evaluate POLICY``: the final-evaluation table of a trained policy."""
    try:
        if eval_config is None and os.path.isfile(os.path.join("configs", "eval.yaml")):
            eval_config = os.path.join("configs", "eval.yaml")
        if eval_config is not None:
            spec = load_eval_config(eval_config, overrides)
        else:
            from .config import EvalFileConfig, _build, apply_overrides

            spec = _build(EvalFileConfig, apply_overrides({}, overrides), "", "")
        path = policy or spec.policy
        if not path:
            raise ConfigError("no policy to evaluate: give --evaluate PATH or 'policy:' in the eval config")
        if not os.path.isfile(path):
            raise ConfigError(f"policy file not found: {path}")
        cfg = config_from_dict({"env": {"rules": spec.rules}, "eval": {"opponents": ["random"], "final_deals": 1}})
        cfg.eval = spec.eval
        PPOAgent(path)  # validates the file before any game is played
    except (ConfigError, ValueError) as err:
        print(f"sergeant-major train: error: {err}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = evaluate_policy_file(path, cfg, spec.eval.final_deals)
    print(
        f"{path}: duplicate evaluation, {spec.eval.final_deals} deals x 3 roles, mode {spec.eval.mode} "
        f"({time.perf_counter() - started:.0f} s)"
    )
    print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
