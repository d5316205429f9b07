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
from typing import Annotated, Any

import yaml
from pydantic import BeforeValidator, Field

from sm_env.atomic import atomic_path
from sm_env.episode import REWARDS, check_episode

from .config import (
    ConfigError,
    EvalConfig,
    Flag,
    NonNegative,
    Number,
    Positive,
    Probability,
    Rules,
    Text,
    Whole,
    _blame,
    _error,
    _list_of,
    _mix,
    _one_of,
    _optional,
    _Section,
    _validate,
    _whole,
    apply_overrides,
    describe,
    read_yaml,
)


class RLlibEnvConfig(_Section):
    """The game of every episode (sm_env.rllib_env.TurnBasedEnv)."""

    rules: Rules = Field("standard", description="a preset name or a dict of rule options (docs/rules.md)")
    episode: Annotated[str, BeforeValidator(_one_of(("hand", "game")))] = Field(
        "hand", description="'hand' (one hand per episode) or 'game' (a whole game)"
    )
    max_hands: Annotated[int | None, BeforeValidator(_optional(_whole))] = Field(
        30, description="game episodes: truncate after this many hands"
    )
    reward: Annotated[str, BeforeValidator(_one_of(REWARDS))] = Field(
        "balance", description="'balance' (tricks - quota each hand) or 'result' (game episodes: the win)"
    )


class LeagueConfig(_Section):
    """Opponents: each episode one seat is the learner, each other seat is drawn from ``mix``."""

    mix: Annotated[dict[str, float], BeforeValidator(_mix)] = Field(
        default_factory=lambda: {"self": 0.4, "snapshots": 0.2, "heuristic": 0.3, "random": 0.1},
        description="weights of who plays the two other seats: 'self' (the live learner: self-play), "
        "'snapshots' (a frozen copy of the learner; 'self' while there is none) or a built-in agent spec",
    )
    snapshot_every: Annotated[Whole, NonNegative] = Field(
        5, description="iterations between frozen copies of the learner joining the pool (0: never)"
    )
    pool_size: Annotated[Whole, Positive] = Field(4, description="frozen copies kept (the oldest leaves)")


class RLlibPPOConfig(_Section):
    """PPO hyper-parameters, with RLlib's names."""

    lr: Annotated[Number, Positive] = Field(3e-4, description="learning rate")
    gamma: Annotated[Number, Probability] = Field(1.0, description="discount factor")
    lambda_: Annotated[Number, Probability] = Field(0.95, description="GAE lambda")
    clip_param: Annotated[Number, Positive] = Field(0.2, description="PPO clip range")
    entropy_coeff: Annotated[Number, NonNegative] = Field(0.001, description="entropy bonus")
    vf_loss_coeff: Annotated[Number, NonNegative] = Field(0.5, description="value loss weight")
    train_batch_size: Annotated[Whole, Positive] = Field(2000, description="env steps per iteration")
    minibatch_size: Annotated[Whole, Positive] = Field(250, description="minibatch size")
    num_epochs: Annotated[Whole, Positive] = Field(4, description="passes over each batch")
    hiddens: Annotated[list[int], BeforeValidator(_list_of(_whole, "whole numbers"))] = Field(
        default_factory=lambda: [256, 256], description="hidden layers of the policy and value networks"
    )


class RLlibTrainConfig(_Section):
    """Length, parallelism, checkpoints."""

    iterations: Annotated[Whole, Positive] = Field(50, description="training iterations (algo.train() calls)")
    num_env_runners: Annotated[Whole, NonNegative] = Field(
        0, description="remote env runners (0: sample in the driver; best on 2 cores; raise it on a cluster)"
    )
    envs_per_runner: Annotated[Whole, Positive] = Field(8, description="environments per env runner")
    checkpoint_every: Annotated[Whole, Positive] = Field(5, description="iterations between checkpoints")
    keep_checkpoints: Annotated[Whole, Positive] = Field(2, description="checkpoints kept (the newest)")
    torch_threads: Annotated[Whole, Positive] = Field(1, description="torch CPU threads of the driver")
    num_cpus: Annotated[int | None, BeforeValidator(_optional(_whole))] = Field(
        None, description="CPUs of a local Ray instance (null: all); ignored with --address"
    )
    progress: Flag = Field(True, description="print a line per iteration")


class RLlibConfig(_Section):
    """An RLlib training run."""

    name: Text = Field("rllib", description="run name: the run folder is <output_dir>/<name>")
    output_dir: Text = Field("runs", description="folder of run folders")
    seed: Whole = Field(0, description="seed of torch, RLlib and the environments")
    env: RLlibEnvConfig = Field(default_factory=RLlibEnvConfig, description="the game")
    policies: Annotated[str, BeforeValidator(_one_of(("shared", "per_role")))] = Field(
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
    overrides = list(overrides or [])
    data = apply_overrides(read_yaml(path) if path is not None else {}, overrides)
    try:
        return rllib_config_from_dict(data, path or "")
    except ConfigError as err:
        raise _blame(err, overrides) from None


def save_rllib_config(cfg: RLlibConfig, path: str) -> None:
    """Write the resolved config as YAML, atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(yaml.safe_dump(cfg.to_dict(), sort_keys=False))


if __name__ == "__main__":  # python -m training.rllib_config
    print(describe(RLlibConfig))
    sys.exit(0)
