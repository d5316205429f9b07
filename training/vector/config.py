"""The configuration of the batched self-play PPO trainer (``sergeant-major train --config configs/selfplay.yaml``).

Sections (every key optional; ``sergeant-major config --kind vector`` lists them with their defaults)::

    name: selfplay              # run folder <output_dir>/<name>
    output_dir: runs
    seed: 0
    env:       {...}            # SelfPlayEnvConfig: the games (sm_env.compiled.batch.VectorGame's keywords)
    opponents: {...}            # SeatsConfig: who plays each seat (the learner, snapshots, frozen files, random)
    ppo:       {...}            # VectorPPOConfig: PPO hyper-parameters, the network, the critic
    train:     {...}            # SelfPlayTrainConfig: length, time budget (max_hours), checkpoints, threads, device,
                                # TensorBoard
    eval:      {...}            # BatchedEvalConfig: duplicate evaluation against baselines (every trainer's
                                # EvalConfig), and a first, short one early (first_minutes, first_deals)

The deep Monte-Carlo trainer (``sergeant-major train --config configs/dmc.yaml``; ``sergeant-major config --kind
dmc`` lists its keys) has its own :class:`DMCConfig`: the same ``env``, ``train`` and ``eval``
sections, and ``dmc:`` (:class:`DMCSection`: the Q-network, epsilon, the replay, the regression) in place of
``opponents`` and ``ppo`` (it plays pure self-play).

Errors are :class:`training.common.yaml_config.ConfigError` naming the key, the value and what is allowed, as for the
other trainers, and ``--set KEY=VALUE`` overrides work the same way.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Literal

from sm_env.core.episode import EPISODES
from sm_env.core.rules import RuleSet
from training.common.budget import HOURS_HELP, MAX_HOURS
from training.common.device import DEVICE_HELP
from training.common.ppo import ACTIVATIONS, PPOSection
from training.common.run_config import RunSection
from training.common.yaml_config import (
    ConfigError,
    Device,
    Flag,
    Mix,
    Number,
    Rules,
    Section,
    Sizes,
    Text,
    Whole,
    config_error,
    describe,
    load,
    setting,
    validate,
)
from training.evaluation.config import EvalConfig, check_eval_rules

SELF = "self"
SNAPSHOTS = "snapshots"
RANDOM = "random"
TRAINABLE_DECISIONS = ("exchange", "trump", "discard", "play")
"""The decision types ``ppo.train_decisions`` can name (sm_env.core.game.PHASE_NAMES; the observation's phase)."""


def policy_file(spec: str, rules: RuleSet | str | dict[str, Any] | None = None) -> str | None:
    """The ``.pt``/``.zip`` file a seat spec names (``trained``: the shipped policy for ``rules``,
    :func:`agents.players.trained.trained_policy`; ``ppo:PATH`` or a bare path), else None."""
    if spec == "trained":
        from agents.players.trained import trained_policy

        return trained_policy(rules)
    if spec.startswith("ppo:"):
        return spec[4:]
    if spec.endswith((".pt", ".zip")):
        return spec
    return None


class SelfPlayEnvConfig(Section):
    """The games: sm_env.compiled.batch.VectorGame, many at once."""

    rules: Rules = setting(
        "standard", "a preset name or a dict of rule options (any rule set the compiled engine runs)"
    )
    episode: Literal[EPISODES] = setting("hand", "'hand': an episode is one hand; 'game': a whole game")
    max_hands: Whole = setting(30, "game episodes: truncate a game nobody has won after this many hands", gt=0)
    num_games: Whole = setting(256, "games stepped together (one decision of each per engine step)", gt=0)
    reward_scale: Number = setting(0.25, "a seat's reward: its hand balance (tricks - quota) times this", gt=0)
    win_reward: Number = setting(
        0.0,
        "game episodes: at the end of a won game, also pay the result (sm_env.core.episode.result_rewards: the "
        "winners share +1, the losers -1) times this, so that the learner values winning the game and not only "
        "the hands' balances (0: balances only)",
        ge=0,
    )


class SeatsConfig(Section):
    """Who plays each seat. Every episode one seat of each game is the learner; each other seat draws its
    player from ``mix`` (independently, per episode)."""

    mix: Mix = setting(
        lambda: {SELF: 1.0},
        "weights of the other two seats' players: 'self' (the learner: self-play, its transitions are trained "
        "on), 'snapshots' (a frozen copy of the learner from the pool; 'self' until one exists), 'random', "
        "'trained' or 'ppo:PATH' (a frozen policy file)",
    )
    snapshot_every: Whole = setting(500_000, "learner decisions between frozen copies joining the pool", gt=0)
    pool_size: Whole = setting(4, "snapshots kept (the oldest leaves)", gt=0)


class VectorPPOConfig(
    PPOSection,
    defaults={"n_steps": 64, "batch_size": 4096, "net_arch": lambda: [512, 256], "activation": "relu"},
    descriptions={"n_steps": "engine steps per rollout (a rollout is n_steps * env.num_games decisions)"},
):
    """Masked PPO (CleanRL style) hyper-parameters and the networks (training/common/ppo.py), and the start."""

    init: Text | None = setting(
        None,
        "start the actor from a policy file ('trained', 'ppo:PATH' or a .pt path of the same net_arch and "
        "activation; null: a fresh network)",
    )
    critic_warmup: Whole = setting(
        0,
        "rollouts at the start of a run in which only the critic learns (the actor stays as loaded: a fresh critic "
        "first learns the values of an init policy before its advantages steer it)",
        ge=0,
    )
    critic: Literal[("observation", "full")] = setting(
        "observation",
        "the critic's input: 'observation' (what the actor sees) or 'full' (the observation plus the cards "
        "hidden from the seat: VectorGame.full_state; used in training only, never by the actor)",
    )
    anchor_coef: Number = setting(
        0.0,
        "weight of KL(ppo.init's policy || the actor), over the legal actions of every learner decision, in the "
        "actor's loss: fine-tuning that keeps the actor near the policy it started from (0: no anchor; needs "
        "ppo.init)",
        ge=0,
    )
    train_decisions: list[Literal[TRAINABLE_DECISIONS]] | None = setting(
        None,
        "the decision types whose moves the policy loss (and the entropy bonus) trains, a list of 'exchange', "
        "'trump', 'discard', 'play' (null: every decision). The others are still played by the actor and, with "
        "ppo.anchor_coef, held near ppo.init: e.g. [exchange, trump, discard] learns those from the hands' "
        "outcomes while the play stays the init policy's",
    )


class VectorTrainConfig(Section):
    """Length of the run, checkpoints, threads."""

    total_timesteps: Whole = setting(1_000_000, "learner decisions to train for (rounded up to whole rollouts)", gt=0)
    checkpoint_every: Whole = setting(
        200_000, "learner decisions between checkpoints (the end of the run always writes one)", gt=0
    )
    keep_checkpoints: Whole = setting(2, "numbered checkpoints kept besides checkpoints/latest.pt", ge=0)
    torch_threads: Whole = setting(2, "torch CPU threads", gt=0)
    device: Device = setting(
        "auto",
        DEVICE_HELP + "; every network of the run is there, the rollouts' forward passes included (a step's "
        "observations go over, its logits or values come back), while the engine, the buffers and the random draws "
        "stay on the CPU (a run on cpu is the run it was before the setting; checkpoints hold CPU tensors)",
    )
    progress: Flag = setting(
        True, "a progress bar of the decisions with the rate and the ETA, and a line of metrics per rollout (stderr)"
    )


class SelfPlayTrainConfig(VectorTrainConfig):
    """Length of the run (decisions, and a time budget), checkpoints, threads, TensorBoard."""

    max_hours: Number = setting(0.0, HOURS_HELP + "; checked at the end of each rollout", ge=0, le=MAX_HOURS)
    actors: Whole = setting(
        0,
        "acting processes apart from the learner (training/vector/actors.py): 0 acts in the learner's process "
        "between updates (bit-for-bit repeatable); N >= 1 start N processes that share env.num_games and play "
        "while the learner updates (rollouts and weights through shared memory; not bit-for-bit repeatable)",
        ge=0,
        le=64,
    )
    tensorboard: Flag = setting(
        True,
        "TensorBoard scalars in RUN/tb (tensorboard --logdir RUN/tb): every metrics.jsonl row and every evaluation "
        "(training/common/scalars.py)",
    )


class BatchedEvalConfig(EvalConfig):
    """Duplicate evaluation of the learner against baselines, per role; and a first, short one early."""

    first_minutes: Number = setting(
        2.0,
        "with eval.every above 0: a first, short evaluation (eval.first_deals deals) at the end of the first "
        "rollout past this many minutes of training, unless one was made already; then eval.every's cadence "
        "(0: none)",
        ge=0,
        le=MAX_HOURS * 60,
    )
    first_deals: Whole = setting(100, "deals of that first evaluation", gt=0)


class SelfPlayConfig(
    RunSection,
    defaults={"kind": "vector", "name": "selfplay"},
    descriptions={"seed": "seed of the games, the seat draws, the sampling and the network"},
):
    """A run of the batched self-play PPO trainer."""

    env: SelfPlayEnvConfig = setting(SelfPlayEnvConfig, "the games")
    opponents: SeatsConfig = setting(SeatsConfig, "who plays each seat")
    ppo: VectorPPOConfig = setting(VectorPPOConfig, "PPO hyper-parameters")
    train: SelfPlayTrainConfig = setting(SelfPlayTrainConfig, "length, time budget, checkpoints, threads")
    eval: BatchedEvalConfig = setting(
        BatchedEvalConfig, "duplicate evaluation against baselines (training/evaluation/evaluate.py)"
    )


class DMCSection(Section):
    """Deep Monte-Carlo (DouZero style): a Q-network regressed on Monte-Carlo returns, epsilon-greedy self-play."""

    net_arch: Sizes = setting(lambda: [512, 256], "hidden layer sizes of the Q-network")
    activation: Literal[ACTIVATIONS] = setting("relu", "activation of the hidden layers")
    learning_rate: Number = setting(1e-4, "Adam learning rate", gt=0)
    epsilon: Number = setting(0.01, "exploration: the share of decisions played uniformly at random", ge=0, le=1)
    n_steps: Whole = setting(16, "engine steps per rollout (a rollout is n_steps * env.num_games decisions)", gt=0)
    batch_size: Whole = setting(4096, "decisions per minibatch of the regression", ge=2)
    updates_per_rollout: Whole = setting(
        1, "minibatches drawn from the replay after each rollout (each a step of Adam)", gt=0
    )
    replay_rollouts: Whole = setting(
        4,
        "the replay holds the decisions of the episodes that ended in about the latest replay_rollouts rollouts "
        "(replay_rollouts * n_steps * env.num_games decisions; minibatches are drawn from it uniformly)",
        gt=0,
    )
    max_grad_norm: Number = setting(40.0, "gradient clipping (global norm; DouZero's 40)", gt=0)


class DMCTrainConfig(
    SelfPlayTrainConfig,
    defaults={"torch_threads": 1, "keep_checkpoints": 1},
    descriptions={
        "total_timesteps": "decisions to train for, every seat's (rounded up to whole rollouts)",
        "checkpoint_every": "decisions between checkpoints (the end of the run always writes one; a checkpoint "
        "holds the replay and the open episodes)",
        "torch_threads": "torch CPU threads (on cores busy with other work 1 ran faster than 2: "
        "docs/results/dmc-smoke.md)",
        "progress": "a progress bar of the decisions with the rate and the ETA, and a line of metrics at most every "
        "10 s of training (stderr; metrics.jsonl has every rollout)",
    },
):
    """Length of the run, checkpoints, threads, acting processes."""


class DMCConfig(
    RunSection,
    defaults={"kind": "dmc", "name": "dmc"},
    descriptions={"seed": "seed of the games, the exploration, the minibatches and the network"},
):
    """A run of the batched deep Monte-Carlo trainer (training/vector/dmc.py): pure self-play, no teacher."""

    env: SelfPlayEnvConfig = setting(SelfPlayEnvConfig, "the games (the learner plays every seat)")
    dmc: DMCSection = setting(DMCSection, "the Q-network, exploration, replay and regression")
    train: DMCTrainConfig = setting(DMCTrainConfig, "length, time budget, checkpoints, threads")
    eval: BatchedEvalConfig = setting(
        BatchedEvalConfig, "duplicate evaluation against baselines (training/evaluation/evaluate.py)"
    )


def engine_rules(cfg: SelfPlayConfig | DMCConfig, source: str) -> RuleSet:
    """The rule set of a batched trainer's config (``env.rules``), if the compiled engine runs it and the ``eval``
    section fits it; else the config error naming the key."""
    from sm_env.compiled.support import unsupported

    if cfg.env.win_reward > 0 and cfg.env.episode != "game":
        raise config_error(
            source,
            "env.win_reward",
            "env.win_reward: rewards winning the game, but env.episode 'hand' ends after one hand: set env.episode "
            "to 'game' or env.win_reward to 0",
        )
    rules = RuleSet.from_any(cfg.env.rules)
    refused = unsupported(rules)  # the networks and buffers take their sizes from any rule set the engine runs
    if refused:
        raise config_error(
            source,
            "env.rules",
            f"env.rules: the batched trainer does not run these rules; they use {refused} (it runs every rule set "
            "of sm_env.compiled.support.supported_presets())",
        )
    check_eval_rules(cfg.eval, rules, source)
    return rules


def check_actors(cfg: Any, source: str) -> None:
    """Every acting process (``train.actors``) plays at least one of the ``env.num_games`` games."""
    if cfg.train.actors > cfg.env.num_games:
        raise config_error(
            source,
            "train.actors",
            f"train.actors: each actor plays at least one of env.num_games = {cfg.env.num_games} games, got "
            f"{cfg.train.actors} actors",
        )


def selfplay_config_from_dict(data: Any, source: str = "") -> SelfPlayConfig:
    """A validated :class:`SelfPlayConfig` from a plain dict (as YAML gives it)."""
    cfg = validate(SelfPlayConfig, data, source)
    rules = engine_rules(cfg, source)
    rollout = cfg.ppo.n_steps * cfg.env.num_games
    check_actors(cfg, source)
    if cfg.ppo.batch_size > rollout:
        raise config_error(
            source,
            "ppo.batch_size",
            f"ppo.batch_size: must be at most ppo.n_steps * env.num_games = {rollout}, got {cfg.ppo.batch_size}",
        )
    for spec in cfg.opponents.mix:
        if spec in (SELF, SNAPSHOTS, RANDOM):
            continue
        path = _policy_for(spec, rules, source, "opponents.mix")
        if path is None:
            raise config_error(
                source,
                "opponents.mix",
                f"opponents.mix: unknown player {spec!r}; allowed: 'self', 'snapshots', 'random', 'trained', "
                "'ppo:PATH' (a frozen policy file)",
            )
        _check_policy(path, rules, source, "opponents.mix", f" (from {spec!r})")
    if cfg.ppo.init is not None:
        path = _policy_for(cfg.ppo.init, rules, source, "ppo.init") or cfg.ppo.init
        _check_policy(path, rules, source, "ppo.init")
    elif cfg.ppo.anchor_coef > 0:
        raise config_error(
            source, "ppo.anchor_coef", "ppo.anchor_coef: an anchor needs ppo.init (the policy to stay near); got null"
        )
    if cfg.ppo.train_decisions is not None and not cfg.ppo.train_decisions:
        raise config_error(
            source,
            "ppo.train_decisions",
            f"ppo.train_decisions: must name at least one of {', '.join(TRAINABLE_DECISIONS)} (null: every decision)",
        )
    return cfg


def _policy_for(spec: str, rules: RuleSet, source: str, key: str) -> str | None:
    """:func:`policy_file`, with ``trained`` on rules no shipped policy plays as the config error of ``key``."""
    try:
        return policy_file(spec, rules)
    except ValueError as err:
        raise config_error(source, key, f"{key}: {err}") from None


def _check_policy(path: str, rules: RuleSet, source: str, key: str, origin: str = "") -> None:
    """The policy file at ``path`` exists, loads, and plays ``rules`` (its shape: docs/rules.md 10.8); else the
    config error of ``key``, one line naming what the file plays."""
    if not os.path.isfile(path):
        raise config_error(source, key, f"{key}: policy file not found: {path}{origin}")
    from agents.players.ppo_agent import PPOAgent

    try:
        PPOAgent(path).check_rules(rules)
    except ValueError as err:
        raise config_error(source, key, f"{key}: {err}") from None


def load_selfplay_config(path: str | None = None, overrides: list[str] | None = None) -> SelfPlayConfig:
    """Read, override and validate a self-play config (``path`` None: the defaults)."""
    return load(selfplay_config_from_dict, path, overrides)


def dmc_config_from_dict(data: Any, source: str = "") -> DMCConfig:
    """A validated :class:`DMCConfig` from a plain dict (as YAML gives it)."""
    cfg = validate(DMCConfig, data, source)
    engine_rules(cfg, source)
    replay = cfg.dmc.replay_rollouts * cfg.dmc.n_steps * cfg.env.num_games
    check_actors(cfg, source)
    if cfg.dmc.batch_size > replay:
        raise config_error(
            source,
            "dmc.batch_size",
            f"dmc.batch_size: must be at most the replay, dmc.replay_rollouts * dmc.n_steps * env.num_games = "
            f"{replay}, got {cfg.dmc.batch_size}",
        )
    return cfg


def load_dmc_config(path: str | None = None, overrides: list[str] | None = None) -> DMCConfig:
    """Read, override and validate a deep Monte-Carlo config (``path`` None: the defaults)."""
    return load(dmc_config_from_dict, path, overrides)


__all__ = [
    "BatchedEvalConfig",
    "ConfigError",
    "DMCConfig",
    "DMCSection",
    "DMCTrainConfig",
    "SelfPlayConfig",
    "SelfPlayTrainConfig",
    "TRAINABLE_DECISIONS",
    "dmc_config_from_dict",
    "load_dmc_config",
    "load_selfplay_config",
    "policy_file",
    "selfplay_config_from_dict",
]

if __name__ == "__main__":  # python -m training.vector.config [dmc]
    print(describe(DMCConfig if sys.argv[1:] == ["dmc"] else SelfPlayConfig))
    sys.exit(0)
