"""Warm start: before PPO, the policy imitates a teacher agent.

The teacher (``pretrain.teacher``, any ``agents.make_agent`` spec) plays the
learner's seat of the training environment, against the same opponents, for
``pretrain.decisions`` decisions (:func:`collect_teacher_decisions`). Then
:func:`pretrain` fits the masked policy to the teacher's actions
(cross-entropy) and, with ``pretrain.value``, the value network to its
returns, for ``pretrain.epochs`` passes. :func:`warm_start` does both, with
a progress bar for each when one is wanted.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from agents import act, make_agent
from sm_env.core.knowledge import player_view
from sm_env.observation import binary_size
from training.common.progress import progress_bar

from .config import Config
from .single_agent import SNAPSHOTS, OpponentPool, SingleSeatEnv


def collect_teacher_decisions(
    cfg: Config, env_kwargs: dict[str, Any], pool_kwargs: dict[str, Any], seed: int, bar: Any = None
) -> dict[str, np.ndarray]:
    """The teacher plays the learner's seat of the training env for
    ``pretrain.decisions`` decisions. Stored compactly (about 230 bytes a
    decision): card planes and masks bit-packed, the other features as
    float16; plus actions and returns-to-go (reward units after reward_scale).
    ``bar`` (a tqdm bar or None) advances by one per decision stored."""
    n = cfg.pretrain.decisions
    mix = {k: v for k, v in pool_kwargs["mix"].items() if k != SNAPSHOTS} or {"random": 1.0}
    env = SingleSeatEnv(**env_kwargs, opponents=OpponentPool(mix))
    teacher = make_agent(cfg.pretrain.teacher, seed)
    n_actions = int(env.action_space.n)
    binary = binary_size(env.num_players)  # the card planes: 728 entries with three players, 936 with four
    bits = np.zeros((n, binary // 8), dtype=np.uint8)
    scalars = np.zeros((n, env.observation_size - binary), dtype=np.float16)  # the rule set's size
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
            bits[i] = np.packbits(obs[:binary].astype(np.uint8), bitorder="little")
            scalars[i] = obs[binary:]
            masks[i] = np.packbits(env.action_masks(), bitorder="little")
            actions[i] = action
            if bar is not None:
                bar.update(1)
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
        "binary": np.array(binary),
    }


def pretrain(model: Any, cfg: Config, data: dict[str, np.ndarray], seed: int, bar: Any = None) -> dict[str, float]:
    """Imitation: cross-entropy of the masked policy on the teacher's actions,
    plus (``pretrain.value``) the value loss on its returns. ``bar`` (a tqdm
    bar or None) advances by one per decision seen in each epoch."""
    p = cfg.pretrain
    policy = model.policy
    optimizer = policy.optimizer
    for group in optimizer.param_groups:
        group["lr"] = p.learning_rate
    n = len(data["actions"])
    binary = int(data["binary"])
    rng = np.random.default_rng(seed)
    stats = {"loss": 0.0, "accuracy": 0.0, "value_loss": 0.0}
    policy.set_training_mode(True)
    for epoch in range(p.epochs):
        order = rng.permutation(n)
        seen = correct = 0
        loss_sum = value_sum = 0.0
        for start in range(0, n, p.batch_size):
            idx = order[start : start + p.batch_size]
            obs = np.empty((len(idx), binary + data["scalars"].shape[1]), dtype=np.float32)
            obs[:, :binary] = np.unpackbits(data["bits"][idx], axis=1, bitorder="little")[:, :binary]
            obs[:, binary:] = data["scalars"][idx]
            obs_t = torch.as_tensor(obs, device=policy.device)
            actions = torch.as_tensor(data["actions"][idx], device=policy.device)
            masks = np.unpackbits(data["masks"][idx], axis=1, bitorder="little")[:, : int(data["n_actions"])]
            values, log_prob, _ = policy.evaluate_actions(obs_t, actions, action_masks=masks)
            loss = -log_prob.mean()
            returns = torch.as_tensor(data["returns"][idx], device=policy.device)
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns)
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
            if bar is not None:
                bar.update(len(idx))
        stats = {"loss": loss_sum / seen, "accuracy": correct / seen, "value_loss": value_sum / seen}
        model.logger.record("pretrain/loss", stats["loss"])
        model.logger.record("pretrain/accuracy", stats["accuracy"])
        model.logger.record("pretrain/value_loss", stats["value_loss"])
        model.logger.dump(epoch)
    policy.set_training_mode(False)
    return stats


def warm_start(
    model: Any, cfg: Config, env_kwargs: dict[str, Any], pool_kwargs: dict[str, Any], progress: bool
) -> dict[str, float]:
    """Collect the teacher's decisions, then imitate them; returns the last epoch's
    statistics plus ``collect_seconds`` and ``seconds``. ``progress``: show a bar for each."""
    started = time.perf_counter()
    p = cfg.pretrain
    with progress_bar(p.decisions, f"warm start: {p.teacher} plays", "decision", enabled=progress) as bar:
        data = collect_teacher_decisions(cfg, env_kwargs, pool_kwargs, seed=cfg.seed + 7, bar=bar)
    collected = time.perf_counter() - started
    with progress_bar(
        p.decisions * p.epochs, f"warm start: imitating ({p.epochs} epochs)", "decision", enabled=progress
    ) as bar:
        stats = pretrain(model, cfg, data, seed=cfg.seed + 11, bar=bar)
    stats.update(collect_seconds=collected, seconds=time.perf_counter() - started)
    return stats
