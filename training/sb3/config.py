"""The training configuration: a typed schema (pydantic v2) loaded from YAML.

Sections: ``name``, ``output_dir``, ``seed`` and ``env`` (EnvConfig), ``opponents`` (OpponentsConfig),
``pretrain`` (PretrainConfig), ``ppo`` (PPOConfig), ``train`` (TrainConfig), ``eval`` (EvalConfig); every key is
optional, ``sergeant-major config`` prints the defaults and each field's ``description`` (:func:`describe`).

:func:`load_config` raises :class:`ConfigError` naming the source (the file or the ``--set`` override), the dotted
key, the value and what is allowed. ``--set ppo.learning_rate=1e-4`` values are read as YAML
(:func:`apply_overrides`). ``3e-4`` (text in YAML 1.1) is a number, ``1e6`` a whole number; booleans are only
``true`` or ``false``, never numbers. The field types, the messages and the loading are
:mod:`training.common.yaml_config`'s, shared with the RLlib configuration.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator

from sm_env.core.episode import DEFAULT_REWARD, EPISODES, REWARDS, check_episode
from sm_env.core.rules import RuleSet
from training.common import yaml_config
from training.common.budget import HOURS_HELP, MAX_HOURS
from training.common.device import DEVICE_HELP
from training.common.exchange import check_exchange_start
from training.common.ppo import PPOSection
from training.common.run_config import RunSection
from training.common.yaml_config import (
    Device,
    Flag,
    Mix,
    Number,
    Rules,
    Section,
    Text,
    Whole,
    config_error,
    load,
    setting,
    validate,
)
from training.evaluation.config import EvalConfig, check_eval_rules

from .seats import role_indices


def _seats(value: Any) -> str | list[str]:
    """The shape of ``env.learner_seats``; the names are checked against the rule set (:func:`_cross_checks`)."""
    if value == "all":
        return value
    items = [value] if isinstance(value, str) else value
    if not (isinstance(items, list) and items and all(isinstance(r, str) for r in items)):
        raise ValueError(
            "must be 'all' or a non-empty list of roles: dealer, eldest, middle (dealer, eldest, third, fourth "
            "with four players)"
        )
    if len(set(items)) != len(items):
        raise ValueError(f"lists a role twice: {items}")
    return value


class EnvConfig(Section):
    """The learner's game (training/sb3/single_agent.py)."""

    rules: Rules = setting(
        "standard",
        "rule set: a preset name ('standard', 'woburn', 'four-5-3-2-2', ...) or a dict of docs/rules.md options "
        "(three or four players)",
    )
    episode: Literal[EPISODES] = setting(
        "hand", "'hand': an episode is one hand (fast, dense reward); 'game': a whole game, hand after hand"
    )
    max_hands: Whole = setting(100, "game episodes: truncate a game nobody has won after this many hands", gt=0)
    reward: Literal[REWARDS] = setting(
        DEFAULT_REWARD,
        "'score': the change of the running score at the end of every hand (the balance, tricks - quota, or the chips "
        "with chips); 'balance': the hand's tricks - quota (not the score with chips); 'result': winning the game "
        "(+1 shared by winners, -1 by losers; needs episode: game)",
    )
    reward_scale: Number = setting(1.0, "rewards are multiplied by this (balances run about -8..+8)", gt=0)
    dense_reward: Flag = setting(
        False,
        "reward 'score' or 'balance' paid sooner: +1 per trick the learner wins when it is won, the rest (-quota "
        "without chips) when the hand ends (the same total per hand; easier credit assignment)",
    )
    learner_seats: Annotated[str | list[str], BeforeValidator(_seats)] = setting(
        "all",
        "roles the learner plays in the first hand of an episode: 'all' or a list of the rule set's roles, 'dealer', "
        "'eldest', 'middle' ('dealer', 'eldest', 'third', 'fourth' with four players) (one drawn per episode; one "
        "shared policy)",
    )
    exchange_start: Number = setting(
        0.0,
        "hand episodes: probability that the hand starts with an exchange (random previous balances), so that "
        "exchange decisions are trained",
        ge=0,
        le=1,
    )


class OpponentsConfig(Section):
    """Who plays the other seats (two, three with four players): baselines and frozen snapshots of the learner."""

    mix: Mix = setting(
        lambda: {"random": 1.0},
        "weight of each opponent kind: agent names of agents.make_agent ('random', 'heuristic', ...) and 'snapshots' "
        "(a frozen copy of the learner from the pool); each opponent seat draws independently every episode; until "
        "the first snapshot exists its weight goes to the others",
    )
    snapshot_every: Whole = setting(
        100_000, "learner timesteps between snapshots added to the pool (checked after every segment)", gt=0
    )
    pool_size: Whole = setting(10, "snapshots kept in the pool (oldest dropped)", gt=0)
    snapshot_deterministic: Flag = setting(False, "snapshots play their most probable action instead of sampling")


class PretrainConfig(Section):
    """Optional warm start by imitation: before PPO, the policy learns to copy a
    teacher agent playing the learner's seat (cross-entropy on its actions,
    masked), and the value network learns the teacher's returns."""

    teacher: Text | None = setting(None, "agent spec to imitate, e.g. 'heuristic' (null: no warm start)")
    decisions: Whole = setting(200_000, "teacher decisions collected (in the training env, same opponents)", gt=0)
    epochs: Whole = setting(4, "passes over the collected decisions", gt=0)
    batch_size: Whole = setting(256, "minibatch size", ge=2)
    learning_rate: Number = setting(1e-3, "Adam learning rate of the warm start", gt=0)
    value: Flag = setting(True, "also fit the value network to the teacher's returns")


class PPOConfig(
    PPOSection,
    descriptions={"n_steps": "steps per env per rollout (rollout size = n_steps * train.n_envs)"},
):
    """MaskablePPO (sb3-contrib) hyper-parameters (training/common/ppo.py)."""


class TrainConfig(Section):
    """Length of the run, vectorisation, checkpoints."""

    total_timesteps: Whole = setting(200_000, "learner decisions to train for", gt=0)
    max_hours: Number = setting(0.0, HOURS_HELP + "; checked between segments", ge=0, le=MAX_HOURS)
    n_envs: Whole = setting(8, "parallel environments", gt=0)
    vec_env: Literal[("dummy", "subproc")] = setting(
        "dummy", "'dummy': envs in the trainer's process (best on 2 cores); 'subproc': one process each"
    )
    segment_steps: Whole = setting(
        16_384,
        "learner timesteps per training segment (rounded up to whole rollouts); snapshots, evaluations and "
        "checkpoints happen between segments; envs restart every segment so that --resume continues exactly",
        gt=0,
    )
    checkpoint_every: Whole = setting(
        100_000, "timesteps between checkpoints (the last segment always writes one)", gt=0
    )
    keep_checkpoints: Whole = setting(3, "numbered checkpoints kept besides checkpoints/latest.zip", ge=0)
    torch_threads: Whole = setting(1, "torch CPU threads (1 is best with 2 cores and small networks)", gt=0)
    device: Device = setting(
        "auto",
        DEVICE_HELP + ": SB3's device (it acts there too, the envs and opponents stay on the CPU; MaskablePPO's "
        "small MLP is often as fast on the CPU); checkpoints hold CPU tensors",
    )
    progress_bar: Flag = setting(True, "show a tqdm progress bar")


class Config(
    RunSection,
    defaults={"kind": "sb3", "name": "run"},
    descriptions={"seed": "seed of everything: python random, numpy, torch, environments"},
):
    """A training run."""

    env: EnvConfig = setting(EnvConfig, "the learner's game")
    opponents: OpponentsConfig = setting(OpponentsConfig, "opponent pool")
    pretrain: PretrainConfig = setting(PretrainConfig, "optional warm start by imitation of a teacher")
    ppo: PPOConfig = setting(PPOConfig, "MaskablePPO hyper-parameters")
    train: TrainConfig = setting(TrainConfig, "length, vectorisation, checkpoints")
    eval: EvalConfig = setting(EvalConfig, "evaluation")


def _cross_checks(cfg: Config, source: str) -> None:
    env = cfg.env
    rules = RuleSet.from_any(env.rules)
    try:
        check_episode(env.episode, env.reward, env.max_hands)  # the env's own rules (sm_env.core.episode)
    except ValueError as err:
        raise config_error(source, "env.reward", f"env.reward: {err} (in a config: env.episode: game)") from None
    try:
        check_exchange_start(rules, env.exchange_start)
    except ValueError as err:
        raise config_error(source, "env.exchange_start", f"env.exchange_start: {err}") from None
    try:
        role_indices(env.learner_seats, rules)  # the env's own check
    except ValueError as err:
        raise config_error(source, "env.learner_seats", f"env.{err}") from None
    check_eval_rules(cfg.eval, rules, source)
    if cfg.ppo.batch_size > cfg.ppo.n_steps * cfg.train.n_envs:
        raise config_error(
            source,
            "ppo.batch_size",
            f"ppo.batch_size: must be at most ppo.n_steps * train.n_envs = "
            f"{cfg.ppo.n_steps * cfg.train.n_envs}, got {cfg.ppo.batch_size}",
        )


def config_from_dict(data: Any, source: str = "") -> Config:
    """A validated :class:`Config` from a plain dict (as YAML gives it)."""
    cfg = validate(Config, data, source)
    _cross_checks(cfg, source)
    return cfg


def load_config(path: str | None = None, overrides: list[str] | None = None) -> Config:
    """Read, override and validate a training config (see :func:`training.common.yaml_config.load`)."""
    return load(config_from_dict, path, overrides)


def describe(model: type[BaseModel] = Config) -> str:
    """Every field of a config (the training config unless told) with its default and documentation, one a line."""
    return yaml_config.describe(model)
