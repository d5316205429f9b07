"""The RLlib training configuration (``sergeant-major train --backend rllib --config configs/rllib_*.yaml``).

Sections (every key optional; ``python -m training.rllib_config`` lists them
with their defaults)::

    name: rllib                 # run folder <output_dir>/<name>
    output_dir: runs
    seed: 0
    env:      {...}             # RLlibEnvConfig: the game (as sm_env.env's keywords)
    policies: shared            # 'shared' by the three seats, or 'per_role' (dealer, eldest, middle)
    league:   {...}             # LeagueConfig: who sits in the other seats
    ppo:      {...}             # RLlibPPOConfig: PPO hyper-parameters (RLlib's names)
    train:    {...}             # RLlibTrainConfig: iterations, runners, checkpoints
    eval:     {...}             # the SB3 trainer's EvalConfig: duplicate evaluation per role

Errors are :class:`training.config.ConfigError` naming the key, as for the
SB3 trainer's config, and ``--set KEY=VALUE`` overrides work the same way.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from sm_env.atomic import atomic_path
from sm_env.episode import EPISODES, REWARDS, check_episode

from .config import (
    EvalConfig,
    Flag,
    Number,
    Rules,
    Sizes,
    Text,
    Whole,
    _error,
    _load,
    _mix,
    _Section,
    _validate,
    config_text,
    describe,
)


class RLlibEnvConfig(_Section):
    """The game of every episode (sm_env.rllib_env.TurnBasedEnv)."""

    rules: Rules = Field("standard", description="a preset name or a dict of rule options (docs/rules.md)")
    episode: Literal[EPISODES] = Field("hand", description="'hand' (one hand per episode) or 'game' (a whole game)")
    max_hands: Whole | None = Field(30, gt=0, description="game episodes: truncate after this many hands")
    reward: Literal[REWARDS] = Field(
        "balance", description="'balance' (tricks - quota each hand) or 'result' (game episodes: the win)"
    )


class LeagueConfig(_Section):
    """Opponents: each episode one seat is the learner, each other seat is drawn from ``mix``."""

    mix: Annotated[dict[str, float], BeforeValidator(_mix)] = Field(
        default_factory=lambda: {"self": 0.4, "snapshots": 0.2, "heuristic": 0.3, "random": 0.1},
        description="weights of who plays the two other seats: 'self' (the live learner: self-play), "
        "'snapshots' (a frozen copy of the learner; 'self' while there is none) or a built-in agent spec",
    )
    snapshot_every: Whole = Field(
        5, ge=0, description="iterations between frozen copies of the learner joining the pool (0: never)"
    )
    pool_size: Whole = Field(4, gt=0, description="frozen copies kept (the oldest leaves)")


class RLlibPPOConfig(_Section):
    """PPO hyper-parameters, with RLlib's names."""

    lr: Number = Field(3e-4, gt=0, description="learning rate")
    gamma: Number = Field(1.0, ge=0, le=1, description="discount factor")
    lambda_: Number = Field(0.95, ge=0, le=1, description="GAE lambda")
    clip_param: Number = Field(0.2, gt=0, description="PPO clip range")
    entropy_coeff: Number = Field(0.001, ge=0, description="entropy bonus")
    vf_loss_coeff: Number = Field(0.5, ge=0, description="value loss weight")
    train_batch_size: Whole = Field(2000, gt=0, description="env steps per iteration")
    minibatch_size: Whole = Field(250, gt=0, description="minibatch size")
    num_epochs: Whole = Field(4, gt=0, description="passes over each batch")
    hiddens: Sizes = Field(
        default_factory=lambda: [256, 256], description="hidden layers of the policy and value networks"
    )


class RLlibTrainConfig(_Section):
    """Length, parallelism, checkpoints."""

    iterations: Whole = Field(50, gt=0, description="training iterations (algo.train() calls)")
    num_env_runners: Whole = Field(
        0, ge=0, description="remote env runners (0: sample in the driver; best on 2 cores; raise it on a cluster)"
    )
    envs_per_runner: Whole = Field(8, gt=0, description="environments per env runner")
    checkpoint_every: Whole = Field(5, gt=0, description="iterations between checkpoints")
    keep_checkpoints: Whole = Field(2, gt=0, description="checkpoints kept (the newest)")
    torch_threads: Whole = Field(1, gt=0, description="torch CPU threads of the driver")
    num_cpus: Whole | None = Field(
        None, gt=0, description="CPUs of a local Ray instance (null: all); ignored with --address"
    )
    progress: Flag = Field(True, description="print a line per iteration")


class RLlibConfig(_Section):
    """An RLlib training run."""

    name: Text = Field("rllib", description="run name: the run folder is <output_dir>/<name>")
    output_dir: Text = Field("runs", description="folder of run folders")
    seed: Whole = Field(0, description="seed of torch, RLlib and the environments")
    env: RLlibEnvConfig = Field(default_factory=RLlibEnvConfig, description="the game")
    policies: Literal[("shared", "per_role")] = Field(
        "shared",
        description="'shared': one policy for the three seats; 'per_role': one per role (needs env.episode: hand)",
    )
    league: LeagueConfig = Field(default_factory=LeagueConfig, description="opponents")
    ppo: RLlibPPOConfig = Field(default_factory=RLlibPPOConfig, description="PPO hyper-parameters")
    train: RLlibTrainConfig = Field(default_factory=RLlibTrainConfig, description="length and checkpoints")
    eval: EvalConfig = Field(default_factory=EvalConfig, description="duplicate evaluation per role")


def rllib_config_from_dict(data: Any, source: str = "") -> RLlibConfig:
    """A validated :class:`RLlibConfig` from a plain dict (as YAML gives it)."""
    cfg = _validate(RLlibConfig, data, source)
    try:
        check_episode(cfg.env.episode, cfg.env.reward, cfg.env.max_hands)
    except ValueError as err:
        raise _error(source, "env.reward", f"env.reward: {err}") from None
    if cfg.policies == "per_role" and cfg.env.episode != "hand":
        raise _error(
            source, "policies", "policies: 'per_role' needs env.episode: hand (roles change from hand to hand)"
        )
    if cfg.ppo.minibatch_size > cfg.ppo.train_batch_size:
        raise _error(source, "ppo.minibatch_size", "ppo.minibatch_size: must be at most ppo.train_batch_size")
    if not any(w > 0 for w in cfg.league.mix.values()):
        raise _error(source, "league.mix", "league.mix: at least one weight must be > 0")
    return cfg


def load_rllib_config(path: str | None = None, overrides: list[str] | None = None) -> RLlibConfig:
    """Read, override and validate an RLlib config (``path`` None: the defaults)."""
    return _load(rllib_config_from_dict, path, overrides)


def save_rllib_config(cfg: RLlibConfig, path: str) -> None:
    """Write the resolved config as YAML, atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(config_text(cfg))


if __name__ == "__main__":  # python -m training.rllib_config
    print(describe(RLlibConfig))
    sys.exit(0)
