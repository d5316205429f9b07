"""The RLlib training configuration (``sergeant-major train --backend rllib --config configs/rllib_*.yaml``).

Sections (every key optional; ``sergeant-major config --kind rllib`` lists them
with their defaults)::

    kind: rllib                 # the run section (training.common.run_config.RunSection): kind, name, ...
    name: rllib                 # run folder <output_dir>/<name>
    output_dir: runs
    seed: 0
    env:      {...}             # RLlibEnvConfig: the game (as sm_env.env's keywords)
    policies: shared            # 'shared' by the three seats, or 'per_role' (dealer, eldest, middle)
    league:   {...}             # LeagueConfig: who sits in the other seats
    ppo:      {...}             # RLlibPPOConfig: PPO hyper-parameters (RLlib's names)
    train:    {...}             # RLlibTrainConfig: iterations, runners, checkpoints, the learner's device
    eval:     {...}             # every trainer's EvalConfig (training.evaluation.config): duplicate evaluation per role

Errors are :class:`training.common.errors.ConfigError` (re-exported by :mod:`training.common.yaml_config`)
naming the key, as for the other trainers' configs, and ``--set KEY=VALUE`` overrides work the same way.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

from sm_env.core.episode import DEFAULT_REWARD, EPISODES, REWARDS, check_episode
from sm_env.core.rules import RuleSet
from training.common.budget import HOURS_HELP, MAX_HOURS
from training.common.device import DEVICE_HELP
from training.common.run_config import RunSection
from training.common.yaml_config import (
    Device,
    Flag,
    Mix,
    Number,
    Resources,
    Section,
    Sizes,
    ThreePlayerRules,
    Whole,
    config_error,
    describe,
    load,
    setting,
    validate,
)
from training.evaluation.config import EvalConfig, check_eval_rules


class RLlibEnvConfig(Section):
    """The game of every episode (sm_env.envs.rllib_env.TurnBasedEnv)."""

    rules: ThreePlayerRules = setting("standard", "a preset name or a dict of rule options (docs/rules.md)")
    episode: Literal[EPISODES] = setting("hand", "'hand' (one hand per episode) or 'game' (a whole game)")
    max_hands: Whole | None = setting(30, "game episodes: truncate after this many hands", gt=0)
    reward: Literal[REWARDS] = setting(
        DEFAULT_REWARD,
        "'score' (the change of the running score each hand), 'balance' (tricks - quota each hand; not the score "
        "with chips) or 'result' (game episodes: the win)",
    )


class LeagueConfig(Section):
    """Opponents: each episode one seat is the learner, each other seat is drawn from ``mix``."""

    mix: Mix = setting(
        lambda: {"self": 0.4, "snapshots": 0.2, "heuristic": 0.3, "random": 0.1},
        "weights of who plays the two other seats: 'self' (the live learner: self-play), 'snapshots' (a frozen copy "
        "of the learner; 'self' while there is none) or a built-in agent spec",
    )
    snapshot_every: Whole = setting(
        5, "iterations between frozen copies of the learner joining the pool (0: never)", ge=0
    )
    pool_size: Whole = setting(4, "frozen copies kept (the oldest leaves)", gt=0)


class RLlibPPOConfig(Section):
    """PPO hyper-parameters, with RLlib's names."""

    lr: Number = setting(3e-4, "learning rate", gt=0)
    gamma: Number = setting(1.0, "discount factor", ge=0, le=1)
    lambda_: Number = setting(0.95, "GAE lambda", ge=0, le=1)
    clip_param: Number = setting(0.2, "PPO clip range", gt=0)
    entropy_coeff: Number = setting(0.001, "entropy bonus", ge=0)
    vf_loss_coeff: Number = setting(0.5, "value loss weight", ge=0)
    train_batch_size: Whole = setting(2000, "env steps per iteration", gt=0)
    minibatch_size: Whole = setting(250, "minibatch size", gt=0)
    num_epochs: Whole = setting(4, "passes over each batch", gt=0)
    hiddens: Sizes = setting(lambda: [256, 256], "hidden layers of the policy and value networks")
    activation: Literal[("tanh", "relu")] = setting("tanh", "activation of the hidden layers")
    kl_coeff: Number = setting(
        0.2, "initial weight of RLlib's adaptive KL penalty (0: no KL term, as CleanRL's and the vector PPO)", ge=0
    )
    grad_clip: Number | None = setting(None, "clip the gradient's global norm to this (null: no clipping)", gt=0)
    critic: Literal[("observation", "full")] = setting(
        "observation",
        "the value function's input: 'observation' (what the policy sees, one network body with it) or 'full' (a "
        "network of its own over the observation and the cards hidden from the seat, carried beside the "
        "observation in training only: training/rllib/critic_state.py; the vector PPO's ppo.critic: full)",
    )


class RLlibTrainConfig(Section):
    """Length, parallelism, checkpoints."""

    iterations: Whole = setting(50, "training iterations (algo.train() calls)", gt=0)
    max_hours: Number = setting(0.0, HOURS_HELP + "; checked between iterations", ge=0, le=MAX_HOURS)
    num_env_runners: Whole = setting(
        0, "remote env runners (0: sample in the driver; best on 2 cores; raise it on a cluster)", ge=0
    )
    envs_per_runner: Whole = setting(8, "environments per env runner", gt=0)
    checkpoint_every: Whole = setting(5, "iterations between checkpoints", gt=0)
    keep_checkpoints: Whole = setting(2, "checkpoints kept (the newest)", gt=0)
    torch_threads: Whole = setting(1, "torch CPU threads of the driver", gt=0)
    device: Device = setting(
        "auto",
        DEVICE_HELP + ": the learner's (in the driver; cuda: num_gpus_per_learner 1, cuda:N its local_gpu_idx N; "
        "mps is not one RLlib runs); the env runners act on the CPU",
    )
    num_cpus: Whole | None = setting(None, "CPUs of a local Ray instance (null: all); ignored with --address", gt=0)
    progress: Flag = setting(True, "print a line per iteration")
    runner_resources: Resources = setting(
        dict,
        "custom Ray resources each env runner needs, e.g. {sampler: 1}: only nodes started with "
        "ray start --resources='{\"sampler\": 8}' run env runners (docs/cluster.md)",
    )


class RLlibEval(
    EvalConfig, descriptions={"every": "iterations between evaluations during training (0: only at the end)"}
):
    """The RLlib run's evaluations: every ``every`` iterations (eval.jsonl: the learning curve) and at the end."""


class RLlibConfig(
    RunSection,
    defaults={"kind": "rllib", "name": "rllib"},
    descriptions={"seed": "seed of torch, RLlib and the environments"},
):
    """An RLlib training run."""

    env: RLlibEnvConfig = setting(RLlibEnvConfig, "the game")
    policies: Literal[("shared", "per_role")] = setting(
        "shared", "'shared': one policy for the three seats; 'per_role': one per role (needs env.episode: hand)"
    )
    league: LeagueConfig = setting(LeagueConfig, "opponents")
    ppo: RLlibPPOConfig = setting(RLlibPPOConfig, "PPO hyper-parameters")
    train: RLlibTrainConfig = setting(RLlibTrainConfig, "length and checkpoints")
    eval: RLlibEval = setting(RLlibEval, "duplicate evaluation per role")


def rllib_config_from_dict(data: Any, source: str = "") -> RLlibConfig:
    """A validated :class:`RLlibConfig` from a plain dict (as YAML gives it)."""
    cfg = validate(RLlibConfig, data, source)
    try:
        check_episode(cfg.env.episode, cfg.env.reward, cfg.env.max_hands)
    except ValueError as err:
        raise config_error(source, "env.reward", f"env.reward: {err}") from None
    if cfg.policies == "per_role" and cfg.env.episode != "hand":
        raise config_error(
            source, "policies", "policies: 'per_role' needs env.episode: hand (roles change from hand to hand)"
        )
    if cfg.ppo.minibatch_size > cfg.ppo.train_batch_size:
        raise config_error(source, "ppo.minibatch_size", "ppo.minibatch_size: must be at most ppo.train_batch_size")
    if cfg.train.device == "mps":
        raise config_error(
            source, "train.device", "train.device: RLlib's learner runs on CUDA or the CPU: auto, cpu, cuda or cuda:N"
        )
    if not any(w > 0 for w in cfg.league.mix.values()):
        raise config_error(source, "league.mix", "league.mix: at least one weight must be > 0")
    check_eval_rules(cfg.eval, RuleSet.from_any(cfg.env.rules), source)
    return cfg


def load_rllib_config(path: str | None = None, overrides: list[str] | None = None) -> RLlibConfig:
    """Read, override and validate an RLlib config (``path`` None: the defaults)."""
    return load(rllib_config_from_dict, path, overrides)


if __name__ == "__main__":  # python -m training.rllib.config
    print(describe(RLlibConfig))
    sys.exit(0)
